"""The low-memory tree pipeline, callable from Python: :func:`low_memory_tree`.

From sequences or sketches, the distances are streamed to a ``.cdist`` file (the caller's
``matrix_output``, or a scratch file in a hidden folder beside the output, removed however
the run ends) and never held as a square; a matrix file is read as it is. The joining is
the float32 triangle's (:func:`bioaccel.nj` with ``low_memory=True``), either in this
process or, where the caller's process may be handed over (``hand_over=True``, as the
``bioaccel`` program does), by the ``bioaccel-nj`` program, which replaces the process
(:mod:`._program`): the interpreter's memory is given back before the triangle is allocated.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

from ._tree import Tree, nj

#: matrix files the bioaccel-nj program takes (checked and converted by :mod:`._program`)
PROGRAM_INPUTS = ("cdist", "phylip", "npy")


def scratch_folder(output) -> Path:
    """A new hidden folder beside ``output`` (the system's temporary folder for ``-``,
    stdout) for a low-memory tree's streamed matrix and the program's inputs."""
    where = None if str(output) == "-" else Path(output).resolve().parent
    return Path(tempfile.mkdtemp(prefix=".bioaccel-tree-", dir=where))


def low_memory_tree(
    source,
    output,
    *,
    model: str = "k80",
    clamp_negative: bool = False,
    threads: int = 0,
    backend: str = "auto",
    matrix_output=None,
    hand_over: bool = False,
    progress: bool | None = None,
    **distance_options,
) -> Tree:
    """The neighbour-joining tree of ``source`` in low memory, written to ``output``
    (Newick; ``-`` for stdout), and returned.

    Parameters
    ----------
    source : sequences (anything :func:`bioaccel.stream_distances` takes: a ``SeqBatch``,
        strings, ``Sketches``) or the path of a matrix file (``.cdist``, ``.npy``, PHYLIP
        are read into the float32 triangle; TSV and ``.npz`` as a square first)
    model, backend, distance_options : the distances of sequences, as
        :func:`bioaccel.stream_distances` (``pairwise_deletion``, ``matrix``, ``k``, ...);
        ``backend`` is NJ's own for a matrix file (the cpu backend only)
    matrix_output : a ``.cdist`` path to keep the streamed distances (sequence input);
        else they go to a scratch folder beside ``output``, removed at the end
    hand_over : join in the ``bioaccel-nj`` program (when it is built), which replaces
        this process with ``exec`` and writes ``output`` itself: then this function does
        not return (below 3 taxa, or without the program, it joins in-process). Only a
        program's own process may be handed over: the ``bioaccel`` command passes True,
        a library caller keeps the default False.
    progress : show a progress bar while streaming (None: when stderr is a terminal)
    """
    from .._core import MATRIX, NEWICK, matrix_format_of, output_format, progress_bar

    output_format(output, NEWICK, "Newick tree", default="newick")
    program = None
    if hand_over:
        from ._program import joiner_program

        program = joiner_program()
    is_file = isinstance(source, (str, os.PathLike))
    if is_file and matrix_output is not None:
        raise ValueError(
            f"{source} is a distance matrix already: matrix_output applies to sequence input"
        )
    if not is_file and matrix_output is not None:
        if output_format(matrix_output, MATRIX, "distance matrix", default="phylip") != "cdist":
            raise ValueError(
                f"{matrix_output}: in low memory the matrix is streamed to disk as float32 "
                "condensed: name it .cdist"
            )
    if is_file:
        path = Path(source)
        if program is not None and matrix_format_of(path, sniff=True) in PROGRAM_INPUTS:
            dm = _join_in_program(program, path, None, output, threads, clamp_negative)
        else:
            from ..distances import DistanceMatrix

            dm = DistanceMatrix.read_condensed(path)
        return _join_and_write(dm, output, clamp_negative, threads, backend)
    from ..distances import DistanceMatrix, stream_distances

    scratch = None if matrix_output is not None else scratch_folder(output)
    cdist = Path(matrix_output) if scratch is None else scratch / "distances.cdist"
    # what made the distances: a distance the tree cannot join is explained with its model
    made_by = (str(model).lower(), bool(distance_options.get("pairwise_deletion", False)))
    try:
        with progress_bar(f"distances ({model}) -> {cdist.name}", enabled=progress) as update:
            stream_distances(
                source,
                model,
                cdist,
                backend=backend,
                threads=threads,
                progress=update,
                **distance_options,
            )
        try:
            if program is not None:  # returns only for fewer than 3 taxa
                dm = _join_in_program(
                    program, cdist, scratch, output, threads, clamp_negative, made_by
                )
            else:
                dm = DistanceMatrix.read_condensed(cdist)
                dm.made_by = made_by
            return _join_and_write(dm, output, clamp_negative, threads, "cpu")
        except ValueError:
            # the tree refused the distances (a NaN or Inf): a failed run leaves no output,
            # the kept matrix included (an interrupted stream keeps it: it resumes)
            if matrix_output is not None:
                Path(matrix_output).unlink(missing_ok=True)
            raise
    finally:  # the program removes the scratch folder itself once it has taken over
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)


def _join_and_write(dm, output, clamp_negative, threads, backend) -> Tree:
    tree = nj(
        dm,
        clamp_negative=clamp_negative,
        threads=threads,
        backend=backend,
        inplace=True,
        low_memory=True,
    )
    if str(output) == "-":
        sys.stdout.write(tree.to_newick() + "\n")
        sys.stdout.flush()
    else:
        tree.write(output)
    return tree


def _join_in_program(program, matrix_file, scratch, output, threads, clamp_negative, made_by=None):
    """Check ``matrix_file`` and hand it to the ``bioaccel-nj`` program, which replaces this
    process, writes the tree and removes ``scratch`` (made here when None). Returns the
    matrix, read in memory, only when it has fewer than 3 taxa (no join to run)."""
    from ..distances import DistanceMatrix
    from ._program import prepare_input, run_joiner

    scratch = scratch or scratch_folder(output)
    try:
        source, offset, width, layout, labels = prepare_input(matrix_file, scratch, made_by)
        if len(labels) < 3:
            dm = DistanceMatrix.read_condensed(matrix_file)
            dm.made_by = made_by
            return dm
        run_joiner(
            program, source, offset, width, layout, labels, output, threads, clamp_negative, scratch
        )
    finally:  # reached when the program did not start, or for fewer than 3 taxa
        shutil.rmtree(scratch, ignore_errors=True)
