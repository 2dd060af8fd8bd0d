"""MSA paths that gave silent wrong answers: options that do not apply are refused naming
the mode or operation (or change the result), auto says why it chose, add/profile check
alphabets by the readers' rule, side outputs follow the one output-name rule, whole FASTA
header lines are kept, and Ctrl-C stops the engine."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

import bioaccel
from bioaccel.errors import AlphabetError, DuplicateIdError
from bioaccel.msa_engine import MultipleAlignment, read_alignment
from tests.cli_runner import COMMAND
from tests.datasets import bundled

from ..datasets import child_env

DATA = bundled()
GLOBINS = [
    ("Homo sapiens", "MVLSPADKTNVKAAWGKVGAHAGEYGAEALERMFLSFPTTKTYFPHFDLSHGSAQVKGHGKKVADALTNAVAH"),
    (
        "Homo neanderthalensis",
        "MVLSPADKTNVKAAWGKVGAHAGEYGAEALERMFLSFPTTKTYFPHFDLSHGSAQVKGHGKKVADALTNAVAH"[:60],
    ),
    (
        "Candida albicans 1",
        "MVHLTPEEKSAVTALWGKVNVDEVGGEALGRLLVVYPWTQRFFESFGDLSTPDAVMGNPKVKAHGKKVLGAFSDG",
    ),
    ("Mus musculus", "MVLSGEDKSNIKAAWGKIGGHGAEYGAEALERMFASFPTTKTYFPHFDVSHGSAQVKGHGKKVADALASAAGH"),
]


def _cli(*args, cwd, stdin=None):
    return subprocess.run(
        [*COMMAND, *map(str, args)],
        input=stdin,
        capture_output=True,
        text=True,
        env=child_env(),
        cwd=cwd,
        check=False,
    )


def _fasta(path: Path, records) -> Path:
    path.write_text("".join(f">{i}\n{s}\n" for i, s in records))
    return path


# -- one rule for which options apply to which mode and path ---------------------------------
def test_scoring_options_change_auto_or_are_refused_by_accurate():
    """Before: with mode='auto' choosing accurate, matrix= and the gap penalties were
    dropped (byte-identical output). Now giving one makes auto choose the fast mode, which
    scores with it (so the result changes and the reason names it); mode='accurate' refuses
    them naming the mode."""
    plain = bioaccel.msa(GLOBINS)
    assert plain.mode == "accurate"
    gappy = bioaccel.msa(GLOBINS, gap_open=1.0, gap_extend=0.1)
    assert gappy.mode == "fast" and "gap_open=" in gappy.mode_reason
    assert (
        gappy.sequences
        == bioaccel.msa(GLOBINS, mode="fast", gap_open=1.0, gap_extend=0.1).sequences
    )
    assert gappy.sequences != bioaccel.msa(GLOBINS, mode="fast").sequences  # it was used
    with pytest.raises(ValueError, match="matrix= does not apply to the accurate mode"):
        bioaccel.msa(GLOBINS, mode="accurate", matrix="BLOSUM62")
    with pytest.raises(ValueError, match="term_gap= does not apply to the accurate mode"):
        bioaccel.msa(GLOBINS, mode="accurate", term_gap=0.5)


def test_add_and_profile_refuse_what_they_do_not_use():
    ref = bioaccel.msa(GLOBINS[:3], mode="fast")
    new = [GLOBINS[3]]
    for kw, name in (
        ({"mode": "accurate"}, "mode="),
        ({"guide_tree": "upgma"}, "guide_tree="),
        ({"refine": 5}, "refine="),
        ({"backend": "cupy"}, "backend="),
    ):
        with pytest.raises(ValueError, match=f"{name}.* does not apply to adding sequences"):
            bioaccel.msa(add=new, to=ref, **kw)
        with pytest.raises(ValueError, match=f"{name}.* does not apply to aligning two alignments"):
            bioaccel.msa(profile=(ref, MultipleAlignment(["x"], ["MVLSPADK"])), **kw)
    assert len(bioaccel.msa(add=new, to=ref, mode="fast")) == 4  # add scores as fast does
    # format= reads the sequences of align and add; a profile's alignments are read as
    # their files say (before: format= was taken and ignored there)
    with pytest.raises(ValueError, match="format= applies to the sequences to align or add"):
        bioaccel.msa(profile=(ref, MultipleAlignment(["x"], ["MVLSPADK"])), format="fasta")
    with pytest.raises(ValueError, match="keep_length= applies to adding sequences"):
        bioaccel.msa(GLOBINS, keep_length=True)


def test_auto_says_why_it_chose():
    from bioaccel.msa_engine.engine import resolve_mode

    mode, why = resolve_mode("auto", [5825, 5553, 300, 300, 300, 300, 300])
    assert mode == "fast"
    assert why == (
        "chosen by auto: 7 sequences, but the largest pair, 5,825 x 5,553 cells, is over "
        "the 1.6e7-cell limit"
    )
    assert "over the accurate mode's limit of 200" in resolve_mode("auto", [50] * 201)[1]
    assert resolve_mode("auto", [50] * 200)[0] == "accurate"
    mode, why = resolve_mode("auto", [100] * 10)
    assert mode == "accurate" and why.startswith("chosen by auto: 10 sequences, 4.5e5")


def test_cli_refuses_options_naming_the_mode_and_logs_the_reason(tmp_path):
    fa = _fasta(tmp_path / "g.fa", GLOBINS)
    r = _cli("msa", fa, "-o", "o.fa", "--mode", "accurate", "--matrix", "BLOSUM62", cwd=tmp_path)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "--matrix does not apply to the accurate mode" in r.stderr
    assert not (tmp_path / "o.fa").exists()
    r = _cli("-v", "msa", fa, "-o", "o.fa", "--gap-open", "3", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "msa mode: fast (chosen by auto: 4 sequences, and --gap-open given" in r.stderr
    r = _cli("-v", "msa", fa, "-o", "o.fa", cwd=tmp_path)
    assert "msa mode: accurate (chosen by auto: 4 sequences," in r.stderr
    ref = tmp_path / "ref.fa"
    bioaccel.msa(GLOBINS[:3], mode="fast").write(ref)
    new = _fasta(tmp_path / "new.fa", [GLOBINS[3]])
    for extra, says in (
        (["--mode", "accurate"], "--mode accurate does not apply to adding sequences"),
        (["--guide-tree", "upgma"], "--guide-tree upgma does not apply to adding sequences"),
        (["--tree-out", "t.nwk"], "--tree-out writes the guide tree of aligning sequences"),
    ):
        r = _cli("msa", "--add", new, "--to", ref, "-o", "o2.fa", *extra, cwd=tmp_path)
        assert r.returncode == 2 and says in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert not (tmp_path / "o2.fa").exists() and not (tmp_path / "t.nwk").exists()
    r = _cli("msa", "--profile", ref, ref, "-o", "o3.fa", "--input-format", "fasta", cwd=tmp_path)
    assert r.returncode == 2 and "--input-format applies to the sequences" in r.stderr, r.stderr
    assert not (tmp_path / "o3.fa").exists()


# -- the alphabet of --add / --to / --profile ------------------------------------------------
def test_add_and_profile_refuse_another_alphabet(tmp_path):
    """Before: RNA/DNA rows added to a protein alignment, and a DNA alignment profiled
    against a protein one, were aligned (exit 0). Now the readers' rule refuses them in one
    line naming both sides and their alphabets."""
    prot = bioaccel.msa(GLOBINS, mode="fast")
    prot.write(tmp_path / "prot.fa")
    rna = read_alignment(DATA / "msx2_mRNA.aln")
    rows = [(rna.ids[k], rna.sequences[k].replace("-", "")[:300]) for k in range(3)]
    _fasta(tmp_path / "rna.fa", [(i, s.replace("T", "U")) for i, s in rows])
    with pytest.raises(
        AlphabetError,
        match=r"the alignment \(.*prot.fa\) read as protein but the sequences added \(.*rna.fa\) as dna",
    ):
        bioaccel.msa(add=tmp_path / "rna.fa", to=tmp_path / "prot.fa")
    with pytest.raises(AlphabetError, match="read as dna but the second alignment .* as protein"):
        bioaccel.msa(profile=(DATA / "msx2_mRNA.aln", tmp_path / "prot.fa"))
    r = _cli("msa", "--add", "rna.fa", "--to", "prot.fa", "-o", "o.fa", cwd=tmp_path)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "rna.fa" in r.stderr and "protein" in r.stderr and "dna" in r.stderr
    assert not (tmp_path / "o.fa").exists()
    # a short peptide-like stretch that cannot be told is read as the alignment's
    assert len(bioaccel.msa(add=[("p", "ACGT")], to=prot)) == 5


# -- side outputs through the one output-name rule -------------------------------------------
def test_side_outputs_follow_the_output_name_rule(tmp_path):
    fa = _fasta(tmp_path / "g.fa", GLOBINS)
    for extra, says in ((["--tree-out", "g.fa.out.fa"], "a Newick tree is not written as .fa"),):
        r = _cli("msa", fa, "-o", "o.fa", *extra, cwd=tmp_path)
        assert r.returncode == 2 and says in r.stderr, r.stderr
        assert not (tmp_path / "o.fa").exists()
    ref = tmp_path / "ref.fa"
    bioaccel.msa(GLOBINS[:3], mode="fast").write(ref)
    new = _fasta(tmp_path / "new.fa", [GLOBINS[3]])
    r = _cli(
        "msa",
        "--add",
        new,
        "--to",
        ref,
        "--keep-length",
        "--dropped-out",
        "d.csv",
        "-o",
        "o.fa",
        cwd=tmp_path,
    )
    assert r.returncode == 2 and "a table of dropped residues is not written as .csv" in r.stderr
    assert not (tmp_path / "o.fa").exists() and not (tmp_path / "d.csv").exists()
    aln = bioaccel.msa(GLOBINS)
    aln.write_guide_tree(tmp_path / "g.nwk")
    assert bioaccel.read_newick(tmp_path / "g.nwk").n_tips == 4
    with pytest.raises(ValueError, match="not written as .fa"):
        aln.write_guide_tree(tmp_path / "g.fa2.fa")
    added = bioaccel.msa(add=new, to=ref, keep_length=True)
    added.write_dropped(tmp_path / "d.tsv")
    assert (tmp_path / "d.tsv").read_text().startswith("id\tstart\tend\tafter_column\n")
    with pytest.raises(ValueError, match="no guide tree"):
        added.write_guide_tree(tmp_path / "t.nwk")
    with pytest.raises(ValueError, match="not written as .csv"):
        added.write_dropped(tmp_path / "d.csv")


def test_match_mismatch_scores_which_the_message_suggests_are_accepted(tmp_path):
    """Before: BLOSUM62 on DNA was refused with 'give ... MATCH,MISMATCH such as 2,-3', and
    `--matrix 2,-3` was then refused as an unknown matrix (Python's (2, -3) too). Now msa
    takes a match and a mismatch score, as `align` does: the same alignment as the
    equivalent matrix given whole."""
    from Bio.Align import substitution_matrices

    rng = np.random.default_rng(5)
    base = "".join(rng.choice(list("ACGT"), 120))
    recs = [(f"s{k}", "".join(c for c in base if rng.random() > 0.08)) for k in range(6)]
    fa = _fasta(tmp_path / "d.fa", recs)
    r = _cli("msa", fa, "-o", "b.fa", "--matrix", "BLOSUM62", cwd=tmp_path)
    assert r.returncode == 2 and "MATCH,MISMATCH such as 2,-3" in r.stderr
    r = _cli("msa", fa, "-o", "m.fa", "--matrix", "2,-3", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    whole = substitution_matrices.Array(
        "ACGT", dims=2, data=np.where(np.eye(4, dtype=bool), 2.0, -3.0)
    )
    want = bioaccel.msa(fa, matrix=whole).sequences
    assert read_alignment(tmp_path / "m.fa").sequences == want
    assert bioaccel.msa(fa, matrix=(2, -3)).sequences == want
    assert bioaccel.msa(fa, matrix=(2, -1)).sequences != want  # the scores are used
    for bad in ("3,5", (1, 1)):
        with pytest.raises(ValueError, match="match score above the mismatch"):
            bioaccel.msa(fa, matrix=bad)


def test_profile_with_one_alignment_names_the_missing_one(tmp_path):
    """Before: `--profile a.fa -o out.fa` read -o as the second alignment and then said
    "Missing option '-o'". Now it says --profile needs two alignments."""
    fa = _fasta(tmp_path / "a.fa", GLOBINS[:2])
    r = _cli("msa", "--profile", fa, "-o", "out.fa", cwd=tmp_path)
    assert r.returncode == 2 and "expected two alignments, A and B" in r.stderr
    assert "'-o' is an option" in r.stderr and not (tmp_path / "out.fa").exists()


# -- whole header lines ------------------------------------------------------------------------
def test_whole_fasta_headers_are_kept_and_told_apart(tmp_path):
    """Before: '>Candida albicans 1' came out as '>Candida', and '>Homo sapiens' with
    '>Homo neanderthalensis' was refused as a duplicate id. Now whole header lines are kept
    (as MAFFT, MUSCLE and Clustal Omega do) and only a repeated whole line is refused."""
    fa = _fasta(tmp_path / "g.fa", GLOBINS)
    r = _cli("msa", fa, "-o", "o.fa", "--tree-out", "t.nwk", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    text = (tmp_path / "o.fa").read_text()
    headers = [ln[1:] for ln in text.splitlines() if ln.startswith(">")]
    assert headers == [i for i, _ in GLOBINS]
    tips = sorted(bioaccel.read_newick(tmp_path / "t.nwk").labels)
    assert tips == sorted(i for i, _ in GLOBINS)
    back = read_alignment(tmp_path / "o.fa")
    assert back.headers == headers and back.ids[:2] == ["Homo", "Homo"]
    # the tree written is taken back as a guide tree (tips named by whole headers)
    r = _cli("msa", fa, "-o", "o2.fa", "--guide-tree", "t.nwk", "--mode", "fast", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    # adding keeps both sides' headers
    out = bioaccel.msa(add=[("Pan troglodytes x", GLOBINS[3][1])], to=back)
    assert out.headers[-1] == "Pan troglodytes x" and out.headers[:4] == headers
    # formats that hold only ids refuse rows they could not tell apart
    with pytest.raises(ValueError, match="keeps only ids"):
        back.to_text("clustal")
    _fasta(tmp_path / "dup.fa", [GLOBINS[0], GLOBINS[0]])
    with pytest.raises(DuplicateIdError, match="duplicate header 'Homo sapiens'"):
        bioaccel.msa(tmp_path / "dup.fa")


def test_header_lines_are_kept_byte_for_byte(tmp_path):
    """Before: runs of spaces and tabs in a header line were folded to one space and trailing
    spaces dropped (bali-phy's Globins/few.fasta has '>myo-polychaete  AAC47259'), so
    '>Homo  sapiens' and '>Homo sapiens' were refused as one duplicate header. Now header
    lines are kept as written, in every mode, in --add/--to, --profile and read_alignment."""
    seqs = [s for _, s in GLOBINS]
    heads = ["Homo  sapiens", "Homo sapiens", "Pan\tt  x", "Gor "]
    fa = _fasta(tmp_path / "ws.fa", list(zip(heads, seqs)))
    for mode in ("fast", "accurate"):
        r = _cli("msa", fa, "-o", f"{mode}.fa", "--mode", mode, cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        text = (tmp_path / f"{mode}.fa").read_text()
        assert [ln[1:] for ln in text.split("\n") if ln.startswith(">")] == heads
        back = read_alignment(tmp_path / f"{mode}.fa")
        assert back.headers == heads and back.ids == ["Homo", "Homo", "Pan", "Gor"]
        assert back.descriptions == ["sapiens", "sapiens", "t  x", ""]
    # Python records keep the header as given
    out = bioaccel.msa(list(zip(heads, seqs)), mode="fast")
    assert out.headers == heads
    # adding to the alignment keeps both sides' header lines
    added = bioaccel.msa(add=[("Mus\t musculus ", seqs[3])], to=tmp_path / "fast.fa")
    assert added.headers == [*heads, "Mus\t musculus "]
    assert added.to_text("fasta").split("\n")[8] == ">Mus\t musculus "
    # a header line in both is named with its spaces, on one line
    r = _cli("msa", "--add", fa, "--to", "fast.fa", "-o", "a.fa", cwd=tmp_path)
    assert r.returncode == 2 and "'Homo  sapiens' is in both the alignment" in r.stderr
    assert r.stderr.count("\n") == 1 and not (tmp_path / "a.fa").exists()
    # two alignments as profiles keep both sides' header lines
    _fasta(tmp_path / "b.fa", [("Homo   erectus x", seqs[0]), ("Mus musculus", seqs[3])])
    r = _cli("msa", "b.fa", "-o", "b_aln.fa", "--mode", "fast", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    both = bioaccel.msa(profile=(tmp_path / "fast.fa", tmp_path / "b_aln.fa"))
    assert both.headers == [*heads, "Homo   erectus x", "Mus musculus"]
    # a header line that repeats exactly is still refused
    _fasta(tmp_path / "dup.fa", [(heads[0], seqs[0]), (heads[0], seqs[1])])
    with pytest.raises(DuplicateIdError, match="duplicate header 'Homo  sapiens'"):
        bioaccel.msa(tmp_path / "dup.fa")


def test_stockholm_keeps_descriptions_as_gs_de_lines():
    """Before: Stockholm output dropped the descriptions. Now each is a '#=GS id DE' line,
    which Biopython reads back as the record's description."""
    import io

    from Bio import AlignIO

    recs = [
        ("Candida albicans 1", GLOBINS[2][1]),
        ("Mus musculus", GLOBINS[3][1]),
        ("Pan", GLOBINS[0][1]),
    ]
    aln = bioaccel.msa(recs, mode="fast")
    back = AlignIO.read(io.StringIO(aln.to_text("stockholm")), "stockholm")
    assert [(r.id, r.description) for r in back] == [
        ("Candida", "albicans 1"),
        ("Mus", "musculus"),
        ("Pan", "Pan"),  # Biopython's description without a DE line is the id
    ]


def test_whole_fasta_headers_are_kept_from_stdin(tmp_path):
    """Before: sequences piped to stdin (INPUT or --add -) lost their descriptions
    ('>Candida albicans 1' came out as '>Candida') and two headers sharing their first word
    were refused as duplicates. stdin is now read as a file is."""
    text = "".join(f">{i}\n{s}\n" for i, s in GLOBINS)
    r = _cli("msa", "-", "-o", "-", cwd=tmp_path, stdin=text)
    assert r.returncode == 0, r.stderr
    assert [ln[1:] for ln in r.stdout.splitlines() if ln.startswith(">")] == [i for i, _ in GLOBINS]
    # the same bytes as from the file
    fa = _fasta(tmp_path / "g.fa", GLOBINS)
    assert _cli("msa", fa, "-o", "f.fa", cwd=tmp_path).returncode == 0
    assert r.stdout == (tmp_path / "f.fa").read_text()
    # --add - keeps the added rows' headers, and --input-format applies to them
    (tmp_path / "to.fa").write_text(r.stdout)
    added = _cli(
        *("msa", "--add", "-", "--to", "to.fa", "-o", "a.fa", "--input-format", "fasta"),
        cwd=tmp_path,
        stdin=">Pan troglodytes x\n" + GLOBINS[3][1] + "\n",
    )
    assert added.returncode == 0, added.stderr
    headers = [ln[1:] for ln in (tmp_path / "a.fa").read_text().splitlines() if ln[:1] == ">"]
    assert headers == [i for i, _ in GLOBINS] + ["Pan troglodytes x"]
    # an empty stdin is refused naming it
    empty = _cli("msa", "-", "-o", "e.fa", cwd=tmp_path, stdin="")
    assert empty.returncode == 2 and "<stdin>: file is empty" in empty.stderr
    assert not (tmp_path / "e.fa").exists()


# -- Ctrl-C ------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["fast", "accurate"])
def test_ctrl_c_stops_the_engine_within_a_second(tmp_path, mode):
    """Before: Ctrl-C ended `msa` 5-15 s later with exit 1 and 'Aborted!'. The engine now
    checks a stop flag (set by a C SIGINT handler while it runs without the GIL) between
    merges, posterior pairs and refinement iterations: exit 130 within a second, no output."""
    import numpy as np

    from .msa_helpers import random_family

    n, length = (1500, 400) if mode == "fast" else (120, 400)
    seqs = random_family(np.random.default_rng(3), n, length, mutate=0.4)
    _fasta(tmp_path / "big.fa", [(f"s{k}", s) for k, s in enumerate(seqs)])
    proc = subprocess.Popen(
        [
            *COMMAND,
            "msa",
            "big.fa",
            "-o",
            "out.fa",
            "-t",
            "2",
            "--mode",
            mode,
            "--refine-iterations",
            "100000",
        ],
        cwd=tmp_path,
        env=child_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(4.0)  # past start-up, inside the engine
    assert proc.poll() is None, proc.communicate()
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    took = time.monotonic() - sent
    assert proc.returncode == 130, err
    assert took < 1.5, took
    assert "Aborted" not in err and "interrupted" in err
    assert not (tmp_path / "out.fa").exists()
    assert not [p for p in os.listdir(tmp_path) if p not in ("big.fa",)]
