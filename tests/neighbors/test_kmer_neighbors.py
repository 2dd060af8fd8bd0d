"""mash and jaccard neighbours: the pairs (and values, bit for bit) of the dense
distance_matrix at or below the threshold, found from an inverted index."""

from __future__ import annotations

import numpy as np
import pytest

from bioaccel.distances import distance_matrix
from bioaccel.neighbors import neighbors
from bioaccel.sequences import SeqBatch
from tests.neighbor_cases import mutate


def genomes(seed: int, families: int, size: int, length: int):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(families):
        parent = "".join(rng.choice(list("ACGT"), length))
        for _ in range(size):
            out.append(mutate(rng, parent, int(rng.integers(0, length // 12)), "ACGT"))
    return SeqBatch.from_strings(out)


def dense_pairs(batch, model, d, **kw):
    m = distance_matrix(batch, model, **kw).data
    i, j = np.triu_indices(len(batch), 1)
    keep = m[i, j] <= d
    return dict(zip(zip(i[keep].tolist(), j[keep].tolist()), m[i[keep], j[keep]].tolist()))


@pytest.fixture(scope="module")
def batch():
    return genomes(3, 5, 8, 1500)


@pytest.mark.parametrize("model", ["mash", "jaccard"])
@pytest.mark.parametrize("d", [0.0, 0.02, 0.05, 0.2, 0.6, 1.0])
def test_the_dense_matrix_pairs_at_or_below_d(batch, model, d):
    kw = {"k": 15, "sketch_size": 200} if model == "mash" else {"k": 11}
    want = dense_pairs(batch, model, d, **kw)
    nb = neighbors(batch, max_distance=d, model=model, **kw)
    assert nb.distance.dtype == np.float64 and nb.model == model
    got = dict(zip(zip(nb.i.tolist(), nb.j.tolist()), nb.distance.tolist()))
    assert got == want  # the values bit for bit
    if 0 < d < 0.5:
        assert nb.candidates < len(batch) * (len(batch) - 1) // 2  # not every pair


def test_shards_of_mash_pairs(batch):
    whole = neighbors(batch, max_distance=0.1, model="mash", k=15, sketch_size=200)
    parts = [
        neighbors(batch, max_distance=0.1, model="mash", k=15, sketch_size=200, shard=(s, 3))
        for s in range(3)
    ]
    assert np.array_equal(np.concatenate([p.i for p in parts]), whole.i)
    assert np.array_equal(np.concatenate([p.j for p in parts]), whole.j)


def test_kmer_models_refuse_a_negative_threshold_and_gpu_backends(batch):
    with pytest.raises(ValueError, match=">= 0"):
        neighbors(batch, max_distance=-0.1, model="mash")
    from bioaccel.errors import BackendUnavailableError

    with pytest.raises(BackendUnavailableError, match="cpu backend"):
        neighbors(batch, max_distance=0.1, model="jaccard", backend="cupy")
