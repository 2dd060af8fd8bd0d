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

from ..backends import get_backend, resolve_backend_name
from ..devices import device_scope
from ..errors import SequenceFormatError
from ..sequences import Alphabet, SeqBatch, get_alphabet
from ..trees import Tree
from .alignment import MultipleAlignment
from .guide import GUIDE_TREES, guide_merges, merges_for_labels
from .options import MsaOptions, MsaScoring, operation_of
from .read import SequenceText, check_unique_headers, parse_records, split_header
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
#: ``mode="auto"`` aligns accurately up to this many sequences ... Measured near the limits
#: (simulated protein families, benchmarks/family_sim.py depth 1.5, one thread, CPU s; tables in
#: benchmarks/msa_accurate_tables.md): accurate beats fast in SP and TC at every size tried,
#: but its consistency stage grows as n^3: 200 x 150 aa 100 s (fast 0.2 s), 250 x 120 204 s,
#: 300 x 200 575 s. 200 keeps auto's worst case on one thread near the cell limit's below.
AUTO_ACCURATE_SEQUENCES = 200
#: ... and this many pair-HMM cells over all pairs (sum over pairs of |x| |y|) ... (150 x 400
#: aa, 1.8e9 cells: accurate 155 CPU s, SP/TC +0.042/+0.06 over fast; 100 x 300, 4.6e8: 31 s)
AUTO_ACCURATE_CELLS = 2.0e9
#: ... and at most this many in the largest pair (its forward matrix is dense: 16 bytes a
#: cell per thread while it runs)
AUTO_ACCURATE_PAIR_CELLS = 1.6e7

log = logging.getLogger("bioaccel")


def _records(sequences, format: str | None = None):
    """(ids, raw residue strings, source, descriptions, header lines) of a path (read as
    ``format``, else sniffed), a SeqBatch, or records. A record's header line (kept as
    given) is its id (the first word) and its description (the rest, "" when none): see
    :func:`.read.split_header`."""
    if format is not None and not isinstance(sequences, (str, os.PathLike, SequenceText)):
        raise ValueError("format= applies to a file path; the sequences are given already")
    if isinstance(sequences, (str, os.PathLike, SequenceText)):
        ids, raw, descriptions, _, headers = parse_records(sequences, format)
        source = sequences.source if isinstance(sequences, SequenceText) else str(sequences)
        if not ids:
            raise SequenceFormatError(f"{source}: no sequences found")
        return ids, raw, source, descriptions, headers
    if isinstance(sequences, SeqBatch):
        return (
            list(sequences.ids),
            [sequences.given_sequence(i) for i in range(len(sequences))],  # the user's letters
            sequences.source,
            [""] * len(sequences),
            list(sequences.ids),
        )
    ids, raw, descriptions, headers = [], [], [], []
    for k, rec in enumerate(sequences):
        if isinstance(rec, tuple) and len(rec) == 2:
            line, s = str(rec[0]), rec[1]
            i, d = split_header(line)
            h = line
        elif hasattr(rec, "seq") and hasattr(rec, "id"):
            i, s = str(rec.id), rec.seq
            text = str(getattr(rec, "description", "") or "")
            d = text[len(i) :].strip() if text.startswith(i) else ""
            h = text if d else i
        elif isinstance(rec, (str, bytes)):
            i, s, d = f"seq{k}", rec, ""
            h = i
        else:
            raise TypeError(
                f"record {k + 1}: expected (id, sequence), a SeqRecord or a string, "
                f"got {type(rec).__name__}"
            )
        ids.append(str(i))
        descriptions.append(d)
        headers.append(h)
        raw.append(s.decode("ascii", "replace") if isinstance(s, bytes) else str(s))
    return ids, raw, None, descriptions, headers


