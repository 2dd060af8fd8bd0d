"""Where the arbiter service lives and how its clients find it, safely.

- State (configuration, queue, leases, accounting: SQLite) in :data:`STATE_DIR`
  (``/var/lib/bioaccel``, root's, mode 0700), the socket in :data:`SOCKET_DIR`
  (``/run/bioaccel``, root's, 0755) as ``arbiter.sock`` (0666: any user may connect; who
  connects is the kernel's ``SO_PEERCRED``, never anything the client says).
- :func:`secure_dir` makes those folders as root without following a symlink anywhere on the
  path (each component opened with ``O_NOFOLLOW`` relative to its parent's descriptor), and
  refuses a component that root does not own or that others may write without the sticky
  bit; a last component planted by another user (in a sticky parent such as ``/tmp``) is
  moved aside and made afresh. Its mode and owner are set through the descriptor.
- :func:`find_socket` says whether the service is in force for this process: the socket
  named by ``BIOACCEL_ARBITER_SOCKET`` (else the default) exists, is a socket owned by
  root, in a folder owned by root that nobody else may write. A socket that fails these
  checks is refused (never used, never silently skipped); with no socket on a host where the
  service is installed (its state folder exists), every lease fails closed; with neither, the
  per-user private mode is in force; under Slurm (``SLURM_JOB_ID``), Slurm's binding is.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import time
from pathlib import Path

from ..errors import SchedulerConfigError

STATE_DIR = Path("/var/lib/bioaccel")
SOCKET_DIR = Path("/run/bioaccel")
SOCKET_NAME = "arbiter.sock"
ENV_SOCKET = "BIOACCEL_ARBITER_SOCKET"
#: A request line (JSON) may have at most this many bytes.
MAX_LINE = 64 * 1024
PROTOCOL = 1
START_HINT = "an administrator should run `sudo bioaccel admin init` (README: 'For administrators')"


def default_socket() -> Path:
    return SOCKET_DIR / SOCKET_NAME


def _open_component(parent_fd: int, name: str) -> int:
    return os.open(
        name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent_fd
    )


def _trusted_parent(st: os.stat_result) -> bool:
    """A folder only root can change the entries of (others may write only if sticky)."""
    mode = stat.S_IMODE(st.st_mode)
    return st.st_uid == 0 and (not mode & 0o022 or bool(mode & stat.S_ISVTX))


def secure_dir(path: str | Path, mode: int, say=None) -> int:
    """Make (or check) root's folder ``path`` with ``mode``, safely (see the module); returns
    a descriptor of it. Run as root.

    Raises
    ------
    SchedulerConfigError
        A component of the path is a symlink or not a folder, or is not root's, or others may
        write it (a parent without the sticky bit).
    """
    path = Path(os.path.abspath(path))
    parts = path.parts[1:]
    fd = os.open("/", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    here = Path("/")
    try:
        for k, name in enumerate(parts):
            last = k == len(parts) - 1
            here = here / name
            for _ in range(10):
                try:
                    nfd = _open_component(fd, name)
                except FileNotFoundError:
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(name, 0o700, dir_fd=fd)
                    continue
                except OSError as exc:
                    if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                        raise
                    if not last:
                        raise SchedulerConfigError(
                            f"{str(here)!r} is a symlink or not a folder: the service's state "
                            "never lies under one (remove it, or choose another folder)"
                        ) from None
                    _move_aside(fd, name, here, say)
                    continue
                st = os.fstat(nfd)
                if last and st.st_uid != 0:
                    os.close(nfd)
                    _move_aside(fd, name, here, say)
                    continue
                break
            else:
                raise SchedulerConfigError(f"cannot make the folder {str(here)!r}")
            if not _trusted_parent(st) and not last:
                os.close(nfd)
                raise SchedulerConfigError(
                    f"{str(here)!r} (owner uid {st.st_uid}, mode {stat.S_IMODE(st.st_mode):04o}) "
                    "is not root's alone: another user could replace what lies under it"
                )
            os.close(fd)
            fd = nfd
        os.fchown(fd, 0, 0)
        os.fchmod(fd, mode)
        return fd
    except BaseException:
        os.close(fd)
        raise


def _move_aside(parent_fd: int, name: str, here: Path, say) -> None:
    """Another user's (or a non-folder) entry where root's folder belongs: renamed out of the
    way (root may, even in a sticky folder) so that it is never used."""
    st = os.stat(name, dir_fd=parent_fd, follow_symlinks=False)
    aside = f".{name}.planted-uid{st.st_uid}-{time.time():.0f}"
    os.rename(name, aside, src_dir_fd=parent_fd, dst_dir_fd=parent_fd)
    if say is not None:
        say(
            f"{str(here)!r} was {'a symlink' if stat.S_ISLNK(st.st_mode) else 'not a folder'}"
            if not stat.S_ISDIR(st.st_mode)
            else f"{str(here)!r} belonged to uid {st.st_uid}, not root"
        )
        say(f"moved it aside to {str(here.parent / aside)!r} and made the folder afresh")


def find_socket(env=None) -> Path | None:
    """The arbiter service's socket if the service is in force here (see the module), else
    None (no socket: private mode; inside a Slurm job: Slurm's).

    Raises
    ------
    SchedulerConfigError
        The socket exists but is not a socket of root's in a folder of root's alone (someone
        may be impersonating the service).
    """
    env = os.environ if env is None else env
    named = env.get(ENV_SOCKET)
    if env.get("SLURM_JOB_ID") and not named:
        return None
    path = Path(named) if named else default_socket()
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        if named:
            raise SchedulerConfigError(
                f"{ENV_SOCKET}={named!r}: no such socket (is the service running? {START_HINT})"
            ) from None
        if _installed():
            from ..errors import ArbiterUnavailableError

            raise ArbiterUnavailableError(
                f"the bioaccel arbiter service is installed here ({STATE_DIR}) but not "
                f"running (no socket {str(path)!r}): no GPU can be leased until it runs "
                "(`sudo systemctl start bioaccel-arbiterd`, or `sudo bioaccel arbiterd`)"
            ) from None
        return None
    except NotADirectoryError:
        return None
    dst = os.lstat(path.parent)
    problem = None
    if not stat.S_ISSOCK(st.st_mode):
        problem = "is not a socket"
    elif st.st_uid != 0:
        problem = f"belongs to uid {st.st_uid}, not root"
    elif dst.st_uid != 0 or stat.S_IMODE(dst.st_mode) & 0o022 or stat.S_ISLNK(dst.st_mode):
        problem = (
            f"lies in {str(path.parent)!r} (owner uid {dst.st_uid}, mode "
            f"{stat.S_IMODE(dst.st_mode):04o}), which is not root's alone"
        )
    if problem:
        raise SchedulerConfigError(
            f"the arbiter socket {str(path)!r} {problem}: refusing to use it (someone may be "
            f"impersonating the service); {START_HINT}"
        )
    return path


def _installed() -> bool:
    """The service was installed on this host (its root-owned state folder exists): then a
    missing socket means a stopped service, and clients fail closed rather than fall back."""
    try:
        st = os.lstat(STATE_DIR)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == 0
