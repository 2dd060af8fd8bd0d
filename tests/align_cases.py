"""Global-alignment cases at the edges of the score-difference widths, and the C++ driver
checked cell by cell against the scalar Gotoh core: shared by the in-process tests and the
child that runs them on the baseline build."""

from __future__ import annotations

import bioaccel
from bioaccel import _native
from bioaccel.pairwise._scoring import make_scoring

AA = list("ARNDCQEGHILKMFPSTWYV")
DNA = list("ACGT")
#: the C++ mode ids, in order
MODES = ["global", "local", "semiglobal"]


def native_scores(queries, targets, matrix, o, e, mode="global", alphabet=None):
    """(scores, width stats, batches, scoring) from the C++ driver, one thread."""
    alphabet = alphabet or (bioaccel.DNA if isinstance(matrix, tuple) else bioaccel.PROTEIN)
    q = bioaccel.SeqBatch.from_strings(queries, alphabet=alphabet.name.lower())
    t = bioaccel.SeqBatch.from_strings(targets, alphabet=alphabet.name.lower())
    sc = make_scoring(matrix, o, e, alphabet)
    mode_id = MODES.index(mode)
    scores, stats = _native.align_scores(
        q.codes, q.offsets, t.codes, t.offsets, sc.table, mode_id, o, e, False, 1
    )
    for i in range(len(queries)):
        for j in range(len(targets)):
            want = _native.align_score_scalar(q[i], t[j], sc.table, mode_id, o, e)
            assert scores[i, j] == want, (i, j, matrix, o, e, mode)
    return scores, stats


def indel_family(rng, letters, n, length, gap_lo, gap_hi):
    """Copies of one random sequence with 10% substitutions and a long deletion and insertion
    each (gap_lo..gap_hi residues)."""
    anc = list(rng.choice(letters, length))
    out = []
    for _ in range(n):
        s = [rng.choice(letters) if rng.random() < 0.1 else c for c in anc]
        d = int(rng.integers(gap_lo, gap_hi + 1))
        p = int(rng.integers(0, len(s) - d))
        del s[p : p + d]
        p = int(rng.integers(0, len(s) + 1))
        s[p:p] = list(rng.choice(letters, int(rng.integers(gap_lo, gap_hi + 1))))
        out.append("".join(s))
    return out


def width_of(stats):
    used = [w for w in ("int8", "int16", "int32") if stats[f"cells_{w}"]]
    assert len(used) == 1 and stats["reruns"] == 0, stats
    return used[0]


# Global scores in differences of adjacent cells (align_kernel.inc: run_group_global_diff):
# int8 whatever the lengths when 3 * open + extend < 128 and max + open + extend < 127, else
# int16 on the same terms, else the absolute-score kernels.
DIFF_CASES = [
    # (matrix, open, extend, letters, length, long gaps, width) -- at and just past each edge
    ("BLOSUM62", 11, 1, AA, 500, (30, 120), "int8"),
    ("BLOSUM62", 42, 1, AA, 400, (30, 120), "int8"),  # 3 * 42 + 1 = 127: -3 * open fits
    ("BLOSUM62", 43, 1, AA, 400, (30, 120), "int16"),
    ("BLOSUM62", 40, 7, AA, 400, (30, 120), "int8"),  # 127 again, by the extension
    ("BLOSUM62", 40, 8, AA, 400, (30, 120), "int16"),
    ("BLOSUM62", 9, 0, AA, 400, (30, 120), "int8"),  # free extension
    ("BLOSUM62", 6, 6, AA, 400, (30, 120), "int8"),  # open == extend
    ((100, -100), 13, 13, DNA, 600, (50, 200), "int8"),  # 100 + 13 + 13 = 126
    ((100, -100), 14, 13, DNA, 600, (50, 200), "int16"),
    ((60, -127), 20, 5, DNA, 600, (50, 200), "int8"),  # the lowest int8 score
    ((2, -3), 5, 2, DNA, 1500, (50, 400), "int8"),
    ((2, -3), 11000, 1, DNA, 300, (20, 60), "int32"),  # 3 * open past int16: absolute
]
