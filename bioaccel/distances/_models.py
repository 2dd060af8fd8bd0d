"""The one dispatch from a distance model name to the code that computes it.

:func:`prepare` checks the model and its input once -- the same checks, the same error
classes and messages for :func:`~bioaccel.distances._compute.distance_matrix`, the tiles of
:mod:`bioaccel.distances._tiles` and the streamed files of :mod:`bioaccel.distances._ondisk` -- and returns a
:class:`PairModel` that gives the distances of any block of pairs, of condensed rows, or
of the whole matrix. Values that depend on the whole input (base frequencies of F81/TN93,
the sites kept without pairwise deletion, scoredist's background) are computed from the
whole input, and every pair is computed in its (i < j) orientation, so every path gives
the same value bit for bit.

Kinds: the aligned-DNA models (:mod:`bioaccel.distances._dna`), the aligned-protein models
(:mod:`bioaccel.distances._aa`), ``identity``/``scoredist``
(:mod:`bioaccel.distances._protein`), ``edit`` (:mod:`bioaccel.pairwise._edit`) and the k-mer models
(:mod:`bioaccel.distances._kmers`; these also take saved :class:`~bioaccel.distances._kmers.Sketches`).
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from functools import cached_property

import numpy as np

from .._core import triangle_row_ranges
from ..backends import DnaData, backend_for_devices, get_backend
from ..devices import dna_counts_on_devices, select_devices
from ..errors import ModelError
from ..sequences import DNA, SeqBatch, as_batch, refuse_aligned
from ._aa import AA_MODELS, aa_distances, difference_counts, kept_columns
from ._checks import to_float32
from ._dna import MODELS, TABLE_MODELS, base_frequencies, distances_from_counts, kept_sites
from ._kmers import KMER_MODELS, Sketches, kmer_params, kmer_rows
from ._matrix import DistanceMatrix
from ._options import check_model_options, given_options
from ._protein import ALIGNMENT_MODELS, alignment_distances, alignment_pair_distances

#: every model name :func:`prepare` accepts
ALL_MODELS = (*MODELS, *AA_MODELS, *ALIGNMENT_MODELS, "edit", *KMER_MODELS)
#: bytes of pair counts one tile of :meth:`DnaModel.matrix` may hold
TILE_BYTES = 64 * 2**20


def check_model_name(model) -> str:
    """The lower-cased model name, or :class:`ModelError` listing the known ones."""
    key = str(model).lower()
    if key not in ALL_MODELS:
        raise ModelError(f"unknown distance model {model!r}; expected one of {list(ALL_MODELS)}")
    return key


def prepare(
    seqs,
    model: str,
    *,
    pairwise_deletion: bool = False,
    backend: str = "auto",
    threads: int = 0,
    matrix=None,
    gap_open: int | None = None,
    gap_extend: int | None = None,
    k: int | None = None,
    sketch_size: int | None = None,
    seed: int | None = None,
    devices=None,
    alphabet="auto",
) -> PairModel:
    """Check ``model`` against ``seqs`` (a batch, path, list of str, or Sketches for mash)
    and return the :class:`PairModel` computing it (``devices``: GPUs for its
    :meth:`~PairModel.matrix`, for the aligned-DNA models and ``edit``).

    Raises
    ------
    ModelError
        Unknown model; an option the model does not use (``k`` with k80,
        ``pairwise_deletion`` with mash: :mod:`bioaccel.distances._options`); a DNA model on
        protein; scoredist on nucleotides; sketches with a model other than mash;
        ``devices`` with a model that runs on the CPU only.
    ValueError
        Fewer than 2 sequences.
    """
    key = check_model_name(model)
    check_model_options(
        model, given_options(pairwise_deletion, k, matrix, gap_open, gap_extend, sketch_size, seed)
    )
    if devices is not None and key not in MODELS and key != "edit":
        raise ModelError(
            f"devices= applies to the aligned-DNA models and 'edit'; model "
            f"{model!r} runs on the CPU only"
        )
    if isinstance(seqs, Sketches):
        if key != "mash":
            raise ModelError(f"sketches give mash distances, not {model!r}")
        batch = seqs
    else:
        batch = as_batch(seqs, alphabet)
    if len(batch.ids) < 2:
        raise ValueError(f"need at least 2 sequences for a distance matrix, got {len(batch.ids)}")
    if key in KMER_MODELS:
        return KmerModel(key, batch, threads, k=k, sketch_size=sketch_size, seed=seed)
    if key == "edit":
        return EditModel(key, batch, threads, backend=backend, devices=devices)
    if key in AA_MODELS:
        return AlignedProteinModel(key, batch, threads, pairwise_deletion=pairwise_deletion)
    if key in ALIGNMENT_MODELS:
        return AlignmentModel(
            key, batch, threads, matrix=matrix, gap_open=gap_open, gap_extend=gap_extend
        )
    return DnaModel(
        key, batch, threads, backend=backend, pairwise_deletion=pairwise_deletion, devices=devices
    )


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


def _upper(block: np.ndarray, i0: int, i1: int) -> np.ndarray:
    """The j > i entries of rows [i0, i1) of a (i1 - i0, n - i0) block, condensed."""
    return np.concatenate([block[r, r + 1 :] for r in range(i1 - i0)])


class PairModel(abc.ABC):
    """Distances of one model over one input: :meth:`block`, :meth:`rows`, :meth:`matrix`;
    :meth:`params`: the model and every option that changes its values. Each model
    family (k-mer, edit, alignment, DNA) supplies :meth:`block`."""

    def __init__(self, model: str, batch, threads: int):
        self.model, self.batch, self.threads = model, batch, threads
        self.ids = list(batch.ids)
        self.n = len(self.ids)

    def params(self) -> dict:
        """The model and every option that changes values, resolved (defaults filled in):
        what tiles record so that tiles of different settings are never merged."""
        return {"model": self.model}

    def work(self) -> np.ndarray:
        """Relative work of each row's pairs (i, j > i), for planning row tiles."""
        lengths = np.asarray(self.batch.lengths, dtype=np.float64)
        suffix = np.concatenate([np.cumsum(lengths[::-1])[::-1][1:], [0.0]])
        return lengths * suffix

    @abc.abstractmethod
    def block(self, i0: int, i1: int, j0: int, j1: int) -> np.ndarray:
        """float64 distances of rows [i0, i1) x columns [j0, j1), zero where i == j."""

    def rows(self, i0: int, i1: int, single: bool = False) -> np.ndarray:
        """Distances of the pairs (i, j > i) for i in [i0, i1), condensed; float32 when
        ``single``, else float64."""
        rows = self._rows(i0, i1)
        return to_float32(rows) if single else rows.astype(np.float64, copy=False)

    def _rows(self, i0: int, i1: int) -> np.ndarray:
        return _upper(self.block(i0, i1, i0, self.n), i0, i1)

    def matrix(self, progress: Callable[[int, int], None] | None = None) -> DistanceMatrix:
        """The whole matrix; ``progress(done_pairs, total_pairs)`` as it goes."""
        out = DistanceMatrix.from_condensed(self.rows(0, self.n), self.ids)
        if progress is not None:
            total = self.n * (self.n - 1) // 2
            progress(total, total)
        return out


