"""The compiled C++ core (csrc/): bit-packed sites, popcount, OpenMP over pair tiles."""

from __future__ import annotations

import numpy as np

from .._core import load_native
from .base import Backend, DnaData

#: the C++ core's numbering of the DNA models (``DnaModel`` in
#: csrc/include/bioaccel/dna_models.hpp); the same order as ``bioaccel.distances.MODELS``
NATIVE_MODEL_IDS = {"raw": 0, "jc69": 1, "k80": 2, "f81": 3, "tn93": 4, "logdet": 5}


class CpuBackend(Backend):
    name = "cpu"
    operations = frozenset(
        {
            "dna_counts",
            "align_scores",
            "edit_distances",
            "edit_pairs",
            "lcs_lengths",
            "neighbor_joining",
            "pair_posteriors",
            # the C++ core's alone (bioaccel.nj low_memory=True; bioaccel.align)
            "neighbor_joining_low_memory",
            "align_traceback",
        }
    )

    def unavailable_reason(self, for_auto: bool) -> str | None:
        try:
            load_native()
        except ImportError as exc:
            return f"the compiled module bioaccel._native did not load ({exc}); reinstall with `pip install .`"
        return None

    def dna_counts(self, data: DnaData, i0, i1, j0, j1, *, table, upper_only, threads):
        return load_native().dna_pair_counts(
            data.planes, i0, i1, j0, j1, table, upper_only, int(threads)
        )

    def fill_distance_rows(self, data: DnaData, model, freqs, i0, i1, out, threads) -> bool:
        # counts and formulas fused in C++: no count tile is materialised
        load_native().dna_distance_rows(
            data.planes, NATIVE_MODEL_IDS[model], freqs, i0, i1, out, int(threads)
        )
        return True

    def align_scores(self, queries, targets, scoring, mode, symmetric, threads):
        scores, _stats = load_native().align_scores(
            queries.codes,
            queries.offsets,
            targets.codes,
            targets.offsets,
            scoring.table,
            mode,
            scoring.gap_open,
            scoring.gap_extend,
            bool(symmetric),
            int(threads),
        )
        return scores

    def edit_distances(self, queries, targets, mode, max_distance, symmetric, threads):
        return load_native().edit_distances(
            queries.codes,
            queries.offsets,
            targets.codes,
            targets.offsets,
            mode,
            int(max_distance),
            queries.alphabet.size,
            bool(symmetric),
            int(threads),
        )

    def edit_pairs(self, seqs, pair_i, pair_j, max_distance, threads):
        return load_native().edit_verify_pairs(
            seqs.codes,
            seqs.offsets,
            seqs.alphabet.size,
            np.ascontiguousarray(pair_i, dtype=np.int64),
            np.ascontiguousarray(pair_j, dtype=np.int64),
            int(max_distance),
            int(threads),
        )

    def neighbor_joining(self, d, threads, inplace=False, low_memory=False):
        # RapidNJ-style bounded search over sorted rows (csrc/nj.cpp); in place when d's
        # own buffer can be the working matrix (no n x n copy)
        if low_memory:  # d: the float32 condensed triangle, the working matrix itself
            n = int(round((1 + np.sqrt(1 + 8 * d.size)) / 2))
            return load_native().neighbor_joining_condensed(d, n, int(threads))
        usable = (
            inplace
            and isinstance(d, np.ndarray)
            and d.dtype == np.float64
            and d.flags.c_contiguous
            and d.flags.writeable
        )
        return load_native().neighbor_joining(d, int(threads), bool(usable))

    def pair_posteriors(self, letters, offsets, pairs, odds, prm, threads=0):
        """Pair-HMM posteriors of the listed pairs (see :mod:`bioaccel.backends.posteriors`)."""
        from .posteriors import posteriors_cpu

        return posteriors_cpu(load_native(), letters, offsets, pairs, odds, prm)

    def lcs_lengths(self, queries, targets, letters, symmetric, threads):
        # the kernel reads one sequence set: queries then targets, side by side
        codes = np.concatenate([queries.codes, targets.codes])
        offsets = np.concatenate(
            [queries.offsets[:-1], targets.offsets + queries.offsets[-1]]
        ).astype(np.int64)
        nq = len(queries)
        return load_native().msa_lcs_lengths(
            codes,
            offsets,
            int(letters),
            np.arange(nq, dtype=np.int64),
            np.arange(nq, nq + len(targets), dtype=np.int64),
            int(threads),
        )
