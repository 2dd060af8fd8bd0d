"""The NumPy reference: one pair at a time, straight from the definitions. Slow, plain."""

from __future__ import annotations

import numpy as np

from ..alphabet import DNA_KNOWN
from .base import Backend, DnaData

_A, _C, _G, _T = 0, 1, 2, 3


class ReferenceBackend(Backend):
    name = "reference"

    def dna_counts(self, data: DnaData, i0, i1, j0, j1, *, table, upper_only, threads):
        aln = data.alignment
        out = np.zeros((16 if table else 4, i1 - i0, j1 - j0), dtype=np.int32)
        for i in range(i0, i1):
            for j in range(j0, j1):
                if upper_only and j <= i:
                    continue
                x, y = aln[i], aln[j]
                both = (x < DNA_KNOWN) & (y < DNA_KNOWN)   # sites observed in both
                x, y = x[both], y[both]
                if table:
                    for a in range(4):
                        for b in range(4):
                            out[4 * a + b, i - i0, j - j0] = np.count_nonzero((x == a) & (y == b))
                    continue
                purine_ts = ((x == _A) & (y == _G)) | ((x == _G) & (y == _A))
                pyrimidine_ts = ((x == _C) & (y == _T)) | ((x == _T) & (y == _C))
                different = x != y
                out[0, i - i0, j - j0] = x.size
                out[1, i - i0, j - j0] = np.count_nonzero(purine_ts)
                out[2, i - i0, j - j0] = np.count_nonzero(pyrimidine_ts)
                out[3, i - i0, j - j0] = np.count_nonzero(different & ~purine_ts & ~pyrimidine_ts)
        return out
