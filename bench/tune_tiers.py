"""Choose the optional tiers' settings on CLINC150 `val`: never reads `test`.

Usage (needs `.venv-embed`; reuses bench_tiers' vector cache, encoding what it lacks):
    OMP_NUM_THREADS=1 .venv-embed/bin/python bench/tune_tiers.py [--data ../shared/datasets]

Builds the CLINC150 pack as `routing-core build` does and scores `val` once per scorer;
then judges those scores as the policy would at the built pack's margin and each tier's
fitted floor: the embedding with and without the out-of-scope examples, and the hybrid at
several embedding weights (each weight fits its own temperature and floor; the hybrid's
scores are its own, `HybridScorer.score`). Prints one line per setting.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import numpy.typing as npt

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_tiers import MODEL, CachedEncoder  # noqa: E402

from routing_core import build_pack_file, load_cases  # noqa: E402
from routing_core.scorers import embedding, route_texts  # noqa: E402
from routing_core.scorers.lexical import LexicalScorer  # noqa: E402

WEIGHTS = (0.3, 0.4, 0.45, 0.5, 0.55, 0.6, 0.7)
Matrix = npt.NDArray[np.float64]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "datasets"))
    parser.add_argument("--cache", default="/tmp/rs-emb")
    args = parser.parse_args()
    folder = Path(args.data) / "clinc150"
    encoder = CachedEncoder(embedding.load_encoder(MODEL), Path(args.cache) / "clinc150.npz")
    pack = build_pack_file(folder / "routes.json", slug="clinc150")
    routes, names = route_texts(pack), list(pack.route_names)
    val = load_cases(folder / "val.jsonl")
    negatives = [c.text for c in load_cases(folder / "train.jsonl") if c.expected is None]
    expected = np.array([names.index(c.expected) if c.expected else -1 for c in val])
    margin = pack.policy.near_tie_margin

    def show(label: str, scores: Matrix, floor: float | None) -> None:
        print(f"{label:34s} floor {floor}  {_judge(scores, expected, floor, margin)}")

    emb = embedding.EmbeddingScorer.build(routes, encoder)
    emb_oos = embedding.EmbeddingScorer.build(routes, encoder, out_of_scope=negatives)
    print("embedding fitted:", emb.info.details)
    lexical = LexicalScorer.build(routes, getattr(pack.scorer, "model", None))
    lexical_oos = LexicalScorer.build(routes, None, negatives)
    rows = {
        "lexical": _scores(lexical, val, names),
        "lexical + oos": _scores(lexical_oos, val, names),
        "embedding": _probabilities(emb, val),
        "embedding + oos": _probabilities(emb_oos, val),
    }
    show("lexical", rows["lexical"], lexical.info.floor)
    show("lexical + oos examples", rows["lexical + oos"], lexical_oos.info.floor)
    show("embedding", rows["embedding"], emb.info.floor)
    show("embedding + oos examples", rows["embedding + oos"], emb.info.floor)
    for weight in WEIGHTS:
        hybrid = embedding.HybridScorer.build(routes, emb, weight)
        show(f"hybrid w {weight}", _scores(hybrid, val, names), hybrid.info.floor)
    hybrid = embedding.HybridScorer.build(routes, emb, fit=True)
    weight = hybrid.info.details["embedding_weight"]
    show(f"hybrid, w fitted ({weight})", _scores(hybrid, val, names), hybrid.info.floor)
    hybrid = embedding.HybridScorer.build(routes, emb_oos, out_of_scope=negatives, fit=True)
    show("hybrid + oos (both halves)", _scores(hybrid, val, names), hybrid.info.floor)
    encoder.save()


def _scores(
    scorer: LexicalScorer | embedding.HybridScorer, cases: list, names: list[str]
) -> Matrix:
    return np.array([scorer.score(c.text, names) for c in cases], np.float64)


def _probabilities(scorer: embedding.EmbeddingScorer, cases: list) -> Matrix:
    return np.stack([np.asarray(scorer.probabilities(c.text), np.float64) for c in cases])


def _judge(
    scores: Matrix, expected: npt.NDArray[np.int64], floor: float | None, margin: float
) -> str:
    """Top-1, in-scope decision accuracy, OOS recall and menu rate, as the policy judges."""
    floor = floor or 0.0
    ordered = np.sort(scores, axis=1)
    top = scores.argmax(axis=1)
    alive = ordered[:, -1] > floor
    menu = (
        alive & (ordered[:, -2] > floor) & (np.tanh((ordered[:, -1] - ordered[:, -2]) / 2) < margin)
    )
    decided = alive & ~menu
    ins = expected >= 0
    return (
        f"top-1 {np.mean(top[ins] == expected[ins]):.2%}  "
        f"in-scope {np.mean(decided[ins] & (top[ins] == expected[ins])):.2%}  "
        f"oos recall {np.mean(~alive[~ins]):.1%}  menus {np.mean(menu):.2%}"
    )


if __name__ == "__main__":
    main()
