"""Replay: logged turns on a candidate pack, in process and on a local Dask cluster of 2 processes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from routing_core import Router, dump_pack, load_pack
from routing_core.replay import MENU, UNMATCHED, ReplayTally, outcome, replay, replay_turns
from routing_core.replay_engines import LOOPBACK, run_local
from tests.routing_core.conftest import PACKS

MESSAGES = [
    "I want a refund",
    "refund my order",
    "where is my parcel",
    "I was charged twice",
    "send me a copy of my invoice",
    "I want a real person",
    "reset my password",
    "what is the weather on mars",
    "money back please",
    "my order never arrived and I want my money back",
]


def _doc() -> dict:
    return json.loads((PACKS / "support.json").read_text(encoding="utf-8"))


def _candidate_doc() -> dict:
    """The support pack with one new rule: every "refund" goes to a person."""
    doc = _doc()
    doc["rules"].insert(0, {"route": "human", "match": {"keywords": ["refund"]}})
    return doc


def _records(n: int = 1) -> list[dict]:
    router = Router(load_pack(_doc()))
    rows = []
    for i in range(n):
        for j, text in enumerate(MESSAGES):
            incumbent = "billing" if j % 3 == 0 else None
            event = router.route(text, incumbent).to_event()
            rows.append({"conversation": f"c{i}", "turn": j, "message": text, "event": event})
    rows.append({"message": None, "event": rows[0]["event"]})  # a profile that keeps no text
    return rows


def _write(tmp_path: Path, rows: list[dict], name: str = "events.jsonl") -> str:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def _pack_file(tmp_path: Path) -> str:
    path = tmp_path / "candidate.json"
    path.write_text(dump_pack(load_pack(_candidate_doc())), encoding="utf-8")
    return str(path)


def test_the_same_pack_changes_nothing():
    report = replay(Router(load_pack(_doc())), _records())
    assert report.replayed == len(MESSAGES) and report.skipped == 1
    assert report.groups == ()


def test_a_new_rule_flips_exactly_the_turns_it_matches():
    report = replay(Router(load_pack(_candidate_doc())), _records())
    flipped = {c.message for g in report.groups for c in g.changes if "route" in c.changed}
    assert flipped == {m for m in MESSAGES if "refund" in m}
    (group,) = [g for g in report.groups if g.new == "human"]
    assert group.old == "refunds" and group.share == pytest.approx(2 / len(MESSAGES))
    assert report.share_changed == pytest.approx(report.changed / len(MESSAGES))


def test_a_tally_fed_a_part_at_a_time_counts_what_the_report_counts_without_its_turns():
    router, records = Router(load_pack(_candidate_doc())), _records(3)
    tally = ReplayTally()
    for start in range(0, len(records), 4):
        part = replay_turns(router, records[start : start + 4])
        for change in part.changes:  # each change names its record within the part
            assert records[start + change.record]["message"] == change.message
        tally.add(part)
    report = replay(router, records).to_dict()
    for group in report["groups"]:
        del group["turns"]
    assert tally.to_dict() == report


@pytest.mark.parametrize(
    ("route", "verdict", "label"),
    [
        ("billing", "move", "billing"),
        (None, "menu", MENU),
        (None, "unmatched", UNMATCHED),
        ("human", "unmatched", UNMATCHED),
    ],
)
def test_an_outcome_is_its_route_or_what_happened_instead(route, verdict, label):
    assert outcome(route, verdict) == label


def test_it_reads_parquet_with_the_event_as_json_text(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = _records()
    table = pa.Table.from_pylist([{**r, "event": json.dumps(r["event"])} for r in rows])
    pq.write_table(table, tmp_path / "events.parquet", row_group_size=4)
    from_parquet = run_local(
        dump_pack(load_pack(_candidate_doc())), [str(tmp_path / "events.parquet")]
    )
    from_lines = run_local(dump_pack(load_pack(_candidate_doc())), [_write(tmp_path, rows)])
    assert from_parquet.to_dict() == from_lines.to_dict()


def test_a_local_two_worker_dask_cluster_gives_exactly_the_in_process_flips(tmp_path):
    # The `replay` extra is part of the dev install (Makefile): missing, these tests fail.
    import distributed
    import pyarrow as pa
    import pyarrow.parquet as pq

    from routing_core.replay_engines import run_dask

    rows = _records(30)
    lines = [_write(tmp_path, rows[:150], "a.jsonl"), _write(tmp_path, rows[150:], "b.jsonl")]
    table = pa.Table.from_pylist([{**r, "event": json.dumps(r["event"])} for r in rows[:40]])
    pq.write_table(table, tmp_path / "c.parquet", row_group_size=10)
    paths = [*lines, str(tmp_path / "c.parquet")]
    pack = dump_pack(load_pack(_candidate_doc()))
    in_process = run_local(pack, paths)
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=LOOPBACK
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        on_cluster = run_dask(pack, paths, scheduler=cluster.scheduler_address)
        compiled = client.run(_compilations)
    assert on_cluster.to_dict() == in_process.to_dict()
    assert in_process.changed > 0 and in_process.replayed == len(rows) - 1 + 40
    # Six partitions (two files, four row groups) over two workers: at most one compile each.
    assert max(compiled.values()) == 1 and len(compiled) == 2


def _compilations() -> int:
    from routing_core.replay_engines import _worker_router

    return _worker_router.cache_info().misses


def test_the_command_prints_the_report_as_json_and_text(tmp_path):
    events, pack = _write(tmp_path, _records()), _pack_file(tmp_path)
    cmd = [sys.executable, "-m", "routing_core.cli", "replay", pack, events]
    as_json = json.loads(
        subprocess.run([*cmd, "--json"], capture_output=True, check=True, text=True).stdout
    )
    assert as_json == run_local(Path(pack).read_text(encoding="utf-8"), [events]).to_dict()
    text = subprocess.run(cmd, capture_output=True, check=True, text=True).stdout
    assert "refunds → human: 2" in text and "'I want a refund'" in text


def test_the_command_says_ray_is_not_the_engine_it_uses(tmp_path):
    events, pack = _write(tmp_path, _records()), _pack_file(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "routing_core.cli", "replay", pack, events, "--engine", "ray"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and "use --engine dask" in done.stderr


def test_the_traffic_modules_import_neither_django_nor_the_replay_extra():
    code = (
        "import sys, routing_core.reporting, routing_core.replay, routing_core.replay_engines, "
        "routing_core.cli; bad = [m for m in sys.modules if m.split('.')[0] in "
        "('django', 'dask', 'distributed', 'pyarrow', 'fsspec')]; print(bad); sys.exit(bool(bad))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_events_are_read_from_a_url_through_fsspec(tmp_path):
    events = _write(tmp_path, _records())
    pack = dump_pack(load_pack(_candidate_doc()))
    assert run_local(pack, [f"file://{events}"]).to_dict() == run_local(pack, [events]).to_dict()


def _with_bad_lines(tmp_path: Path, name: str, rows: list[dict]) -> tuple[str, list[int]]:
    """An events file with a malformed line, a 5,000-deep one, a non-object and bad UTF-8."""
    good = [json.dumps(r).encode() for r in rows]
    bad = [
        b'{"message": "half a record", "event": {"route": ',
        b"[" * 5000 + b"]" * 5000,
        b'{"message": "deep", "event": ' + b"[" * 5000 + b"]" * 5000 + b"}",
        b"[1, 2]",
        b'{"message": "caf\xe9"}',
    ]
    lines = good[:3] + bad[:2] + good[3:7] + bad[2:] + good[7:]
    path = tmp_path / name
    path.write_bytes(b"\n".join(lines) + b"\n")
    numbers = [lines.index(b) + 1 for b in bad]
    return str(path), numbers


def test_bad_lines_are_skipped_counted_and_named_and_the_replay_goes_on(tmp_path):
    rows = _records(2)
    events, numbers = _with_bad_lines(tmp_path, "events.jsonl", rows)
    pack = dump_pack(load_pack(_candidate_doc()))
    report = run_local(pack, [events])
    clean = run_local(pack, [_write(tmp_path, rows, "clean.jsonl")])
    assert (report.replayed, report.skipped) == (clean.replayed, clean.skipped)
    assert report.groups == clean.groups and report.changed > 0
    assert report.bad_lines == 5
    assert [(b.path, b.line) for b in report.bad] == [(events, n) for n in numbers]
    reasons = [b.reason for b in report.bad]
    assert reasons[0].startswith("not JSON: ")
    assert reasons[1:] == [
        "nested too deeply to read",
        "nested too deeply to read",
        "not a JSON object",
        "not UTF-8 text",
    ]


def test_a_dask_cluster_names_bad_lines_by_file_and_line_as_the_local_engine_does(
    tmp_path, monkeypatch
):
    import distributed

    from routing_core import replay_engines

    # Small blocks, so that the file is read in several partitions whose line numbers must
    # be carried over from one block to the next.
    monkeypatch.setattr(replay_engines, "BLOCK_BYTES", 20_000)
    rows = _records(4)
    events, numbers = _with_bad_lines(tmp_path, "events.jsonl", rows)
    other = _write(tmp_path, rows[:5], "other.jsonl")
    pack = dump_pack(load_pack(_candidate_doc()))
    in_process = replay_engines.run_local(pack, [other, events])
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, dashboard_address=LOOPBACK
    ) as cluster:
        on_cluster = replay_engines.run_dask(
            pack, [other, events], scheduler=cluster.scheduler_address
        )
    assert on_cluster.to_dict() == in_process.to_dict()
    assert [(b.path.rsplit("/", 1)[-1], b.line) for b in on_cluster.bad] == [
        ("events.jsonl", n) for n in numbers
    ]


def test_a_local_cluster_starts_while_another_holds_dask_s_usual_port(tmp_path):
    """Two replays (or a notebook's cluster) at once: the scheduler's HTTP server takes a
    free loopback port, not 8787, so the second neither fails nor warns (warnings are
    errors here) and nothing is served to the network."""
    import socket

    from routing_core import replay_engines

    rows = _records(2)
    events = _write(tmp_path, rows, "events.jsonl")
    pack = dump_pack(load_pack(_candidate_doc()))
    with socket.socket() as holder:
        try:
            holder.bind(("0.0.0.0", 8787))
            holder.listen()
        except OSError:
            pass  # something else holds it already: the same situation
        report = replay_engines.run_dask(pack, [events], workers=1)
    assert report.to_dict() == replay_engines.run_local(pack, [events]).to_dict()


def test_the_command_names_the_bad_lines_and_exits_0(tmp_path):
    events, numbers = _with_bad_lines(tmp_path, "events.jsonl", _records())
    done = subprocess.run(
        [sys.executable, "-m", "routing_core.cli", "replay", _pack_file(tmp_path), events],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert "5 line(s) holding no record skipped:" in done.stdout
    assert f"  {events}:{numbers[1]}: nested too deeply to read" in done.stdout
    assert "Traceback" not in done.stderr