def msa(
    sequences=None,
    *,
    alphabet: str | Alphabet = "auto",
    guide_tree="auto",
    matrix="auto",
    gap_open: float | None = None,
    gap_extend: float | None = None,
    term_gap: float | None = None,
    refine="auto",
    threads: int = 0,
    backend: str = "auto",
    devices=None,
    progress: bool | None = None,
    add=None,
    to=None,
    keep_length: bool = False,
    fragments: bool = False,
    profile=None,
    format: str | None = None,
    mode: str = "auto",
) -> MultipleAlignment:
    """Multiple sequence alignment by progressive profile-profile alignment up a guide tree.

    Parameters
    ----------
    sequences : path, SeqBatch, or iterable of (id, sequence) / SeqRecord / str
        FASTA (gzip too) or any format :func:`bioaccel.read_sequences` reads. Gaps
        (``-``, ``.``) in the input are removed first. Letters: the engine scores U as T
        and lower case as upper case, but every row is written in its input's own letters
        (a SeqBatch's :attr:`~bioaccel.SeqBatch.given` letters), so RNA keeps its U, a file
        mixing DNA and RNA rows keeps each row's T or U, and lower case stays lower case.
    alphabet : {"auto", "protein", "dna", "rna"}
        ``auto``: as :func:`bioaccel.read_sequences` (DNA/RNA when >= 90 % of the residues
        are A/C/G/T/U/N, else protein).
    guide_tree : {"auto", "single", "upgma", "nj", "medoid"}, Tree, or Newick path
        ``single``: single linkage over LCS distances of all pairs (FAMSA's default);
        ``upgma``/``nj`` over the same distances; ``medoid``: a recursive split by nearest
        seeds, O(n x 100) distances per level, for 10^4+ sequences. ``auto``: ``single``
        unless comparing all pairs would take more than about 25 s on two AVX2 cores (past
        about 20,000 proteins of 250 residues, or 3,000 16S genes), then ``medoid``. Single
        linkage keeps O(n) memory (SLINK, fed a block of rows at a time). A Tree or Newick
        file must name every sequence once.
    matrix : str, (match, mismatch) or matrix
        ``auto``: PFASUM43 for proteins, NUC.4.4 rescaled to +5/-1 for nucleotides (see
        :mod:`bioaccel.msa_engine.scoring`); any name of the ``scoring-matrices`` package or
        of Biopython's ``substitution_matrices``; or a match and a mismatch score,
        ``(2, -3)`` or ``"2,-3"`` (the command line's ``--matrix 2,-3``).
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
    add, to : sequences (as ``sequences``), and an alignment (path or MultipleAlignment)
        Instead of ``sequences``: add the sequences ``add`` to the alignment ``to``, whose
        rows keep their residues, columns and order; each new sequence is aligned to the
        fixed profile of the existing rows (:mod:`bioaccel.msa_engine.add`). Rows: the
        existing ones, then the added ones.
    keep_length : bool
        With ``add``: keep the existing width; residues of new sequences that face no
        existing column are dropped and listed in ``MultipleAlignment.dropped`` (MAFFT's
        ``--add --keeplength``).
    fragments : bool
        With ``add``: the new sequences are reads or contigs of part of the aligned
        sequences; their end gaps are free, so each is placed where it matches.
    profile : (alignment, alignment)
        Instead of ``sequences``: align two alignments (paths or MultipleAlignments) to each
        other as profiles; each keeps its columns holding residues; rows of the first come
        first.
    format : str, optional
        The format of a file given as a path (one of :data:`bioaccel.sequences.SEQUENCE_FORMATS`); sniffed
        when omitted.
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
        Rows in input order; every row without gaps is its input sequence, letter for
        letter (U, T and case as given; the same for ``add`` and ``profile``).

    Examples
    --------
    >>> aln = msa([("a", "MKVLAAGIV"), ("b", "MKVLGIV"), ("c", "MKALAAGIV")])
    >>> aln.sequences
    ['MKVLAAGIV', 'MKVL--GIV', 'MKALAAGIV']
    >>> aln.mode  # auto chose the accurate mode for so small an input
    'accurate'
    """
    from .._core import check_threads

    options = MsaOptions(
        operation=operation_of(sequences, add, to, profile),
        mode=check_msa_mode(mode),
        alphabet=alphabet,
        scoring=MsaScoring(matrix, gap_open, gap_extend, term_gap),
        guide_tree=guide_tree,
        refine=refine,
        threads=check_threads(threads),
        backend=backend,
        devices=devices,
        progress=progress,
        keep_length=keep_length,
        fragments=fragments,
        format=format,
    )
    return run_msa(options, sequences, add=add, to=to, profile=profile)


