"""The pack in service, and the background threads that replace it (docs/server.md).

A request reads `PackHolder.state` once and decides every turn of its body on that one state:
a swap replaces the reference, so a request sees the old pack or the new one, never a mix.
Loading, validating and compiling happen on a background thread; a request never waits on a
pull or a reload, and a pack that fails any step is refused while the last good one serves.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from routing_core.codec import load_pack
from routing_core.errors import PackError
from routing_core.limits import MAX_PACK_BYTES
from routing_core.pack import Pack
from routing_core.remote import FetchResult, PackFetcher
from routing_core.rollout import Rollout, Serving
from routing_core.router import Router
from routing_core.signing import PublicKeys, SignatureError, signature_path, verify_pack_file

log = logging.getLogger("routing_core.server")


@dataclass(frozen=True, slots=True)
class PackState:
    """One compiled pack and where it came from; immutable, replaced whole on a swap.

    `revision` counts the packs this process has put in service (1 for the first): two
    answers with the same revision were decided by the same pack in that process.
    """

    router: Router
    revision: int
    checksum: str
    slug: str
    version: int
    loaded_at: str
    source: str
    names: frozenset[str]  # the pack's routes: an incumbent must be one
    key_id: str | None = None  # the key whose signature was verified; None: not verified
    # The environment's rollout and the candidate's router (both or neither; docs/server.md).
    rollout: Rollout | None = None
    candidate: Router | None = None

    @property
    def serving(self) -> Serving:
        """The live router and the rollout's, as `routing_core.rollout.serve_turn` takes them."""
        return Serving(self.router, self.checksum, self.rollout, self.candidate)

    def identity(self) -> dict[str, object]:
        """The pack fields every answer carries."""
        return {
            "slug": self.slug,
            "version": self.version,
            "checksum": self.checksum,
            "revision": self.revision,
        }


class PackHolder:
    """The state in service plus the outcome of the last attempt to replace it.

    Args:
        on_swap: told the new state after each swap (metrics).
        on_failure: told the kind (`pull` or `reload`) and reason of each refused pack.
    """

    def __init__(
        self,
        source: str,
        *,
        on_swap: Callable[[PackState], None] | None = None,
        on_failure: Callable[[str, str], None] | None = None,
    ) -> None:
        self.source = source
        self.state: PackState | None = None
        self.last_error: str | None = None
        self._on_swap = on_swap
        self._on_failure = on_failure
        self._lock = threading.Lock()  # only writers take it: readers read one reference

    def put(
        self,
        pack: Pack,
        *,
        key_id: str | None = None,
        rollout: Rollout | None = None,
        candidate: Pack | None = None,
    ) -> PackState:
        """Compile `pack` (outside any lock) and put it in service (`key_id`: it was verified),
        with the rollout's `candidate` beside it when the studio names one."""
        router = Router(pack)
        trial = self._candidate(rollout, candidate)
        slug, version, checksum = (
            router.pack.profile.slug,
            router.pack.version,
            router.pack.checksum,
        )
        with self._lock:
            revision = 1 if self.state is None else self.state.revision + 1
            state = PackState(
                router=router,
                revision=revision,
                checksum=checksum,
                slug=slug,
                version=version,
                loaded_at=datetime.now(UTC).isoformat(timespec="seconds"),
                source=self.source,
                names=frozenset(router.pack.route_names),
                key_id=key_id,
                rollout=rollout if trial is not None else None,
                candidate=trial,
            )
            self.state = state
            self.last_error = None
        log.info("pack %s v%s %s in service (revision %d)", slug, version, checksum, revision)
        if self._on_swap is not None:
            self._on_swap(state)
        return state

    def _candidate(self, rollout: Rollout | None, candidate: Pack | None) -> Router | None:
        """The candidate's router: the one in service when its checksum is unchanged."""
        if rollout is None or candidate is None:
            return None
        held = self.state
        if held is None or held.rollout is None or held.rollout.checksum != rollout.checksum:
            return Router(candidate)
        return held.candidate or Router(candidate)

    def refuse(self, kind: str, reason: str) -> None:
        """Record a refused pack; the one in service stays."""
        self.last_error = reason
        log.warning("pack %s refused, keeping the last good pack: %s", kind, reason)
        if self._on_failure is not None:
            self._on_failure(kind, reason)


class _Poller:
    """A daemon thread that calls `tick` every `interval` seconds until stopped."""

    def __init__(self, interval: float, name: str) -> None:
        self.interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name=name)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def _run(self) -> None:
        while True:
            try:
                self.tick()
            except Exception:  # a watcher that dies would silently freeze the pack
                log.exception("pack watcher step failed")
            if self._stop.wait(self.interval):
                return

    def tick(self) -> None:
        raise NotImplementedError


