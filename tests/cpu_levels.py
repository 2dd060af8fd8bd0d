"""The CPU kernel levels the tests force (through the environment, in a child process: the
probe ``_native.cpu_features()`` is read once per process), whether this CPU runs each, and
the seeded inputs that every level must give identical results on."""

from __future__ import annotations

import subprocess
import sys

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


def outputs_per_level(code: str, levels=tuple(LEVELS)) -> dict[str, str]:
    """Run ``code`` in a child process once per level of ``levels`` this CPU runs, that
    level forced through the environment; the child prints the ISA it uses
    (``_native.cpu_features()["isa"]``) on its first line. Returns {isa: the rest of its
    output}, after checking that each child ran the level it was forced to. A CPU that runs
    fewer than two of ``levels`` has nothing to compare: the test does not apply."""
    from tests.datasets import child_env, not_applicable

    here = [level for level in levels if runnable(level)]
    if len(here) < 2:
        not_applicable(f"this CPU runs only {here} of the kernel levels {list(levels)}")
    base = {
        k: v for k, v in child_env().items() if k not in ("BIOACCEL_NO_AVX2", "BIOACCEL_NO_AVX512")
    }
    outs = {}
    for level in here:
        res = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            env={**base, **LEVELS[level]},
            check=True,
        )
        isa, rest = res.stdout.split("\n", 1)
        assert isa == level, f"forced {level}, the child ran {isa}"
        outs[isa] = rest
    return outs
