"""Built-in triage lexicons by language: word lists a profile starts from
(docs/pack-format.md, Triage).

Triage reads single lowercase words, so its lexicons are per language. English is the default
(`triage.DEFAULT_*`). The others are presets, not a pack setting: the studio writes a chosen
mix into the profile's own `action_verbs`, `knowledge_verbs` and `question_pattern`, so the
pack states its words in full and every reader of the format, old or new, triages it alike
(docs/decisions.md, "Triage in more languages").

Our judgement, as for English (see `triage`'s docstring):
- action verbs are the infinitives and the polite and familiar imperatives people type to
  make something happen ("cancelar", "cancela", "cancele"); first-person forms are left out
  where they double as nouns ("cambio" is also "a change", "pedido" is "an order");
- knowledge words are verbs of understanding and the interrogatives, written with their
  accents. Unaccented forms that are mostly conjunctions in running text ("que", "como",
  "cuando"; French "que") are left out: they would tilt every action sentence toward
  knowledge;
- a question opens with an interrogative or a question verb (or "¿"), or ends with "?";
- a word that is a common English word of another kind ("active", "reserve", "as", Italian
  "come", Dutch "leg") is left out, since profiles mix English with their other languages;
- an imperative that is mostly a noun in support conversations is left out as English "order"
  is (Portuguese "compra", "reserva", "troca"; Italian "carica", "cambi"; Dutch "boek",
  "deel");
- Chinese is written without spaces: its words are found inside the message's runs of
  letters (docs/pack-format.md, Triage, Tokens), so a word of one character would match
  inside unrelated words and only longer ones are listed (but "谁" and "哪", which are never
  anything but question words), and the words that name a thing as often as an act ("退款"
  a refund, "设置" the settings) are kept out as English "order" is, with the phrases that
  make them an act ("要退款", "申请退款") kept in. Simplified and traditional forms are both
  listed. Its questions end with "吗"/"呢" or a full-width "？", or open with a question word
  with no space after it, which `question_extra` says since "\b" cannot;
- Japanese, also without spaces, puts the verb last ("予約をキャンセルして"): its words are
  the request and wish forms of the verbs, and its questions end with "か" or "？". Since its
  acts rarely open the message, an act with its object first scores one verb (0.4) and stays
  "ambiguous" below the default floor (0.55), as English "please cancel my order" does; a
  verb that opens the message ("キャンセルしてください", "解約したいです") is an action.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Lexicon:
    """One language's built-in triage words."""

    code: str  # BCP 47 language code
    name: str  # the language's own name, as its speakers read it in a list
    action_verbs: frozenset[str]
    knowledge_verbs: frozenset[str]
    question_starts: tuple[str, ...]  # words that open a question (regex-escaped on use)
    # More of the question pattern, for what an opening word cannot say (Spanish "¿", a
    # Chinese closing particle): a regex alternative, or "".
    question_extra: str = ""


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _starts(text: str) -> tuple[str, ...]:
    return tuple(text.split())


ENGLISH = Lexicon(
    "en",
    "English",
    _words(
        """
        activate add apply approve archive assign block book buy cancel change close
        configure connect create deactivate delete deploy disable download edit enable export
        fix freeze generate import install invite join launch lock make modify move open
        pay print publish purchase refund register reject remove rename renew reopen replace
        reschedule reserve reset restart restore resend retry revoke run
        schedule send share ship sign start stop submit subscribe swap switch transfer unblock
        unfreeze unlock unsubscribe update upgrade upload verify withdraw
        """
    ),
    _words(
        """
        explain describe compare define tell show list summarize summarise clarify understand
        know learn mean means meaning differ difference recommend suggest
        what whats why how when where which who whose
        """
    ),
    _starts(
        "who what what's whats when where why how which whose is are am was were can could do"
        " does did should would will may might have has"
    ),
)

