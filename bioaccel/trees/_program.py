"""The low-memory neighbour joining as a program of its own: ``bioaccel-nj``
(csrc/programs/nj_program.cpp), built beside the compiled core.

``bioaccel tree --low-memory`` checks its input here with the words of the in-process path
(:func:`bioaccel.nj` with ``low_memory=True``), writes what the program reads (the float32
triangle when the input is not a ``.cdist`` file already, and the Newick labels) to a scratch
folder, opens the output, and then replaces its own process with the program (``exec``). The
interpreter, NumPy and the rest of bioaccel are gone before the triangle is allocated: the
process then holds n (n - 1) / 2 x 4 bytes, 0.5 KiB per taxon and the program itself, as
QuickTree does. The tree is the in-process path's, byte for byte: the same joiner (the
compiled core's ``neighbor_joining_condensed``), the same Newick.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

PROGRAM = "bioaccel-nj"

#: set to 1 to join in the bioaccel process itself (the in-process path of ``nj``)
IN_PROCESS_ENV = "BIOACCEL_NJ_IN_PROCESS"


def joiner_program() -> Path | None:
    """The ``bioaccel-nj`` program beside the compiled core, or None when it was not built
    (or :data:`IN_PROCESS_ENV` asks for the in-process path)."""
    if os.environ.get(IN_PROCESS_ENV, "") in ("1", "true", "yes"):
        return None
    path = Path(__file__).resolve().parents[1] / PROGRAM
    return path if path.is_file() and os.access(path, os.X_OK) else None


def prepare_input(
    matrix: Path | None, scratch: Path, made_by=None
) -> tuple[Path, int, int, str, list[str]]:
    """The program's matrix arguments for the matrix file ``matrix`` (``.cdist``, PHYLIP or
    ``.npy``), checked as the in-process path checks it: (file, offset, bytes per value,
    layout, labels). A ``.cdist`` file is read in place; the others are written to
    ``scratch`` as a float32 triangle. A NaN or Inf distance is refused here, with the words
    of :func:`bioaccel.nj` (``made_by``: the model and pairwise deletion that made the
    distances, for its hint; None for a matrix given as a file)."""
    from ..distances import matrix_format_of, scan_cdist, write_triangle_file
    from ._tree import _not_finite_error

    if matrix_format_of(matrix, sniff=True).lower() == "cdist":
        labels, width, offset, not_finite = scan_cdist(matrix)
        source, layout = matrix, "upper"
    else:
        source = scratch / "triangle.f32"
        labels, triangle = write_triangle_file(matrix, source)
        width, offset, layout, not_finite = 4, 0, triangle.layout, triangle.first_not_finite
    if not_finite is not None:
        i, j, value = not_finite
        raise _not_finite_error(labels[i], labels[j], value, made_by)
    return source, offset, width, layout, labels


def run_joiner(
    program: Path,
    source: Path,
    offset: int,
    width: int,
    layout: str,
    labels: list[str],
    output,
    threads: int,
    clamp_negative: bool,
    scratch: Path,
):
    """Write the Newick labels to ``scratch``, open ``output`` (a temporary file beside it,
    renamed by the program on success; a device or FIFO written through; ``-`` stdout) and
    replace this process with the program, which removes ``scratch`` when it ends. Returns
    only when the program could not be started (OSError, nothing written)."""
    from .._core import output_target, resolve_threads
    from ._tree import quote_label

    (scratch / "labels.txt").write_text(
        "".join(quote_label(label) + "\n" for label in labels), encoding="utf-8"
    )
    tmp = "-"
    if str(output) == "-":
        fd, target = sys.stdout.fileno(), "-"
    else:
        real, through = output_target(output)
        target = str(output)
        if through:
            fd = os.open(real, os.O_WRONLY)
        else:
            fd, tmp = tempfile.mkstemp(prefix=f".{real.name}.", suffix=".tmp", dir=real.parent)
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600: a normal file's permissions
            target = str(real)
    args = [
        str(program),
        str(source),
        str(offset),
        str(width),
        layout,
        str(len(labels)),
        str(scratch / "labels.txt"),
        str(resolve_threads(threads)),  # the one meaning of 0: the program never decides it
        "1" if clamp_negative else "0",
        str(fd),
        tmp,
        target,
        str(scratch),
        "stdout" if str(output) == "-" else str(output),
    ]
    os.set_inheritable(fd, True)
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execv(program, args)
    except OSError:
        if tmp != "-":
            os.unlink(tmp)
        raise
