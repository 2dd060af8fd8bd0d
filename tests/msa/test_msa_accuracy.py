"""The large-family MSA scorer (benchmarks/msa_accuracy.py) against hand counts and against the
shared oracle scorer (../shared/msa/msa_score.py: its q / tc_q when every column is core)."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.family_sim import simulate_family, write_fasta
from benchmarks.msa_accuracy import load_msa_score, shared_msa_dir, sp_tc, sp_tc_family
from tests.datasets import unavailable


def test_hand_counted():
    # true: A, B, C each aligned in a column of 2 -> 3 pairs, 3 columns
    assert sp_tc(["ABC", "ABC"], ["ABC", "ABC"])["sp"] == 1.0
    got = sp_tc(["AB-C", "A-BC"], ["ABC", "ABC"])
    assert got["sp"] == pytest.approx(2 / 3) and got["tc"] == pytest.approx(2 / 3)
    got = sp_tc(["ABC-", "-ABC"], ["ABC", "ABC"])
    assert got["sp"] == 0.0 and got["tc"] == 0.0
    # 3 rows: column 1 holds B, B, - ; the test splits one B off: 0 of its 1 pair, column lost
    got = sp_tc(["AB-C", "A-BC", "A--C"], ["ABC", "ABC", "A-C"])
    assert got["true_pairs"] == 3 + 1 + 3 and got["sp"] == pytest.approx(6 / 7)
    assert got["tc"] == pytest.approx(2 / 3)


def test_bad_rows_are_named():
    with pytest.raises(ValueError, match="seqB"):
        sp_tc(["AB-", "A-C"], ["AB", "AB"], ids=["seqA", "seqB"])
    with pytest.raises(ValueError, match="row 1 is 2 columns"):
        sp_tc(["AB-", "AB"], ["AB", "AB"])


def _left_packed(rows):
    width = len(rows[0])
    return [r.replace("-", "").ljust(width, "-") for r in rows]


def _random_gaps(rows, rng):
    width = len(rows[0]) + 5
    out = []
    for r in rows:
        res = r.replace("-", "")
        keep = np.sort(rng.choice(width, len(res), replace=False))
        row = np.full(width, "-")
        row[keep] = list(res)
        out.append("".join(row))
    return out


def _shift_blocks(rows, rng):
    """The truth with a few rows' residues slid one column across a gap: partly right."""
    out = list(rows)
    for i in rng.choice(len(rows), max(1, len(rows) // 3), replace=False):
        r = out[i]
        j = r.find("-")
        if 0 < j:
            out[i] = r[: j - 1] + "-" + r[j - 1] + r[j + 1 :]
    return out


def test_agrees_with_the_shared_oracle(tmp_path):
    shared = shared_msa_dir()
    if shared is None:
        unavailable("../shared/msa/msa_score.py not found (set BIOACCEL_SHARED_MSA)")
    oracle = load_msa_score(shared)
    rng = np.random.default_rng(0)
    checked = 0
    for seed, n in ((1, 6), (2, 15), (3, 30)):
        fam = simulate_family(n, 40, seed=seed, indel_rate=0.05)
        write_fasta(tmp_path / "ref.fa", fam.ids, fam.alignment)  # all upper case: all core
        for test in (
            fam.alignment,
            _left_packed(fam.alignment),
            _random_gaps(fam.alignment, rng),
            _shift_blocks(fam.alignment, rng),
        ):
            write_fasta(tmp_path / "test.fa", fam.ids, test)
            want = oracle.score(str(tmp_path / "ref.fa"), str(tmp_path / "test.fa"))
            got = sp_tc(test, fam.alignment, fam.ids)
            assert got["sp"] == pytest.approx(want["q"]) and got["tc"] == pytest.approx(
                want["tc_q"]
            )
            checked += 0 < got["sp"] < 1
    assert checked >= 6  # the cases are not all trivially 0 or 1


def test_family_columns_score_like_rendered_rows():
    fam = simulate_family(200, 60, seed=9, indel_rate=0.05)
    test = _left_packed(fam.alignment)
    got = sp_tc_family(dict(zip(fam.ids, test)), fam)
    assert got == sp_tc(test, fam.alignment)
    assert sp_tc_family(dict(zip(fam.ids, fam.alignment)), fam)["sp"] == 1.0
    with pytest.raises(ValueError, match="missing"):
        sp_tc_family(dict(zip(fam.ids[1:], test[1:])), fam)


def test_row_chunks_do_not_change_the_score(monkeypatch):
    from benchmarks import msa_accuracy

    fam = simulate_family(50, 60, seed=11, indel_rate=0.05)
    test = _left_packed(fam.alignment)
    whole = sp_tc(test, fam.alignment)
    monkeypatch.setattr(msa_accuracy, "_CHUNK", 7)
    assert sp_tc(test, fam.alignment) == whole and 0 < whole["sp"] < 1