class KmerModel(PairModel):
    def __init__(self, model, batch, threads, *, k, sketch_size, seed):
        super().__init__(model, batch, threads)
        if isinstance(batch, SeqBatch):  # (a sketch file holds no letters)
            refuse_aligned(batch, f"would be a letter of {model}'s k-mers")
        self.options = kmer_params(batch, model, k=k, sketch_size=sketch_size, seed=seed)

    @cached_property
    def kmer_rows(self):
        """The whole input's k-mer sets or sketches (made on first use: a tile needs only
        its own sequences')."""
        return kmer_rows(self.batch, self.model, threads=self.threads, **self.options)

    def params(self):
        return {"model": self.model, **self.options}

    def work(self) -> np.ndarray:
        r = self.kmer_rows
        return np.diff(r.offsets).astype(float) * (self.n - 1 - np.arange(self.n))

    def rows(self, i0, i1, single: bool = False):
        return self.kmer_rows.distances(i0, i1, single=single, threads=self.threads)

    def block(self, i0, i1, j0, j1):
        # a pair's value depends on its two sequences only: the union of rows and columns
        union = sorted(set(range(i0, i1)) | set(range(j0, j1)))
        out = np.zeros((i1 - i0, j1 - j0))
        if len(union) < 2:
            return out
        where = {g: k for k, g in enumerate(union)}
        sub = (
            self.batch.subset(union)
            if isinstance(self.batch, SeqBatch)
            else _sketch_subset(self.batch, union)
        )
        rows = kmer_rows(sub, self.model, threads=self.threads, **self.options)
        full = DistanceMatrix.from_condensed(
            rows.distances(0, len(union), threads=self.threads), rows.ids
        ).data
        return full[np.ix_([where[i] for i in range(i0, i1)], [where[j] for j in range(j0, j1)])]


