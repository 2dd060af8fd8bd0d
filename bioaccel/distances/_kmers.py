"""Alignment-free distances from k-mers: MUSCLE's k-mer distance, exact Jaccard, and
MinHash (Mash) sketches.

``kmer`` (Edgar 2004, MUSCLE; Nucleic Acids Res 32:1792): with n_x(t) the count of k-mer t
in x, F = sum_t min(n_x(t), n_y(t)) / (min(L_x, L_y) - k + 1) and d = 1 - F. Proteins use
the compressed 6-letter Dayhoff alphabet {AGPST, C, DENQ, FWY, HKR, ILMV} with k = 6 (MUSCLE's
"kmer6_6"); nucleotides the 4 bases with k = 6 unless given.

``jaccard``: 1 - |A & B| / |A | B| over the sets of distinct k-mers (canonical for DNA).

``mash`` (Ondov et al. 2016, Genome Biol 17:132): bottom-s MinHash sketches of canonical
k-mers hashed with a seeded 64-bit mix; J is estimated as the share of the s smallest hashes
of the union present in both sketches, and D = -ln(2J / (1 + J)) / k (Mash's definition,
which reports 1 when no hash is shared and caps D at 1).

k-mers with any letter outside the alphabet (N, IUPAC, gaps) are skipped.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._core import SKETCHES, atomic_output, check_threads, output_format
from ..errors import ModelError
from ..sequences import DNA, PROTEIN, SeqBatch
from ._matrix import DistanceMatrix

KMER_MODELS = ("kmer", "jaccard", "mash")
#: MinHash defaults for sequences (saved sketches carry their own)
DEFAULT_SKETCH_SIZE = 1000
DEFAULT_SEED = 42
DAYHOFF6 = ("AGPST", "C", "DENQ", "FWY", "HKR", "ILMV")


def _digits(batch: SeqBatch, compressed: bool) -> tuple[np.ndarray, int]:
    """Map from the batch's codes to k-mer digits (-1: skip)."""
    digit = np.full(256, -1, dtype=np.int8)
    if batch.alphabet is DNA:
        for d, ch in enumerate("ACGT"):
            digit[DNA.code(ch)] = d
        return digit, 4
    if compressed:
        for d, group in enumerate(DAYHOFF6):
            for ch in group:
                digit[PROTEIN.code(ch)] = d
        return digit, 6
    for d in range(20):  # the 20 amino acids are codes 0..19
        digit[d] = d
    return digit, 20


