"""Aligned-DNA distances: every backend against the reference, the reference against
scikit-bio (which matches ape), and hand-checked edge cases."""

from __future__ import annotations

import numpy as np
import pytest

import bioaccel
from bioaccel import SeqBatch
from bioaccel.errors import AlignmentLengthError, BackendUnavailableError, ModelError
from tests.datasets import random_alignment, require

MODELS = list(bioaccel.MODELS)


def ref(seqs, model, pd):
    return bioaccel.distance_matrix(seqs, model, pairwise_deletion=pd, backend="reference").data


@pytest.mark.parametrize("pairwise_deletion", [False, True])
@pytest.mark.parametrize("model", MODELS)
def test_backend_equals_reference(backend_name, model, pairwise_deletion, rng):
    # the simulator runs one Python thread per pair: keep its inputs small
    n, sites = (7, 150) if backend_name == "numba-cuda" else (23, 517)
    seqs = random_alignment(rng, n, sites, divergence=0.6)
    got = bioaccel.distance_matrix(
        seqs, model, pairwise_deletion=pairwise_deletion, backend=backend_name
    ).data
    assert np.array_equal(got, ref(seqs, model, pairwise_deletion), equal_nan=True)


@pytest.mark.parametrize("sites", [1, 63, 64, 65, 128, 129])
def test_word_boundaries(backend_name, sites, rng):
    seqs = random_alignment(rng, 5, sites, missing=0.1, gap_runs=0)
    for model in ("k80", "logdet"):
        got = bioaccel.distance_matrix(seqs, model, pairwise_deletion=True, backend=backend_name)
        assert np.array_equal(got.data, ref(seqs, model, True), equal_nan=True)


def test_tiles_cover_the_matrix(monkeypatch, rng):
    # force many row tiles: the result must not depend on tiling
    seqs = random_alignment(rng, 31, 200)
    whole = bioaccel.distance_matrix(seqs, "tn93", backend="cpu").data
    monkeypatch.setattr(bioaccel.distances._models, "TILE_BYTES", 1)
    tiled = bioaccel.distance_matrix(seqs, "tn93", backend="cpu").data
    assert np.array_equal(whole, tiled, equal_nan=True)


def test_threads_do_not_change_results(rng):
    seqs = random_alignment(rng, 150, 700)
    one = bioaccel.distance_matrix(seqs, "logdet", pairwise_deletion=True, backend="cpu", threads=1)
    two = bioaccel.distance_matrix(seqs, "logdet", pairwise_deletion=True, backend="cpu", threads=2)
    assert np.array_equal(one.data, two.data, equal_nan=True)


# --- scikit-bio as an independent oracle -------------------------------------------
SKBIO_METRIC = {
    "raw": "pdist",
    "jc69": "jc69",
    "k80": "k2p",
    "f81": "f81",
    "tn93": "tn93",
    "logdet": "logdet",
}


@pytest.mark.parametrize("pairwise_deletion", [False, True])
@pytest.mark.parametrize("model", MODELS)
def test_reference_matches_skbio(model, pairwise_deletion, rng):
    skbio = require("skbio", "the scikit-bio oracle")
    from skbio.alignment import TabularMSA, align_dists

    # skbio's DNA has no '?': use N, gaps and IUPAC codes only
    seqs = random_alignment(rng, 12, 400, missing_letters="N-RYKMSW", divergence=0.5)
    msa = TabularMSA([skbio.DNA(s) for s in seqs], index=[f"s{i}" for i in range(len(seqs))])
    expected = align_dists(msa, SKBIO_METRIC[model], shared_by_all=not pairwise_deletion)
    got = ref(seqs, model, pairwise_deletion)
    np.testing.assert_allclose(got, expected.data, rtol=1e-12, atol=1e-12)


# --- hand-checked cases --------------------------------------------------------------
def test_hand_checked_k80():
    # 10 sites. 0 vs 1: one A<->G transition, P = 0.1, Q = 0: d = -0.5 ln(1 - 0.2).
    # 0 vs 2: one A<->C transversion, P = 0, Q = 0.1: d = -0.5 ln((1 - 0.1) sqrt(1 - 0.2))
    seqs = ["AAAAACCCCC", "GAAAACCCCC", "CAAAACCCCC"]
    d = bioaccel.distance_matrix(seqs, "k80", backend="cpu").data
    assert d[0, 1] == pytest.approx(-0.5 * np.log(0.8))
    assert d[0, 2] == pytest.approx(-0.5 * np.log(0.9 * np.sqrt(0.8)))
    # between seqs 1 and 2: G<->C is a transversion at one site of 10
    assert d[1, 2] == pytest.approx(-0.5 * np.log(0.9 * np.sqrt(0.8)))


