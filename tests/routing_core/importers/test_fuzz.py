"""Any JSON in any file of an export gives routes or a PackError: never another exception."""

from __future__ import annotations

import json

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from routing_core import PackError
from routing_core.importers import import_export
from routing_core.importers.files import ExportFiles
from tests.routing_core.importers.conftest import EXPORTS

_leaves = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(max_size=8)
    | st.sampled_from(["[Berlin](city)", "{Slot}", "@sys.date:date", "a" * 2500, "- x\n- y"])
)
json_values = st.recursive(
    _leaves,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "name",
                    "text",
                    "data",
                    "meta",
                    "parts",
                    "entities",
                    "synonyms",
                    "value",
                    "language",
                    "intent",
                    "category",
                    "utterances",
                    "routes",
                    "sampleUtterances",
                    "utterance",
                    "trainingPhrases",
                    "parameterId",
                    "list",
                    "sublists",
                    "regex",
                    "expressions",
                    "slotTypeValues",
                    "sampleValue",
                    "transitionRoutes",
                    "metadata",
                    "assets",
                    "projectKind",
                    "fallbackIntent",
                    "isTemplate",
                    "description",
                    "score_threshold",
                ]
            ),
            children,
            max_size=5,
        )
    ),
    max_leaves=20,
)


def _files(folder):
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _fuzz(fmt, files, path, value):
    broken = dict(files)
    broken[path] = json.dumps(value).encode()  # JSON is YAML too: Rasa files get it as well
    try:
        result = import_export(fmt, ExportFiles(broken))
        assert result.routes
        result.to_pack(slug="fuzz")  # text that cannot be stored is refused here, by name
    except PackError as exc:
        assert exc.errors


EXPORTS_BY_FORMAT = {
    "dialogflow-es": _files(EXPORTS / "dialogflow_es"),
    "dialogflow-cx": _files(EXPORTS / "dialogflow_cx"),
    "lex-v2": _files(EXPORTS / "lex_v2"),
    "azure-clu": {"azure_clu.json": (EXPORTS / "azure_clu.json").read_bytes()},
    "semantic-router": {"layer.json": (EXPORTS / "semantic_router" / "layer.json").read_bytes()},
    "rasa": {
        "nlu.yml": json.dumps(yaml.safe_load((EXPORTS / "rasa_nlu.yml").read_text())).encode()
    },
}
FORMATS = sorted(EXPORTS_BY_FORMAT)


@pytest.mark.parametrize("fmt", FORMATS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_json_in_any_file_gives_routes_or_a_pack_error(fmt, data):
    path = data.draw(st.sampled_from(sorted(EXPORTS_BY_FORMAT[fmt])))
    _fuzz(fmt, EXPORTS_BY_FORMAT[fmt], path, data.draw(json_values))


@pytest.mark.parametrize("fmt", FORMATS)
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_json_inside_a_real_file_gives_routes_or_a_pack_error(fmt, data):
    """Replace one value deep inside a real file, so the importer gets past the first checks."""
    files = EXPORTS_BY_FORMAT[fmt]
    path = data.draw(st.sampled_from(sorted(files)))
    try:
        document = json.loads(files[path])
    except ValueError:
        return
    spots = list(_paths(document))
    if not spots:
        return
    where = data.draw(st.sampled_from(spots))
    _fuzz(fmt, files, path, _replace(document, where, data.draw(json_values)))


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, (*prefix, i))


def _replace(value, where, new):
    if not where:
        return new
    head, *rest = where
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[head] = _replace(value[head], tuple(rest), new)
    return copy
