"""Multiple alignments through rpy2 as ape AAbin/DNAbin, and their distances against ape's
``dist.aa`` / ``dist.dna`` on real gene families (the bundled HMMER tutorial families)."""

import numpy as np
import pytest

from bioaccel import msa
from bioaccel.msa_engine import MultipleAlignment, read_alignment
from tests.datasets import bundled
from tests.rhelpers import r_matrix_to_numpy

pytestmark = pytest.mark.r

DATA = bundled("hmmer")


@pytest.fixture(scope="module")
def pkinase():
    return msa(DATA / "Pkinase.fa", threads=1)


@pytest.fixture(scope="module")
def made1():
    return msa(DATA / "MADE1.fa", threads=1)


def r_dist(ro, d, ids):
    return r_matrix_to_numpy(ro, ro.r["as.matrix"](d), ids)


def test_alignment_round_trip_is_exact(ro, rinterop, pkinase, made1):
    for aln, kind in ((pkinase, "AAbin"), (made1, "DNAbin")):
        x = rinterop.to_r_alignment(aln)
        assert list(x.rclass) == [kind]
        assert list(ro.r["dim"](x)) == [len(aln), aln.width]
        assert list(ro.r["rownames"](x)) == aln.ids
        back = rinterop.from_r_alignment(x)
        assert back.ids == aln.ids and back.sequences == aln.sequences
        assert back.alphabet is aln.alphabet
    # phangorn reads them: as.phyDat for DNAbin; for AAbin, phyDat(type = "AA") (ape 5.7's
    # as.phyDat.AAbin does not dispatch with phangorn 2.11; the bioaccel R package registers
    # one that does, see R/R/msa.R)
    ro.r("suppressMessages(library(phangorn))")
    for aln, call in (
        (made1, "function(x) as.phyDat(x)"),
        (pkinase, "function(x) phyDat(as.character(x), type = 'AA')"),
    ):
        pd = ro.r(call)(rinterop.to_r_alignment(aln))
        assert list(pd.rclass) == ["phyDat"] and list(ro.r["names"](pd)) == aln.ids


def test_from_an_r_list_read_by_ape(ro, rinterop, made1, tmp_path):
    path = tmp_path / "made1.afa"
    made1.write(path)
    x = ro.r["read.FASTA"](str(path), type="DNA")  # ape: a list of sequences
    back = rinterop.from_r_alignment(x)
    assert back.ids == made1.ids and back.sequences == [s.upper() for s in made1.sequences]
    with pytest.raises(TypeError, match="DNAbin or AAbin"):
        rinterop.from_r_alignment(ro.r("c(a = 1)"))
    ragged = ro.r("ape::as.DNAbin(list(a = c('a', 'c', 'g'), b = c('a', 'c')))")
    with pytest.raises(ValueError, match="sequence 2 \\('b'\\) has 2 sites"):
        rinterop.from_r_alignment(ragged)


def test_protein_p_equals_ape_dist_aa_with_gaps_coded_x(ro, rinterop, pkinase):
    # ape::dist.aa deletes only 'X' (pairwise.deletion = TRUE); bioaccel's pairwise deletion
    # drops gaps and unknown letters too: the same once they are coded X
    coded = MultipleAlignment(
        pkinase.ids,
        [
            "".join(c if c in "ACDEFGHIKLMNPQRSTVWY" else "X" for c in row.upper())
            for row in pkinase.sequences
        ],
    )
    x = rinterop.to_r_alignment(coded)
    ape_p = r_dist(
        ro, ro.r["dist.aa"](x, **{"pairwise.deletion": True, "scaled": True}), pkinase.ids
    )
    ours = pkinase.distance_matrix("p")
    assert ours.ids == pkinase.ids
    np.testing.assert_allclose(ours.data, ape_p, rtol=0, atol=1e-12)
    # Poisson and Kimura are functions of p (ape has no protein Poisson/Kimura in dist.aa)
    with np.errstate(divide="ignore", invalid="ignore"):
        np.testing.assert_allclose(
            pkinase.distance_matrix("poisson").data, -np.log(1 - ape_p), atol=1e-12
        )
        kimura = -np.log(1 - ape_p - 0.2 * ape_p**2)
    kimura = np.where(np.isnan(kimura), np.inf, kimura)
    np.testing.assert_allclose(pkinase.distance_matrix("kimura").data, kimura, atol=1e-12)
    # with gaps as letters ape compares them as a 21st state (gap-gap columns count as
    # sites that agree): a different number
    raw = r_dist(
        ro,
        ro.r["dist.aa"](
            rinterop.to_r_alignment(pkinase), **{"pairwise.deletion": True, "scaled": True}
        ),
        pkinase.ids,
    )
    assert np.abs(raw - ape_p).max() > 0.05


@pytest.mark.parametrize(
    "model, ape_model", [("raw", "raw"), ("jc69", "JC69"), ("k80", "K80"), ("tn93", "TN93")]
)
def test_dna_distances_equal_ape_dist_dna(ro, rinterop, made1, model, ape_model):
    x = rinterop.to_r_alignment(made1)
    ref = r_dist(ro, ro.r["dist.dna"](x, model=ape_model, **{"pairwise.deletion": True}), made1.ids)
    ours = made1.distance_matrix(model, pairwise_deletion=True)
    np.testing.assert_allclose(ours.data, ref, rtol=1e-10, atol=1e-12)


def test_read_alignment_reads_back_what_msa_wrote(tmp_path, pkinase):
    for ext in ("fa", "aln", "sto"):
        path = tmp_path / f"p.{ext}"
        pkinase.write(path)
        back = read_alignment(path)
        assert back.ids == pkinase.ids and back.sequences == pkinase.sequences, ext
        assert back.alphabet is pkinase.alphabet
    (tmp_path / "bad.fa").write_text(">a\nMK-V\n>b\nMKV\n")
    with pytest.raises(ValueError, match="row 2 \\('b'\\) has 3 columns"):
        read_alignment(tmp_path / "bad.fa")
    (tmp_path / "dup.fa").write_text(">a\nMKV\n>a\nMKL\n")
    with pytest.raises(ValueError, match="id 'a' repeats row 1"):
        read_alignment(tmp_path / "dup.fa")