SPANISH = Lexicon(
    "es",
    "Español",
    _words(
        """
        activar activa añadir añade agregar agrega aplicar aprobar archivar asignar
        bloquear bloquea bloquee reservar reserva comprar compra compre cancelar
        cancela cancele anular anula anule cambiar cambia cambie cerrar cierra cierre
        configurar conectar crear crea cree desactivar desactiva eliminar elimina elimine
        borrar borra borre descargar descarga descargue editar habilitar deshabilitar
        exportar arreglar congelar generar importar instalar invitar abrir abre abra pagar
        paga pague imprimir publicar reembolsar reembolsa reembolse devolver devuelve
        devuelva registrar registrarme rechazar quitar quita quite renombrar renovar renueva
        renueve reprogramar restablecer reiniciar restaurar reenviar reenvía programar
        enviar envía envíe mandar manda mande compartir firmar empezar empieza iniciar
        inicia parar detener suscribir suscribirme desuscribir transferir transfiere
        transfiera desbloquear desbloquea actualizar actualiza actualice subir sube suba
        verificar retirar pedir contratar recargar recarga
        """
    ),
    _words(
        """
        explicar explica explícame explique describir describe comparar compara definir
        decir dime contar cuéntame mostrar muestra muéstrame saber entender significa
        significado diferencia diferencias recomendar recomienda sugerir resumir aclarar
        qué cómo cuándo dónde donde cuál cuáles cual quién quiénes quien cuánto cuánta
        cuántos cuántas cuanto porqué
        """
    ),
    _starts(
        "qué cómo cuándo dónde donde cuál cuáles quién quiénes cuánto cuánta cuántos cuántas"
        " puedo puede pueden podría podrías es está están hay tiene tienen tengo"
    ),
    r"^\s*¿",
)

FRENCH = Lexicon(
    "fr",
    "Français",
    _words(
        """
        activer activez ajouter ajoute ajoutez appliquer approuver archiver assigner
        bloquer bloque bloquez réserver réserve réservez acheter achète achetez annuler
        annule annulez changer change changez modifier modifie modifiez fermer ferme fermez
        configurer connecter créer crée créez supprimer supprime supprimez effacer
        télécharger télécharge téléchargez éditer désactiver désactive désactivez exporter
        réparer générer importer installer inviter ouvrir ouvre ouvrez payer paye payez
        imprimer publier rembourser rembourse remboursez enregistrer inscrire rejeter
        retirer renommer renouveler renouvelle réinitialiser redémarrer restaurer renvoyer
        renvoie renvoyez programmer envoyer envoie envoyez partager signer commencer
        démarrer arrêter arrête arrêtez souscrire abonner désabonner transférer transfère
        transférez débloquer débloque débloquez actualiser vérifier résilier résilie
        résiliez commander reprogrammer
        """
    ),
    _words(
        """
        expliquer explique expliquez décrire décris décrivez comparer définir dire dis
        dites montrer montre montrez savoir sais comprendre signifie signification
        différence recommander recommandez conseiller suggérer résumer
        quoi comment pourquoi quand où quel quelle quels quelles qui combien lequel laquelle
        """
    ),
    _starts(
        "qu quoi comment pourquoi quand où quel quelle quels quelles qui combien est"
        " pouvez peux peut avez"
    ),
)

GERMAN = Lexicon(
    "de",
    "Deutsch",
    _words(
        """
        aktivieren aktiviere hinzufügen anwenden genehmigen archivieren zuweisen sperren
        sperre buchen buche kaufen kaufe stornieren storniere kündigen kündige abbestellen
        ändern ändere schließen schließe konfigurieren verbinden erstellen erstelle löschen
        lösche herunterladen bearbeiten deaktivieren deaktiviere exportieren reparieren
        beheben generieren importieren installieren einladen öffnen öffne bezahlen zahlen
        zahle drucken veröffentlichen erstatten zurückerstatten registrieren anmelden
        abmelden ablehnen entfernen entferne umbenennen verlängern verlängere
        wiederherstellen zurücksetzen neustarten senden sende schicken schicke teilen
        unterschreiben starten starte stoppen abonnieren überweisen überweise entsperren
        entsperre aktualisieren hochladen verifizieren bestätigen bestätige abheben
        bestellen bestelle umbuchen tauschen wechseln
        """
    ),
    _words(
        """
        erklären erkläre erklärt beschreiben beschreibe vergleichen definieren zeigen zeige
        sagen sag wissen weiß verstehen bedeutet bedeutung unterschied empfehlen empfiehl
        vorschlagen zusammenfassen
        was wie warum wieso weshalb wann wo woher wohin welche welcher welches wer wessen
        wieviel
        """
    ),
    _starts(
        "was wie warum wieso weshalb wann wo woher wohin welche welcher welches wer wessen"
        " wieviel kann kannst können könnte ist sind gibt hast haben habe darf muss soll wird"
    ),
)

