"""A lease held by this process, and the lease it inherited from ``bioaccel gpu-run``."""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..devices import Device, discover_devices
from ..errors import SchedulerConfigError
from . import procs, rundir
from .admin import run_dir

ENV_HELD = "BIOACCEL_LEASED_GPUS"
ENV_LEASE = "BIOACCEL_LEASE"
_ID = re.compile(r"^[0-9]+\.[0-9]{6}-[0-9]+-[0-9a-f]{8}$")


@dataclass
class Lease:
    """GPUs held by this process. ``visible`` is the ``CUDA_VISIBLE_DEVICES`` value."""

    devices: list[Device]
    slots: int
    request_id: str
    inherited: bool = False
    record: Path | None = None
    _fds: list[int] = field(default_factory=list, repr=False)
    _saved_env: str | None = field(default=None, repr=False)

    @property
    def visible(self) -> str:
        return ",".join(d.visible_id for d in self.devices)

    @property
    def lock_fds(self) -> list[int]:
        """The slot locks' (and the record's) descriptors: pass them to a child
        (``pass_fds``) and the GPUs stay held while either process lives."""
        return list(self._fds)

    def wiped(self) -> bool:
        """The record or a slot lock file of this lease was deleted (the run folder was
        wiped): others no longer see this lease."""
        for fd in self._fds:
            with contextlib.suppress(OSError):
                if os.fstat(fd).st_nlink == 0:
                    return True
        return False

    def release(self) -> None:
        """End the lease now (for every process sharing its descriptors)."""
        if self.record is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.record)
            self.record = None
        for fd in self._fds:
            with contextlib.suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
        self._fds.clear()

    def close(self) -> None:
        """Close this process's descriptors without unlocking: the lease lasts while a
        process that inherited them (a job's leftover) lives."""
        for fd in self._fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self._fds.clear()

    def __enter__(self) -> Lease:
        self._saved_env = os.environ.get("CUDA_VISIBLE_DEVICES")
        os.environ["CUDA_VISIBLE_DEVICES"] = self.visible
        return self

    def __exit__(self, *exc) -> None:
        if self._saved_env is None:
            os.environ.pop("CUDA_VISIBLE_DEVICES", None)
        else:
            os.environ["CUDA_VISIBLE_DEVICES"] = self._saved_env
        if not self.inherited:
            self.release()


def inherited_lease(env=None) -> Lease | None:
    """The lease this process inherited from ``bioaccel gpu-run``, if the arbiter can verify
    it: ``BIOACCEL_LEASE`` names a live lease record of this user, and this process holds
    that record's lock descriptor or descends from the process that locked it. Where
    ``BIOACCEL_LEASED_GPUS`` is set without such a lease, it is ignored with a warning
    (None)."""
    env = os.environ if env is None else env
    visible = env.get(ENV_HELD)
    if visible is None:
        return None
    rid = env.get(ENV_LEASE, "")
    why = None
    try:
        directory = run_dir(env)
    except SchedulerConfigError as exc:
        directory, why = None, str(exc)
    if why is None and not _ID.match(rid):
        why = f"{ENV_LEASE} is {'missing' if not rid else repr(rid)}"
    if why is None:
        path = directory / f"lease.{rid}.json"
        opened = rundir.open_record(path)
        if opened is None:
            why = f"no live lease record {str(path)!r}"
        else:
            fd, st = opened
            try:
                takers = (procs.lock_takers() or {}).get((st.st_dev, st.st_ino), [])
                inside = any(
                    p == os.getpid() or p in procs.ancestors() for p in takers
                ) or procs.has_open(os.getpid(), st.st_dev, st.st_ino)
                if st.st_uid != os.getuid():
                    why = f"{rundir.describe(path, st)} is not this user's"
                elif not rundir.is_locked(fd) and not inside:
                    why = f"{str(path)!r} is not held by a live process"
                elif not inside:
                    why = "this process is neither inside that lease nor holds its lock"
            finally:
                os.close(fd)
    if why is not None:
        rundir.warn(
            f"{ENV_HELD}={visible!r} is not backed by a live lease this process is "
            f"inside ({why}): ignored, the GPUs are leased from the arbiter"
        )
        return None
    return Lease(discover_devices(env), 0, rid, inherited=True)
