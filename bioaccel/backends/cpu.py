"""The compiled C++ core (csrc/): bit-packed sites, popcount, OpenMP over pair tiles."""

from __future__ import annotations

import numpy as np

from .._core.native import load_native
from .base import Backend, DnaData


#: the C++ core's numbering of the DNA models (``DnaModel`` in
#: csrc/include/bioaccel/dna_models.hpp); the same order as ``bioaccel.distances.MODELS``
NATIVE_MODEL_IDS = {"raw": 0, "jc69": 1, "k80": 2, "f81": 3, "tn93": 4, "logdet": 5}


class CpuBackend(Backend):
    name = "cpu"
    operations = frozenset({"dna_counts", "align_scores", "edit_distances", "lcs_lengths"})

    def unavailable_reason(self, for_auto: bool) -> str | None:
        try:
            load_native()
        except ImportError as exc:
            return f"the compiled module bioaccel._native did not load ({exc}); reinstall with `pip install .`"
        return None

    def dna_counts(self, data: DnaData, i0, i1, j0, j1, *, table, upper_only, threads):
        return load_native().dna_pair_counts(data.planes, i0, i1, j0, j1, table, upper_only,
                                             int(threads))

    def fill_distance_rows(self, data: DnaData, model, freqs, i0, i1, out, threads) -> bool:
        # counts and formulas fused in C++: no count tile is materialised
        load_native().dna_distance_rows(data.planes, NATIVE_MODEL_IDS[model], freqs, i0, i1, out,
                                        int(threads))
        return True

    def align_scores(self, queries, targets, scoring, mode, symmetric, threads):
        scores, _stats = load_native().align_scores(
            queries.codes, queries.offsets, targets.codes, targets.offsets, scoring.table, mode,
            scoring.gap_open, scoring.gap_extend, bool(symmetric), int(threads))
        return scores

    def edit_distances(self, queries, targets, mode, max_distance, symmetric, threads):
        return load_native().edit_distances(queries.codes, queries.offsets, targets.codes,
                                            targets.offsets, mode, int(max_distance),
                                            queries.alphabet.size, bool(symmetric), int(threads))

    def lcs_lengths(self, queries, targets, letters, symmetric, threads):
        # the kernel reads one sequence set: queries then targets, side by side
        codes = np.concatenate([queries.codes, targets.codes])
        offsets = np.concatenate([queries.offsets[:-1],
                                  targets.offsets + queries.offsets[-1]]).astype(np.int64)
        nq = len(queries)
        return load_native().msa_lcs_lengths(codes, offsets, int(letters),
                                             np.arange(nq, dtype=np.int64),
                                             np.arange(nq, nq + len(targets), dtype=np.int64),
                                             int(threads))