PORTUGUESE = Lexicon(
    "pt",
    "Português",
    _words(
        """
        ativar ativa ative adicionar adiciona adicione acrescentar aplicar aprovar arquivar
        atribuir bloquear bloqueia bloqueie reservar comprar compre cancelar cancela cancele
        anular alterar altera altere mudar muda mude trocar troque fechar fecha feche
        configurar conectar ligar liga ligue desligar desliga desligue criar cria crie
        desativar desativa desative eliminar apagar apaga apague excluir exclua baixar baixe
        editar habilitar desabilitar exportar consertar corrigir congelar gerar importar
        instalar convidar abrir abre abra pagar paga pague imprimir publicar reembolsar
        devolver devolva registrar registar rejeitar recusar remover remova renomear renovar
        renove reagendar redefinir reiniciar reinicie restaurar reenviar agendar enviar envia
        envie mandar manda mande partilhar compartilhar compartilhe assinar começar comece
        iniciar inicie parar pare interromper subscrever inscrever transferir transfira
        desbloquear desbloqueia desbloqueie atualizar atualiza atualize carregar verificar
        sacar levantar encomendar acender acende acenda
        """
    ),
    _words(
        """
        explicar explica explique descrever descreva comparar compare definir dizer diga
        contar conte mostrar mostra mostre saber entender compreender significa significado
        diferença diferenças recomendar recomenda recomende sugerir resumir esclarecer
        quê onde qual quais quem quanto quanta quantos quantas porquê
        """
    ),
    _starts(
        "que quê como quando onde qual quais quem quanto quanta quantos quantas porquê"
        " posso pode podem poderia é está estão há tem têm tenho existe"
    ),
)

ITALIAN = Lexicon(
    "it",
    "Italiano",
    _words(
        """
        attivare attiva attivi aggiungere aggiungi aggiunga applicare approvare archiviare
        assegnare bloccare blocca blocchi prenotare prenota prenoti comprare compra compri
        acquistare acquista annullare annulla annulli cancellare cancella cancelli cambiare
        modificare modifica modifichi chiudere chiudi chiuda configurare collegare
        connettere creare crea crei disattivare disattiva disattivi eliminare elimina elimini
        scaricare scarica scarichi esportare riparare sistemare generare importare installare
        invitare aprire apri apra pagare paga paghi stampare pubblicare rimborsare rimborsa
        rimborsi restituire registrare rifiutare rimuovere rimuovi rimuova rinominare
        rinnovare rinnova rinnovi riprogrammare reimpostare riavviare ripristinare programmare
        inviare invia invii mandare manda mandi condividere firmare iniziare inizia avviare
        avvia fermare ferma interrompere iscrivere disiscrivere trasferire trasferisci
        sbloccare sblocca sblocchi aggiornare aggiorna aggiorni caricare verificare
        prelevare ordinare ordina accendere accendi spegnere spegni
        """
    ),
    _words(
        """
        spiegare spiega spieghi spiegami descrivere descrivi confrontare definire dire dimmi
        dica raccontare mostrare mostra mostrami sapere capire significa significato
        differenza consigliare consiglia suggerire riassumere chiarire
        cosa dove quale quali chi quanto quanta quanti quante perché
        """
    ),
    _starts(
        "cosa che quando dove quale quali chi quanto quanta quanti quante perché"
        " posso puoi può potresti è sono c'è hai avete"
    ),
)

