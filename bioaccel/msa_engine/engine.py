"""``msa()``: read, order, guide tree, progressive alignment, refinement, rows back in input
order.

Determinism: the engine runs on the sequences sorted by (residues, id), so the alignment
does not depend on the input order (rows come back in input order) nor on the thread count
(independent merges run in parallel, each depending only on its children; refinement is
sequential with a fixed seed).
"""

from __future__ import annotations

import contextlib
import numbers
import os
from pathlib import Path

import numpy as np

from ..backends import get_backend
from ..devices._multigpu import device_scope
from ..sequences._alphabet import Alphabet, get_alphabet
from ..errors import SequenceFormatError
from ..sequences._batch import SeqBatch, check_unique_ids
from ..trees._tree import Tree
from .alignment import MultipleAlignment
from .guide import GUIDE_TREES, guide_merges, merges_for_labels
from .scoring import gap_scale, msa_scoring

#: "auto" refinement runs for at most this many sequences (FAMSA's rule)
REFINE_UP_TO = 1000
REFINE_ITERATIONS = 100
#: realignments search within this many columns of the current placement: on BAliBASE 100
#: gave SP/TC 0.793/0.632, 300 0.796/0.635 in 1.6x the time, unbanded the same in 2.2x
#: (benchmarks/bench_msa.py with this constant changed)
REFINE_RADIUS = 300
REFINE_SEED = 5489


def _records(sequences) -> tuple[list[str], list[str], str | None]:
    """(ids, raw residue strings, source) of a path, a SeqBatch, or records."""
    if isinstance(sequences, (str, os.PathLike)):
        from ..sequences._read import _open_text, _parse, sniff_format
        path = Path(sequences)
        text = _open_text(path)
        fmt = sniff_format(text, path)
        recs = _parse(text, fmt, path)
        if not recs:
            raise SequenceFormatError(f"{path}: no sequences found")
        return [r[0] for r in recs], [r[1] for r in recs], str(path)
    if isinstance(sequences, SeqBatch):
        return list(sequences.ids), [sequences.sequence(i) for i in range(len(sequences))], \
            sequences.source
    ids, raw = [], []
    for k, rec in enumerate(sequences):
        if isinstance(rec, tuple) and len(rec) == 2:
            i, s = rec
        elif hasattr(rec, "seq") and hasattr(rec, "id"):
            i, s = rec.id, rec.seq
        elif isinstance(rec, (str, bytes)):
            i, s = f"seq{k}", rec
        else:
            raise TypeError(f"record {k + 1}: expected (id, sequence), a SeqRecord or a string, "
                            f"got {type(rec).__name__}")
        ids.append(str(i))
        raw.append(s.decode("ascii", "replace") if isinstance(s, bytes) else str(s))
    return ids, raw, None