def test_saturation_gives_inf_and_nan_as_ape():
    # p = 3/4 exactly: 1 - 4p/3 = 0 -> -0.75 ln 0 = +Inf; p = 1 -> ln of a negative -> NaN
    seqs = ["AAAA", "ACGT", "CCCC"]
    d = bioaccel.distance_matrix(seqs, "jc69", backend="cpu").data
    assert d[0, 1] == np.inf
    assert np.isnan(d[0, 2])
    assert d[1, 2] == np.inf


def test_no_shared_sites_gives_nan():
    d = bioaccel.distance_matrix(
        ["AC--", "--GT", "ACGT"], "raw", pairwise_deletion=True, backend="cpu"
    ).data
    assert np.isnan(d[0, 1])
    assert d[0, 2] == 0.0
    # global deletion: every site has a gap somewhere, so nothing is left to compare
    assert np.isnan(bioaccel.distance_matrix(["AC--", "--GT", "ACGT"], "raw").data[0, 2])


def test_global_deletion_drops_sites_missing_anywhere():
    # site 3 is N in the third sequence only: gone for all pairs without pairwise deletion
    seqs = ["ACGT", "ACCT", "ACNT"]
    glob = bioaccel.distance_matrix(seqs, "raw", backend="cpu").data
    pair = bioaccel.distance_matrix(seqs, "raw", pairwise_deletion=True, backend="cpu").data
    assert glob[0, 1] == 0.0  # 0 of 3 kept sites differ
    assert pair[0, 1] == 0.25  # 1 of 4 sites differ


def test_rna_u_reads_as_t():
    a = bioaccel.distance_matrix(["ACGU", "ACGA"], "raw", backend="cpu").data
    b = bioaccel.distance_matrix(["ACGT", "ACGA"], "raw", backend="cpu").data
    assert np.array_equal(a, b)


def test_unknown_model():
    with pytest.raises(ModelError, match=r"unknown distance model 'k81x'.*'k80'"):
        bioaccel.distance_matrix(["AC", "AG"], "k81x")


def test_protein_input_rejected():
    with pytest.raises(ModelError, match="nucleotide"):
        bioaccel.distance_matrix(["MKVLE", "MKVLQ"], "k80")


def test_unaligned_input_names_record():
    batch = SeqBatch.from_strings(["ACGT", "ACGTA", "ACG"], ids=["a", "b", "c"])
    with pytest.raises(AlignmentLengthError, match=r"record 'b' has length 5, but 'a' has 4"):
        bioaccel.distance_matrix(batch, "k80")


def test_unknown_backend_and_unavailable_backend():
    with pytest.raises(BackendUnavailableError, match="unknown backend 'tpu'"):
        bioaccel.distance_matrix(["AC", "AG"], backend="tpu")
    reasons = bioaccel.available_backends()
    assert reasons["reference"] is None
    missing = [name for name, why in reasons.items() if why]
    for name in missing:  # a named backend that cannot run raises, never falls back
        with pytest.raises(BackendUnavailableError, match=name):
            bioaccel.get_backend(name)
    assert isinstance(BackendUnavailableError("x"), RuntimeError)


def test_auto_never_picks_the_simulator():
    assert bioaccel.get_backend("auto").name in ("cupy", "numba-cuda", "cpu")
    if bioaccel.get_backend("auto").name == "numba-cuda":
        import os

        assert os.environ.get("NUMBA_ENABLE_CUDASIM") != "1"


def test_real_data_backends_agree(backend_name, flu_ha):
    batch = bioaccel.read_sequences(flu_ha)
    small = batch.subset(range(6 if backend_name == "numba-cuda" else 60))
    for model in ("k80", "tn93", "logdet"):
        for pd in (False, True):
            got = bioaccel.distance_matrix(small, model, pairwise_deletion=pd, backend=backend_name)
            assert np.array_equal(got.data, ref(small, model, pd), equal_nan=True)


def test_auto_picks_per_operation(monkeypatch):
    # with a usable cupy (its NumPy array path stands in here), auto keeps DNA counts on the
    # C++ core (measured faster than an H200 beside 16 cores: AUTO_GPU_FROM), and its CUDA C
    # alignment and edit kernels run only when named
    from bioaccel import backends
    from bioaccel.backends.cupy._backend import CupyBackend

    monkeypatch.setitem(backends._instances, "cupy", CupyBackend(xp=np))
    assert bioaccel.get_backend("auto").name == "cpu"
    assert bioaccel.get_backend("cupy").name == "cupy"
    assert bioaccel.get_backend("auto", "align_scores").name != "cupy"
    assert bioaccel.get_backend("auto", "edit_distances").name != "cupy"
    # ... while a CuPy backend on a GPU has those kernels when named
    assert {"align_scores", "edit_distances"} <= CupyBackend.operations