@dataclass(frozen=True)
class Sketches:
    """Bottom-s MinHash sketches of a batch, reusable across runs (``save`` / ``load``)."""

    ids: list[str]
    lengths: np.ndarray
    values: np.ndarray
    offsets: np.ndarray
    k: int
    size: int
    seed: int
    alphabet: str

    def save(self, path: str | os.PathLike) -> None:
        """Write as .npz (a name without an extension is written as is)."""
        output_format(path, SKETCHES, "sketch file", default="npz")
        with atomic_output(path, "wb") as f:
            np.savez(
                f,
                ids=np.array(self.ids, dtype=str),
                lengths=self.lengths,
                values=self.values,
                offsets=self.offsets,
                params=np.array([self.k, self.size, self.seed]),
                alphabet=np.array(self.alphabet),
            )

    @classmethod
    def load(cls, path: str | os.PathLike) -> Sketches:
        path = Path(path)
        import zipfile

        try:
            loaded = np.load(path, allow_pickle=False)
        except (OSError, ValueError, EOFError, zipfile.BadZipFile):
            raise ModelError(
                f"{path}: not a bioaccel sketch file (an .npz written by `bioaccel sketch`)"
            ) from None
        if not isinstance(loaded, np.lib.npyio.NpzFile):
            raise ModelError(
                f"{path}: a NumPy .npy array, not a bioaccel sketch file (an .npz "
                "written by `bioaccel sketch`)"
            )
        with loaded as z:
            members = set(z.files)
            if {"bounds", "data", "n"} <= members:
                raise ModelError(
                    f"{path}: a distance tile (from `bioaccel distance --tile`), not "
                    "a sketch file: assemble tiles with `bioaccel merge-tiles`"
                )
            if {"data", "ids"} <= members and "values" not in members:
                raise ModelError(
                    f"{path}: a distance matrix .npz, not a sketch file: `bioaccel tree` reads it"
                )
            try:
                k, size, seed = (int(v) for v in z["params"])
                out = cls(
                    [str(i) for i in z["ids"]],
                    z["lengths"],
                    z["values"],
                    z["offsets"],
                    k,
                    size,
                    seed,
                    str(z["alphabet"]),
                )
            except (KeyError, ValueError, TypeError, OSError, zipfile.BadZipFile) as exc:
                detail = " ".join(str(exc).split())[:120]
                raise ModelError(f"{path}: not a bioaccel sketch file ({detail})") from None
        problem = out._inconsistency()
        if problem:
            raise ModelError(f"{path}: damaged sketch file: {problem}")
        return out

    def _inconsistency(self) -> str | None:
        """What makes these arrays unusable as sketches, or None."""
        n, values, offsets = len(self.ids), self.values, self.offsets
        if values.dtype != np.uint64 or values.ndim != 1:
            return (
                f"values must be a 1-d uint64 array, got {values.dtype} with shape {values.shape}"
            )
        if offsets.ndim != 1 or len(offsets) != n + 1 or len(self.lengths) != n:
            return (
                f"{n} ids need {n + 1} offsets and {n} lengths, got {len(offsets)} and "
                f"{len(self.lengths)}"
            )
        if offsets[0] != 0 or offsets[-1] != len(values) or np.any(np.diff(offsets) < 0):
            return f"offsets must rise from 0 to {len(values)} values"
        if self.k < 1 or self.size < 1:
            return f"k={self.k} and size={self.size} must be positive"
        sizes = np.diff(offsets)
        if np.any(sizes > self.size):
            i = int(np.argmax(sizes))
            return f"k={self.k}, size={self.size}: sketch {self.ids[i]!r} holds {sizes[i]} values"
        rises = values[1:] > values[:-1]
        inner = offsets[1:-1]
        rises[inner[(inner > 0) & (inner < len(values))] - 1] = True  # nor across sketches
        if not rises.all():
            at = int(np.argmin(rises)) + 1
            row = int(np.searchsorted(offsets, at, side="right")) - 1
            return (
                f"sketch {self.ids[row]!r} is not strictly increasing at value {at - offsets[row]}"
            )
        return None


#: mash's k for proteins when none is given: Mash's own (``mash sketch -a`` implies -k 9)
PROTEIN_MASH_K = 9


def sketch(
    seqs, k: int | None = None, size: int = 1000, seed: int = 42, threads: int = 0, alphabet="auto"
) -> Sketches:
    """MinHash sketches (canonical k-mers for DNA); ``alphabet`` reads paths and strings
    (see :func:`bioaccel.read_sequences`). ``k``: 21 for DNA, 9 for proteins by default
    (Mash's own for amino acids).

    >>> s = sketch(["ACGTACGTTGCA" * 5, "ACGTACGTTGCA" * 5], k=5, size=8)
    >>> s.values[s.offsets[0]:s.offsets[1]].size <= 8
    True
    """
    from .._core import load_native
    from ..sequences import as_batch, refuse_aligned

    threads = check_threads(threads)
    batch = as_batch(seqs, alphabet)
    refuse_aligned(batch, "would be a letter of the sketch's k-mers")  # as distance -m mash
    k = (21 if batch.alphabet is DNA else PROTEIN_MASH_K) if k is None else k
    _check_params(k, size)
    digit, radix = _digits(batch, compressed=False)
    _check_k_fits(k, radix, batch.alphabet.name)
    values, offsets, _ = load_native().kmer_sketch(
        batch.codes,
        batch.offsets,
        digit,
        radix,
        int(k),
        batch.alphabet is DNA,
        True,
        int(seed),
        int(size),
        False,
        int(threads),
    )
    check_some_kmer(values, batch.lengths, k)
    return Sketches(
        list(batch.ids),
        batch.lengths.copy(),
        values,
        offsets,
        int(k),
        int(size),
        int(seed),
        batch.alphabet.name,
    )


