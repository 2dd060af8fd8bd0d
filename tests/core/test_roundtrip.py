"""Round trip of every writer (the mechanism every writer shares, not a case list): over ids with spaces, long ids,
non-ASCII letters, quotes and Newick/Clustal/Stockholm punctuation, and residues of each
alphabet, every format of every writer (distance matrices, trees, alignments, tiles,
sketches) is read back by bioaccel -- and by Biopython and scikit-bio where they read the
format, by ape in the R test -- with the same ids and values, or the writer refuses before
writing anything."""

from __future__ import annotations

import gzip
import io
import math
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bioaccel
from bioaccel import DistanceMatrix
from bioaccel.msa_engine import MultipleAlignment
from tests.datasets import require

FAST = settings(
    max_examples=50,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

#: letters that break formats: spaces, quotes, Newick/Clustal/Stockholm punctuation, non-ASCII
ID_LETTERS = st.sampled_from(
    list("abcXYZ019_-./|")
    + [" ", "'", '"', "(", ")", ",", ":", ";", "[", "]", "#", "*", "=", "é", "ñ", "中", "\t"]
)
IDS = st.lists(st.text(ID_LETTERS, min_size=1, max_size=40), min_size=2, max_size=5, unique=True)
DNA_LETTERS = "ACGT"
PROTEIN_LETTERS = "ACDEFGHIKLMNPQRSTVWY"


def _workdir():
    return Path(tempfile.mkdtemp(prefix="bioaccel-rt-"))


def _nothing_written(folder: Path) -> None:
    assert list(folder.iterdir()) == [], "a refusing writer left a file"


@st.composite
def matrices(draw):
    ids = draw(IDS)
    n = len(ids)
    values = draw(
        st.lists(
            st.floats(min_value=0, max_value=1e6, allow_nan=False, allow_subnormal=False),
            min_size=n * (n - 1) // 2,
            max_size=n * (n - 1) // 2,
        )
    )
    return DistanceMatrix.from_condensed(np.array(values), ids)


@FAST
@given(matrices(), st.sampled_from(["m.phy", "l.phy", "m.tsv", "m.npy", "m.npz", "m.cdist"]))
def test_distance_matrix_writers(dm, name):
    folder = _workdir()
    path = folder / name
    fmt = "phylip-lower" if name == "l.phy" else None
    try:
        dm.write(path, fmt)
    except ValueError:
        _nothing_written(folder)
        return
    back = DistanceMatrix.read(path)
    assert back.ids == dm.ids
    assert np.array_equal(back.data, dm.data)  # repr() of a float reads back exactly
    skbio = require("skbio", "scikit-bio is the oracle")
    if name == "m.tsv" and not any(i != i.strip() or i.startswith("#") for i in dm.ids):
        # scikit-bio's lsmat is bioaccel's TSV (a tab, then the ids)
        sk = skbio.DistanceMatrix.read(str(path), format="lsmat")
        assert list(sk.ids) == dm.ids and np.allclose(sk.data, dm.data, rtol=1e-15, atol=0)
    if name == "m.phy" and all(" " not in i for i in dm.ids):
        sk = skbio.DistanceMatrix.read(str(path), format="phylip_dm")
        assert list(sk.ids) == dm.ids and np.array_equal(sk.data, dm.data)


@st.composite
def trees(draw):
    ids = draw(IDS)
    n = len(ids)
    values = draw(
        st.lists(
            st.floats(min_value=0, max_value=100, allow_nan=False, allow_subnormal=False),
            min_size=n * (n - 1) // 2,
            max_size=n * (n - 1) // 2,
        )
    )
    dm = DistanceMatrix.from_condensed(np.array(values), ids)
    return draw(st.sampled_from([bioaccel.nj, bioaccel.upgma]))(dm)


@FAST
@given(trees())
def test_newick_writer(tree):
    folder = _workdir()
    path = folder / "t.nwk"
    tree.write(path)
    back = bioaccel.read_newick(path)
    assert sorted(back.labels) == sorted(tree.labels)
    order = [back.labels.index(lbl) for lbl in tree.labels]
    np.testing.assert_allclose(
        back.patristic()[np.ix_(order, order)], tree.patristic(), rtol=1e-12, atol=0
    )
    # Biopython and scikit-bio follow other Newick conventions for some labels: neither
    # undoubles '' inside quotes, scikit-bio 0.7 reads '_' as a space and fails on Newick
    # punctuation and '[...]' even inside quotes; compare the other labels
    if any(
        set(lbl) & set("'\"[]_(),:;") or lbl != lbl.strip() or "\t" in lbl for lbl in tree.labels
    ):
        return
    from Bio import Phylo

    bio = Phylo.read(io.StringIO(path.read_text()), "newick")
    assert sorted(t.name for t in bio.get_terminals()) == sorted(tree.labels)
    skbio = require("skbio", "scikit-bio is the oracle")
    sk = skbio.TreeNode.read(str(path), format="newick")
    assert sorted(t.name for t in sk.tips()) == sorted(tree.labels)


@st.composite
def alignments(draw):
    ids = draw(IDS)
    letters = draw(st.sampled_from([DNA_LETTERS, PROTEIN_LETTERS]))
    width = draw(st.integers(1, 130))  # beyond one 60-column Clustal block
    rows = [
        "".join(draw(st.lists(st.sampled_from(letters + "-"), min_size=width, max_size=width)))
        for _ in ids
    ]
    rows = [r if r.strip("-") else letters[0] + r[1:] for r in rows]  # every row a residue
    alphabet = bioaccel.DNA if letters == DNA_LETTERS else bioaccel.PROTEIN
    return MultipleAlignment(ids, rows, alphabet=alphabet)


BIO_NAMES = {"fa": "fasta", "aln": "clustal", "sto": "stockholm", "phy": "phylip-relaxed"}
SKBIO_NAMES = {"fa": "fasta", "aln": "clustal", "sto": "stockholm"}


@FAST
@given(
    alignments(),
    st.sampled_from(["x.fa", "x.aln", "x.sto", "x.phy", "x.a2m", "x.fa.gz", "x.aln.gz"]),
)
def test_alignment_writers(aln, name):
    folder = _workdir()
    path = folder / name
    try:
        aln.write(path)
    except ValueError:
        _nothing_written(folder)
        assert any(any(c.isspace() for c in i) or i.startswith(("#", "//")) for i in aln.ids)
        return
    back = bioaccel.read_sequences(path)
    assert back.ids == aln.ids
    rows = [back.sequence(i) for i in range(len(back))]
    if name == "x.a2m":  # insert states in lower case, their gaps as '.'
        rows = [r.upper().replace(".", "-") for r in rows]
    assert rows == aln.sequences
    ext = name.split(".")[1]
    text = gzip.decompress(path.read_bytes()).decode() if name.endswith(".gz") else path.read_text()
    if ext in BIO_NAMES:
        from Bio import AlignIO

        bio = AlignIO.read(io.StringIO(text), BIO_NAMES[ext])
        assert [r.id for r in bio] == aln.ids and [str(r.seq) for r in bio] == aln.sequences
    if ext in SKBIO_NAMES:
        skbio = require("skbio", "scikit-bio is the oracle")
        cls = skbio.DNA if aln.alphabet is bioaccel.DNA else skbio.Protein
        if ext == "fa":
            got = [
                (s.metadata["id"], str(s))
                for s in skbio.io.read(io.StringIO(text), "fasta", constructor=cls)
            ]
        else:
            msa = skbio.TabularMSA.read(io.StringIO(text), format=SKBIO_NAMES[ext], constructor=cls)
            got = list(zip(msa.index, map(str, msa)))
        assert got == list(zip(aln.ids, aln.sequences))


@FAST
@given(IDS, st.integers(0, 2**31))
def test_tiles_and_sketches(ids, seed):
    from bioaccel.distances._kmers import Sketches, sketch
    from bioaccel.distances._tiles import distance_tile, merge_tiles, tile_bounds, write_tile

    rng = np.random.default_rng(seed)
    seqs = ["".join(rng.choice(list(DNA_LETTERS), 24)) for _ in ids]
    batch = bioaccel.SeqBatch.from_strings(seqs, ids=ids)
    folder = _workdir()
    paths = []
    for a, b in [(0, 0), (0, 1), (1, 1)]:
        bounds = tile_bounds(batch, a, b, 2)
        values, params = distance_tile(batch, "raw", bounds[:2], bounds[2:])
        paths.append(folder / f"t{a}{b}.npz")
        write_tile(paths[-1], values, bounds, len(batch), batch.ids, params)
    merged = merge_tiles(paths)
    assert merged == bioaccel.distance_matrix(batch, "raw")
    s = sketch(batch, k=5, size=20)
    s.save(folder / "s.npz")
    back = Sketches.load(folder / "s.npz")
    assert back.ids == ids and np.array_equal(back.values, s.values)


@pytest.mark.r
def test_ape_reads_what_bioaccel_writes(ro, tmp_path):
    """ape's readers on the formats they read, with ids that are hard but that ape keeps
    (it strips quotes and spaces at the ends of names, so none there)."""
    ids = [
        "A/California/07/2009(H1N1)_segment4_HA",
        "A/California/07/2009(H1N1)_segment6_NA",
        "x|y.z-1",
        "s'quote'd",
        "n" * 70,
    ]
    rng = np.random.default_rng(3)
    rows = ["".join(rng.choice(list("ACGT-"), 130)) for _ in ids]
    aln = MultipleAlignment(ids, rows, alphabet=bioaccel.DNA)
    for name, fmt in (("x.aln", "clustal"), ("x.phy", "sequential"), ("x.fa", "fasta")):
        aln.write(tmp_path / name)
        ro.r(f'x <- as.character(as.matrix(read.dna("{tmp_path / name}", format = "{fmt}")))')
        assert list(ro.r("rownames(x)")) == ids, name
        got = ["".join(ro.r(f"x[{k + 1}, ]")) for k in range(len(ids))]
        assert got == [r.lower() for r in rows], name
    d = bioaccel.distance_matrix(["ACGTACGTAC", "ACGTACGTAA", "TCGTACGTAA"], "raw")
    dm = DistanceMatrix(d.data, ["a b", "c'd", "é"])
    dm.write(tmp_path / "m.tsv")
    ro.r(
        f'm <- as.matrix(read.table("{tmp_path / "m.tsv"}", sep = "\\t", header = TRUE, '
        'row.names = 1, check.names = FALSE, quote = "", encoding = "UTF-8"))'
    )
    assert list(ro.r("rownames(m)")) == dm.ids
    assert np.allclose(np.array(ro.r("as.vector(m)")).reshape(3, 3, order="F"), dm.data)
    # ape's read.tree gives NA for a quoted label holding a doubled quote ('c''d', as the
    # Newick standard escapes it), so the tree is checked with ids without one
    tree = bioaccel.nj(DistanceMatrix(d.data, ["a b", "c-d", "é"]))
    tree.write(tmp_path / "t.nwk")
    ro.r(f'tr <- read.tree("{tmp_path / "t.nwk"}")')
    labels = [lbl.strip("'") for lbl in ro.r("tr$tip.label")]  # ape keeps the quotes
    assert sorted(labels) == sorted(tree.labels)
    assert math.isclose(float(ro.r("sum(tr$edge.length)")[0]), float(tree.length.sum()))