class FileWatcher(_Poller):
    """Follows a pack file: a change of its modification time, size or inode is reloaded.

    Polling `stat` works the same on every filesystem (bind mounts, network volumes, a
    Kubernetes ConfigMap's symlink swap), where change notifications do not always arrive.
    Writers should write a temporary file and rename it over the pack; a half-written file is
    refused like any bad pack, and the complete one is read when its own change is seen.
    With `keys`, the signature file beside the pack (`PACK.sig`) must verify, and a change of
    either file is a change: write the new signature first, then rename the pack over.
    """

    def __init__(
        self,
        path: str | Path,
        holder: PackHolder,
        *,
        interval: float = 1.0,
        keys: PublicKeys | None = None,
    ) -> None:
        super().__init__(interval, "routing-core-pack-file")
        self.path = Path(path)
        self.holder = holder
        self.keys = keys
        self._seen: tuple[int, ...] | None = None

    def tick(self) -> None:
        """Reload the file when it changed since the last look."""
        try:
            st = os.stat(self.path)
        except OSError as exc:
            if self._seen != (0, 0, 0):
                self._seen = (0, 0, 0)
                self.holder.refuse("reload", f"cannot read {self.path}: {exc.strerror}")
            return
        stamp = (st.st_mtime_ns, st.st_size, st.st_ino, *self._signature_stamp())
        if stamp == self._seen:
            return
        self._seen = stamp
        self.load()

    def _signature_stamp(self) -> tuple[int, ...]:
        if self.keys is None:
            return ()
        try:
            st = os.stat(signature_path(self.path))
        except OSError:
            return (0, 0, 0)
        return (st.st_mtime_ns, st.st_size, st.st_ino)

    def load(self) -> bool:
        """Read, verify when keys are set, validate and swap in the file now; False (and the
        reason recorded) when refused."""
        try:
            if self.path.stat().st_size > MAX_PACK_BYTES:
                raise PackError([("$", f"pack larger than {MAX_PACK_BYTES // 2**20} MiB refused")])
            key_id = None
            if self.keys is None:
                body = self.path.read_bytes()
            else:
                body, key_id = verify_pack_file(self.path, self.keys)
            self.holder.put(load_pack(body), key_id=key_id)
        except SignatureError as exc:
            self.holder.refuse("reload", f"signature refused: {exc.reason}")
            return False
        except PackError as exc:
            self.holder.refuse("reload", "invalid pack: " + "; ".join(exc.lines()[:5]))
            return False
        except OSError as exc:
            self.holder.refuse("reload", f"cannot read {self.path}: {exc}")
            return False
        except Exception as exc:  # noqa: BLE001 - a pack that fails to compile is kept out
            self.holder.refuse("reload", f"pack failed to compile: {type(exc).__name__}: {exc}")
            return False
        return True


class StudioFollower(_Poller):
    """Follows a studio environment with `PackFetcher` (ETag: a 304 costs almost nothing).

    A studio that is down, slow or serving a bad pack costs this thread time, never a request.
    """

    def __init__(self, fetcher: PackFetcher, holder: PackHolder, *, interval: float = 30.0) -> None:
        super().__init__(interval, "routing-core-pack-pull")
        self.fetcher = fetcher
        self.holder = holder

    def tick(self) -> None:
        """Pull once; swap in a new pack, or record why none came."""
        result = self.fetcher.fetch()
        if result.status == "failed":
            if self.holder.state is None and result.fallback is not None:
                # Nothing served yet, and only the rollout's candidate was missing: serve live.
                self._put(replace(result, pack=result.fallback, rollout=None, candidate=None))
            self.holder.refuse("pull", result.error or "pull failed")
            return
        if result.pack is not None:
            self._put(result)

    def _put(self, result: FetchResult) -> None:
        assert result.pack is not None
        try:
            self.holder.put(
                result.pack,
                key_id=result.key_id,
                rollout=result.rollout,
                candidate=result.candidate,
            )
        except Exception as exc:  # noqa: BLE001 - a pack that fails to compile is kept out
            self.fetcher.etag = None  # ask again in full next time
            reason = f"pack failed to compile: {type(exc).__name__}: {exc}"
            self.fetcher.status.last_error = reason
            self.holder.refuse("pull", reason)
            return
        self.fetcher.took(result.pack, result.key_id)
