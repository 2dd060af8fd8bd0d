"""Every pair of sequences within a threshold, without computing all pairs.

:func:`neighbors` returns a :class:`Neighbors` edge table (``i``, ``j``, ``distance``,
``ids``; ``to_scipy``, ``to_pandas``, ``write``); :func:`read_neighbors` reads one back and
:func:`merge_neighbors` joins shards.

- ``_edit``: edit distance (global Levenshtein, unit costs): a filter complete for the
  threshold (microvariants for d <= 1, segment masking for d >= 2, both in
  csrc/neighbors/neighbors.cpp), then the candidates verified (C++, or the ``edit_pairs``
  registry operation on GPUs);
- ``_kmers``: MinHash (``mash``) and exact k-mer ``jaccard`` distances from an inverted
  index (prefix filtering) instead of all sketch pairs;
- ``_edges``: the edge table, its ``.tsv`` / ``.npz`` files, reading and merging;
- ``_fasta``: a one-pass C++ reader of plain/gzip FASTA (sequencing runs), the same SeqBatch
  as :func:`bioaccel.read_sequences`, which serves every other case.
"""

from __future__ import annotations

import numbers
import os
import sys
import types

import numpy as np

from ._edges import (
    Neighbors,
    display_ids,
    merge_neighbors,
    read_neighbors,
    sequences_digest,
    strip_size,
    write_tsv,
)
from ._fasta import read_fasta

NEIGHBOR_MODELS = ("edit", "mash", "jaccard")


def _check_edit_threshold(d) -> int:
    if isinstance(d, bool) or not isinstance(d, numbers.Real) or d != d or d < 0:
        raise ValueError(f"max_distance must be a non-negative integer for model 'edit', got {d!r}")
    if int(d) != d:
        raise ValueError(
            f"max_distance must be a whole number of edits for model 'edit', got {d!r}"
        )
    return int(d)


def _check_shard(shard) -> tuple[int, int] | None:
    if shard is None:
        return None
    try:
        k, count = shard
    except (TypeError, ValueError):
        raise ValueError(
            f"shard must be (index, count) with 0 <= index < count, got {shard!r}"
        ) from None
    if (
        isinstance(k, bool)
        or isinstance(count, bool)
        or not isinstance(k, numbers.Integral)
        or not isinstance(count, numbers.Integral)
        or count < 1
        or not 0 <= k < count
    ):
        raise ValueError(
            f"shard must be (index, count) with 0 <= index < count (index from 0), got {shard!r}"
        )
    return int(k), int(count)


def _refuse_gaps(batch) -> None:
    """Aligned input (gaps) is refused by the one rule of the models that take unaligned
    sequences (:func:`bioaccel.sequences.refuse_aligned`)."""
    from ..sequences import refuse_aligned

    refuse_aligned(batch, "would count as a letter of the neighbours' edit distances")


def shard_block(n: int, shard: tuple[int, int] | None) -> tuple[int, int]:
    """The first indices [first, last) of shard ``(k, N)``'s pairs: block k of N equal
    blocks of the input order."""
    if shard is None:
        return 0, n
    k, count = shard
    return k * n // count, (k + 1) * n // count