def _sketch_subset(sketches: Sketches, union: list[int]) -> Sketches:
    """The sketches of the sequences ``union``."""
    from dataclasses import replace

    starts, ends = sketches.offsets[union], sketches.offsets[np.asarray(union) + 1]
    values = np.concatenate([sketches.values[s:e] for s, e in zip(starts, ends)])
    offsets = np.concatenate([[0], np.cumsum(ends - starts)]).astype(sketches.offsets.dtype)
    return replace(
        sketches,
        ids=[sketches.ids[g] for g in union],
        lengths=np.asarray(sketches.lengths)[union],
        values=values,
        offsets=offsets,
    )


class EditModel(PairModel):
    def __init__(self, model, batch, threads, *, backend, devices):
        super().__init__(model, batch, threads)
        refuse_aligned(batch, "would count as a letter in edit distances")
        self.backend, self.devices = backend, devices

    def block(self, i0, i1, j0, j1):
        from ..pairwise import edit_distances

        d = edit_distances(
            self.batch.slice(i0, i1),
            self.batch.slice(j0, j1),
            backend=self.backend,
            threads=self.threads,
        ).astype(np.float64)
        ii, jj = np.meshgrid(np.arange(i0, i1), np.arange(j0, j1), indexing="ij")
        d[ii == jj] = 0.0
        return d

    def matrix(self, progress=None):
        from ..pairwise import edit_distances

        d = edit_distances(
            self.batch, backend=self.backend, threads=self.threads, devices=self.devices
        ).astype(np.float64)
        return DistanceMatrix(d, self.ids)


class AlignmentModel(PairModel):
    def __init__(self, model, batch, threads, *, matrix, gap_open, gap_extend):
        from ..pairwise import default_scoring

        super().__init__(model, batch, threads)
        if model == "scoredist" and batch.alphabet is DNA:
            where = f"{batch.source}: " if batch.source else ""
            raise ModelError(
                f"{where}scoredist is calibrated for proteins; the input reads as nucleotides "
                "(use 'edit' or a nucleotide model such as 'k80', or --alphabet protein if "
                "these are proteins)"
            )
        self.scoring = default_scoring(batch.alphabet, matrix, gap_open, gap_extend)
        self.scoring.check_batch(batch)

    def params(self):
        s = self.scoring
        return {
            "model": self.model,
            "matrix": s.name,
            "gap_open": int(s.gap_open),
            "gap_extend": int(s.gap_extend),
        }

    def _pairs(self, pairs: np.ndarray, progress=None) -> np.ndarray:
        return alignment_pair_distances(
            self.batch, self.model, self.scoring, pairs, self.threads, progress
        )

    def _rows(self, i0, i1):
        n = self.n
        pairs = np.array([(i, j) for i in range(i0, i1) for j in range(i + 1, n)], np.int64)
        return self._pairs(pairs)

    def block(self, i0, i1, j0, j1):
        ii, jj = np.meshgrid(np.arange(i0, i1), np.arange(j0, j1), indexing="ij")
        lo, hi = np.minimum(ii, jj).ravel(), np.maximum(ii, jj).ravel()
        off = lo != hi
        values = np.zeros(lo.size)
        values[off] = self._pairs(np.stack([lo[off], hi[off]], 1))
        return values.reshape(ii.shape)

    def matrix(self, progress=None):
        return alignment_distances(self.batch, self.model, self.scoring, self.threads, progress)


