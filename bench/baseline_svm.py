"""The reference baseline of docs/lab/benchmarks.md: TF-IDF (word 1-2 + char 3-5) + linear SVM.

Measures, on the same splits as bench_datasets.py, the baseline the shared data sets' README
quotes (92.7% on CLINC150 test, 91.3% on Banking77), so that a data set without published
figures for it (HWU64 here) still has a "theirs" measured the same way. scikit-learn is not a
dependency of the project; run this in a scratch venv:

    python3 -m venv /tmp/skl && /tmp/skl/bin/pip install scikit-learn
    /tmp/skl/bin/python bench/baseline_svm.py [--data ../shared/datasets] [--names] [--folds]

(`--names`: each route's name, underscores as spaces, is one more of its training texts, as
routing_core's lexical scorer reads it: the like-for-like comparison. `--folds`: instead of
test, the dev folds of `bench/quality_dev.py` (cf1 ... hf3: every third training example of
each route held out, by position), so that a choice made on dev can be set beside the SVM
without reading test.)

Settings are scikit-learn's defaults (C=1, sublinear TF, char n-grams inside word edges): the
baseline is a reference point, not something tuned here. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from scipy.sparse import hstack
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.svm import LinearSVC

ROOT = Path(__file__).resolve().parents[1]
# The shared public sets (never copied into the project: ../shared/datasets/README.md).
DATASETS = ("clinc150", "banking77", "hwu64", "hwu64-10shot")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "datasets"))
    parser.add_argument("--names", action="store_true", help="learn each route's name too")
    parser.add_argument("--folds", action="store_true", help="the dev folds, not test")
    args = parser.parse_args()
    folders = [Path(args.data) / name for name in DATASETS]
    for folder in folders:
        if not (folder / "routes.json").exists():
            continue
        if args.folds:
            if (folder / "test.jsonl").exists() and folder.name != "hwu64-10shot":
                for fold in range(3):
                    measure_fold(folder, fold, args.names)
        else:
            measure(folder, args.names)


def measure(folder: Path, names: bool = False) -> None:
    routes = json.loads((folder / "routes.json").read_text())
    cases = [json.loads(line) for line in (folder / "test.jsonl").read_text().splitlines()]
    cases = [case for case in cases if case["expected"] is not None]
    right, seconds = top1(routes, [(c["text"], c["expected"]) for c in cases], names)
    print(
        f"{folder.name}: TF-IDF + linear SVM{' with the route names' if names else ''} top-1 {right:.2%} on test "
        f"({len(cases)} in-scope cases; training {seconds:.1f} s CPU)"
    )


def measure_fold(folder: Path, fold: int, names: bool = False) -> None:
    """Fold `fold` (0-2) of the training examples, as `bench/quality_dev.py` cuts it."""
    routes = json.loads((folder / "routes.json").read_text())
    kept = [
        {**r, "examples": [t for i, t in enumerate(r["examples"]) if i % 3 != fold]} for r in routes
    ]
    judged = [(t, r["name"]) for r in routes for i, t in enumerate(r["examples"]) if i % 3 == fold]
    right, _ = top1(kept, judged, names)
    name = f"{folder.name[0]}f{fold + 1}"
    print(f"{name} ({folder.name} fold {fold + 1}): TF-IDF + linear SVM top-1 {right:.2%}")


def top1(routes: list[dict], cases: list[tuple[str, str]], names: bool) -> tuple[float, float]:
    """The SVM's top-1 on `cases` ((text, route) pairs) and its training CPU seconds."""
    texts = [text for route in routes for text in route["examples"]]
    labels = [route["name"] for route in routes for _ in route["examples"]]
    if names:
        texts += [route["name"].replace("_", " ").replace("-", " ") for route in routes]
        labels += [route["name"] for route in routes]
    started = time.process_time()
    words = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True)
    chars = TfidfVectorizer(analyzer="char_wb", ngram_range=(3, 5), sublinear_tf=True)
    features = hstack([words.fit_transform(texts), chars.fit_transform(texts)]).tocsr()
    model = LinearSVC(C=1.0).fit(features, labels)
    seconds = time.process_time() - started
    test = [text for text, _ in cases]
    found = model.predict(hstack([words.transform(test), chars.transform(test)]).tocsr())
    right = sum(label == expected for label, (_, expected) in zip(found, cases, strict=True))
    return right / len(cases), seconds


if __name__ == "__main__":
    main()