def msa(sequences, *, alphabet: str | Alphabet = "auto", guide_tree="auto", matrix="auto",
        gap_open: float | None = None, gap_extend: float | None = None,
        term_gap: float | None = None, refine="auto", threads: int = 0,
        backend: str = "auto", devices=None, progress: bool | None = None) -> MultipleAlignment:
    """Multiple sequence alignment by progressive profile-profile alignment up a guide tree.

    Parameters
    ----------
    sequences : path, SeqBatch, or iterable of (id, sequence) / SeqRecord / str
        FASTA (gzip too) or any format :func:`bioaccel.read_sequences` reads. Gaps
        (``-``, ``.``) in the input are removed first.
    alphabet : {"auto", "protein", "dna", "rna"}
        ``auto``: DNA/RNA when every letter is a nucleotide or IUPAC code, else protein.
    guide_tree : {"auto", "single", "upgma", "nj", "medoid"}, Tree, or Newick path
        ``single``: single linkage over LCS distances of all pairs (FAMSA's default);
        ``upgma``/``nj`` over the same distances; ``medoid``: a recursive split by nearest
        seeds, O(n x 100) distances per level, for 10^4+ sequences. ``auto``: ``single``
        unless comparing all pairs would take more than about 25 s on two AVX2 cores (past
        about 20,000 proteins of 250 residues, or 3,000 16S genes), then ``medoid``. Single
        linkage keeps O(n) memory (SLINK, fed a block of rows at a time). A Tree or Newick
        file must name every sequence once.
    matrix : str or matrix
        ``auto``: PFASUM43 for proteins, NUC.4.4 rescaled to +5/-1 for nucleotides (see
        :mod:`bioaccel.msa_engine.scoring`); any name of the ``scoring-matrices`` package or
        of Biopython's ``substitution_matrices``.
    gap_open, gap_extend, term_gap : float
        Penalties (positive, subtracted): opening and extending an internal gap, and each
        column of a leading/trailing gap. Defaults 14.85, 1.25, 0.66 (FAMSA), scaled up by
        ``1 + log2(n / 45) / 7`` from 45 sequences on.
    refine : "auto", bool or int
        Realign the splits of the rows that gap patterns make (100 iterations, or the number
        given; a split made by more columns is drawn more often) within 300 columns of their
        placement, keeping a realignment when the exact sum-of-pairs score (every pair of
        rows, its own gap runs, as FAMSA scores) rises; ``auto``: 100 iterations for up to
        1,000 sequences.
    threads : int
        0 = all cores. The result does not depend on it.
    backend : {"auto", "cpu", "cupy", "numba-cuda"}
        ``cpu``: the C++/OpenMP engine. A GPU backend (any backend of the registry with the
        ``msa_profile_dp`` operation: ``cupy`` runs ``kernels/msa_profile_dp.cu``,
        ``numba-cuda`` ``kernels/msa_numba.py``): the guide tree's LCS distances and the
        progressive stage's profile-profile DPs on the GPU, all ready merges of a
        guide-tree level in one launch (the same paths as the CPU, bit for bit); profiles,
        the tree from the distances and refinement stay on the CPU. ``auto`` is ``cpu``
        (with ``devices=``: the distance stage on those GPUs). Raises
        :class:`BackendUnavailableError` naming why when the backend cannot run here or has
        no MSA kernels (``reference``).
    devices : None, "all", int, list of int or str such as "0,2"
        Spread the guide tree's distance stage over these GPUs in tiles, with failover
        (:mod:`bioaccel.devices._multigpu`; virtual GPUs from ``BIOACCEL_VIRTUAL_GPUS`` run the
        CPU engine); with ``backend="cupy"`` the progressive stage runs on the first of
        them. The alignment is the same as with ``devices=None``.
    progress : bool, optional
        Progress bar on stderr (default: when stderr is a terminal).

    Returns
    -------
    MultipleAlignment
        Rows in input order; every row without gaps is its input sequence.

    Examples
    --------
    >>> aln = msa([("a", "MKVLAAGIV"), ("b", "MKVLGIV"), ("c", "MKALAAGIV")])
    >>> aln.sequences
    ['MKVLAAGIV', 'MKVL--GIV', 'MKALAAGIV']
    """
    from .._core.threads import check_threads

    threads = check_threads(threads)
    requested = str(backend).lower()
    key = "cpu" if requested == "auto" else requested
    # the progressive stage's DPs: the C++ engine, or a backend of the registry that has the
    # batched kernel (cupy, numba-cuda); an unknown or unfit backend is named here
    dp_backend = None if key == "cpu" else get_backend(key, "msa_profile_dp")
    distance_backend = key if dp_backend is not None else ("cpu" if devices is None else requested)
    chosen = None
    if devices is not None:
        from ..backends import backend_for_devices
        from ..devices._discover import select_devices
        chosen = select_devices(devices)
        backend_for_devices(chosen, distance_backend, "lcs_lengths")  # refuse a bad mix now
    ids, raw, source = _records(sequences)
    check_unique_ids(ids, source)
    ungapped = [s.replace("-", "").replace(".", "") for s in raw]
    batch = SeqBatch.from_strings(ungapped, ids=ids, alphabet=alphabet if alphabet == "auto"
                                  else get_alphabet(alphabet), source=source)
    if all(len(s) == 0 for s in ungapped):
        raise SequenceFormatError(f"{source or 'input'}: every sequence is empty")
    scoring = msa_scoring(batch.alphabet, matrix, gap_open, gap_extend, term_gap, term_gap)
    scoring = scoring.scaled(gap_scale(len(batch)))
    # the engine's order: non-empty sequences sorted by (residues, id)
    nonempty = [i for i in range(len(batch)) if batch.lengths[i] > 0]
    order = sorted(nonempty, key=lambda i: (batch[i].tobytes(), ids[i]))
    work = batch.subset(order)
    n = len(work)
    iterations = _refine_iterations(refine, n)
    if isinstance(guide_tree, (str, os.PathLike)) and str(guide_tree).lower() not in GUIDE_TREES:
        if not Path(guide_tree).exists():
            raise ValueError(f"guide_tree {str(guide_tree)!r} is neither one of "
                             f"{list(GUIDE_TREES)} nor an existing Newick file")
        from ..trees._newick import read_newick
        guide_tree = read_newick(guide_tree)
    if isinstance(guide_tree, Tree):
        empty = [ids[i] for i in range(len(batch)) if batch.lengths[i] == 0]
        labels = work.ids + empty
        merges_all = merges_for_labels(guide_tree, labels, source or "guide tree") \
            if len(labels) > 1 else np.zeros((0, 2), np.int64)
        merges = _restrict(merges_all, len(labels), n)
    else:
        merges, _ = guide_merges(work, guide_tree, threads, distance_backend, devices)
    from .._core.native import load_native
    native = load_native()
    weights = np.ones(n)
    total_steps = max(n - 1, 0)
    from .._core.progress import progress_bar
    with progress_bar("aligning", enabled=progress) as update:
        callback = (lambda done: update(done, total_steps)) if total_steps else None
        if n and dp_backend is not None:
            on_first = device_scope(chosen[0], dp_backend.name) if chosen \
                else contextlib.nullcontext()
            with on_first:
                cols, width = progressive_in_levels(native, work, scoring, merges, weights,
                                                    dp_backend.msa_profile_dp, callback)
        elif n:
            cols, width = native.msa_progressive(work.codes, work.offsets, scoring.letter_of,
                                                 scoring.sub, scoring.gaps, merges, weights,
                                                 threads, callback)
        else:
            cols, width = np.zeros(0, np.int32), 0
    if iterations and n > 2:
        cols, width, _ = native.msa_refine_gaps(work.codes, work.offsets, scoring.letter_of,
                                                scoring.sub, scoring.gaps, weights,
                                                iterations, REFINE_SEED, REFINE_RADIUS,
                                                cols, width, threads)
    rows = _rows(raw, order, work, cols, int(width), len(batch))
    tree = _tree_from_merges(merges, [ids[i] for i in order]) if n > 1 else None
    return MultipleAlignment(ids, rows, batch.alphabet, tree)


