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
- a word that is a common English word of another kind ("active", "reserve", "as") is left
  out, since profiles mix English with their other languages.
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

LEXICONS: dict[str, Lexicon] = {lex.code: lex for lex in (ENGLISH, SPANISH, FRENCH, GERMAN)}


@dataclass(frozen=True, slots=True)
class Mix:
    """The triage settings of a mix of languages: what a profile stores for them."""

    action_verbs: frozenset[str]
    knowledge_verbs: frozenset[str]
    question_pattern: str


def question_pattern(starts: Iterable[str]) -> str:
    """A question: ends with "?", opens with "¿" or with one of the words.

    The English list gives exactly `triage.DEFAULT_QUESTION_PATTERN`, so a profile that
    chooses English alone stores nothing new.
    """
    alternatives = "|".join(re.escape(word) for word in starts)
    return rf"(?i)\?\s*$|^\s*(?:{alternatives})\b"


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
    if any(lex.code == "es" for lex in chosen):  # Spanish opens a question with "¿"
        pattern += r"|^\s*¿"
    return Mix(
        frozenset().union(*(lex.action_verbs for lex in chosen)),
        frozenset().union(*(lex.knowledge_verbs for lex in chosen)),
        pattern,
    )