def run_msa(options: MsaOptions, sequences=None, *, add=None, to=None, profile=None):
    """:func:`msa` with its options as one :class:`~.options.MsaOptions` (the command line
    builds one, spelling options as it does in messages): the options that do not apply to
    the operation and mode are refused (:meth:`~.options.MsaOptions.check`), then the
    operation runs."""
    if options.operation == "add":
        from .add import add_to_alignment

        options.check()
        return add_to_alignment(_records(add, options.format), to, options)
    if options.operation == "profile":
        from .add import align_alignments

        options.check()
        return align_alignments(profile[0], profile[1], options)
    if options.mode != "auto":
        options.check(options.mode)
    return _align(options, sequences)


def _align(options: MsaOptions, sequences) -> MultipleAlignment:
    """The ``align`` operation: sequences into a multiple alignment."""
    mode, threads, backend, devices = (
        options.mode,
        options.threads,
        options.backend,
        options.devices,
    )
    alphabet, guide_tree, progress = options.alphabet, options.guide_tree, options.progress
    sc = options.scoring
    requested = str(backend).lower().replace("_", "-")
    requested = "numba-cuda" if requested == "numba" else requested
    key = resolve_backend_name(requested, "msa_profile_dp")
    # the progressive stage's DPs: the C++ engine, or a backend of the registry that has the
    # batched kernel (cupy, numba-cuda); an unknown or unfit backend is named here
    dp_backend = None if key == "cpu" else get_backend(key, "msa_profile_dp")
    distance_backend = key if dp_backend is not None else ("cpu" if devices is None else requested)
    chosen = None
    if devices is not None and mode == "accurate":
        from ..backends import backend_for_devices
        from ..devices import select_devices

        backend_for_devices(select_devices(devices), key, "pair_posteriors")  # refuse a bad mix now
    elif devices is not None:
        from ..backends import backend_for_devices
        from ..devices import select_devices

        chosen = select_devices(devices)
        backend_for_devices(chosen, distance_backend, "lcs_lengths")  # refuse a bad mix now
    ids, raw, source, descriptions, labels = _records(sequences, options.format)
    check_unique_headers(ids, labels, source)
    ungapped = [s.replace("-", "").replace(".", "") for s in raw]
    batch = SeqBatch.from_strings(
        ungapped,
        ids=labels,
        alphabet=alphabet if alphabet == "auto" else get_alphabet(alphabet),
        source=source,
    )
    if all(len(s) == 0 for s in ungapped):
        raise SequenceFormatError(f"{source or 'input'}: every sequence is empty")
    scoring = msa_scoring(
        batch.alphabet, sc.matrix, sc.gap_open, sc.gap_extend, sc.term_gap, sc.term_gap
    )
    scoring = scoring.scaled(gap_scale(len(batch)))
    # the engine's order: non-empty sequences sorted by (residues, id)
    nonempty = [i for i in range(len(batch)) if batch.lengths[i] > 0]
    order = sorted(nonempty, key=lambda i: (batch[i].tobytes(), labels[i]))
    work = batch.subset(order)
    n = len(work)
    chosen_mode, reason = resolve_mode(
        mode, np.asarray(work.lengths), options.given_scoring(), options.spelling
    )
    options.check(chosen_mode)
    log.info("msa mode: %s (%s)", chosen_mode, reason)
    iterations = _refine_iterations(options.refine, n, chosen_mode)
    if isinstance(guide_tree, (str, os.PathLike)) and str(guide_tree).lower() not in GUIDE_TREES:
        if not Path(guide_tree).exists():
            raise ValueError(
                f"guide_tree {str(guide_tree)!r} is neither one of "
                f"{list(GUIDE_TREES)} nor an existing Newick file"
            )
        from ..trees import read_newick

        guide_tree = read_newick(guide_tree)
    groups = None
    if isinstance(guide_tree, Tree):
        empty = [labels[i] for i in range(len(batch)) if batch.lengths[i] == 0]
        tips = _tree_tips(guide_tree, work.ids + empty, ids)
        if empty and sorted(guide_tree.labels) == sorted(tips[: len(work)]):
            tips = tips[: len(work)]  # a tree without the empty records (they align to nothing)
        merges_all = (
            merges_for_labels(guide_tree, tips, source or "guide tree")
            if len(tips) > 1
            else np.zeros((0, 2), np.int64)
        )
        merges = _restrict(merges_all, len(tips), n)
    elif chosen_mode == "accurate" and str(guide_tree).lower() == "auto":
        merges = None  # the accurate mode's own tree: UPGMA of expected accuracies
    else:
        groups = _identical_groups(work) if chosen_mode == "fast" else None
        if groups is not None:  # one of each set of identical sequences is aligned
            everyone, work = work, work.subset([g[0] for g in groups])
            n = len(work)
        merges, _ = guide_merges(work, guide_tree, threads, distance_backend, devices)
    from .._core import load_native

    native = load_native()
    if chosen_mode == "accurate":
        from .accurate import accurate_alignment

        cols, width, merges = accurate_alignment(
            native,
            work,
            merges=merges,
            threads=threads,
            iterations=iterations,
            backend=key,
            devices=devices,
        )
        rows = _rows(raw, order, work, cols, int(width), len(batch))
        empty_ids = [labels[i] for i in range(len(batch)) if batch.lengths[i] == 0]
        tree = _guide_tree(merges, [labels[i] for i in order], empty_ids)
        return MultipleAlignment(
            ids, rows, batch.alphabet, tree, chosen_mode, descriptions, reason, labels
        )
    weights = np.ones(n)
    total_steps = max(n - 1, 0)
    from .._core import progress_bar

    with progress_bar("aligning", enabled=progress) as update:
        callback = (lambda done: update(done, total_steps)) if total_steps else None
        if n and dp_backend is not None:
            on_first = device_scope(chosen[0], dp_backend) if chosen else contextlib.nullcontext()
            with on_first:
                cols, width = progressive_in_levels(
                    native, work, scoring, merges, weights, dp_backend.msa_profile_dp, callback
                )
        elif n:
            cols, width = native.msa_progressive(
                work.codes,
                work.offsets,
                scoring.letter_of,
                scoring.sub,
                scoring.gaps,
                merges,
                weights,
                threads,
                callback,
            )
        else:
            cols, width = np.zeros(0, np.int32), 0
    if iterations and n > 2:
        cols, width, _ = native.msa_refine_gaps(
            work.codes,
            work.offsets,
            scoring.letter_of,
            scoring.sub,
            scoring.gaps,
            weights,
            iterations,
            REFINE_SEED,
            REFINE_RADIUS,
            cols,
            width,
            threads,
        )
    if groups is not None:  # every copy takes its representative's columns
        cols = np.concatenate(
            [cols[work.offsets[u] : work.offsets[u + 1]] for u, g in enumerate(groups) for _ in g]
        )
        merges, work, n = _with_copies(merges, groups), everyone, len(everyone)
    rows = _rows(raw, order, work, cols, int(width), len(batch))
    empty_ids = [labels[i] for i in range(len(batch)) if batch.lengths[i] == 0]
    tree = _guide_tree(merges, [labels[i] for i in order], empty_ids)
    return MultipleAlignment(
        ids, rows, batch.alphabet, tree, chosen_mode, descriptions, reason, labels
    )


