"""mash and jaccard neighbours on amplicon-like sets (short sequences sharing a conserved
region, so most prefix values are held by many rows): every way the blocks can go (the
candidates expanded in many small chunks and verified row by row, expanded then verified
by the dense rows, the dense rows alone) gives the dense matrix's pairs, bit for bit, in
(i, j) order, and shards give each pair once."""

from __future__ import annotations

import numpy as np
import pytest

from bioaccel.distances import distance_matrix
from bioaccel.neighbors import _kmers, neighbors
from bioaccel.sequences import SeqBatch
from tests.neighbor_cases import mutate


def amplicons(seed: int, families: int, size: int):
    rng = np.random.default_rng(seed)
    conserved = "".join(rng.choice(list("ACGT"), 120))
    out = []
    for _ in range(families):
        variable = "".join(rng.choice(list("ACGT"), 180))
        parent = conserved[:60] + variable + conserved[60:]
        for _ in range(size):
            out.append(mutate(rng, parent, int(rng.integers(0, 12)), "ACGT"))
    return SeqBatch.from_strings(out)


@pytest.fixture(scope="module")
def batch():
    return amplicons(7, 10, 12)


PATHS = {
    "auto": {},
    "index, rows verified": dict(
        _NS_POSTING=0.0, _NS_ROW=0.0, _NS_VERIFY_VALUE=0.0, _BLOCK_PAIRS=4000, _CHUNK=64
    ),
    "index, dense verified": dict(_NS_POSTING=0.0, _NS_ROW=1e15, _BLOCK_PAIRS=4000, _CHUNK=300),
    "dense": dict(_NS_POSTING=1e15, _BLOCK_PAIRS=4000, _CHUNK=1),
}

MODELS = [("mash", {}), ("mash", {"k": 11, "sketch_size": 60}), ("jaccard", {"k": 9})]


@pytest.mark.parametrize("path", list(PATHS))
@pytest.mark.parametrize("model,kw", MODELS)
def test_every_path_gives_the_dense_pairs(batch, monkeypatch, path, model, kw):
    for name, value in PATHS[path].items():
        monkeypatch.setattr(_kmers, name, value)
    ran = {"rows": 0, "dense": 0}  # which verification each path took
    for name, key in (("_verify_rows", "rows"), ("_dense_block", "dense")):
        real = getattr(_kmers, name)

        def counted(*a, _real=real, _key=key, **kw):
            ran[_key] += 1
            return _real(*a, **kw)

        monkeypatch.setattr(_kmers, name, counted)
    n = len(batch)
    m = distance_matrix(batch, model, **kw).data
    iu, ju = np.triu_indices(n, 1)
    for d in (0.0, 0.02, 0.1, 0.4, 1.0):
        keep = m[iu, ju] <= d
        for shards in (1, 3):
            parts = [
                neighbors(batch, max_distance=d, model=model, shard=(s, shards), **kw)
                for s in range(shards)
            ]
            i = np.concatenate([p.i for p in parts])
            j = np.concatenate([p.j for p in parts])
            dist = np.concatenate([p.distance for p in parts])
            assert np.array_equal(i, iu[keep]) and np.array_equal(j, ju[keep]), (d, shards)
            assert dist.dtype == np.float64
            assert np.array_equal(dist.view(np.int64), m[iu[keep], ju[keep]].view(np.int64))
            if path == "index, rows verified" and d <= 0.1:  # the filter left pairs out
                assert sum(p.candidates for p in parts) < n * (n - 1) // 2
    if path == "index, rows verified":
        assert ran["rows"] > 0  # (D = 1 admits every pair: those blocks go whole)
    if path == "dense":
        assert ran["dense"] > 0 and ran["rows"] == 0
