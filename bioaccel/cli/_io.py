"""Paths on the command line: ``-`` for stdin/stdout, and every output path checked before
any work starts (a run that cannot write its result fails at once and leaves nothing)."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

STDIO = "-"

#: Matrix formats that are text, so they can go to stdout.
TEXT_MATRIX_FORMATS = ("phylip", "phylip-lower", "tsv")


def is_stdio(path) -> bool:
    return path is not None and str(path) == STDIO


def shown(path) -> str:
    """How a path is named in messages: ``stdout`` for ``-``."""
    return "stdout" if is_stdio(path) else str(path)


def check_outputs(inputs=(), **outputs) -> None:
    """Refuse, before any work, output paths that cannot be written: a directory, a missing
    or unwritable directory, two outputs naming one file, two outputs on stdout, an output
    that is one of ``inputs`` (the same file by any name, hard links too:
    :func:`bioaccel.sequences._read.refuse_overwriting_inputs`).

    ``outputs`` maps option names (``output``, ``matrix_output``) to paths or ``None``;
    ``inputs`` lists the input paths (``-`` and ``None`` skipped).

    Raises
    ------
    OSError
        One line naming the option and the path.
    """
    from .._core import output_target, refuse_overwriting_inputs

    seen: dict[str, str] = {}
    for option, path in outputs.items():
        if path is None:
            continue
        flag = "--" + option.replace("_", "-")
        key = STDIO if is_stdio(path) else os.path.realpath(path)
        if key in seen:
            what = "stdout ('-')" if key == STDIO else f"the same file {str(path)!r}"
            raise OSError(errno.EINVAL, f"{seen[key]} and {flag} both name {what}")
        seen[key] = flag
        if key == STDIO:
            continue
        p = Path(path)
        if p.is_dir():
            raise OSError(
                errno.EISDIR,
                f"cannot write {str(p)!r} ({flag}): it is a directory; expected a file name",
            )
        target, through = output_target(p)
        if through:  # a device or FIFO, written in place
            if not os.access(target, os.W_OK):
                raise OSError(errno.EACCES, f"cannot write {str(p)!r} ({flag}): permission denied")
            continue
        parent = target.parent
        if not parent.is_dir():
            missing = parent if p.is_symlink() else (p.parent if str(p.parent) else Path("."))
            raise OSError(
                errno.ENOENT,
                f"cannot write {str(p)!r} ({flag}): directory {str(missing)!r} does not exist",
            )
        if not os.access(parent, os.W_OK | os.X_OK):  # atomic_output writes beside the file
            raise OSError(errno.EACCES, f"cannot write {str(p)!r} ({flag}): permission denied")
    refuse_overwriting_inputs(
        {"--" + k.replace("_", "-"): v for k, v in outputs.items()}, list(inputs)
    )


def refuse_stdio(path, option: str, why: str) -> None:
    """One line saying ``-`` does not fit this option."""
    if is_stdio(path):
        raise OSError(errno.EINVAL, f"{option} -: {why}")


@contextlib.contextmanager
def bytes_output(path) -> Iterator:
    """A binary stream: stdout's for ``-``, else an atomically written file."""
    if is_stdio(path):
        sys.stdout.flush()
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
        return
    from .._core import atomic_output

    with atomic_output(path, "wb") as f:
        yield f


@contextlib.contextmanager
def text_output(path) -> Iterator:
    """A text stream: stdout for ``-``, else an atomically written file."""
    if is_stdio(path):
        yield sys.stdout
        sys.stdout.flush()
        return
    from .._core import atomic_output

    with atomic_output(path) as f:
        yield f


def write_via_file(path, write: Callable[[Path], None], suffix: str = "") -> None:
    """Run ``write(file)``; for ``-`` into a private temporary file, then copied to stdout
    (so the writers of the library serve stdout unchanged)."""
    if not is_stdio(path):
        write(Path(path))
        return
    with tempfile.TemporaryDirectory(prefix="bioaccel-") as tmp:
        out = Path(tmp) / f"stdout{suffix}"
        write(out)
        sys.stdout.flush()
        with open(out, "rb") as f:
            shutil.copyfileobj(f, sys.stdout.buffer)
        sys.stdout.buffer.flush()


def read_stdin_sequences(format: str | None = None, alphabet="auto"):
    """The sequences piped to stdin (``-``), named ``<stdin>`` in messages."""
    from ..sequences import parse_sequences

    return parse_sequences(sys.stdin.buffer.read(), "<stdin>", format=format, alphabet=alphabet)


def read_stdin_text():
    """What stdin holds, as :class:`~bioaccel.msa_engine.SequenceText` named ``<stdin>``: read
    as a file is, header lines whole (``bioaccel msa`` writes them back)."""
    from ..msa_engine import SequenceText
    from ..sequences import decode_text

    return SequenceText(decode_text(sys.stdin.buffer.read(), "<stdin>"), "<stdin>")


def read_sequences_arg(path, format: str | None = None, alphabet="auto"):
    """``read_sequences`` for a command-line argument: a file, or ``-`` for stdin."""
    if is_stdio(path):
        return read_stdin_sequences(format, alphabet)
    from ..sequences import read_sequences

    return read_sequences(path, format=format, alphabet=alphabet)