def _identical_groups(work: SeqBatch) -> list[list[int]] | None:
    """Runs of identical sequences (the engine's order sorts by residues, so copies are
    adjacent), or None when all differ. Copies get identical rows whatever the engine does,
    so only one of each is aligned (influenza sets hold many: 263 of pdH1N1's 433 HA genes
    repeat another)."""
    groups: list[list[int]] = []
    prev = None
    for k in range(len(work)):
        seq = work[k].tobytes()
        if seq == prev:
            groups[-1].append(k)
        else:
            groups.append([k])
        prev = seq
    return groups if len(groups) < len(work) else None


def _with_copies(merges: np.ndarray, groups: list[list[int]]) -> np.ndarray:
    """The guide tree over every sequence from one over the groups' representatives: the
    copies of each group joined first, then the representatives' merges."""
    n = sum(len(g) for g in groups)
    m = len(groups)
    out: list[tuple[int, int]] = []
    node_of = np.zeros(2 * m - 1, dtype=np.int64)
    for u, g in enumerate(groups):
        node = g[0]
        for k in g[1:]:
            out.append((node, k))
            node = n + len(out) - 1
        node_of[u] = node
    for k, (a, b) in enumerate(np.asarray(merges, dtype=np.int64).reshape(-1, 2).tolist()):
        out.append((int(node_of[a]), int(node_of[b])))
        node_of[m + k] = n + len(out) - 1
    return np.array(out, dtype=np.int64).reshape(-1, 2)