DUTCH = Lexicon(
    "nl",
    "Nederlands",
    _words(
        """
        activeren activeer toevoegen voeg toepassen goedkeuren archiveren toewijzen
        blokkeren blokkeer boeken kopen koop annuleren annuleer opzeggen wijzigen wijzig
        veranderen verander sluiten sluit configureren verbinden koppelen maken maak
        aanmaken verwijderen verwijder downloaden bewerken uitschakelen inschakelen
        schakel deactiveren exporteren repareren herstellen genereren importeren installeren
        installeer uitnodigen openen betalen betaal printen afdrukken publiceren
        terugbetalen registreren aanmelden afmelden weigeren afwijzen hernoemen verlengen
        verleng resetten herstarten sturen stuur versturen verstuur verzenden delen
        ondertekenen starten stoppen abonneren overmaken overboeken ontgrendelen
        deblokkeren bijwerken updaten uploaden verifiëren bevestigen bevestig bestellen
        bestel omboeken ruilen wisselen aanzetten uitzetten zet
        """
    ),
    _words(
        """
        uitleggen beschrijven beschrijf vergelijken vergelijk definiëren vertellen vertel
        tonen toon weten weet begrijpen snappen betekent betekenis verschil aanbevelen
        aanraden adviseren samenvatten verduidelijken
        wat hoe waarom wanneer waar welke welk wie wiens hoeveel
        """
    ),
    _starts(
        "wat hoe waarom wanneer waar welke welk wie wiens hoeveel kan kun kunt kunnen is"
        " zijn heb hebt heeft mag moet wordt zal"
    ),
)

POLISH = Lexicon(
    "pl",
    "Polski",
    _words(
        """
        aktywować aktywuj dodać dodaj zastosować zatwierdzić zarchiwizować przypisać
        zablokować zablokuj zarezerwować zarezerwuj kupić kup anulować anuluj odwołać
        odwołaj zmienić zmień zamknąć zamknij skonfigurować połączyć podłącz utworzyć utwórz
        stworzyć stwórz usunąć usuń skasować pobrać pobierz edytować wyłączyć wyłącz
        włączyć włącz dezaktywować eksportować naprawić napraw wygenerować importować
        zainstalować zainstaluj zaprosić zaproś otworzyć otwórz zapłacić zapłać opłacić
        wydrukować wydrukuj opublikować zwrócić zwróć zarejestrować zarejestruj odrzucić
        odrzuć przedłużyć przedłuż odnowić odnów zresetować zrestartować uruchomić uruchom
        przywrócić przywróć wysłać wyślij udostępnić podpisać podpisz zacząć zacznij
        rozpocząć zatrzymać zatrzymaj subskrybować wypisać przelać przelej przenieść
        odblokować odblokuj zaktualizować zaktualizuj wgrać prześlij zweryfikować
        potwierdzić potwierdź wypłacić wypłać zamówić zamów ustawić ustaw
        """
    ),
    _words(
        """
        wyjaśnić wyjaśnij wytłumaczyć wytłumacz opisać opisz porównać porównaj zdefiniować
        powiedzieć powiedz pokazać pokaż wiedzieć rozumieć zrozumieć znaczy oznacza
        znaczenie różnica polecić doradzić zasugerować podsumować podsumuj
        co jak dlaczego czemu kiedy gdzie który która które kto czyj ile jaki jaka jakie
        """
    ),
    _starts(
        "co jak dlaczego czemu kiedy gdzie który która które kto czyj ile jaki jaka jakie"
        " czy mogę możesz może można jest są masz macie"
    ),
)

