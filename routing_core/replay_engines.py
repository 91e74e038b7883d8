"""Where a replay runs: in this process, or on a Dask distributed cluster.

Event files are JSON lines (one record per line) or Parquet, read through fsspec so a path may
be local or an object-storage URL (`s3://…`, `gs://…`, `https://…`). Dask, fsspec and pyarrow are
the optional `replay` extra and are imported only here, only when used.

On a cluster, each task is one partition (a block of a JSON-lines file, or a Parquet row group);
the pack travels once per worker and each worker process compiles it once (`_worker_router`),
never once per turn or per task.

A line that holds no record is a `BadLine` named by file and line on both engines. A block of
a file does not know where in the file it starts, so a cluster's partition names its bad lines
by their place in the block and says how many lines it read; the blocks come back in file
order, and `_number_lines` adds each block's offset.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Iterator, Sequence
from functools import lru_cache
from typing import Any

from routing_core.codec import load_pack
from routing_core.replay import BadLine, PartialReplay, ReplayReport, replay_turns, summarise
from routing_core.router import Router

BLOCK_BYTES = 16 * 1024 * 1024


def is_parquet(path: str) -> bool:
    return path.lower().rsplit("?", 1)[0].endswith((".parquet", ".pq"))


def read_records(paths: Sequence[str]) -> Iterator[dict[str, Any] | BadLine]:
    """Every record of every file, in order (JSON lines, or Parquet by its suffix), and a
    BadLine for each line that holds none."""
    for path in paths:
        if is_parquet(path):
            yield from _parquet_records(path, None)
        else:
            yield from _json_lines(path)


def run_local(pack_text: str, paths: Sequence[str]) -> ReplayReport:
    """Replay in this process: one Router, every record."""
    router = Router(load_pack(pack_text))
    return summarise([replay_turns(router, read_records(paths))])


# Where a local cluster's scheduler serves HTTP (its dashboard): loopback, any free port.
LOOPBACK = "127.0.0.1:0"


def run_dask(
    pack_text: str,
    paths: Sequence[str],
    *,
    scheduler: str | None = None,
    workers: int = 2,
) -> ReplayReport:
    """Replay on Dask distributed: the cluster at `scheduler`, else a local one of `workers` processes."""
    from dask import bag
    from distributed import Client, LocalCluster

    cluster = None
    if scheduler is None:
        # The scheduler serves HTTP even without a dashboard, on 8787 unless told otherwise:
        # on this machine's loopback and a free port, so that a second cluster (another
        # replay, a notebook's) neither collides with it nor is exposed to the network.
        cluster = LocalCluster(  # type: ignore[no-untyped-call]
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=LOOPBACK
        )
    try:
        with Client(scheduler or cluster) as client:  # type: ignore[no-untyped-call]
            pack = client.scatter(pack_text, broadcast=True)
            parts = _partitions(bag, paths, pack)
            results = client.compute(parts.to_delayed(), sync=True)
            return summarise(_number_lines(part for partition in results for part in partition))
    finally:
        if cluster is not None:
            cluster.close()


def _partitions(bag: Any, paths: Sequence[str], pack: Any) -> Any:
    """A bag of partial replays: JSON lines split in blocks, Parquet split by row group."""
    lines = [p for p in paths if not is_parquet(p)]
    parquet = [p for p in paths if is_parquet(p)]
    pieces = []
    if lines:
        # Undecodable bytes are kept as lone surrogates for `_parse_line` to name the line.
        text = bag.read_text(
            lines, blocksize=BLOCK_BYTES, include_path=True, errors="surrogateescape"
        )
        pieces.append(text.map_partitions(_replay_block, pack))
    if parquet:
        groups = [(p, g) for p in parquet for g in range(_row_groups(p))]
        records = bag.from_sequence(groups, npartitions=max(1, len(groups)))
        pieces.append(records.map_partitions(_read_groups).map_partitions(_replay_partition, pack))
    return bag.concat(pieces) if len(pieces) > 1 else pieces[0]


@dataclasses.dataclass(frozen=True, slots=True)
class _Block:
    """A block's replay, its bad lines numbered within the block, and how many lines it read."""

    part: PartialReplay
    path: str
    lines: int


def _replay_block(lines: Iterable[tuple[str, str]], pack_text: str) -> list[_Block]:
    """Replay one block of a JSON-lines file ((line, path) pairs, all of one file)."""
    read = 0
    path = ""

    def records() -> Iterator[dict[str, Any] | BadLine]:
        nonlocal read, path
        for read, (line, path) in enumerate(lines, start=1):  # noqa: B007 - read after the loop
            record = _parse_line(line, path, read)
            if record is not None:
                yield record

    part = replay_turns(_worker_router(pack_text), records())
    return [_Block(part, path, read)]


def _number_lines(parts: Iterable[PartialReplay | _Block]) -> Iterator[PartialReplay]:
    """Partial replays with their bad lines numbered in their files (blocks come in order)."""
    before: dict[str, int] = {}
    for part in parts:
        if isinstance(part, PartialReplay):
            yield part
            continue
        offset = before.get(part.path, 0)
        before[part.path] = offset + part.lines
        bad = tuple(dataclasses.replace(b, line=b.line + offset) for b in part.part.bad)
        yield dataclasses.replace(part.part, bad=bad)


def _replay_partition(records: Any, pack_text: str) -> list[PartialReplay]:
    # A list of one: dask concatenates partitions' lists, and a partition's result is one part.
    return [replay_turns(_worker_router(pack_text), (r for r in records if r is not None))]


@lru_cache(maxsize=4)
def _worker_router(pack_text: str) -> Router:
    """The compiled Router of this worker process: built on the first partition, then reused."""
    return Router(load_pack(pack_text))


def _parse_line(line: str, path: str, number: int) -> dict[str, Any] | BadLine | None:
    """The record on one line; None for a blank line; a BadLine saying why it holds none."""
    line = line.strip()
    if not line:
        return None
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:  # undecodable bytes, kept as lone surrogates by the reader
        return BadLine(path, number, "not UTF-8 text")
    try:
        value = json.loads(line)
    except json.JSONDecodeError as exc:
        return BadLine(path, number, f"not JSON: {exc.msg} at column {exc.colno}")
    except RecursionError:
        return BadLine(path, number, "nested too deeply to read")
    if not isinstance(value, dict):
        return BadLine(path, number, "not a JSON object")
    return value


def _json_lines(path: str) -> Iterator[dict[str, Any] | BadLine]:
    import fsspec

    with fsspec.open(
        path, "rt", encoding="utf-8", errors="surrogateescape", compression="infer"
    ) as handle:
        for number, line in enumerate(handle, start=1):
            record = _parse_line(line, path, number)
            if record is not None:
                yield record


def _row_groups(path: str) -> int:
    import fsspec
    import pyarrow.parquet as pq

    with fsspec.open(path, "rb") as handle:
        return int(pq.ParquetFile(handle).num_row_groups)


def _parquet_records(path: str, group: int | None) -> Iterator[dict[str, Any]]:
    import fsspec
    import pyarrow.parquet as pq

    with fsspec.open(path, "rb") as handle:
        source = pq.ParquetFile(handle)
        table = source.read() if group is None else source.read_row_group(group)
        yield from table.to_pylist()


def _read_groups(groups: Any) -> list[dict[str, Any]]:
    return [r for path, group in groups for r in _parquet_records(path, group)]