def _tree_tips(tree: Tree, labels: list[str], ids: list[str]) -> list[str]:
    """The names a given guide tree's tips are matched on: the rows' whole header lines
    (``labels``), or their ids when the tree names none of the headers with a description
    and the ids are distinct."""
    if set(tree.labels) <= set(labels) or len(set(ids)) != len(ids):
        return labels
    return [label.split(None, 1)[0] for label in labels]


def progressive_in_levels(
    native,
    work: SeqBatch,
    scoring,
    merges: np.ndarray,
    weights: np.ndarray,
    profile_dp,
    progress=None,
) -> tuple[np.ndarray, int]:
    """The progressive stage with the DPs on a GPU backend: the merges whose children are
    done form a level, aligned in one batch by ``profile_dp`` (a backend's
    :meth:`~bioaccel.backends.base.Backend.msa_profile_dp`) and merged in order. The merges
    and their paths equal the CPU engine's, so the alignment does too."""
    profile_dp_batch = profile_dp

    n = len(work)
    run = native.MsaProgressiveRun(
        work.codes, work.offsets, scoring.letter_of, scoring.sub, scoring.gaps, merges, weights
    )
    parent = np.full(2 * n - 1, -1, dtype=np.int64)
    waiting = np.zeros(len(merges), dtype=np.int64)
    for k, (a, b) in enumerate(merges.tolist()):
        parent[a] = parent[b] = n + k
        waiting[k] = (a >= n) + (b >= n)
    level = [k for k in range(len(merges)) if waiting[k] == 0]
    done = 0
    while level:
        # long pairs the CPU engine bands (genomes) take its banded path, not a full DP
        banded = {k: run.banded_path(k) for k in level}
        full = [k for k in level if banded[k] is None]
        paths, _ = profile_dp_batch([run.dp_inputs(k) for k in full]) if full else ([], None)
        by_merge = dict(zip(full, paths))
        upcoming = []
        for k in level:
            path = banded[k] if banded[k] is not None else by_merge[k]
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


def check_msa_mode(mode) -> str:
    """``mode`` lower-cased, or a ValueError naming it and the choices."""
    key = str(mode).lower() if isinstance(mode, str) else None
    if key not in MODES:
        raise ValueError(f"mode must be one of {', '.join(repr(m) for m in MODES)}, got {mode!r}")
    return key


def _sci(x: float) -> str:
    """2e9, 1.6e7, 4.31e2: a cell count as the messages write it."""
    mantissa, exponent = f"{x:.2e}".split("e")
    return f"{mantissa.rstrip('0').rstrip('.')}e{int(exponent)}"


