"""Every MSA output writes the input's own letters: RNA keeps its U, a file mixing DNA and
RNA rows keeps each row's T or U, lower case stays lower case. Through the command line (a
path and stdin), Python (a path, a ``read_sequences`` batch, records), ``--add`` (fragments
too), ``--profile`` and every format writer; on a real Rfam seed (snR75, from Infernal's
test suite) and a small hand-made file. The engine computes on the codes (U as T, case
folded), so the columns are those of the upper-case DNA spelling."""

from __future__ import annotations

from pathlib import Path

import pytest

import bioaccel
from bioaccel.msa_engine import read_alignment
from bioaccel.msa_engine.read import parse_records
from tests.cli_runner import run_process
from tests.datasets import unavailable

#: an Rfam seed (RF01855, snR75: 62 rows, '.' and '-' gaps, U) of ``apt-get install infernal``
RFAM_SEED = Path("/usr/share/doc/infernal/examples/testsuite/snR75.sto")

#: RNA rows (one lower case, one in part), a DNA row (T) among them, descriptions kept
SMALL = (
    ">r1 an RNA row\nGGCUAGCUAGCUAgcuaGCUAACGUU\n"
    ">r2\nGGCUAGCUAGCUAGCUAACGUU\n"
    ">d3 a DNA row\nGGCTAGCAAGCTAGCTAAGGCGTT\n"
    ">r4\nggcuagcuagcuagcuaacguu\n"
)
NEW = ">n1\nGGCUAGCUAGCUagcUAACG\n>n2 dna\nGGCTAGCAAGCTAGCTAAGG\n"


def _ungap(row: str) -> str:
    return row.replace("-", "").replace(".", "")


def _inputs(path: Path) -> dict[str, str]:
    """Each record's letters as the file gives them, gaps removed, by id."""
    ids, raw, _, _, _ = parse_records(path)
    return {i: _ungap(s) for i, s in zip(ids, raw)}


def _check(aln, expected: dict[str, str]) -> None:
    """Every row, gaps removed, is its input letter for letter."""
    assert len(aln) == len(expected)
    for i, row in zip(aln.ids, aln.sequences):
        assert _ungap(row) == expected[i], i


def _rfam_seed() -> Path:
    if not RFAM_SEED.exists():
        unavailable(f"{RFAM_SEED} missing (apt-get install infernal): the Rfam seed")
    return RFAM_SEED


@pytest.fixture
def small(tmp_path) -> Path:
    path = tmp_path / "rna.fa"
    path.write_text(SMALL)
    return path


def test_python_keeps_the_letters_from_a_path_a_batch_and_records(small):
    expected = _inputs(small)
    batch = bioaccel.read_sequences(small)
    assert batch.sequence(0).startswith("GGCTAGC")  # the codes: U as T, upper case
    records = [(i, s) for i, s in expected.items()]
    for source in (
        small,
        batch,
        records,
        bioaccel.SeqBatch.from_strings(list(expected.values()), ids=list(expected)),
    ):
        aln = bioaccel.msa(source, threads=1)
        _check(aln, expected)
        assert aln.alphabet is bioaccel.DNA
    # the columns are those of the DNA spelling in upper case: letters only change the output
    dna = bioaccel.msa([(i, s.upper().replace("U", "T")) for i, s in records], threads=1)
    assert [r.upper().replace("U", "T") for r in aln.sequences] == dna.sequences


def test_an_rfam_seed_keeps_its_u_from_python_and_the_command_line(tmp_path):
    seed = _rfam_seed()
    expected = _inputs(seed)
    assert any("U" in s for s in expected.values())
    _check(bioaccel.msa(bioaccel.read_sequences(seed), mode="fast", threads=1), expected)
    _check(bioaccel.msa(seed, mode="fast", threads=1), expected)
    out = tmp_path / "seed.fa"
    r = run_process("msa", "-", "-o", out, "--mode", "fast", "-t", "1", stdin=seed.read_text())
    assert r.returncode == 0, r.stderr
    _check(read_alignment(out), expected)


@pytest.mark.parametrize(
    "fmt,ext",
    [("fasta", "fa"), ("clustal", "aln"), ("stockholm", "sto"), ("phylip", "phy"), ("a2m", "a2m")],
)
def test_command_line_every_format_from_a_path_and_stdin(small, tmp_path, fmt, ext):
    expected = _inputs(small)
    for name, args, stdin in (("path", [small], None), ("stdin", ["-"], SMALL)):
        out = tmp_path / f"{name}.{ext}"
        r = run_process("msa", *args, "-o", out, "-t", "1", stdin=stdin)
        assert r.returncode == 0, r.stderr
        if fmt == "a2m":  # A2M spells match and insert states in case: U kept, case is A2M's
            text = out.read_text()
            rows = [ln for ln in text.splitlines() if not ln.startswith(">")]
            assert [_ungap(x).upper() for x in rows] == [s.upper() for s in expected.values()]
            continue
        _check(read_alignment(out), expected)


def test_add_fragments_and_profile_keep_the_letters(small, tmp_path):
    expected = _inputs(small)
    new = tmp_path / "new.fa"
    new.write_text(NEW)
    both = {**expected, **_inputs(new)}
    to = tmp_path / "aln.fa"
    bioaccel.msa(small, threads=1).write(to)
    # the command line: the new sequences from a path and from stdin, fragments too
    for args, stdin in (([new], None), (["-"], NEW)):
        for extra in ([], ["--fragments"]):
            out = tmp_path / "added.fa"
            r = run_process("msa", "--add", *args, "--to", to, *extra, "-o", out, stdin=stdin)
            assert r.returncode == 0, r.stderr
            _check(read_alignment(out), both)
    # Python: a read_sequences batch, records and a path
    for source in (bioaccel.read_sequences(new), list(_inputs(new).items()), new):
        for fragments in (False, True):
            _check(bioaccel.msa(add=source, to=to, fragments=fragments, threads=1), both)
    # profiles: of two alignment files, and of alignments made from read_sequences batches
    other = tmp_path / "other.fa"
    bioaccel.msa(new, threads=1).write(other)
    _check(bioaccel.msa(profile=(to, other), threads=1), both)
    out = tmp_path / "profile.sto"
    r = run_process("msa", "--profile", to, other, "-o", out)
    assert r.returncode == 0, r.stderr
    _check(read_alignment(out), both)
    a = bioaccel.msa(bioaccel.read_sequences(small), threads=1)
    b = bioaccel.msa(bioaccel.read_sequences(new), threads=1)
    _check(bioaccel.msa(profile=(a, b), threads=1), both)