RUSSIAN = Lexicon(
    "ru",
    "Русский",
    _words(
        """
        активировать активируй активируйте добавить добавь добавьте применить одобрить
        архивировать назначить заблокировать заблокируй заблокируйте забронировать
        забронируй забронируйте купить купи купите отменить отмени отмените изменить измени
        измените поменять поменяй закрыть закрой закройте настроить настрой подключить
        подключи создать создай создайте удалить удали удалите скачать скачай загрузить
        загрузи редактировать отключить отключи выключить выключи включить включи
        деактивировать экспортировать исправить исправь починить сгенерировать
        импортировать установить установи пригласить открыть открой откройте оплатить
        оплати заплатить распечатать напечатать опубликовать вернуть верни верните
        зарегистрировать зарегистрируй отклонить убрать убери переименовать продлить продли
        обновить обнови сбросить перезапустить перезагрузить восстановить отправить отправь
        отправьте прислать пришли переслать поделиться подписать начать начни запустить
        запусти остановить останови подписаться отписаться перевести переведи
        разблокировать разблокируй проверить проверь подтвердить подтверди снять сними
        заказать закажи поставить поставь
        """
    ),
    _words(
        """
        объяснить объясни объясните описать опиши сравнить сравни определить сказать скажи
        скажите рассказать расскажи показать покажи покажите знать понять понимать
        означает значение разница отличие посоветовать посоветуй порекомендовать
        подытожить
        почему зачем где куда откуда какой какая какое какие который кто чей сколько
        """
    ),
    _starts(
        "что как почему зачем когда где куда откуда какой какая какое какие который кто чей"
        " сколько можно могу можешь можете есть"
    ),
)

CHINESE = Lexicon(
    "zh",
    "中文",
    _words(
        """
        打开 开启 关闭 关掉 取消 添加 增加 删除 移除 修改 更改 更新 设定 预订 预定
        订购 购买 支付 要退款 申请退款 发送 转账 下载 上传 安装 启动 启用 停用 禁用 停止
        暂停 重启 重置 恢复 注册 登录 注销 订阅 退订 解锁 锁定 冻结 解冻 创建 新建 编辑
        导出 导入 分享 签署 开始 播放 提交 申请 预约 升级 更换 兑换 提现 充值 挂失 开通
        绑定 解绑 续费 续订 改签
        打開 開啟 關閉 關掉 刪除 設定 申請退款 預訂 預定 訂購 購買 發送 轉賬 轉帳 下載 上傳
        安裝 啟動 啟用 停用 暫停 重啟 恢復 註冊 登錄 登入 註銷 訂閱 退訂 解鎖 鎖定 凍結
        解凍 創建 編輯 導出 匯出 導入 匯入 開始 提交 申請 預約 升級 更換 兌換 開通 綁定
        解綁 續費 續訂
        """
    ),
    _words(
        """
        解释 说明 介绍 描述 比较 对比 定义 告诉 显示 知道 了解 明白 意思 区别 差别 不同
        推荐 建议 总结 什么 为什么 怎么 怎样 如何 哪 谁 多少 何时
        解釋 說明 介紹 比較 對比 定義 告訴 顯示 區別 差別 推薦 建議 總結 什麼 為什麼 怎麼
        怎樣 誰
        """
    ),
    (),
    r"[吗嗎呢][？?\s]*$|？\s*$|^\s*(?:什么|什麼|为什么|為什麼|怎么|怎麼|怎样|怎樣|如何|哪|谁|誰"
    r"|多少|是否|能否|能不能|可不可以|是不是|有没有|有沒有)",
)

# Japanese acts are mostly a noun and "する" ("キャンセルする"): listed in the request and wish
# forms ("キャンセルして", "キャンセルしたい"), not the noun, which names the thing as often
# ("キャンセル料" a cancellation fee) nor the past ("キャンセルした注文" the cancelled order).
_JAPANESE_SURU = """
    キャンセル 解約 予約 購入 注文 変更 削除 追加 登録 解除 設定 送信 転送 返金 返品 交換 更新
    停止 再起動 リセット ダウンロード アップロード インストール 再生
"""

