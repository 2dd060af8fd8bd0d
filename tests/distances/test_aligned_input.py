"""One "looks aligned" rule for every model that takes unaligned sequences: alignment scores,
identity, scoredist, edit and k-mer distances all refuse gapped input the same way, naming
the first gap and the way out (--ungap, SeqBatch.ungapped())."""

from __future__ import annotations

import numpy as np
import pytest

import bioaccel
from bioaccel.errors import AlphabetError
from bioaccel.sequences import SeqBatch
from tests.cli_runner import invoke

ALIGNED_DNA = {"a": "ACGT-ACGTTGCA", "b": "ACGTTACG--GCA", "c": "ACCTTACGTTGCA"}
ALIGNED_PROTEIN = {"p1": "MKV-LEFW-HHK", "p2": "MKVILEFWQHHK", "p3": "MR-VLEAW--HK"}
WAY_OUT = (
    "the sequences look aligned: remove the gaps with SeqBatch.ungapped() (command line: --ungap)"
)


@pytest.mark.parametrize(
    "model, seqs, first",
    [
        ("edit", ALIGNED_DNA, "letter '-' of sequence 'a' at position 5"),
        ("kmer", ALIGNED_DNA, "letter '-' of sequence 'a' at position 5"),
        ("edit", ALIGNED_PROTEIN, "letter '-' of sequence 'p1' at position 4"),
        ("kmer", ALIGNED_PROTEIN, "letter '-' of sequence 'p1' at position 4"),
        ("identity", ALIGNED_PROTEIN, "letter '-' of sequence 'p1' at position 4"),
        ("scoredist", ALIGNED_PROTEIN, "letter '-' of sequence 'p1' at position 4"),
    ],
)
def test_every_unaligned_input_model_refuses_gaps_alike(model, seqs, first):
    # once: edit and kmer counted gaps as letters without a word
    batch = SeqBatch.from_strings(list(seqs.values()), ids=list(seqs))
    kw = {"k": 3} if model == "kmer" else {}
    with pytest.raises(AlphabetError) as err:
        bioaccel.distance_matrix(batch, model, **kw)
    assert first in str(err.value) and str(err.value).endswith(WAY_OUT), str(err.value)
    plain = [s.replace("-", "") for s in seqs.values()]
    assert np.array_equal(
        bioaccel.distance_matrix(batch.ungapped(), model, **kw).data,
        bioaccel.distance_matrix(SeqBatch.from_strings(plain, ids=list(seqs)), model, **kw).data,
    )


@pytest.mark.parametrize("model", ["edit", "kmer"])
def test_the_command_line_refuses_aligned_input_for_edit_and_kmer(tmp_path, model):
    fa = tmp_path / "aln.fa"
    fa.write_text("".join(f">{k}\n{v}\n" for k, v in ALIGNED_DNA.items()))
    res = invoke("distance", str(fa), "-m", model, "-o", str(tmp_path / "d.phy"))
    assert res.exit_code == 2
    assert res.stderr.count("\n") == 1 and res.stderr.rstrip().endswith(WAY_OUT), res.stderr
    assert not (tmp_path / "d.phy").exists()
    res = invoke("distance", str(fa), "-m", model, "--ungap", "-o", str(tmp_path / "d.phy"))
    assert res.exit_code == 0, res.stderr


def test_an_aligned_model_still_takes_gaps():
    batch = SeqBatch.from_strings(list(ALIGNED_DNA.values()), ids=list(ALIGNED_DNA))
    assert np.isfinite(bioaccel.distance_matrix(batch, "k80").data).all()


def test_scoredist_on_nucleotides_names_the_file_and_the_way_out(tmp_path):
    """Before: 'scoredist is calibrated for proteins; the input reads as nucleotides' named
    neither the file nor what to use instead."""
    import bioaccel
    from bioaccel.errors import ModelError

    fa = tmp_path / "dna.fa"
    fa.write_text(">a\nACGTACGTAC\n>b\nACGTACGAAC\n")
    with pytest.raises(ModelError, match=r"dna\.fa: scoredist is calibrated for proteins.*'k80'"):
        bioaccel.distance_matrix(bioaccel.read_sequences(fa), "scoredist")