class DnaModel(PairModel):
    def __init__(self, model, batch, threads, *, backend, pairwise_deletion, devices):
        super().__init__(model, batch, threads)
        alignment, self.freqs = dna_alignment(batch, model, pairwise_deletion)
        self.data = DnaData(alignment)
        self.table = model in TABLE_MODELS
        self.pairwise_deletion = bool(pairwise_deletion)
        self.devices = select_devices(devices)
        self.engine = (
            get_backend(backend)
            if self.devices is None
            else backend_for_devices(self.devices, backend, "dna_counts")
        )

    def params(self):
        return {"model": self.model, "pairwise_deletion": self.pairwise_deletion}

    def work(self):
        return np.full(self.n, 1.0) * (self.n - 1 - np.arange(self.n))

    def _counts(self, engine, i0, i1, j0, j1, upper_only=False):
        counts = engine.dna_counts(
            self.data, i0, i1, j0, j1, table=self.table, upper_only=upper_only, threads=self.threads
        )
        return distances_from_counts(self.model, counts, self.freqs, self.threads)

    def _rows(self, i0, i1):
        return _upper(self._counts(self.engine, i0, i1, i0, self.n, upper_only=True), i0, i1)

    def block(self, i0, i1, j0, j1):
        engine = self.engine
        ii, jj = np.meshgrid(np.arange(i0, i1), np.arange(j0, j1), indexing="ij")
        d = self._counts(engine, i0, i1, j0, j1)
        below = ii > jj
        if below.any():  # (i < j) orientation everywhere: those pairs from the mirror block
            d[below] = self._counts(engine, j0, j1, i0, i1).T[below]
        d[ii == jj] = 0.0
        return d

    def matrix(self, progress=None):
        n, model, freqs, threads, engine = self.n, self.model, self.freqs, self.threads, self.engine
        if self.devices is not None:
            out = dna_counts_on_devices(
                self.data,
                n,
                self.table,
                self.devices,
                engine,
                lambda counts: distances_from_counts(model, counts, freqs, threads),
                threads,
            )
            return DistanceMatrix(out, self.ids)
        out = np.zeros((n, n))
        total, done, mirror = n * (n - 1) // 2, 0, False
        counts_per_pair = 16 if self.table else 4
        for i0, i1 in triangle_row_ranges(
            np.arange(n - 1, -1, -1),
            parts=32,
            min_work=2**16,
            max_block_cells=TILE_BYTES // (counts_per_pair * 4),
        ):
            if not engine.fill_distance_rows(self.data, model, freqs, i0, i1, out, threads):
                dist = self._counts(engine, i0, i1, i0, n, upper_only=True)
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
        return DistanceMatrix(out, self.ids)


class AlignedProteinModel(PairModel):
    """``p``, ``poisson``, ``kimura`` on aligned protein rows (:mod:`bioaccel.distances._aa`)."""

    def __init__(self, model, batch, threads, *, pairwise_deletion):
        super().__init__(model, batch, threads)
        if batch.alphabet is DNA:
            raise ModelError(
                f"model {model!r} needs aligned protein sequences, but "
                f"{batch.source or 'the input'} reads as nucleotides (use raw, "
                "jc69, k80, ... for DNA)"
            )
        codes = batch.as_alignment()
        self.pairwise_deletion = bool(pairwise_deletion)
        self.codes = codes if pairwise_deletion else codes[:, kept_columns(codes)]

    def params(self):
        return {"model": self.model, "pairwise_deletion": self.pairwise_deletion}

    def block(self, i0, i1, j0, j1):
        diff, sites = difference_counts(self.codes[i0:i1], self.codes[j0:j1])
        d = aa_distances(self.model, diff, sites)
        ii, jj = np.meshgrid(np.arange(i0, i1), np.arange(j0, j1), indexing="ij")
        d[ii == jj] = 0.0
        return d
