"""The CPU kernel levels the tests force (through the environment, in a child process: the
probe ``_native.cpu_features()`` is read once per process), whether this CPU runs each, and
the seeded inputs that every level must give identical results on."""

from __future__ import annotations

import numpy as np

from bioaccel import _native

#: environment that forces each level (BIOACCEL_NO_AVX2=1: the baseline everywhere)
LEVELS = {"avx512": {}, "avx2": {"BIOACCEL_NO_AVX512": "1"}, "sse2": {"BIOACCEL_NO_AVX2": "1"}}
MODES = ["global", "local", "semiglobal"]
AA = list("ARNDCQEGHILKMFPSTWYV")
NT = list("ACGT")


def runnable(level: str) -> bool:
    f = _native.cpu_features()
    cpu, built = f["cpu"], f["built"]
    if level == "avx512":
        return built["avx512"] and all(
            cpu[x] for x in ("avx512f", "avx512bw", "avx512vl", "avx512vbmi", "avx512vpopcntdq")
        )
    if level == "avx2":
        return built["avx2"] and cpu["avx2"] and cpu["popcnt"]
    return True


def mutate(rng, seq, rate, letters):
    out = []
    for c in seq:
        r = rng.random()
        if r < rate / 3:
            continue  # deletion
        out.append(rng.choice(letters) if r < 2 * rate / 3 else c)
        if r > 1 - rate / 3:
            out.append(rng.choice(letters))  # insertion
    return "".join(out)


def inputs(seed=7):
    rng = np.random.default_rng(seed)
    anc = "".join(rng.choice(AA, 150))
    protein = [mutate(rng, anc[: rng.integers(5, 150)], 0.3, AA) for _ in range(37)]
    # identical proteins: local scores past int8 (int16 re-runs); W runs past int16 (int32)
    same = "".join(rng.choice(AA, 300))
    protein += [same, same[:290], "W" * 3100, "W", "W" * 3001 + "A"]
    root = "".join(rng.choice(NT, 700))
    dna = [mutate(rng, root, 0.05, NT) for _ in range(45)] + ["".join(rng.choice(NT, 301)), "A"]
    return protein, dna
