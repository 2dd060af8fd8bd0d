"""The accurate MSA mode: probabilistic consistency, as ProbCons (Do et al., Genome Res 2005)
formulated it and MSAProbs / QuickProbs sped it up.

1. Posteriors: for every pair of sequences, the probability that residue i of x is aligned to
   residue j of y under a five-state pair-HMM (a match state, a short and a long insert state
   on each side), by forward-backward scaled per row (C++ ``csrc/msa/posteriors.cpp``, OpenMP
   over pairs; on GPUs ``kernels/posterior.cu`` / ``kernels/posterior_numba.py``). Entries
   below :data:`CUTOFF` are dropped (sparse rows).
2. Guide tree: UPGMA over 1 - expected accuracy (the best alignment's summed posteriors over
   the shorter length).
3. Consistency: ``P'xy = 1/n sum_z Pxz Pzy`` (Pxx the identity), :data:`CONSISTENCY_ROUNDS`
   rounds (ProbCons's and MUSCLE 5's two), sparse products kept above the cut-off.
4. Progressive alignment up the tree maximising the summed transformed posteriors of the
   aligned residue pairs (no gap costs), then refinement by random bipartitions, each
   realignment kept only when it raises that sum.

Model parameters: match odds from BLOSUM62 for proteins (``exp(ln 2 / 2 * s)`` against
BLOSUM62's background frequencies, renormalised to a joint distribution: BLOSUM62 comes from
BLOCKS, not from any alignment benchmark), a 0.7-identity model for nucleotides. The begin
distribution and gap opens / extends (short 0.012 / 0.4, long 0.008 / 0.9) are ProbCons's
defaults rounded; ProbCons's authors trained them by unsupervised EM on BAliBASE 2.0's
sequences, of which RV11/RV12 of BAliBASE 3 are descendants, so these numbers are not
independent of that benchmark. Measured on the even-numbered BAliBASE cases (the ones the
reported subset leaves out): moving them (short open 0.02, short extend 0.6, MUSCLE 5's begin
distribution) changes SP/TC by at most 0.004; BLOSUM45/62/80 with their own lambda, an
emission temperature of 0.8 / 1.2, model averaging over BLOSUM45/62/80, weighting each
intermediate z of the consistency by its pair accuracies, ProbCons's tree (similarities
averaged times the merge's), WPGMA, and choosing among several trees or refinement seeds by
the objective were no better (benchmarks/msa_accurate_tables.md). Two consistency rounds
gained SP/TC +0.004/+0.004 there for 20 % more time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._core import resolve_threads
from ..backends import resolve_backend_name
from ..sequences import PROTEIN, Alphabet

#: posterior entries below this are dropped (ProbCons's and MSAProbs' 0.01)
CUTOFF = 0.01
CONSISTENCY_ROUNDS = 2
REFINE_ITERATIONS = 10
REFINE_SEED = 5489

PROTEIN_LETTERS = "ARNDCQEGHILKMFPSTWYV"
#: BLOSUM62's background amino-acid frequencies (Henikoff & Henikoff 1992), in PROTEIN_LETTERS order
PROTEIN_BACKGROUND = (
    0.074,
    0.052,
    0.045,
    0.054,
    0.025,
    0.034,
    0.054,
    0.074,
    0.026,
    0.068,
    0.099,
    0.058,
    0.025,
    0.047,
    0.039,
    0.057,
    0.051,
    0.013,
    0.032,
    0.073,
)
NUCLEOTIDE_LETTERS = "ACGT"
NUCLEOTIDE_IDENTITY = 0.7


@dataclass(frozen=True)
class PairHmmParams:
    """Five-state pair-HMM: match odds over ``letters``, the begin/end distribution over
    (M, Ix short, Iy short, Ix long, Iy long), gap opens and extends (short, long)."""

    letters: str
    odds: np.ndarray  # float64 (K, K)
    start: tuple = (0.68, 0.0002, 0.0002, 0.1598, 0.1598)
    open: tuple = (0.012, 0.008)
    extend: tuple = (0.4, 0.9)

    def arrays(self):
        return (
            np.ascontiguousarray(self.odds, dtype=np.float64),
            np.asarray(self.start, dtype=np.float64),
            np.asarray(self.open, dtype=np.float64),
            np.asarray(self.extend, dtype=np.float64),
        )


def _protein_odds() -> np.ndarray:
    from ..pairwise import load_matrix

    _, letters, values = load_matrix("BLOSUM62")
    idx = [letters.index(ch) for ch in PROTEIN_LETTERS]
    s = values[np.ix_(idx, idx)]
    q = np.asarray(PROTEIN_BACKGROUND, dtype=np.float64)
    q /= q.sum()
    joint = np.outer(q, q) * np.exp(math.log(2.0) / 2.0 * s)
    joint /= joint.sum()
    marg = joint.sum(axis=1)
    return joint / np.outer(marg, marg)


def _nucleotide_odds() -> np.ndarray:
    k = len(NUCLEOTIDE_LETTERS)
    same = NUCLEOTIDE_IDENTITY / k
    other = (1.0 - NUCLEOTIDE_IDENTITY) / (k * (k - 1))
    joint = np.full((k, k), other)
    np.fill_diagonal(joint, same)
    return joint * k * k  # background 1/4 each


def pair_hmm(alphabet: Alphabet) -> PairHmmParams:
    """The pair-HMM for ``alphabet`` (proteins, else nucleotides)."""
    if alphabet is PROTEIN:
        return PairHmmParams(PROTEIN_LETTERS, _protein_odds())
    return PairHmmParams(
        NUCLEOTIDE_LETTERS,
        _nucleotide_odds(),
        start=(0.9, 0.0002, 0.0002, 0.0498, 0.0498),
        open=(0.01, 0.005),
        extend=(0.4, 0.9),
    )


def letter_map(alphabet: Alphabet, letters: str) -> np.ndarray:
    """int16 (256,): bioaccel code -> index in ``letters``; len(letters) (unknown: odds 1)
    for ambiguity codes, X and anything else; -1 for gap codes."""
    fallback = {"U": "C", "O": "K"} if alphabet is PROTEIN else {"U": "T"}
    index = {ch: k for k, ch in enumerate(letters)}
    out = np.full(256, len(letters), dtype=np.int16)
    for code, ch in enumerate(alphabet.symbols):
        c = ch.upper()
        if c in "-.":
            out[code] = -1
            continue
        out[code] = index.get(c, index.get(fallback.get(c, ""), len(letters)))
    return out


def posterior_set(
    native,
    work,
    params: PairHmmParams,
    threads: int,
    cutoff: float = CUTOFF,
    backend: str = "cpu",
    devices=None,
):
    """The native posterior set of ``work`` (a SeqBatch) with every pair's sparse posteriors
    computed by the C++ engine on all threads (``cpu``/``auto`` without devices), or by the
    backend registry's ``pair_posteriors`` (``cupy``, ``numba-cuda``, or over ``devices``)."""
    letter_of = letter_map(work.alphabet, params.letters)
    ps = native.MsaPosteriorSet(work.codes, work.offsets, letter_of, len(params.letters))
    if resolve_backend_name(backend, "pair_posteriors") == "cpu" and devices is None:
        ps.compute(*params.arrays(), float(cutoff), threads)
    else:
        gpu_posteriors(ps, work, letter_of, params, cutoff, backend, devices, threads)
    return ps