def progressive_in_levels(native, work: SeqBatch, scoring, merges: np.ndarray,
                          weights: np.ndarray, profile_dp, progress=None) -> tuple[np.ndarray, int]:
    """The progressive stage with the DPs on a GPU backend: the merges whose children are
    done form a level, aligned in one batch by ``profile_dp`` (a backend's
    :meth:`~bioaccel.backends.base.Backend.msa_profile_dp`) and merged in order. The merges
    and their paths equal the CPU engine's, so the alignment does too."""
    profile_dp_batch = profile_dp

    n = len(work)
    run = native.MsaProgressiveRun(work.codes, work.offsets, scoring.letter_of, scoring.sub,
                                   scoring.gaps, merges, weights)
    parent = np.full(2 * n - 1, -1, dtype=np.int64)
    waiting = np.zeros(len(merges), dtype=np.int64)
    for k, (a, b) in enumerate(merges.tolist()):
        parent[a] = parent[b] = n + k
        waiting[k] = (a >= n) + (b >= n)
    level = [k for k in range(len(merges)) if waiting[k] == 0]
    done = 0
    while level:
        paths, _ = profile_dp_batch([run.dp_inputs(k) for k in level])
        upcoming = []
        for k, path in zip(level, paths):
            run.merge(k, np.ascontiguousarray(path, dtype=np.uint8))
            p = parent[n + k]
            if p >= 0:
                waiting[p - n] -= 1
                if waiting[p - n] == 0:
                    upcoming.append(int(p - n))
        done += len(level)
        if progress is not None:
            progress(done)
        level = sorted(upcoming)
    return run.finish()


def _refine_iterations(refine, n: int) -> int:
    """Refinement iterations for ``refine`` ("auto", a bool, or a count) and n sequences."""
    if isinstance(refine, str):
        if refine.lower() != "auto":
            raise ValueError(f"refine must be 'auto', True, False or a number of iterations, "
                             f"got {refine!r}")
        return REFINE_ITERATIONS if n <= REFINE_UP_TO else 0
    if isinstance(refine, bool) or refine is None:
        return REFINE_ITERATIONS if refine else 0
    if not isinstance(refine, numbers.Integral) or not 0 <= int(refine) <= 1_000_000:
        raise ValueError(f"refine must be 'auto', True, False or a number of iterations "
                         f"(0 to 1,000,000), got {refine!r}")
    return int(refine)


def _restrict(merges: np.ndarray, total: int, n: int) -> np.ndarray:
    """Merges over tips 0..n-1 from merges over 0..total-1 (tips >= n dropped: empty
    sequences, which take no part in the alignment)."""
    if total == n:
        return merges
    alive: dict[int, int] = {t: t for t in range(n)}
    out: list[tuple[int, int]] = []
    for k, (a, b) in enumerate(merges.tolist()):
        na, nb = alive.get(a), alive.get(b)
        node = total + k
        if na is not None and nb is not None:
            out.append((na, nb))
            alive[node] = n + len(out) - 1
        elif na is not None or nb is not None:
            alive[node] = na if na is not None else nb
    return np.array(out, dtype=np.int64).reshape(-1, 2)


def _rows(raw: list[str], order: list[int], work: SeqBatch, cols: np.ndarray, width: int,
          total: int) -> list[str]:
    """Gapped rows in input order, holding each input's own letters."""
    rows = ["-" * width] * total
    for k, i in enumerate(order):
        letters = np.frombuffer(raw[i].replace("-", "").replace(".", "").encode("ascii", "replace"),
                                dtype=np.uint8)
        row = np.full(width, ord("-"), dtype=np.uint8)
        row[cols[work.offsets[k]:work.offsets[k + 1]]] = letters
        rows[i] = row.tobytes().decode("ascii")
    return rows


def _tree_from_merges(merges: np.ndarray, labels: list[str]) -> Tree:
    """The guide tree as a rooted Tree (unit branch lengths: it is a topology)."""
    n = len(labels)
    parent = np.repeat(np.arange(n, 2 * n - 1, dtype=np.int64), 2)
    child = merges.reshape(-1)
    return Tree(labels, parent, child, np.ones(len(child)), 2 * n - 2)
