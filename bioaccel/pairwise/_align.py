"""Pairwise alignment of many sequences: scores (``align_scores``) and full alignments
with traceback (``align``).

Modes: ``global`` (Needleman-Wunsch/Gotoh), ``local`` (Smith-Waterman/Gotoh),
``semiglobal`` (end gaps free on both sequences). Gaps: see :mod:`bioaccel.pairwise._scoring`.

Tie-breaking among co-optimal alignments (tracebacks, CPU only): walking back from the end
cell, a local cell of score 0 ends the alignment; otherwise a match/mismatch step is
preferred over a gap in the query (``D``), over a gap in the target (``I``); a gap is
opened rather than extended. The end cell is the first maximum in row-major order (query
position, then target position); for semiglobal, among the last column then the last row.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .._core import check_threads
from ..sequences import as_batch_pair
from ._cigar import cigar_runs
from ._dispatch import pairwise
from ._scoring import Scoring, check_alignment_mode, default_scoring


def _prepare(queries, targets, matrix, gap_open, gap_extend, mode, alphabet="auto"):
    q, t = as_batch_pair(queries, targets, alphabet)
    scoring = default_scoring(q.alphabet, matrix, gap_open, gap_extend)
    scoring.check_batch(q)
    if t is not q:
        scoring.check_batch(t)
    return q, t, scoring, check_alignment_mode(mode)


def align_scores(
    queries,
    targets=None,
    *,
    mode: str = "global",
    matrix=None,
    gap_open: int | None = None,
    gap_extend: int | None = None,
    backend: str = "auto",
    threads: int = 0,
    devices=None,
    alphabet="auto",
) -> np.ndarray:
    """Optimal alignment scores of every query against every target.

    Parameters
    ----------
    queries, targets : SeqBatch, path, or sequence of str
        ``targets=None`` aligns ``queries`` all-vs-all, each unordered pair once (the
        matrix is symmetric; the diagonal holds self-alignment scores).
    mode : {"global", "local", "semiglobal"}
    matrix : str, Biopython ``Array`` or (match, mismatch)
        A name known to ``Bio.Align.substitution_matrices`` (BLOSUM45/62/80, PAM250, ...),
        of the sequences' kind (a protein matrix for DNA is refused). None: BLOSUM62 for
        proteins, (2, -3) for nucleotides.
    gap_open, gap_extend : int
        None: 11 and 1 for proteins, 5 and 2 for nucleotides.
        A gap of length L costs ``gap_open + (L - 1) * gap_extend``; ``gap_open >= gap_extend``
        (open < extend raises :class:`ScoringError`; see :mod:`bioaccel.pairwise._scoring`).
    backend : {"auto", "cpu", "numba-cuda", "cupy", "reference"}
        ``auto`` takes numba-cuda on a GPU, else the C++ core; ``cupy`` (CUDA C kernel)
        only when named.
    threads : int
        CPU threads (0 = all); results do not depend on it.
    devices : None, "all", int, list of int or str such as "0,2"
        Spread tiles of pairs (balanced by len_i * len_j) over these GPUs, with failover
        (:mod:`bioaccel.devices._multigpu`); the result equals a single-device run.
    alphabet : {"auto", "dna", "rna", "protein"}
        How sequences given as paths or strings are read (``auto``: see
        :func:`bioaccel.sequences._alphabet.guess_alphabet`); a SeqBatch of another alphabet is refused.

    Returns
    -------
    numpy.ndarray of int32, shape (len(queries), len(targets))

    Raises
    ------
    ScoringError
        Unknown matrix, non-integer scores, negative or non-integer penalties,
        gap_open < gap_extend, a protein matrix for nucleotides (or the reverse).
    AlphabetError
        A letter missing from the matrix (named with sequence id and position), or
        queries and targets of different alphabets.
    OverflowError
        A score that could leave the int32 range (never clamped).

    Examples
    --------
    >>> align_scores(["HEAGAWGHEE"], ["PAWHEAE"], mode="global", matrix="BLOSUM50",
    ...              gap_open=8, gap_extend=8, backend="cpu").tolist()
    [[1]]
    """
    threads = check_threads(threads)
    q, t, scoring, mode_id = _prepare(
        queries, targets, matrix, gap_open, gap_extend, mode, alphabet
    )
    return pairwise(
        q,
        t,
        targets is None,
        operation="align_scores",
        dtype=np.int32,
        backend=backend,
        devices=devices,
        threads=threads,
        kernel=lambda engine, qb, tb, sym, th: engine.align_scores(
            qb, tb, scoring, mode_id, sym, th
        ),
    )


@dataclass(frozen=True)
class Alignment:
    """One pairwise alignment. Coordinates are 0-based, half-open.

    ``cigar`` uses M (query and target residue, match or mismatch), I (query residue
    against a gap) and D (target residue against a gap). ``query_aligned`` and
    ``target_aligned`` hold the sequences' own letters (case and U as given);
    ``identical`` counts the identical columns on the residue codes (case folded, U as T),
    None to count them from the aligned strings.
    """

    query_id: str
    target_id: str
    score: int
    query_start: int
    query_end: int
    target_start: int
    target_end: int
    cigar: str
    query_aligned: str
    target_aligned: str
    identical: int | None = None

    @property
    def aligned_length(self) -> int:
        return len(self.query_aligned)

    @property
    def matches(self) -> int:
        if self.identical is not None:
            return self.identical
        return sum(a == b for a, b in zip(self.query_aligned, self.target_aligned) if a != "-")

    @property
    def identity(self) -> float:
        """Identical columns / aligned columns (gap columns included); NaN when empty."""
        n = self.aligned_length
        return self.matches / n if n else float("nan")


def _render(q: str, t: str, cigar: str) -> tuple[str, str]:
    qa, ta = [], []
    for op, n, i, j in cigar_runs(cigar):
        qa.append(q[i : i + n] if op != "D" else "-" * n)
        ta.append(t[j : j + n] if op != "I" else "-" * n)
    return "".join(qa), "".join(ta)


def align(
    queries,
    targets=None,
    *,
    pairs: Sequence[tuple[int, int]] | None = None,
    mode: str = "global",
    matrix=None,
    gap_open: int | None = None,
    gap_extend: int | None = None,
    threads: int = 0,
    alphabet="auto",
) -> list[Alignment]:
    """Optimal alignments with traceback (C++ core, OpenMP over pairs).

    ``pairs`` lists (query index, target index) to align; by default every query against
    every target (``targets=None``: every unordered pair of ``queries``, i < j). Memory per
    pair grows as O(n * sqrt(m)), not O(m * n): two 50 kb sequences need about 100 MB.
    Scoring and ``alphabet`` as for :func:`align_scores`.

    Examples
    --------
    >>> a = align(["ACGTTGCA"], ["ACGTGCA"], matrix=(2, -3), gap_open=5, gap_extend=2)[0]
    >>> a.cigar, a.score, a.query_aligned, a.target_aligned
    ('3M1I4M', 9, 'ACGTTGCA', 'ACG-TGCA')
    """
    from .._core import load_native

    threads = check_threads(threads)
    q, t, scoring, mode_id = _prepare(
        queries, targets, matrix, gap_open, gap_extend, mode, alphabet
    )
    if pairs is None:
        if targets is None:
            pairs = [(i, j) for i in range(len(q)) for j in range(i + 1, len(q))]
        else:
            pairs = [(i, j) for i in range(len(q)) for j in range(len(t))]
    arr = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    rows = load_native().align_pairs(
        q.codes,
        q.offsets,
        t.codes,
        t.offsets,
        arr,
        scoring.table,
        mode_id,
        scoring.gap_open,
        scoring.gap_extend,
        int(threads),
    )
    out = []
    for (qi, ti), (score, qs, qe, ts, te, cigar) in zip(arr.tolist(), rows):
        # the aligned strings in the sequences' own letters; identity on the codes
        qseq = q.given_sequence(qi)[qs:qe]
        tseq = t.given_sequence(ti)[ts:te]
        qa, ta = _render(qseq, tseq, cigar)
        same = _identical(q[qi][qs:qe], t[ti][ts:te], cigar)
        out.append(Alignment(q.ids[qi], t.ids[ti], int(score), qs, qe, ts, te, cigar, qa, ta, same))
    return out


def _identical(q: np.ndarray, t: np.ndarray, cigar: str) -> int:
    """Identical columns of the ``M`` runs, compared on the codes."""
    return sum(
        int(np.count_nonzero(q[i : i + n] == t[j : j + n]))
        for op, n, i, j in cigar_runs(cigar)
        if op == "M"
    )


def score_cigar(alignment: Alignment, scoring: Scoring) -> int:
    """Recompute an alignment's score from its aligned strings (for checking)."""
    total = 0
    alpha = scoring.alphabet
    gap = None
    for a, b in zip(alignment.query_aligned, alignment.target_aligned):
        if a == "-" or b == "-":
            kind = "D" if a == "-" else "I"
            total -= scoring.gap_extend if gap == kind else scoring.gap_open
            gap = kind
        else:
            total += int(scoring.table[alpha.code(a), alpha.code(b)])
            gap = None
    return total