def resolve_mode(mode: str, lengths, scoring_given=(), spelling: str = "python") -> tuple[str, str]:
    """(mode, why): the mode ``auto`` picks for sequences of these lengths and the reason, in
    words (:attr:`MultipleAlignment.mode_reason`; ``-v`` logs it). Accurate while the
    pairwise posteriors stay within :data:`AUTO_ACCURATE_SEQUENCES` sequences,
    :data:`AUTO_ACCURATE_CELLS` forward-backward cells over all pairs and
    :data:`AUTO_ACCURATE_PAIR_CELLS` in the largest pair, and no scoring option of the fast
    mode is given (``scoring_given``: the accurate mode does not use them, so giving one
    chooses the mode that does)."""
    if mode != "auto":
        return mode, "asked for"
    n = len(lengths)
    seqs = f"{n:,} sequence{'s' if n != 1 else ''}"
    if scoring_given:
        names = [
            ("--" + s.replace("_", "-")) if spelling == "cli" else s + "=" for s in scoring_given
        ]
        return "fast", (
            f"chosen by auto: {seqs}, and {', '.join(names)} given, which only the fast mode "
            "scores with"
        )
    if n > AUTO_ACCURATE_SEQUENCES:
        return "fast", (
            f"chosen by auto: {seqs}, over the accurate mode's limit of {AUTO_ACCURATE_SEQUENCES:,}"
        )
    lengths = np.sort(np.asarray(lengths, dtype=np.float64))
    total = float(lengths.sum())
    cells = (total * total - float(np.sum(lengths**2))) / 2.0  # sum over pairs of |x| |y|
    largest = float(lengths[-1] * lengths[-2]) if n > 1 else 0.0
    if largest > AUTO_ACCURATE_PAIR_CELLS:
        return "fast", (
            f"chosen by auto: {seqs}, but the largest pair, {int(lengths[-1]):,} x "
            f"{int(lengths[-2]):,} cells, is over the {_sci(AUTO_ACCURATE_PAIR_CELLS)}-cell limit"
        )
    if cells > AUTO_ACCURATE_CELLS:
        return "fast", (
            f"chosen by auto: {seqs}, but all pairs hold {_sci(cells)} pair-HMM cells, over "
            f"the {_sci(AUTO_ACCURATE_CELLS)}-cell limit"
        )
    return "accurate", (
        f"chosen by auto: {seqs}, {_sci(cells)} pair-HMM cells, within the accurate mode's "
        f"limits ({AUTO_ACCURATE_SEQUENCES:,} sequences, {_sci(AUTO_ACCURATE_CELLS)} cells over "
        f"all pairs, {_sci(AUTO_ACCURATE_PAIR_CELLS)} in the largest pair)"
    )


def _refine_iterations(refine, n: int, mode: str = "fast") -> int:
    """Refinement iterations for ``refine`` ("auto", a bool, or a count) and n sequences."""
    if mode == "accurate":
        from .accurate import REFINE_ITERATIONS as default
    else:
        default = REFINE_ITERATIONS
    if isinstance(refine, str):
        if refine.lower() != "auto":
            raise ValueError(
                f"refine must be 'auto', True, False or a number of iterations, got {refine!r}"
            )
        return default if (n <= REFINE_UP_TO or mode == "accurate") else 0
    if isinstance(refine, bool) or refine is None:
        return default if refine else 0
    if not isinstance(refine, numbers.Integral) or not 0 <= int(refine) <= 1_000_000:
        raise ValueError(
            f"refine must be 'auto', True, False or a number of iterations "
            f"(0 to 1,000,000), got {refine!r}"
        )
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


def _rows(
    raw: list[str], order: list[int], work: SeqBatch, cols: np.ndarray, width: int, total: int
) -> list[str]:
    """Gapped rows in input order, holding each input's own letters."""
    rows = ["-" * width] * total
    for k, i in enumerate(order):
        letters = np.frombuffer(
            raw[i].replace("-", "").replace(".", "").encode("ascii", "replace"), dtype=np.uint8
        )
        row = np.full(width, ord("-"), dtype=np.uint8)
        row[cols[work.offsets[k] : work.offsets[k + 1]]] = letters
        rows[i] = row.tobytes().decode("ascii")
    return rows


def _guide_tree(merges: np.ndarray, labels: list[str], empty: list[str]) -> Tree | None:
    """The guide tree naming every input sequence once, so that it can be given back as
    ``guide_tree``: the merges over the non-empty ``labels``, then each empty sequence
    (which takes no part in the alignment) joined to the root; None for one sequence (the
    command line's ``--tree-out`` writes ``a;`` then)."""
    n, total = len(labels), len(labels) + len(empty)
    if total == 1:
        return None
    m = np.asarray(merges, dtype=np.int64).reshape(-1, 2).copy()
    m[m >= n] += total - n  # internal nodes come after all tips
    root = total + n - 2 if n > 1 else 0
    extra = []
    for j in range(len(empty)):
        extra.append((root, n + j))
        root = total + len(m) + j
    return _tree_from_merges(
        np.concatenate([m, np.array(extra, np.int64).reshape(-1, 2)]), labels + empty
    )


def _tree_from_merges(merges: np.ndarray, labels: list[str]) -> Tree:
    """The guide tree as a rooted Tree (unit branch lengths: it is a topology)."""
    n = len(labels)
    parent = np.repeat(np.arange(n, 2 * n - 1, dtype=np.int64), 2)
    child = merges.reshape(-1)
    return Tree(labels, parent, child, np.ones(len(child)), 2 * n - 2)
