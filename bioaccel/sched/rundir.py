"""Files in a run directory shared by many Unix users, created and read safely.

- Folders are made with their mode set explicitly (``1777``: sticky and world-writable, like
  ``/tmp``; ``0700`` for a private one) and put in place by one ``rename``, so nobody ever
  sees one with the creator's umask.
- Files are written beside their name under a temporary name, given their mode with
  ``fchmod`` and then linked to their name: another user sees either no file or the whole
  file, readable whatever the creator's umask. An existing shared file is never opened with
  ``O_CREAT`` (Linux's ``protected_regular`` refuses that in sticky folders).
- Nothing follows a symlink (``O_NOFOLLOW``) or opens a FIFO or device; a record larger than
  :data:`MAX_RECORD_BYTES` is not read. A bad record is skipped with an
  :class:`~bioaccel.errors.ArbiterWarning` naming it and its owner, never a crash.
- Lock files are opened read-only: ``flock`` needs no write access, so nobody needs to be
  able to write another user's file.
- A *shared* folder (writable by group or others) must be root's, and so must the files
  that others' exclusion depends on (configuration, lock files): ``bioaccel admin init``
  makes them. Anything else is refused with :data:`ADMIN_HINT`; a *private* folder (its
  owner's alone) is its owner's to fill.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import stat
import uuid
import warnings
from pathlib import Path

from ..errors import ArbiterWarning, SchedulerConfigError
from .identity import user_name

#: Queue entries and lease records are small; anything larger is not read.
MAX_RECORD_BYTES = 64 * 1024
SHARED_DIR_MODE = 0o1777
PRIVATE_DIR_MODE = 0o700
RECORD_MODE = 0o644
#: The one line every refusal to coordinate ends with.
ADMIN_HINT = "an administrator should run `sudo bioaccel admin init` (README: 'For administrators')"


def is_shared(st: os.stat_result) -> bool:
    """A folder others may write in (group or world): its files must be made by root."""
    return bool(stat.S_IMODE(st.st_mode) & 0o022)


def trusted_owners(st: os.stat_result) -> set[int]:
    """Who may own the lock and configuration files of the run folder ``st``."""
    return {0} if is_shared(st) else {0, st.st_uid}


def owner_of(st: os.stat_result) -> str:
    return user_name(st.st_uid)


def describe(path: Path, st: os.stat_result) -> str:
    return f"{str(path)!r} (owner {owner_of(st)}, mode {stat.S_IMODE(st.st_mode):04o})"


def warn(message: str) -> None:
    warnings.warn(message, ArbiterWarning, stacklevel=3)


def ensure_dir(path: Path, mode: int = SHARED_DIR_MODE) -> os.stat_result:
    """Make ``path`` a folder with ``mode`` (atomically) unless it exists; check what is there.

    Raises
    ------
    SchedulerConfigError
        ``path`` is a symlink or not a folder, is world-writable without the sticky bit (any
        user could delete the others' files), is private but not ours, or is not usable.
    """
    path = Path(path)
    for _ in range(10):
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.parent / f".{path.name}.{uuid.uuid4().hex}.tmp"
            os.mkdir(tmp, 0o700)
            try:
                os.chmod(tmp, mode)
                os.rename(tmp, path)  # atomic; fails if another user was faster
            except OSError:
                with contextlib.suppress(OSError):
                    os.rmdir(tmp)
            continue
        _check_dir(path, st, mode)
        return st
    raise SchedulerConfigError(f"cannot create the run directory {str(path)!r}")


def _check_dir(path: Path, st: os.stat_result, mode: int) -> None:
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        kind = "a symlink" if stat.S_ISLNK(st.st_mode) else "not a folder"
        raise SchedulerConfigError(
            f"run directory {describe(path, st)} is {kind}; expected a folder (remove it, or "
            "set BIOACCEL_RUN_DIR to another path)"
        )
    bits = stat.S_IMODE(st.st_mode)
    if is_shared(st) and st.st_uid != 0:
        raise SchedulerConfigError(
            f"run directory {describe(path, st)} is shared but belongs to "
            f"{owner_of(st)}, who could delete the others' locks: {ADMIN_HINT}"
        )
    if bits & 0o022 and not bits & stat.S_ISVTX:
        raise SchedulerConfigError(
            f"run directory {describe(path, st)} is world-writable without the sticky bit: "
            f"any user could delete the others' leases; expected mode 1777 or 3770 (chmod +t)"
        )
    if not is_shared(st) and st.st_uid != os.getuid() and os.getuid() != 0:
        raise SchedulerConfigError(
            f"private run directory {describe(path, st)} belongs to another user"
        )
    if not os.access(path, os.W_OK | os.X_OK):
        raise SchedulerConfigError(
            f"run directory {describe(path, st)} is not writable by {user_name(os.getuid())}; "
            "an administrator should make it mode 1777 (or group-writable for a group; see "
            "the README), or set BIOACCEL_RUN_DIR"
        )


def publish(
    path: Path,
    data: bytes = b"",
    mode: int = RECORD_MODE,
    *,
    lock: bool = False,
    keep_fd: bool = False,
) -> int | None:
    """Create ``path`` holding ``data`` with ``mode``, atomically (see the module).

    ``lock``: the file is ``flock``ed before it appears. ``keep_fd``: return its descriptor
    (else it is closed). Raises :class:`FileExistsError` if ``path`` exists.
    """
    tmp = path.parent / f".{path.name}.{uuid.uuid4().hex}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fchmod(fd, mode)
        if lock:
            fcntl.flock(fd, fcntl.LOCK_EX)
        os.link(tmp, path)
    except BaseException:
        os.close(fd)
        raise
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    if keep_fd:
        return fd
    os.close(fd)
    return None


def open_shared(path: Path, content: bytes = b"") -> int:
    """A read-only descriptor of the shared file ``path`` (a lock file), creating it with
    ``content`` if it is missing. Raises :class:`SchedulerConfigError` for a symlink or a
    file that is not a regular file."""
    for _ in range(10):
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except FileNotFoundError:
            with contextlib.suppress(FileExistsError):
                publish(path, content)
            continue
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise SchedulerConfigError(
                    f"{describe(path, os.lstat(path))} is a symlink; bioaccel never follows one "
                    "in its run directory (someone planted it: an administrator should remove "
                    "it)"
                ) from None
            if exc.errno == errno.EACCES:
                raise SchedulerConfigError(
                    f"{describe(path, os.lstat(path))} is not readable by "
                    f"{user_name(os.getuid())}, so its lock cannot be shared (an administrator "
                    "should remove it)"
                ) from None
            raise
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            os.close(fd)
            raise SchedulerConfigError(
                f"{describe(path, st)} is not a regular file (an administrator should remove it)"
            )
        return fd
    raise SchedulerConfigError(f"cannot create {str(path)!r}")


def open_lock(path: Path, owners: set[int], content: bytes = b"", create: bool = False) -> int:
    """A read-only descriptor of the lock or configuration file ``path``, which must be a
    regular file with one link owned by one of ``owners`` (else
    :class:`SchedulerConfigError` naming it, its owner and :data:`ADMIN_HINT`).
    ``create``: make it with ``content`` if it is missing (else a missing file is refused)."""
    for _ in range(10):
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except FileNotFoundError:
            if not create:
                raise SchedulerConfigError(f"{str(path)!r} is missing: {ADMIN_HINT}") from None
            with contextlib.suppress(FileExistsError):
                publish(path, content)
            continue
        except OSError as exc:
            st = os.lstat(path)
            why = (
                "is a symlink"
                if exc.errno == errno.ELOOP
                else f"is not readable by {user_name(os.getuid())}"
                if exc.errno == errno.EACCES
                else exc.strerror
            )
            raise SchedulerConfigError(f"{describe(path, st)} {why}: {ADMIN_HINT}") from None
        st = os.fstat(fd)
        problem = (
            "not a regular file"
            if not stat.S_ISREG(st.st_mode)
            else f"owned by {owner_of(st)}, not by "
            f"{' or '.join(sorted(user_name(u) for u in owners))}"
            if st.st_uid not in owners
            else f"hard-linked ({st.st_nlink} names)"
            if st.st_nlink != 1
            else None
        )
        if problem:
            os.close(fd)
            raise SchedulerConfigError(
                f"{describe(path, st)} is {problem}: another user could "
                f"have planted it; {ADMIN_HINT}"
            )
        return fd
    raise SchedulerConfigError(f"cannot create {str(path)!r}")


def open_record(path: Path) -> tuple[int, os.stat_result] | None:
    """Open a queue entry or lease record read-only; None, with a warning, for a symlink, a
    FIFO or other non-file, or one larger than :data:`MAX_RECORD_BYTES`; None, silently, if
    it is gone (its owner finished)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        with contextlib.suppress(OSError):
            st = os.lstat(path)
            warn(
                f"skipping {describe(path, st)}: "
                + ("a symlink" if exc.errno == errno.ELOOP else exc.strerror)
            )
            return None
        return None
    st = os.fstat(fd)
    problem = None
    if not stat.S_ISREG(st.st_mode):
        problem = "not a regular file"
    elif st.st_size > MAX_RECORD_BYTES:
        problem = f"{st.st_size} bytes, over the {MAX_RECORD_BYTES} bytes a record may have"
    if problem:
        os.close(fd)
        warn(f"skipping {describe(path, st)}: {problem}")
        return None
    return fd, st


def read_record(fd: int, st: os.stat_result, path: Path, fields: dict[str, tuple]) -> dict | None:
    """The JSON object in ``fd``, if it is one and each of ``fields`` (name -> allowed types)
    has an allowed type; else None with a warning."""
    data = os.pread(fd, MAX_RECORD_BYTES + 1, 0)
    try:
        info = json.loads(data.decode())
    except (UnicodeDecodeError, ValueError) as exc:
        warn(f"skipping {describe(path, st)}: not JSON ({exc})")
        return None
    if not isinstance(info, dict):
        warn(f"skipping {describe(path, st)}: expected a JSON object, got {type(info).__name__}")
        return None
    for name, types in fields.items():
        value = info.get(name)
        if not isinstance(value, types) or isinstance(value, bool) and bool not in types:
            warn(
                f"skipping {describe(path, st)}: field {name!r} = {value!r:.60} is not "
                f"{' or '.join('null' if t is type(None) else t.__name__ for t in types)}"
            )
            return None
    return info


def try_lock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False


def is_locked(fd: int) -> bool:
    """Someone else holds ``fd``'s file locked (probed by taking and dropping the lock)."""
    if not try_lock(fd):
        return True
    fcntl.flock(fd, fcntl.LOCK_UN)
    return False


def may_remove(st: os.stat_result) -> bool:
    """Files of a dead owner are removed by that owner (or root): the sticky bit forbids
    anyone else."""
    return os.getuid() in (0, st.st_uid)
