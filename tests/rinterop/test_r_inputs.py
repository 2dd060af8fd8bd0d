"""What R users give and get back, Python side of R: alignments read from files and RNA go to R; a
distance TSV written by R's write.table reads with its ids (no quotes)."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

import bioaccel
from bioaccel import DistanceMatrix, read_sequences
from tests.datasets import unavailable

ALN = ">r1\nACGUUGCA-U\n>r2\nACGU-GCAAU\n>r3 x\nACCUUGCAAU\n"


@pytest.mark.r
def test_to_r_alignment_takes_an_aligned_seqbatch_and_rna(ro, rinterop, tmp_path):
    p = tmp_path / "rna.fa"
    p.write_text(ALN)
    batch = read_sequences(p)  # before: AttributeError ('SeqBatch' has no 'sequences')
    x = rinterop.to_r_alignment(batch)
    assert list(x.rclass) == ["DNAbin"] and list(ro.r["rownames"](x)) == ["r1", "r2", "r3"]
    chars = np.array(ro.r("function(x) as.character(x)")(x)).reshape(3, 10, order="F")
    assert "".join(chars[0]) == "acgttgca-t"  # U as T, never NA (ape's DNAbin has no U)
    assert not ro.r("function(x) anyNA(as.character(x))")(x)[0]
    # and what msa() makes of RNA
    aln = bioaccel.msa(p, refine=False)
    y = rinterop.to_r_alignment(aln)
    assert not ro.r("function(x) anyNA(as.character(x))")(y)[0]
    ro.r("suppressMessages(library(phangorn))")
    score = ro.r("function(x) parsimony(read.tree(text = '((r1,r2),r3);'), as.phyDat(x))")(y)[0]
    assert np.isfinite(score)
    with pytest.raises(bioaccel.AlignmentLengthError, match="'b' has length 3"):
        rinterop.to_r_alignment(bioaccel.SeqBatch.from_strings(["ACGT", "ACG"], ids=["a", "b"]))
    with pytest.raises(TypeError, match="MultipleAlignment or an aligned SeqBatch"):
        rinterop.to_r_alignment(["ACGT"])


# R's write.table(m, sep = "\t") as R 4.2 writes it: names quoted, an inner quote escaped as
# \", no corner cell; col.names = NA adds the corner cell ""; qmethod = "double" doubles
R_DEFAULT = '"a b"\t"c\\"d"\t"e"\n"a b"\t0\t1\t2\n"c\\"d"\t1\t0\t3\n"e"\t2\t3\t0\n'
R_CORNER = '""\t"a b"\t"c""d"\t"e"\n"a b"\t0\t1\t2\n"c""d"\t1\t0\t3\n"e"\t2\t3\t0\n'


@pytest.mark.parametrize("text", [R_DEFAULT, R_CORNER])
def test_tsv_in_r_write_table_style(tmp_path, text):
    p = tmp_path / "d.tsv"
    p.write_text(text)
    dm = DistanceMatrix.read(p)
    assert dm.ids == ["a b", 'c"d', "e"]  # before: '"a b"' (or a header one name short)
    assert dm.data.tolist() == [[0, 1, 2], [1, 0, 3], [2, 3, 0]]
    # bioaccel's own TSV, whose ids may hold quotes, reads as it was written
    own = DistanceMatrix(dm.data, ['"q"', '"r"', '"s"'])
    own.write(tmp_path / "o.tsv")
    assert DistanceMatrix.read(tmp_path / "o.tsv").ids == ['"q"', '"r"', '"s"']


@pytest.mark.r
def test_tsv_written_by_r(tmp_path):
    if shutil.which("Rscript") is None:
        unavailable("R is not installed")
    script = (
        'm <- matrix(c(0,1,2,1,0,3,2,3,0), 3, dimnames = rep(list(c("a b", "c\\"d", "e")), 2)); '
        f'write.table(m, "{tmp_path}/r1.tsv", sep = "\\t"); '
        f'write.table(m, "{tmp_path}/r2.tsv", sep = "\\t", col.names = NA, qmethod = "double")'
    )
    subprocess.run(["Rscript", "-e", script], check=True, capture_output=True)
    for name in ("r1.tsv", "r2.tsv"):
        dm = DistanceMatrix.read(tmp_path / name)
        assert dm.ids == ["a b", 'c"d', "e"] and dm.data[1, 2] == 3.0
