"""``msa()``: read, order, guide tree, progressive alignment, refinement, rows back in input
order.

Determinism: the engine runs on the sequences sorted by (residues, id), so the alignment
does not depend on the input order (rows come back in input order) nor on the thread count
(independent merges run in parallel, each depending only on its children; refinement is
sequential with a fixed seed).
"""

from __future__ import annotations

import contextlib
import logging
import numbers
import os
from pathlib import Path

import numpy as np

from ..sequences._alphabet import Alphabet, get_alphabet
from ..errors import BackendUnavailableError, SequenceFormatError
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
#: modes of :func:`msa`
MODES = ("auto", "accurate", "fast")
#: ``mode="auto"`` aligns accurately up to this many sequences ...
AUTO_ACCURATE_SEQUENCES = 300
#: ... and this many pair-HMM cells over all pairs (sum over pairs of |x| |y|) ...
AUTO_ACCURATE_CELLS = 2.0e9
#: ... and at most this many in the largest pair (its forward matrix is dense: 16 bytes a
#: cell per thread while it runs)
AUTO_ACCURATE_PAIR_CELLS = 1.6e7

log = logging.getLogger("bioaccel")


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
        backend: str = "auto", devices=None, progress: bool | None = None,
        mode: str = "auto") -> MultipleAlignment:
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
    backend : {"auto", "cpu", "cupy"}
        ``cpu``: the C++/OpenMP engine. ``cupy``: the guide tree's LCS distances
        (``kernels/lcs_lengths.cu``) and the progressive stage's profile-profile DPs on the
        GPU, all ready merges of a guide-tree level in one launch of
        ``kernels/msa_profile_dp.cu`` (the same paths as the CPU, bit for bit); profiles,
        the tree from the distances and refinement stay on the CPU. ``auto`` is ``cpu``
        (with ``devices=``: the distance stage on those GPUs) until the GPU stages have
        been measured on a GPU. Raises :class:`BackendUnavailableError` when CuPy cannot
        run here, or for ``numba-cuda`` (no MSA stage).
    devices : None, "all", int, list of int or str such as "0,2"
        Spread the guide tree's distance stage over these GPUs in tiles, with failover
        (:mod:`bioaccel.devices._multigpu`; virtual GPUs from ``BIOACCEL_VIRTUAL_GPUS`` run the
        CPU engine); with ``backend="cupy"`` the progressive stage runs on the first of
        them. The alignment is the same as with ``devices=None``.
    progress : bool, optional
        Progress bar on stderr (default: when stderr is a terminal).
    mode : {"auto", "accurate", "fast"}
        ``fast``: the progressive engine above. ``accurate``: probabilistic consistency
        (:mod:`bioaccel.msa_engine.accurate`: pair-HMM posteriors of every pair, two
        consistency rounds, progressive alignment and refinement on the summed posteriors;
        O(n^2 L^2) time, O(n^2 L) memory); ``matrix`` and the gap penalties do not apply to
        it, ``refine`` counts its refinement rounds. ``auto``: ``accurate`` up to
        :data:`AUTO_ACCURATE_SEQUENCES` sequences, :data:`AUTO_ACCURATE_CELLS` pair-HMM
        cells over all pairs and :data:`AUTO_ACCURATE_PAIR_CELLS` in the largest pair
        (about 20 s of posteriors on one core), else ``fast``. The chosen mode is logged
        and kept in ``MultipleAlignment.mode``.

    Returns
    -------
    MultipleAlignment
        Rows in input order; every row without gaps is its input sequence.

    Examples
    --------
    >>> aln = msa([("a", "MKVLAAGIV"), ("b", "MKVLGIV"), ("c", "MKALAAGIV")])
    >>> aln.sequences
    ['MKVLAAGIV', 'MKVL--GIV', 'MKALAAGIV']
    >>> aln.mode  # auto chose the accurate mode for so small an input
    'accurate'
    """
    from .._core.threads import check_threads

    threads = check_threads(threads)
    mode = check_mode(mode)
    key = str(backend).lower().replace("_", "-")
    key = "numba-cuda" if key == "numba" else key
    if key not in ("auto", "cpu", "cupy") and not (mode == "accurate" and key == "numba-cuda"):
        raise BackendUnavailableError(
            f"backend {backend!r} has no MSA stage; expected 'auto', 'cpu' or 'cupy' "
            "(or 'numba-cuda' with mode='accurate')")
    xp = gpu_array_module() if key == "cupy" else None
    distance_backend = "cupy" if key == "cupy" else ("cpu" if devices is None else key)
    chosen = None
    if devices is not None and mode == "accurate":
        from ..backends import backend_for_devices
        from ..devices._discover import select_devices
        backend_for_devices(select_devices(devices), key, "pair_posteriors")  # refuse a bad mix now
    elif devices is not None:
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
    chosen_mode = resolve_mode(mode, np.asarray(work.lengths))
    log.info("msa mode: %s (%s; %d sequences)", chosen_mode,
             "chosen by auto" if mode == "auto" else "asked for", n)
    iterations = _refine_iterations(refine, n, chosen_mode)
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
    elif chosen_mode == "accurate" and str(guide_tree).lower() == "auto":
        merges = None  # the accurate mode's own tree: UPGMA of expected accuracies
    else:
        merges, _ = guide_merges(work, guide_tree, threads, distance_backend, devices)
    from ..backends.cpu import load_native
    native = load_native()
    if chosen_mode == "accurate":
        from .accurate import accurate_alignment
        cols, width, merges = accurate_alignment(
            native, work, merges=merges, threads=threads, iterations=iterations,
            backend=key, devices=devices)
        rows = _rows(raw, order, work, cols, int(width), len(batch))
        tree = _tree_from_merges(merges, [ids[i] for i in order]) if n > 1 else None
        return MultipleAlignment(ids, rows, batch.alphabet, tree, mode=chosen_mode)
    weights = np.ones(n)
    total_steps = max(n - 1, 0)
    from .._core.progress import progress_bar
    with progress_bar("aligning", enabled=progress) as update:
        callback = (lambda done: update(done, total_steps)) if total_steps else None
        if n and xp is not None:
            on_first = xp.cuda.Device(chosen[0].index) if chosen and not chosen[0].virtual \
                else contextlib.nullcontext()
            with on_first:
                cols, width = progressive_in_levels(native, work, scoring, merges, weights, xp,
                                                    callback)
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
    return MultipleAlignment(ids, rows, batch.alphabet, tree, mode=chosen_mode)


def gpu_array_module():
    """CuPy, when it can run here (else :class:`BackendUnavailableError` saying why)."""
    from ..backends import get_backend
    get_backend("cupy", "align_scores")
    import cupy
    return cupy


def progressive_in_levels(native, work: SeqBatch, scoring, merges: np.ndarray,
                          weights: np.ndarray, xp, progress=None) -> tuple[np.ndarray, int]:
    """The progressive stage with the DPs on the GPU: the merges whose children are done
    form a level, aligned in one batch by :func:`bioaccel.backends.cupy._msa.profile_dp_batch`
    and merged in order. The merges and their paths equal the CPU engine's, so the
    alignment does too."""
    from ..backends.cupy._msa import profile_dp_batch

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
        paths, _ = profile_dp_batch([run.dp_inputs(k) for k in level], xp)
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


def check_mode(mode) -> str:
    """``mode`` lower-cased, or a ValueError naming it and the choices."""
    key = str(mode).lower() if isinstance(mode, str) else None
    if key not in MODES:
        raise ValueError(f"mode must be one of {', '.join(repr(m) for m in MODES)}, "
                         f"got {mode!r}")
    return key


def resolve_mode(mode: str, lengths) -> str:
    """The mode ``auto`` picks for sequences of these lengths: accurate while the pairwise
    posteriors stay within :data:`AUTO_ACCURATE_SEQUENCES` sequences and
    :data:`AUTO_ACCURATE_CELLS` forward-backward cells over all pairs."""
    if mode != "auto":
        return mode
    n = len(lengths)
    if n > AUTO_ACCURATE_SEQUENCES:
        return "fast"
    lengths = np.sort(np.asarray(lengths, dtype=np.float64))
    total = float(lengths.sum())
    cells = (total * total - float(np.sum(lengths ** 2))) / 2.0  # sum over pairs of |x| |y|
    largest = float(lengths[-1] * lengths[-2]) if n > 1 else 0.0
    return "accurate" if cells <= AUTO_ACCURATE_CELLS and largest <= AUTO_ACCURATE_PAIR_CELLS \
        else "fast"


def _refine_iterations(refine, n: int, mode: str = "fast") -> int:
    """Refinement iterations for ``refine`` ("auto", a bool, or a count) and n sequences."""
    if mode == "accurate":
        from .accurate import REFINE_ITERATIONS as default
    else:
        default = REFINE_ITERATIONS
    if isinstance(refine, str):
        if refine.lower() != "auto":
            raise ValueError(f"refine must be 'auto', True, False or a number of iterations, "
                             f"got {refine!r}")
        return default if (n <= REFINE_UP_TO or mode == "accurate") else 0
    if isinstance(refine, bool) or refine is None:
        return default if refine else 0
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