def neighbors(
    seqs,
    max_distance=1,
    model: str = "edit",
    threads: int = 0,
    backend: str = "auto",
    devices=None,
    shard=None,
    *,
    alphabet="auto",
    k: int | None = None,
    sketch_size: int | None = None,
    seed: int | None = None,
    abundance_annotation: str = "size",
) -> Neighbors:
    """Every pair (i < j) of ``seqs`` whose distance is at most ``max_distance``.

    Parameters
    ----------
    seqs : SeqBatch, path, or sequence of str
        Unaligned sequences (DNA, RNA or protein). Gaps are refused (remove them first:
        ``SeqBatch.ungapped()``, ``--ungap``).
    max_distance : int (``edit``) or float (``mash``, ``jaccard``)
        ``edit``: edits (>= 0); ``0`` finds identical sequences.
    model : {"edit", "mash", "jaccard"}
        ``edit``: global Levenshtein distance, unit costs, the values of
        :func:`bioaccel.pairwise.edit_distances`. Letters are compared by identity: ``N``
        and the other IUPAC codes are letters like A, C, G, T, equal only to themselves
        (``N`` vs ``A`` is a substitution, ``N`` vs ``N`` a match); case is folded, U reads
        as T. An empty sequence is at the other's length from every sequence.
        ``mash``: MinHash distance (``k``, ``sketch_size``, ``seed`` as
        :func:`bioaccel.distance_matrix`), ``jaccard``: 1 - exact k-mer Jaccard; both
        equal the dense matrix's values for the pairs returned.
    threads : int
        CPU threads (0: all cores).
    backend : {"auto", "cpu", "reference", "cupy", "numba-cuda"}
        ``auto``: ``cpu`` (the C++ filter and verification), or with ``devices=`` the
        GPU backend ``backend_for_devices`` picks. ``cupy`` / ``numba-cuda``: the C++
        filter's candidates verified on the GPU (registry operation ``edit_pairs``).
        ``reference``: every pair through ``edit_distances`` (quadratic; for tests). A
        named backend that cannot run raises :class:`~bioaccel.errors.BackendUnavailableError`.
    devices : None, "all", int, list of int or str such as "0,2"
        Spread the verification over these GPUs (the multi-GPU tile runner, failover).
    shard : (index, count), optional
        Only the pairs of shard ``index`` (from 0) of ``count``: those whose first index
        ``i`` lies in block ``index`` of ``count`` equal blocks of the input order. The
        shards together hold every pair once, and their tables in shard order are the
        one-process table (:func:`merge_neighbors`).
    abundance_annotation : {"size", "underscore"}
        What is removed from the ids of the table: a ``;size=N`` annotation (vsearch,
        ``swarm -z``; ids without one stay as they are), or swarm's default ``_N`` suffix
        (every id must end in one: ``amp_12`` is ``amp``).

    Returns
    -------
    Neighbors

    Examples
    --------
    >>> nb = neighbors(["ACGTACGT", "ACGTACGA", "ACGAACGA", "TTTTTTTT"], max_distance=1)
    >>> list(zip(nb.i.tolist(), nb.j.tolist(), nb.distance.tolist()))
    [(0, 1, 1), (1, 2, 1)]
    """
    from .._core import check_threads
    from ..errors import ModelError
    from ..sequences import as_batch

    threads = check_threads(threads)
    key = str(model).lower()
    if key not in NEIGHBOR_MODELS:
        raise ModelError(
            f"unknown neighbour model {model!r}; expected one of {list(NEIGHBOR_MODELS)}"
        )
    shard = _check_shard(shard)
    if key == "edit":
        d = _check_edit_threshold(max_distance)
        for name, value in (("k", k), ("sketch_size", sketch_size), ("seed", seed)):
            if value is not None:
                raise ModelError(
                    f"{name} applies to the k-mer models (mash, jaccard), not to 'edit'"
                )
    else:
        from ._kmers import check_kmer_threshold

        d = check_kmer_threshold(max_distance, key)
    if isinstance(seqs, (str, os.PathLike)):
        from ._fasta import read_fasta

        batch = read_fasta(seqs, alphabet)
    else:
        batch = as_batch(seqs, alphabet)
    if isinstance(seqs, (str, os.PathLike)) and not len(batch):
        raise ValueError(f"{seqs}: no sequences")
    _refuse_gaps(batch)
    ids = display_ids(batch.ids, batch.source, abundance_annotation)
    first, last = shard_block(len(batch), shard)
    if key != "edit":
        from ._kmers import kmer_neighbors

        i, j, dist, cand = kmer_neighbors(
            batch,
            key,
            d,
            first,
            last,
            threads,
            backend,
            devices,
            k=k,
            sketch_size=sketch_size,
            seed=seed,
        )
        return Neighbors(i, j, dist, ids, key, d, shard, cand)
    # no two sequences are further apart than the longer one's length: a larger threshold
    # is searched as the longest length (the same pairs; d itself is what the table records)
    longest = int(np.diff(batch.offsets).max()) if len(batch) else 0
    i, j, dist, cand = _edit_pairs(
        batch, min(d, longest), first, last, shard is not None, backend, devices, threads
    )
    digest = sequences_digest(batch.codes, batch.offsets, batch.alphabet.symbols)
    return Neighbors(i, j, dist, ids, "edit", d, shard, cand, digest)


def _edit_pairs(batch, d, first, last, symmetric, backend, devices, threads):
    from ..backends import available_backends, backend_for_devices, get_backend
    from ..devices import select_devices
    from . import _edit

    name = str(backend).lower().replace("_", "-")
    if name == "numba":
        name = "numba-cuda"
    chosen = select_devices(devices)
    if chosen is not None:
        engine = backend_for_devices(chosen, name, "edit_pairs")
        return _edit.verified_pairs(batch, d, first, last, symmetric, engine, chosen, threads)
    if name == "auto":
        name = "cpu" if available_backends()["cpu"] is None else "reference"
    engine = get_backend(name, "edit_pairs")  # unknown or unavailable: BackendUnavailableError
    if engine.name == "reference":
        return _edit.reference_pairs(batch, d, first, last, threads)
    if engine.name == "cpu":
        if _edit.all_pairs_cheaper(batch, d, first, last):  # every pair, on the cpu kernels
            return _edit.reference_pairs(batch, d, first, last, threads)
        return _edit.cpu_pairs(batch, d, first, last, symmetric, threads)
    return _edit.verified_pairs(batch, d, first, last, symmetric, engine, None, threads)


__all__ = [
    "NEIGHBOR_MODELS",
    "Neighbors",
    "merge_neighbors",
    "neighbors",
    "read_fasta",
    "read_neighbors",
    "sequences_digest",
    "shard_block",
    "strip_size",
    "write_tsv",
]


class _CallableModule(types.ModuleType):
    """This subpackage and its function share the name ``neighbors``: importing the
    subpackage (``import bioaccel.neighbors``, as bioaccel itself does on some paths) makes
    ``bioaccel.neighbors`` the module, so the module calls the function."""

    def __call__(self, *args, **kwargs):
        return neighbors(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
