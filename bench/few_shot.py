"""Few examples per route: the lexical scorer against the TF-IDF + linear SVM baseline.

Usage:
    .venv/bin/python bench/few_shot.py            # ours (routing_core's scorer alone)
    /tmp/skl/bin/python bench/few_shot.py --svm   # the baseline (scikit-learn, scratch venv)
    /tmp/skl/bin/python bench/few_shot.py --svm --names   # the baseline given the route
                                                          # names too, as ours reads them

Each shared set with a `routes.json` of more than 30 examples per route (CLINC150, Banking77)
is cut to its first K examples of every route (K = 10, 20): the pack is built from those, and
judged on `val` when the set has one (CLINC150), else on the training examples left out
(Banking77). `test` is never read. Top-1 of the scores, in-scope only, policy-free (the floor
and margin play no part). Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHOTS = (10, 20)
SETS = ("clinc150", "banking77")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "datasets"))
    parser.add_argument("--svm", action="store_true", help="measure the baseline instead")
    parser.add_argument(
        "--names", action="store_true", help="the baseline learns each route's name as a text"
    )
    args = parser.parse_args()
    for name in SETS:
        folder = Path(args.data) / name
        for shots in SHOTS:
            train, judged, split = subsample(folder, shots)
            if args.svm:
                top1 = svm_top1(train, judged, args.names)
                who = "TF-IDF + linear SVM" + (" with the route names" if args.names else "")
            else:
                top1, who = lexical_top1(train, judged), "lexical scorer"
            print(f"{name} {shots} per route, judged on {split} ({len(judged)}): {who} {top1:.2%}")


def subsample(folder: Path, shots: int) -> tuple[list[dict], list[tuple[str, str]], str]:
    """The first `shots` examples of every route, and the in-scope cases to judge them on."""
    routes = json.loads((folder / "routes.json").read_text())
    train = [{"name": r["name"], "examples": r["examples"][:shots]} for r in routes]
    val = folder / "val.jsonl"
    if val.exists():
        rows = [json.loads(line) for line in val.read_text().splitlines() if line.strip()]
        judged = [(row["text"], row["expected"]) for row in rows if row["expected"] is not None]
        return train, judged, "val"
    judged = [(text, r["name"]) for r in routes for text in r["examples"][shots:]]
    return train, judged, "the train examples left out"


def lexical_top1(train: list[dict], judged: list[tuple[str, str]]) -> float:
    sys.path.insert(0, str(ROOT))
    from routing_core.scorers import RouteText
    from routing_core.scorers.lexical import LexicalScorer

    scorer = LexicalScorer.build([RouteText(r["name"], "", tuple(r["examples"])) for r in train])
    names = [r["name"] for r in train]
    right = 0
    for text, expected in judged:
        scores = scorer.score(text, names)
        best = max(range(len(names)), key=scores.__getitem__)
        right += scores[best] > 0 and names[best] == expected
    return right / len(judged)


def svm_top1(train: list[dict], judged: list[tuple[str, str]], names: bool = False) -> float:
    """The baseline's top-1; `names`: each route's name (underscores as spaces) is one more
    of its training texts, as routing_core's lexical scorer reads it."""
    from scipy.sparse import hstack
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.svm import LinearSVC

    texts = [text for r in train for text in r["examples"]]
    labels = [r["name"] for r in train for _ in r["examples"]]
    if names:
        texts += [r["name"].replace("_", " ").replace("-", " ") for r in train]
        labels += [r["name"] for r in train]
    words = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True)
    chars = TfidfVectorizer(analyzer="char_wb", ngram_range=(3, 5), sublinear_tf=True)
    features = hstack([words.fit_transform(texts), chars.fit_transform(texts)]).tocsr()
    model = LinearSVC(C=1.0).fit(features, labels)
    messages = [text for text, _ in judged]
    found = model.predict(hstack([words.transform(messages), chars.transform(messages)]).tocsr())
    return sum(f == e for f, (_, e) in zip(found, judged, strict=True)) / len(judged)


if __name__ == "__main__":
    main()
