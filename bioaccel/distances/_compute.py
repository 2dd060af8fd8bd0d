"""``distance_matrix``: all-vs-all distances, computed in row tiles on a chosen backend.

The model dispatch and its checks live in :mod:`bioaccel.distances._models` (shared with the
tiles of :mod:`bioaccel.distances._tiles` and the streamed files of :mod:`bioaccel.distances._ondisk`).
"""

from __future__ import annotations

from collections.abc import Callable

from .._core import check_threads
from ._matrix import DistanceMatrix
from ._models import prepare


def distance_matrix(
    seqs,
    model: str = "k80",
    *,
    pairwise_deletion: bool = False,
    backend: str = "auto",
    threads: int = 0,
    progress: Callable[[int, int], None] | None = None,
    matrix=None,
    gap_open: int | None = None,
    gap_extend: int | None = None,
    k: int | None = None,
    sketch_size: int | None = None,
    seed: int | None = None,
    devices=None,
    alphabet="auto",
) -> DistanceMatrix:
    """All-vs-all distances: evolutionary models on aligned DNA (as ``ape::dist.dna``), or
    alignment-based distances on unaligned sequences.

    Parameters
    ----------
    seqs : SeqBatch, path, or sequence of str
        An alignment of nucleotide sequences (all the same length).
    model : {"raw", "jc69", "k80", "f81", "tn93", "logdet", "p", "poisson", "kimura", "identity", "scoredist", "edit", "kmer", "jaccard", "mash"}
        Aligned DNA models: see :mod:`bioaccel.distances._dna` for the formulas and
        missing-data rules. Aligned protein models ``p``, ``poisson``, ``kimura``: see
        :mod:`bioaccel.distances._aa`. ``identity`` and ``scoredist`` align every pair globally
        (C++ core): see :mod:`bioaccel.distances._protein`. ``edit``: global edit distance
        (:func:`bioaccel.pairwise._edit.edit_distances`). ``kmer``, ``jaccard``, ``mash``: see
        :mod:`bioaccel.distances._kmers`.
    pairwise_deletion : bool
        Aligned DNA and protein models: False (ape's default) drops every site missing in
        any sequence; True drops a site only for the pairs where it is missing.
    backend : {"auto", "cupy", "numba-cuda", "cpu", "reference"}
    threads : int
        CPU threads for the ``cpu`` backend; 0 means all cores. Results do not depend on it.
    progress : callable(done_pairs, total_pairs), optional
        Called after every tile.
    matrix, gap_open, gap_extend
        Alignment scoring for ``identity``/``scoredist``: BLOSUM62 with 11/1 for
        proteins, (2, -3) with 5/2 for nucleotides unless given.
    devices : None, "all", int, list of int or str such as "0,2"
        Spread the tiles of pairs over these GPUs (:mod:`bioaccel.devices._multigpu`), with
        failover; the result equals a single-device run. For the aligned-DNA models and
        ``edit``.
    k, sketch_size, seed
        For the k-mer models ``kmer``, ``jaccard`` and ``mash`` (see :mod:`bioaccel.distances._kmers`);
        ``seqs`` may then also be saved :class:`~bioaccel.distances._kmers.Sketches`, compared with the
        k, sketch size and seed they were made with (a different value given is refused).
        Sketch size and seed default to 1000 and 42 for sequences.
    alphabet : {"auto", "dna", "rna", "protein"}
        How ``seqs`` given as a path or strings are read (``auto``: see
        :func:`bioaccel.sequences.guess_alphabet`); a SeqBatch of another alphabet is refused.

    An option the model does not use (``k`` with k80, ``pairwise_deletion`` with mash, a
    scoring with k80) is refused with :class:`ModelError` (:mod:`bioaccel.distances._options`).

    Returns
    -------
    DistanceMatrix
        Zero diagonal; NaN or +Inf where the model is undefined (as ape gives).

    Raises
    ------
    ModelError
        Unknown model, or a protein alignment.
    AlignmentLengthError
        Sequences of different lengths (names the record).
    BackendUnavailableError
        A named backend cannot run here.

    Examples
    --------
    >>> dm = distance_matrix(["ACGTACGTAC", "ACGTACGTAT", "ACGAACGTAC"], model="raw",
    ...                      backend="reference")
    >>> dm.data[0].tolist()
    [0.0, 0.1, 0.1]
    """
    threads = check_threads(threads)
    made = prepare(
        seqs,
        model,
        pairwise_deletion=pairwise_deletion,
        backend=backend,
        threads=threads,
        matrix=matrix,
        gap_open=gap_open,
        gap_extend=gap_extend,
        k=k,
        sketch_size=sketch_size,
        seed=seed,
        devices=devices,
        alphabet=alphabet,
    ).matrix(progress)
    made.made_by = (str(model).lower(), bool(pairwise_deletion))
    return made