JAPANESE = Lexicon(
    "ja",
    "日本語",
    _words(
        """
        取り消して 取り消したい 開けて 開いて 閉じて 閉めて 止めて やめて 始めて 送って
        送りたい つけて 消して 流して 変えて 変えたい 入れて 切って 戻して 返して 買って
        買いたい 払って 払いたい 申し込んで 申し込みたい 振り込んで
        """
    )
    | {f"{noun}{form}" for noun in _JAPANESE_SURU.split() for form in ("して", "したい")},
    _words(
        """
        説明 教えて 知りたい 意味 違い 比較 比べて おすすめ 何 なぜ どうして どうやって
        どうすれば どこ どれ どの どんな いつ 誰 いくら どのくらい
        """
    ),
    (),
    r"か[？?\s]*$|？\s*$",
)

LEXICONS: dict[str, Lexicon] = {
    lex.code: lex
    for lex in (
        *(ENGLISH, SPANISH, FRENCH, GERMAN, PORTUGUESE),
        *(ITALIAN, DUTCH, POLISH, RUSSIAN, CHINESE, JAPANESE),
    )
}


@dataclass(frozen=True, slots=True)
class Mix:
    """The triage settings of a mix of languages: what a profile stores for them."""

    action_verbs: frozenset[str]
    knowledge_verbs: frozenset[str]
    question_pattern: str


def question_pattern(starts: Iterable[str]) -> str:
    """A question: ends with "?" or opens with one of the words.

    The English list gives exactly `triage.DEFAULT_QUESTION_PATTERN`, so a profile that
    chooses English alone stores nothing new.
    """
    alternatives = "|".join(re.escape(word) for word in starts)
    if not alternatives:  # an empty group would match every message's start
        return r"(?i)\?\s*$"
    return rf"(?i)\?\s*$|^\s*(?:{alternatives})\b"


_QUESTION_MARK = r"(?i)\?\s*$"
_STARTS_OPEN, _STARTS_CLOSE = _QUESTION_MARK + r"|^\s*(?:", r")\b"


def is_question_pattern(pattern: str) -> bool:
    """Whether `pattern` is one `question_pattern` writes, for some list of words, followed
    by any built-in lexicons' own endings (`Lexicon.question_extra`), as `mix` writes them.

    Such a pattern is a `?` at the end or a literal word at the start, or a lexicon's fixed
    ending: its search takes time linear in the message, so a turn searches it outside the
    regex budget meant for the patterns a person wrote (docs/pack-format.md, Regular
    expressions). Checked by writing the pattern again from the words it names: anything
    else, however alike, is not one.
    """
    extras = [f"|{lex.question_extra}" for lex in LEXICONS.values() if lex.question_extra]
    stripped = True
    while stripped:
        stripped = False
        for extra in extras:
            if pattern.endswith(extra):
                pattern, stripped = pattern[: -len(extra)], True
    if pattern == _QUESTION_MARK:
        return True
    if not (pattern.startswith(_STARTS_OPEN) and pattern.endswith(_STARTS_CLOSE)):
        return False
    body = pattern[len(_STARTS_OPEN) : -len(_STARTS_CLOSE)]
    words, current = [], []
    characters = iter(body)
    for character in characters:
        if character == "\\":
            current.append(next(characters, ""))
        elif character == "|":
            words.append("".join(current))
            current = []
        else:
            current.append(character)
    words.append("".join(current))
    return all(words) and question_pattern(words) == pattern


def mix(codes: Iterable[str]) -> Mix:
    """The union of the chosen languages' words, with one question pattern for all of them.

    Raises:
        KeyError: a code that is not in `LEXICONS`.
    """
    chosen = [LEXICONS[code] for code in dict.fromkeys(codes)]
    if not chosen:
        raise KeyError("choose at least one language")
    starts = list(dict.fromkeys(word for lex in chosen for word in lex.question_starts))
    pattern = question_pattern(starts)
    for lex in chosen:
        if lex.question_extra:
            pattern += "|" + lex.question_extra
    return Mix(
        frozenset().union(*(lex.action_verbs for lex in chosen)),
        frozenset().union(*(lex.knowledge_verbs for lex in chosen)),
        pattern,
    )