def check_some_kmer(values: np.ndarray, lengths, k: int) -> None:
    """Refuse k-mer sets that are all empty: no distance can be estimated from them.

    Raises
    ------
    ModelError
        "no sequence has a k-mer of length k", with the shortest and longest lengths.
    """
    if np.asarray(values).size:
        return
    lengths = np.asarray(lengths)
    span = (
        f"shortest {int(lengths.min())}, longest {int(lengths.max())} letters"
        if lengths.size
        else "no sequences"
    )
    raise ModelError(
        f"no sequence has a k-mer of length {k} ({span}; k-mers holding gaps or "
        "ambiguous letters are skipped): lower -k/--kmer"
    )


def max_k(radix: int) -> int:
    """The largest k whose k-mer codes fit 64 bits (radix**k <= 2**64): 32 for DNA (2 bits a
    letter, as in mash), 24 for Dayhoff-6 protein k-mers, 14 for 20-letter protein."""
    k = 1
    while radix ** (k + 1) <= 2**64:
        k += 1
    return k


def _check_k_fits(k: int, radix: int, alphabet: str) -> None:
    if int(k) > max_k(radix):
        raise ModelError(
            f"k = {k} is too large for {alphabet} k-mers: at most {max_k(radix)} "
            f"letters of {radix} fit one 64-bit code"
        )


def _check_params(k, size) -> None:
    if isinstance(k, bool) or int(k) != k or k < 1:
        raise ModelError(f"k must be a positive integer, got {k!r}")
    if isinstance(size, bool) or int(size) != size or size < 1:
        raise ModelError(f"sketch size must be a positive integer, got {size!r}")


def mash_distance(j: np.ndarray, k: int) -> np.ndarray:
    """Mash's distance of Jaccard values (the formula the native rows apply, for arrays)."""
    with np.errstate(divide="ignore"):
        d = 0.0 - np.log(2 * j / (1 + j)) / k  # 0.0 - : no -0.0 for identical sets
    return np.where(j > 0, np.minimum(d, 1.0), 1.0)


@dataclass
class KmerRows:
    """k-mer sets, counts or sketches of n sequences, ready to give distances row by row
    (condensed: rows [i0, i1) against every later row), so a matrix can be streamed in tiles.
    """

    model: str
    ids: list[str]
    lengths: np.ndarray
    values: np.ndarray
    offsets: np.ndarray
    counts: np.ndarray
    rank: np.ndarray
    universe: int
    k: int
    sketch_size: int

    def __len__(self) -> int:
        return len(self.ids)

    def distances(self, i0: int, i1: int, *, single: bool = False, threads: int = 0) -> np.ndarray:
        from .._core import load_native

        metric = {"jaccard": 0, "mash": 1, "kmer": 2}[self.model]
        return load_native().kmer_rows(
            self.values,
            self.offsets,
            self.counts,
            self.rank,
            self.universe,
            metric,
            self.sketch_size,
            self.lengths,
            self.k,
            int(i0),
            int(i1),
            bool(single),
            int(threads),
        )


