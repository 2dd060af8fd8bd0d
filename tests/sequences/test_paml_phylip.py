"""PAML's PHYLIP dialect (sequential; a name on its own line or followed by two spaces; a
sequence over several lines): read, or refused in one line naming file, line and what was
expected; never Python's own words ("not enough values to unpack")."""

from __future__ import annotations

import re

import pytest

import bioaccel
from bioaccel.errors import SequenceFormatError

# the layout of PAML's examples (stewart.aa, brown.nuc): a header "n L", names alone on their
# line (or before two spaces), sequences wrapped, blank lines between records
PAML = """   3   24

Human
KIFERCELAR TLKRLGMDGY
RGIS

Goat-cow
KIFERCELAR TLKKLGLDGY KGVS

Rabbit_long_name_of_30_chars  KIFERCELARTLKRLGMDGYRGIS
"""
WANT = {
    "Human": "KIFERCELARTLKRLGMDGYRGIS",
    "Goat-cow": "KIFERCELARTLKKLGLDGYKGVS",
    "Rabbit_long_name_of_30_chars": "KIFERCELARTLKRLGMDGYRGIS",
}


def test_paml_sequential_phylip_is_read(tmp_path):
    # once: "not valid PHYLIP: not enough values to unpack (expected 2, got 1)"
    path = tmp_path / "stewart.aa"
    path.write_text(PAML)
    batch = bioaccel.read_sequences(path)
    assert batch.ids == list(WANT)
    assert [batch.sequence(i) for i in range(len(batch))] == list(WANT.values())


@pytest.mark.parametrize(
    "text, line, said",
    [
        (
            PAML.replace("RGIS\n", "RGI\n"),
            7,
            "record 'Human' has 23 of the 24 sites the header gives, and line 7's 8 letters "
            "would make 31",
        ),
        (
            PAML.replace("KGVS", "KGVSX"),
            8,
            "record 'Goat-cow' has 0 of the 24 sites the header gives, and line 8's 25 letters "
            "would make 25",
        ),
        (PAML.replace("   3   24", "   4   24"), 10, "the file ends after 3 of the 4 records"),
        (PAML.replace("   3   24", "   3   24  I"), 1, "PAML's interleaved layout"),
        (PAML.replace("KIFERCELAR TLKKLG", "KIFERC.LAR TLKKLG"), 8, "'.' (in PAML: the first"),
    ],
)
def test_a_broken_paml_file_names_the_file_line_and_what_was_expected(tmp_path, text, line, said):
    path = tmp_path / "x.phy"
    path.write_text(text)
    with pytest.raises(SequenceFormatError) as err:
        bioaccel.read_sequences(path)
    message = str(err.value)
    assert message.startswith(f"{path}, line {line}: "), message
    assert said in message and "\n" not in message, message
    assert not re.search(r"unpack|expected \d+, got \d+", message), message
