"""The one CPU probe (``_native.cpu_features()``) that every SIMD dispatcher consults:
each kernel level, forced through the environment in a child process (the probe is read
once per process), gives results identical to the others, and the alignment scores equal
the scalar Gotoh core."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import bioaccel
from bioaccel import _native
from bioaccel.pairwise._scoring import make_scoring
from tests.cpu_levels import LEVELS, MODES, inputs, runnable
from tests.datasets import child_env, not_applicable

CHILD = r"""
import json, os, sys
import numpy as np
import bioaccel
from bioaccel import _native
from bioaccel.pairwise._align import align_scores
from bioaccel.pairwise._edit import edit_distances
from bioaccel.distances._kmers import sketch
from tests.cpu_levels import inputs, MODES

protein, dna = inputs()
out = {}
for strip in (None, "7"):  # long queries are cut into strips of 7 rows
    if strip:
        os.environ["BIOACCEL_ALIGN_STRIP"] = strip
    for mode in MODES:
        out[f"protein-{mode}-{strip}"] = align_scores(protein, mode=mode, matrix="BLOSUM62", gap_open=11,
                                                      gap_extend=1, backend="cpu", threads=2)
        out[f"dna-{mode}-{strip}"] = align_scores(dna, mode=mode, matrix=(2, -3), gap_open=5, gap_extend=2,
                                                  backend="cpu", threads=2)
out["edit-global"] = edit_distances(dna, backend="cpu", threads=2)
out["edit-banded"] = edit_distances(dna, dna, max_distance=40, backend="cpu", threads=2)
out["edit-infix"] = edit_distances(dna[:5], dna, mode="infix", backend="cpu", threads=2)
s = sketch(dna, k=11, size=120, seed=3)
for pairs_by in ("auto", "bitmap", "postings"):  # MinHash pairs by bitmap walk or postings
    os.environ["BIOACCEL_MINHASH_PAIRS"] = pairs_by
    out["mash-" + pairs_by] = bioaccel.distance_matrix(s, "mash").data
del os.environ["BIOACCEL_MINHASH_PAIRS"]
s = sketch(dna, k=9, size=2000, seed=3)  # sketches longer than their sequences' k-mer sets
out["mash-all"] = bioaccel.distance_matrix(s, "mash").data
aligned = [d[:290] for d in dna[:-2]]
for model in ("k80", "logdet"):
    out[model] = bioaccel.distance_matrix(aligned, model, backend="cpu").data
np.savez(sys.argv[1], **out)
print(json.dumps(_native.cpu_features()))
"""


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    got = {}
    for level, env in LEVELS.items():
        if not runnable(level):
            continue
        path = tmp_path_factory.mktemp(level) / "out.npz"
        run = subprocess.run(
            [sys.executable, "-c", CHILD, str(path)],
            cwd=root,
            check=True,
            capture_output=True,
            text=True,
            env=child_env(**env),
        )
        features = json.loads(run.stdout.strip().splitlines()[-1])
        with np.load(path) as z:
            got[level] = (features, {k: z[k] for k in z.files})
    return got


@pytest.mark.parametrize("level", list(LEVELS))
def test_forced_level_is_the_one_every_kernel_reports(results, level):
    if level not in results:
        not_applicable(f"this CPU cannot run the {level} kernels")
    features, _ = results[level]
    assert features["isa"] == level
    assert features["forced"]["BIOACCEL_NO_AVX2"] == (level == "sse2")
    assert features["forced"]["BIOACCEL_NO_AVX512"] == (level == "avx2")


def test_every_level_gives_identical_results(results):
    levels = list(results)
    assert "sse2" in levels
    base = results["sse2"][1]
    for level in levels:
        got = results[level][1]
        assert set(got) == set(base)
        for name in base:
            np.testing.assert_array_equal(got[name], base[name], err_msg=f"{level}: {name}")


@pytest.fixture(scope="module")
def scalar_scores():
    """The scalar Gotoh core's score matrices of the inputs, per (alphabet, mode): computed
    once and compared with every level."""
    protein, dna = inputs()
    want = {}
    for name, seqs, matrix, o, e, alph in (
        ("protein", protein, "BLOSUM62", 11, 1, bioaccel.PROTEIN),
        ("dna", dna, (2, -3), 5, 2, bioaccel.DNA),
    ):
        b = bioaccel.SeqBatch.from_strings(seqs)
        sc = make_scoring(matrix, o, e, alph)
        for mode_id, mode in enumerate(MODES):
            want[name, mode] = np.array(
                [
                    [
                        _native.align_score_scalar(b[i], b[j], sc.table, mode_id, o, e)
                        for j in range(len(seqs))
                    ]
                    for i in range(len(seqs))
                ]
            )
    return want


@pytest.mark.parametrize("level", list(LEVELS))
def test_alignment_scores_equal_the_scalar_core(results, scalar_scores, level):
    if level not in results:
        not_applicable(f"this CPU cannot run the {level} kernels")
    got = results[level][1]
    for (name, mode), want in scalar_scores.items():
        for strip in ("None", "7"):
            np.testing.assert_array_equal(
                got[f"{name}-{mode}-{strip}"], want, err_msg=f"{name} {mode}"
            )


def test_cpu_features_reports_build_and_cpu_side_by_side():
    f = _native.cpu_features()
    assert set(f) == {"isa", "built", "cpu", "forced"}
    assert f["isa"] in ("avx512", "avx2", "sse2", "generic")
    assert _native.align_isa() == f["isa"]
    text = open("/proc/cpuinfo").read() if sys.platform == "linux" else ""
    if "flags" in text:  # the probe agrees with the kernel's view of this CPU
        flags = set(text.split("flags", 1)[1].split("\n", 1)[0].split())
        assert f["cpu"]["avx2"] == ("avx2" in flags)
        assert f["cpu"]["avx512bw"] == ("avx512bw" in flags)
        assert f["cpu"]["avx512vpopcntdq"] == ("avx512_vpopcntdq" in flags)


def test_show_config_prints_the_probe(capsys):
    rep = bioaccel.show_config(check_r=False)
    isa = _native.cpu_features()["isa"]
    assert rep["simd"]["ok"] is True
    assert f"SIMD kernels in use: {isa}" in capsys.readouterr().out
