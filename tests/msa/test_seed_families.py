"""benchmarks/seed_families.py: how a seed alignment becomes the scorer's reference, and which
families are skipped (no packages needed)."""

from __future__ import annotations

from benchmarks.seed_families import _checked, reference_rows


def test_reference_rows_gaps_inserts_and_rf():
    rows = ["AC.g-U", "A-.GCU", "ACa.CU"]
    rf = "xx..xx"
    # '.', '-' become '-'; RF insert columns and lower-case residues are lower case (not core);
    # the all-gap column (none here) would be dropped
    assert reference_rows(rows, rf) == ["AC-g-U", "A--gCU", "ACa-CU"]
    assert reference_rows(rows, None) == ["AC-g-U", "A--GCU", "ACa-CU"]
    assert reference_rows(["A.C", "A-C"], None) == ["AC", "AC"]


def test_checked_skips_and_converts_rna():
    skipped = []
    assert (
        _checked("two", "Rfam seed", "x", ["a", "b"], ["ACGU", "AC-U"], None, 200, skipped) is None
    )
    assert (
        _checked("dup", "Pfam seed", "x", ["a", "a", "b"], ["AC"] * 3, None, 200, skipped) is None
    )
    assert (
        _checked("odd", "Miklos-2008", "x", ["a", "b", "c"], ["AC", "A", "AC"], None, 200, skipped)
        is None
    )
    assert _checked("big", "Pfam seed", "x", list("abcd"), ["AC"] * 4, None, 3, skipped) is None
    assert [why.split(" (")[0].split(" >")[0] for _, why in skipped] == [
        "2 rows",
        "duplicate ids",
        "rows of unequal length",
        "4 rows",
    ]
    fam = _checked(
        "rna", "Rfam seed", "x", ["a", "b", "c"], ["ACGU", "AC-U", "ACGU"], None, 200, []
    )
    assert fam.ref == ["ACGT", "AC-T", "ACGT"] and fam.seqs[1] == "ACT"
