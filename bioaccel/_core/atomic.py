"""Outputs written safely: atomically (a temporary file beside the target, renamed over it on
success), through devices and FIFOs, and never over an input. The one place every writer of
bioaccel goes through."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, Any

from .outputs import NPY_COLUMN_IDS, NPY_ROW_IDS


def output_target(path: str | os.PathLike) -> tuple[Path, bool]:
    """Where a write to ``path`` lands, and whether it goes straight through.

    A regular file or a new name: the path itself (every symlink on the way followed, so a
    link keeps pointing at its file and that file is replaced); ``write_through`` False, the
    file is written beside it and renamed over it. A character device (``/dev/null``,
    ``/dev/stdout``, a terminal) or a FIFO: written through, ``write_through`` True; a
    rename there would replace the device node with a regular file.

    Raises
    ------
    OSError
        ``path`` is a directory, or another kind of file (block device, socket).
    """
    real = Path(os.path.realpath(path))
    try:
        mode = os.stat(real).st_mode
    except FileNotFoundError:
        return real, False
    except OSError:  # unreadable metadata: let the write report it
        return real, False
    if stat.S_ISREG(mode):
        return real, False
    if stat.S_ISCHR(mode) or stat.S_ISFIFO(mode):
        return real, True
    if stat.S_ISDIR(mode):
        raise OSError(
            errno.EISDIR, f"cannot write {str(path)!r}: it is a directory; expected a file name"
        )
    raise OSError(
        errno.EINVAL, f"cannot write {str(path)!r}: not a regular file, character device or FIFO"
    )


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike, mode: str = "w") -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path``; rename it over ``path`` only on success.

    A crash or exception leaves no partial file at ``path`` (and removes the temporary).
    Only regular files and new names are replaced by a rename: a symlink's target is
    written (atomically, beside the target) and the link stays; a character device or a
    FIFO (``/dev/null``, ``/dev/stdout``, a named pipe) is written through, unreplaced
    (see :func:`output_target`).

    Raises
    ------
    OSError
        The directory does not exist or is not writable (the message names it).
    """
    target, through = output_target(path)
    if through:
        try:
            handle = open(target, mode)
        except OSError as exc:
            raise OSError(exc.errno, f"cannot write {str(path)!r}: {exc.strerror}") from None
        with handle:
            yield handle
        return
    directory = target.parent
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise OSError(exc.errno, f"cannot write {str(path)!r}: {exc.strerror}") from None
    try:
        with os.fdopen(fd, mode) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; give the file normal permissions
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def refuse_overwriting_inputs(outputs: Mapping[str, object], inputs) -> None:
    """Refuse any output that is the same file as one of ``inputs`` (``os.path.samefile``:
    the same name, a symlink to it or a hard link of it), before anything is written: the
    atomic rename would replace the input with the output. The one check of every command
    and of the Python writers that take a source.

    ``outputs`` maps how each output is named in messages (``-o``, ``--matrix-output``) to
    its path (``None`` and ``-`` skipped); ``inputs`` are paths (``None``, ``-`` and
    directories skipped). Outputs that are written through (devices, FIFOs) are not
    replaced, so they pass.

    Raises
    ------
    OSError
        Naming the option, the output and the input.
    """
    # a .npy matrix's ids are written beside it: those names must not be inputs either
    outputs = dict(outputs)
    for option, out in list(outputs.items()):
        if isinstance(out, (str, os.PathLike)) and str(out).endswith(".npy"):
            for side in (NPY_ROW_IDS, NPY_COLUMN_IDS):
                outputs[f"{option} (its {side} file)"] = str(out) + side
    existing = []
    for src in inputs:
        if src is None or str(src) == "-" or not isinstance(src, (str, os.PathLike)):
            continue
        with contextlib.suppress(OSError):
            if stat.S_ISREG(os.stat(src).st_mode):
                existing.append(src)
    for option, out in outputs.items():
        if out is None or str(out) == "-" or not isinstance(out, (str, os.PathLike)):
            continue
        try:
            if not stat.S_ISREG(os.stat(out).st_mode):
                continue
        except OSError:
            continue  # a new file cannot be an input
        for src in existing:
            try:
                same = os.path.samefile(out, src)
            except OSError:
                continue
            if same:
                same_name = os.path.abspath(out) == os.path.abspath(src)
                how = "is" if same_name else "is the same file as"
                raise OSError(
                    errno.EINVAL,
                    f"{option} {str(out)!r} {how} the input {str(src)!r}: "
                    "writing it would destroy the input; choose another "
                    "output name",
                )
