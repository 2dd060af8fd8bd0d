"""The seeded family simulator (benchmarks/family_sim.py): its true alignment and tree are
consistent with its sequences, it is reproducible, and its model is BLOSUM62's."""

from __future__ import annotations

import io

import numpy as np
import pytest

from benchmarks.family_sim import PROTEIN, main, protein_model, read_fasta, simulate_family


def _grid(rows):
    return np.array([np.frombuffer(r.encode(), dtype=np.uint8) for r in rows])


@pytest.mark.parametrize("alphabet", ["protein", "dna"])
def test_true_alignment_holds_the_sequences(alphabet):
    fam = simulate_family(60, 80, alphabet, seed=3, indel_rate=0.05)
    rows = fam.alignment
    assert len(rows) == len(fam.ids) == len(fam.sequences) == 60
    assert {len(r) for r in rows} == {fam.n_columns}
    assert [r.replace("-", "") for r in rows] == fam.sequences
    grid = _grid(rows)
    assert (grid != ord("-")).any(axis=0).all(), "an all-gap column"
    assert (grid == ord("-")).any(), "indels were asked for"
    letters = set("".join(fam.sequences))
    assert letters <= set(PROTEIN if alphabet == "protein" else "ACGT")
    for seq, cols in zip(fam.sequences, fam.columns):
        assert len(cols) == len(seq) and (np.diff(cols) > 0).all()


def test_no_indels_means_no_gaps():
    fam = simulate_family(30, 50, seed=1, indel_rate=0.0)
    assert fam.n_columns == 50 and all(len(s) == 50 for s in fam.sequences)


def test_same_seed_same_family():
    a, b = simulate_family(40, 60, seed=7), simulate_family(40, 60, seed=7)
    assert (a.ids, a.sequences, a.alignment, a.newick) == (
        b.ids,
        b.sequences,
        b.alignment,
        b.newick,
    )
    c = simulate_family(40, 60, seed=8)
    assert c.sequences != a.sequences


def test_newick_has_every_id_once():
    from Bio import Phylo

    fam = simulate_family(50, 40, seed=2)
    tree = Phylo.read(io.StringIO(fam.newick), "newick")
    names = [t.name for t in tree.get_terminals()]
    assert sorted(names) == sorted(fam.ids) and len(set(names)) == 50
    depths = tree.depths()
    mean_depth = np.mean([depths[t] for t in tree.get_terminals()])
    assert 0.5 < mean_depth < 1.5  # depth=1.0 is the mean root-to-tip length


def _mean_identity(fam):
    grid = _grid(fam.alignment)
    ident = []
    for i in range(0, len(grid) - 1, 2):
        both = (grid[i] != ord("-")) & (grid[i + 1] != ord("-"))
        ident.append((grid[i][both] == grid[i + 1][both]).mean())
    return float(np.mean(ident))


def test_divergence_grows_with_depth():
    ids = [_mean_identity(simulate_family(80, 200, seed=4, depth=d)) for d in (0.1, 0.5, 1.0, 2.0)]
    assert ids[0] > ids[1] > ids[2] > ids[3]
    assert ids[0] > 0.8 and ids[3] < 0.3


def test_protein_model_is_blosum62():
    from Bio.Align import substitution_matrices

    p, P = protein_model()
    assert np.allclose(P.sum(axis=1), 1) and np.allclose(p @ P, p)  # stationary background
    q = p[:, None] * P
    assert np.allclose(q, q.T)  # reversible
    blosum = substitution_matrices.load("BLOSUM62")
    s = np.array([[blosum[a][b] for b in PROTEIN] for a in PROTEIN])
    shift = 2 * np.log2(q / np.outer(p, p)) - s  # its target frequencies, up to normalisation
    assert np.allclose(shift, shift.mean()) and abs(shift.mean()) < 0.2


def test_cli_writes_family_truth_and_tree(tmp_path):
    main(["25", "--length", "40", "--seed", "5", "--out", str(tmp_path)])
    ids, seqs = read_fasta(tmp_path / "family.fa")
    tids, rows = read_fasta(tmp_path / "true.fa")
    fam = simulate_family(25, 40, seed=5)
    assert (ids, seqs) == (fam.ids, fam.sequences) and (tids, rows) == (fam.ids, fam.alignment)
    assert (tmp_path / "true.nwk").read_text().strip() == fam.newick
