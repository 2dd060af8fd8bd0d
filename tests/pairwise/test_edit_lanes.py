"""The edit-distance kernels take 16 targets per query at once (lanes: two zmm on AVX-512;
on AVX2 two ymm and on the baseline one 64-byte vector, 8 lanes at a time, the second 8
skipped when the group holds none; one generic source): every lane count left over (1..17
targets, with both halves' edges, and groups past two), mixed and empty targets, each mode
and max_distance, at every kernel level this CPU runs (forced in a child process: the probe
is read once), against edlib."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.cpu_levels import LEVELS, runnable
from tests.datasets import child_env, not_applicable
from tests.edit_oracle import edlib_distance, mutated

LETTERS = list("ACGT")
CAPS = [None, 0, 5, 40, 63, 64, 65, 130]

CHILD = r"""
import json, sys
import numpy as np
from bioaccel.pairwise._edit import edit_distances
cases = json.load(open(sys.argv[1]))
out = []
for c in cases:
    k = c["max_distance"]
    d = edit_distances(c["queries"], c["targets"], mode=c["mode"], max_distance=k,
                       backend="cpu", threads=1)
    out.append(d.tolist())
json.dump(out, open(sys.argv[2], "w"))
"""


def cases():
    rng = np.random.default_rng(20261202)
    base = "".join(rng.choice(LETTERS, 700))
    out = []
    # queries of 1, 2 words (plain kernel) and 3+ words (the band for global distances)
    for qlen in (40, 100, 300, 700):
        query = base[:qlen]
        pool = [
            mutated(rng, base[: int(qlen * f)], r)
            for f, r in zip(rng.uniform(0.3, 1.4, 33), rng.uniform(0, 0.6, 33))
        ]
        pool[3] = ""  # an empty target among the others
        pool[9] = "".join(rng.choice(LETTERS, 5))
        for count in [*range(1, 18), 24, 32, 33]:  # every tail of a group of 16 lanes
            targets = pool[:count]
            for mode in ("global", "infix", "prefix"):
                for k in (None, int(rng.choice(CAPS[1:]))):
                    out.append(
                        {
                            "queries": [query, mutated(rng, query, 0.1)],
                            "targets": targets,
                            "mode": mode,
                            "max_distance": k,
                        }
                    )
    # all targets empty, and an empty query
    out.append(
        {
            "queries": [base[:200], ""],
            "targets": ["", "", "A"],
            "mode": "global",
            "max_distance": None,
        }
    )
    return out


def expected(c):
    k = c["max_distance"]
    want = np.array([[edlib_distance(q, t, c["mode"]) for t in c["targets"]] for q in c["queries"]])
    return want if k is None else np.minimum(want, k + 1)


@pytest.mark.parametrize("level", list(LEVELS))
def test_every_lane_tail_equals_edlib(tmp_path, level):
    if not runnable(level):
        not_applicable(f"this CPU cannot run the {level} kernels")
    cs = cases()
    src, dst = tmp_path / "cases.json", tmp_path / "out.json"
    src.write_text(json.dumps(cs))
    subprocess.run(
        [sys.executable, "-c", CHILD, str(src), str(dst)],
        cwd=Path(__file__).resolve().parents[2],
        check=True,
        env=child_env(**LEVELS[level]),
    )
    got = json.loads(dst.read_text())
    for c, g in zip(cs, got):
        np.testing.assert_array_equal(
            np.array(g),
            expected(c),
            err_msg=f"{level} {c['mode']} k={c['max_distance']} {len(c['targets'])} targets "
            f"query {len(c['queries'][0])}",
        )