def kmer_params(
    seqs,
    model: str,
    *,
    k: int | None = None,
    sketch_size: int | None = None,
    seed: int | None = None,
) -> dict:
    """The values of the options that change :data:`KMER_MODELS` distances of ``seqs`` (a
    batch, or :class:`Sketches`), checked, defaults filled in: ``k`` for every model, and
    ``sketch_size`` and ``seed`` for ``mash``.

    Defaults: ``k`` 6 for ``kmer``, 21 for DNA, 9 for protein ``mash`` (Mash's own for amino
    acids, ``mash sketch -a``), 5 for protein ``jaccard``;
    :data:`DEFAULT_SKETCH_SIZE` and :data:`DEFAULT_SEED`. :class:`Sketches` carry their own:
    a different value given here is refused (:class:`ModelError`), never silently ignored.
    """
    if isinstance(seqs, Sketches):
        if model != "mash":
            raise ModelError(f"sketches give mash distances, not {model!r}")
        for name, made, given in (
            ("k", seqs.k, k),
            ("sketch_size", seqs.size, sketch_size),
            ("seed", seqs.seed, seed),
        ):
            if given is not None and given != made:
                raise ModelError(
                    f"the sketches were made with {name}={made}, not {name}={given}: "
                    "sketch the sequences again, or leave the option out"
                )
        return {"k": int(seqs.k), "sketch_size": int(seqs.size), "seed": int(seqs.seed)}
    if model == "mash":
        out = {
            "k": (21 if seqs.alphabet is DNA else PROTEIN_MASH_K) if k is None else k,
            "sketch_size": DEFAULT_SKETCH_SIZE if sketch_size is None else sketch_size,
            "seed": DEFAULT_SEED if seed is None else seed,
        }
        _check_params(out["k"], out["sketch_size"])
        _check_k_fits(out["k"], 4 if seqs.alphabet is DNA else 20, seqs.alphabet.name)
        if isinstance(out["seed"], bool) or int(out["seed"]) != out["seed"]:
            raise ModelError(f"seed must be an integer, got {seed!r}")
        return {key: int(v) for key, v in out.items()}
    if k is None:
        k = 6 if model == "kmer" else 21 if seqs.alphabet is DNA else 5
    _check_params(k, 1)
    radix = 4 if seqs.alphabet is DNA else 6 if model == "kmer" else 20
    _check_k_fits(k, radix, "Dayhoff-6 protein" if radix == 6 else seqs.alphabet.name)
    return {"k": int(k)}


def kmer_rows(
    seqs,
    model: str,
    *,
    k: int | None = None,
    sketch_size: int | None = None,
    seed: int | None = None,
    threads: int = 0,
) -> KmerRows:
    """Prepare ``seqs`` (a batch, or :class:`Sketches` for ``mash``) for :data:`KMER_MODELS`,
    with the options of :func:`kmer_params`."""
    from .._core import load_native

    threads = check_threads(threads)
    native = load_native()
    empty = np.zeros(0, np.uint32)
    if not isinstance(seqs, Sketches):
        from ..sequences import as_batch

        seqs = as_batch(seqs)
    params = kmer_params(seqs, model, k=k, sketch_size=sketch_size, seed=seed)
    if isinstance(seqs, Sketches):
        check_some_kmer(seqs.values, seqs.lengths, seqs.k)
        rank, universe = native.kmer_ranks(seqs.values)
        return KmerRows(
            "mash",
            list(seqs.ids),
            np.asarray(seqs.lengths, np.int64),
            seqs.values,
            seqs.offsets,
            empty,
            rank,
            universe,
            seqs.k,
            seqs.size,
        )
    batch = seqs
    if model == "mash":
        s = sketch(
            batch, k=params["k"], size=params["sketch_size"], seed=params["seed"], threads=threads
        )
        return kmer_rows(s, "mash", threads=threads)
    k = params["k"]
    digit, radix = _digits(batch, compressed=model == "kmer")
    counts = model == "kmer"
    values, offsets, cnt = native.kmer_sketch(
        batch.codes,
        batch.offsets,
        digit,
        radix,
        k,
        model == "jaccard" and batch.alphabet is DNA,
        False,
        0,
        0,
        counts,
        int(threads),
    )
    check_some_kmer(values, batch.lengths, k)
    return KmerRows(
        model,
        list(batch.ids),
        batch.lengths.astype(np.int64),
        values,
        offsets,
        cnt if counts else empty,
        empty,
        0,
        k,
        0,
    )


def kmer_distance_matrix(
    seqs,
    model: str,
    *,
    k: int | None = None,
    sketch_size: int | None = None,
    seed: int | None = None,
    threads: int = 0,
) -> DistanceMatrix:
    """Distances of :data:`KMER_MODELS` (see the module docstring)."""
    threads = check_threads(threads)
    if not isinstance(seqs, Sketches):
        from ..sequences import as_batch

        seqs = as_batch(seqs)
        if len(seqs) < 2:
            raise ValueError(f"need at least 2 sequences for a distance matrix, got {len(seqs)}")
    rows = kmer_rows(seqs, model, k=k, sketch_size=sketch_size, seed=seed, threads=threads)
    return DistanceMatrix.from_condensed(rows.distances(0, len(rows), threads=threads), rows.ids)