def model_arrays(params: PairHmmParams) -> tuple[np.ndarray, np.ndarray]:
    """(padded (K + 1, K + 1) odds with the unknown letter at 1, the nine model numbers) as
    the ``pair_posteriors`` kernels take them."""
    k = len(params.letters)
    odds = np.ones((k + 1, k + 1))
    odds[:k, :k] = params.odds
    prm = np.concatenate([params.start, params.open, params.extend]).astype(np.float64)
    return odds, prm


def all_pairs(n: int) -> np.ndarray:
    """(n (n - 1) / 2, 2) pairs x < y in pair-index order."""
    iu = np.triu_indices(n, 1)
    return np.ascontiguousarray(np.stack(iu, axis=1).astype(np.int64)).reshape(-1, 2)


def gpu_posteriors(
    ps,
    work,
    letter_of,
    params: PairHmmParams,
    cutoff: float,
    backend: str,
    devices=None,
    threads: int = 0,
) -> None:
    """Every pair's posteriors by the backend registry's ``pair_posteriors`` operation
    (``cupy``: kernels/posterior.cu, ``numba-cuda``: kernels/posterior_numba.py) into ``ps``.
    With ``devices=``, the pairs are cut into tiles of about equal work and spread over the
    GPUs by the multi-GPU tile runner (:mod:`bioaccel.devices._multigpu`, with its failover);
    each pair is computed by the same kernel whatever the split, so the result does not
    depend on it."""
    from ..backends import backend_for_devices, get_backend

    letters = np.ascontiguousarray(letter_of[work.codes], dtype=np.int16)
    offsets = np.ascontiguousarray(work.offsets, dtype=np.int64)
    odds, prm = model_arrays(params)
    n = len(work)
    if devices is None:
        engine = get_backend(backend, "pair_posteriors")
        pairs = all_pairs(n)
        if len(pairs):
            flat, starts = engine.pair_posteriors(letters, offsets, pairs, odds, prm, threads)
            ps.set_pairs(pairs, flat, starts, float(cutoff))
        return
    from ..devices import partition, run_tiles, select_devices

    chosen = select_devices(devices)
    engine = backend_for_devices(chosen, backend, "pair_posteriors")
    lengths = np.asarray(work.lengths, dtype=np.int64)
    tiles = partition(lengths, None, len(chosen))

    def compute(tile):
        xs = np.arange(tile.i0, tile.i1)
        ys = np.arange(tile.j0, tile.j1)
        gx, gy = np.meshgrid(xs, ys, indexing="ij")
        keep = gx < gy
        pairs = np.ascontiguousarray(np.stack([gx[keep], gy[keep]], axis=1), dtype=np.int64)
        if not len(pairs):
            return pairs, np.zeros(0, np.float32), np.zeros(0, np.int64)
        flat, starts = engine.pair_posteriors(letters, offsets, pairs, odds, prm, threads)
        return pairs, flat, starts

    def gather(tile, value):
        pairs, flat, starts = value
        if len(pairs):
            ps.set_pairs(pairs, flat, starts, float(cutoff))

    run_tiles(tiles, chosen, engine, compute, gather, lengths, lengths)


