"""Where a replay runs: in this process, or on a Dask distributed cluster.

Event files are JSON lines (one record per line) or Parquet, read through fsspec so a path may
be local or an object-storage URL (`s3://…`, `gs://…`, `https://…`). Dask, fsspec and pyarrow are
the optional `replay` extra and are imported only here, only when used.

On a cluster, each task is one partition (a block of a JSON-lines file, or a Parquet row group);
the pack travels once per worker and each worker process compiles it once (`_worker_router`),
never once per turn or per task.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import Any

from routing_core.codec import load_pack
from routing_core.replay import PartialReplay, ReplayReport, replay_turns, summarise
from routing_core.router import Router

BLOCK_BYTES = 16 * 1024 * 1024


def is_parquet(path: str) -> bool:
    return path.lower().rsplit("?", 1)[0].endswith((".parquet", ".pq"))


def read_records(paths: Sequence[str]) -> Iterator[dict[str, Any]]:
    """Every record of every file, in order (JSON lines, or Parquet by its suffix)."""
    for path in paths:
        if is_parquet(path):
            yield from _parquet_records(path, None)
        else:
            yield from _json_lines(path)


def run_local(pack_text: str, paths: Sequence[str]) -> ReplayReport:
    """Replay in this process: one Router, every record."""
    router = Router(load_pack(pack_text))
    return summarise([replay_turns(router, read_records(paths))])


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
        cluster = LocalCluster(  # type: ignore[no-untyped-call]
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
        )
    try:
        with Client(scheduler or cluster) as client:  # type: ignore[no-untyped-call]
            pack = client.scatter(pack_text, broadcast=True)
            parts = _partitions(bag, paths).map_partitions(_replay_partition, pack)
            results = client.compute(parts.to_delayed(), sync=True)
            return summarise(part for partition in results for part in partition)
    finally:
        if cluster is not None:
            cluster.close()


def _partitions(bag: Any, paths: Sequence[str]) -> Any:
    """A bag of records: JSON lines split in blocks, Parquet split by row group."""
    lines = [p for p in paths if not is_parquet(p)]
    parquet = [p for p in paths if is_parquet(p)]
    pieces = []
    if lines:
        pieces.append(bag.read_text(lines, blocksize=BLOCK_BYTES).map(_parse_line))
    if parquet:
        groups = [(p, g) for p in parquet for g in range(_row_groups(p))]
        pieces.append(
            bag.from_sequence(groups, npartitions=max(1, len(groups))).map_partitions(_read_groups)
        )
    return bag.concat(pieces) if len(pieces) > 1 else pieces[0]


def _replay_partition(records: Any, pack_text: str) -> list[PartialReplay]:
    # A list of one: dask concatenates partitions' lists, and a partition's result is one part.
    return [replay_turns(_worker_router(pack_text), (r for r in records if r is not None))]


@lru_cache(maxsize=4)
def _worker_router(pack_text: str) -> Router:
    """The compiled Router of this worker process: built on the first partition, then reused."""
    return Router(load_pack(pack_text))


def _parse_line(line: str) -> dict[str, Any] | None:
    line = line.strip()
    if not line:
        return None
    value = json.loads(line)
    return value if isinstance(value, dict) else None


def _json_lines(path: str) -> Iterator[dict[str, Any]]:
    import fsspec

    with fsspec.open(path, "rt", encoding="utf-8", compression="infer") as handle:
        for line in handle:
            record = _parse_line(line)
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
