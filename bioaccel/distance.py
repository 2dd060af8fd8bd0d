"""``distance_matrix``: all-vs-all distances, computed in row tiles on a chosen backend."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .align_distances import ALIGNMENT_MODELS, alignment_distances
from .alphabet import DNA
from .backends import DnaData, get_backend
from .distmatrix import DistanceMatrix
from .dna_models import (MODELS, TABLE_MODELS, base_frequencies, check_model, distances_from_counts,
                         kept_sites)
from .errors import ModelError
from .io import as_batch
from .sched.devices import select_devices
from .sched.multigpu import dna_counts_on_devices
from .seqbatch import SeqBatch

#: bytes of pair counts one tile may hold
TILE_BYTES = 64 * 2 ** 20


def row_tiles(n: int, counts_per_pair: int, parts: int = 32) -> list[tuple[int, int]]:
    """Row ranges [i0, i1) over the upper triangle, about equal in pairs (``parts`` of
    them, for a useful progress bar), each tile's count buffer within :data:`TILE_BYTES`."""
    total = n * (n - 1) // 2
    target = max(1, -(-total // parts), 2 ** 16)
    cap_cells = max(1, TILE_BYTES // (counts_per_pair * 4))
    tiles, i0 = [], 0
    while i0 < n:
        i1, pairs = i0, 0
        while i1 < n and (i1 == i0 or (pairs < target and (i1 + 1 - i0) * (n - i0) <= cap_cells)):
            pairs += n - i1 - 1
            i1 += 1
        tiles.append((i0, i1))
        i0 = i1
    return tiles


def distance_matrix(seqs, model: str = "k80", *, pairwise_deletion: bool = False,
                    backend: str = "auto", threads: int = 0,
                    progress: Callable[[int, int], None] | None = None,
                    matrix=None, gap_open: int | None = None,
                    gap_extend: int | None = None, k: int | None = None,
                    sketch_size: int = 1000, seed: int = 42, devices=None) -> DistanceMatrix:
    """All-vs-all distances: evolutionary models on aligned DNA (as ``ape::dist.dna``), or
    alignment-based distances on unaligned sequences.

    Parameters
    ----------
    seqs : SeqBatch, path, or sequence of str
        An alignment of nucleotide sequences (all the same length).
    model : {"raw", "jc69", "k80", "f81", "tn93", "logdet", "identity", "scoredist", "edit", "kmer", "jaccard", "mash"}
        Aligned DNA models: see :mod:`bioaccel.dna_models` for the formulas and
        missing-data rules. ``identity`` and ``scoredist`` align every pair globally
        (C++ core): see :mod:`bioaccel.align_distances`. ``edit``: global edit distance
        (:func:`bioaccel.edit.edit_distances`). ``kmer``, ``jaccard``, ``mash``: see
        :mod:`bioaccel.kmers`.
    pairwise_deletion : bool
        False (ape's default) drops every site missing in any sequence; True drops
        a site only for the pairs where it is missing.
    backend : {"auto", "cupy", "numba-cuda", "cpu", "reference"}
    threads : int
        CPU threads for the ``cpu`` backend; 0 means all cores. Results do not depend on it.
    progress : callable(done_pairs, total_pairs), optional
        Called after every tile.
    matrix, gap_open, gap_extend
        Alignment scoring for ``identity``/``scoredist``: BLOSUM62 with 11/1 for
        proteins, (2, -3) with 5/2 for nucleotides unless given.
    devices : None, "all", int, list of int or str such as "0,2"
        Spread the tiles of pairs over these GPUs (:mod:`bioaccel.sched.multigpu`), with
        failover; the result equals a single-device run. For the aligned-DNA models and
        ``edit``.
    k, sketch_size, seed
        For the k-mer models ``kmer``, ``jaccard`` and ``mash`` (see :mod:`bioaccel.kmers`);
        ``seqs`` may then also be saved :class:`~bioaccel.kmers.Sketches`.

    An option the model does not use (``k`` with k80, ``pairwise_deletion`` with mash, a
    scoring with k80) is refused with :class:`ModelError` (:mod:`bioaccel.model_options`).

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
    from .kmers import KMER_MODELS, Sketches, kmer_distance_matrix
    from .model_options import check_model_options, given_options

    check_model_options(model, given_options(pairwise_deletion, k, matrix, gap_open, gap_extend))
    if str(model).lower() == "edit":
        from .edit import edit_distances
        batch = as_batch(seqs)
        if len(batch) < 2:
            raise ValueError(f"need at least 2 sequences for a distance matrix, got {len(batch)}")
        return DistanceMatrix(edit_distances(batch, backend=backend, threads=threads,
                                             devices=devices).astype(np.float64), batch.ids)
    if devices is not None and str(model).lower() not in MODELS:
        raise ModelError(f"devices= applies to the aligned-DNA models and 'edit'; model "
                         f"{model!r} runs on the CPU only")
    if str(model).lower() in KMER_MODELS:
        return kmer_distance_matrix(seqs if isinstance(seqs, Sketches) else as_batch(seqs),
                                    str(model).lower(), k=k, sketch_size=sketch_size, seed=seed,
                                    threads=threads)
    batch = as_batch(seqs)
    if str(model).lower() in ALIGNMENT_MODELS:
        return _alignment_model(batch, str(model).lower(), threads, progress, matrix, gap_open,
                                gap_extend)
    model = check_model(model)
    if len(batch) < 2:
        raise ValueError(f"need at least 2 sequences for a distance matrix, got {len(batch)}")
    alignment, freqs = dna_alignment(batch, model, pairwise_deletion)
    data = DnaData(alignment)
    table = model in TABLE_MODELS
    n = len(batch)
    chosen = select_devices(devices)
    if chosen is not None:
        out = dna_counts_on_devices(
            data, n, table, chosen, backend,
            lambda counts: distances_from_counts(model, counts, freqs, threads), threads)
        return DistanceMatrix(out, batch.ids)
    engine = get_backend(backend)
    out = np.zeros((n, n))
    tiles = row_tiles(n, 16 if table else 4)
    total = n * (n - 1) // 2
    done = 0
    mirror = False
    for i0, i1 in tiles:
        if not engine.fill_distance_rows(data, model, freqs, i0, i1, out, threads):
            counts = engine.dna_counts(data, i0, i1, i0, n, table=table, upper_only=True,
                                       threads=threads)
            dist = distances_from_counts(model, counts, freqs, threads)
            upper = np.arange(i0, n)[None, :] > np.arange(i0, i1)[:, None]
            block = out[i0:i1, i0:n]
            block[upper] = dist[upper]
            mirror = True
        done += sum(n - i - 1 for i in range(i0, i1))  # pairs (i, j > i) in this tile
        if progress is not None:
            progress(done, total)
    if mirror:
        lower = np.tril_indices(n, -1)
        out[lower] = out.T[lower]
    return DistanceMatrix(out, batch.ids)


def dna_alignment(batch: SeqBatch, model: str, pairwise_deletion: bool):
    """The alignment codes the DNA models count on (sites with missing data dropped for all
    pairs unless ``pairwise_deletion``) and the base frequencies of the whole alignment."""
    if batch.alphabet is not DNA:
        raise ModelError(
            f"model {model!r} needs nucleotide sequences, but {batch.source or 'the input'} "
            "reads as protein"
        )
    alignment = batch.as_alignment()
    freqs = base_frequencies(alignment)
    if not pairwise_deletion:
        alignment = alignment[:, kept_sites(alignment)]
    return alignment, freqs


def _alignment_model(batch: SeqBatch, model: str, threads, progress, matrix, gap_open,
                     gap_extend) -> DistanceMatrix:
    from .scoring import default_scoring

    if len(batch) < 2:
        raise ValueError(f"need at least 2 sequences for a distance matrix, got {len(batch)}")
    if model == "scoredist" and batch.alphabet is DNA:
        raise ModelError("scoredist is calibrated for proteins; the input reads as nucleotides")
    scoring = default_scoring(batch.alphabet, matrix, gap_open, gap_extend)
    scoring.check_batch(batch)
    return alignment_distances(batch, model, scoring, threads, progress)