def accuracy_merges(native, ps, n: int) -> np.ndarray:
    """UPGMA merges over 1 - expected accuracy."""
    if n < 2:
        return np.zeros((0, 2), dtype=np.int64)
    dist = 1.0 - np.asarray(ps.accuracy(), dtype=np.float64)
    return native.msa_upgma(np.ascontiguousarray(dist), n)


#: bytes per pair-HMM cell while one pair's posteriors are computed on the CPU (the dense
#: forward match matrix and the dense posteriors, float64 each: csrc/msa/posteriors.cpp)
POSTERIOR_BYTES_PER_CELL = 16


def posterior_memory(lengths, threads: int) -> tuple[int, int, int]:
    """(bytes, length, length) of the CPU posteriors' peak working memory for sequences of
    ``lengths`` on ``threads`` threads: each thread holds one pair's dense matrices, so the
    peak is at most the ``threads`` largest pairs at once; the two lengths are the largest
    pair's."""
    lens = np.sort(np.asarray(lengths, dtype=np.int64))[::-1]
    if len(lens) < 2:
        return 0, 0, 0
    t = min(resolve_threads(threads), len(lens) * (len(lens) - 1) // 2)
    # the t largest pairs lie among the pairs of the t + 1 longest sequences
    top = lens[: t + 1] + 1
    cells = np.sort((top[:, None] * top[None, :])[np.triu_indices(len(top), 1)])[::-1]
    need = POSTERIOR_BYTES_PER_CELL * int(cells[:t].sum())
    return need, int(lens[0]), int(lens[1])


def check_posterior_memory(work, threads: int) -> None:
    """Refuse, before any work, an accurate alignment whose pairwise posteriors would not
    fit in the memory available now (an explicit ``mode="accurate"`` on long sequences:
    ``auto`` never picks it there), naming the sizes and the ways out."""
    from .._core import available_bytes, gib

    need, a, b = posterior_memory(work.lengths, threads)
    have = available_bytes()
    if have is None or need <= have:
        return
    from ..errors import InsufficientMemoryError

    raise InsufficientMemoryError(
        f"mode='accurate' needs about {gib(need)} for the pair-HMM posteriors "
        f"({POSTERIOR_BYTES_PER_CELL} bytes per cell, one pair per thread on "
        f"{resolve_threads(threads)} threads; the largest pair is {a:,} x {b:,} residues) "
        f"but {gib(have)} is available: use mode='fast' (linear memory), or fewer threads"
    )


def accurate_alignment(
    native,
    work,
    *,
    merges=None,
    threads: int = 0,
    iterations: int | None = None,
    rounds: int | None = None,
    cutoff: float | None = None,
    backend: str = "cpu",
    devices=None,
):
    """(column of every residue, width, merges) of the accurate mode for ``work``
    (None: :data:`REFINE_ITERATIONS`, :data:`CONSISTENCY_ROUNDS`, :data:`CUTOFF`)."""
    iterations = REFINE_ITERATIONS if iterations is None else iterations
    rounds = CONSISTENCY_ROUNDS if rounds is None else rounds
    cutoff = CUTOFF if cutoff is None else cutoff
    n = len(work)
    params = pair_hmm(work.alphabet)
    if resolve_backend_name(backend, "pair_posteriors") == "cpu" and devices is None:
        check_posterior_memory(work, threads)
    ps = posterior_set(native, work, params, threads, cutoff, backend, devices)
    if merges is None:
        merges = accuracy_merges(native, ps, n)
    if n > 2:
        ps.consistency(int(rounds), float(cutoff), threads)
    cols, width, _ = ps.align(
        np.ascontiguousarray(merges, dtype=np.int64).reshape(-1, 2),
        int(iterations),
        REFINE_SEED,
        threads,
    )
    return cols, int(width), merges
