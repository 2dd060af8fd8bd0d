"""Seeded protein/DNA families with a known answer: the true alignment and the true tree.

    python benchmarks/family_sim.py N [--length 250] [--alphabet protein|dna] [--seed 1]
                                     [--depth 1.0] [--indel-rate 0.01] --out DIR

writes DIR/family.fa (unaligned input, ids in a shuffled order unrelated to the tree), DIR/true.fa
(the true alignment) and DIR/true.nwk (the true tree).

Model
-----
* Tree: a continuous-time Yule (pure-birth) tree of N leaves, scaled so the root-to-tip height is
  ``depth`` expected substitution events per site; each branch is then multiplied by a log-normal
  rate factor (``rate_sd``, a relaxed clock), so depth is the mean, not exact.
* Root: ``length`` residues drawn from the background frequencies.
* Substitutions: along a branch of length t, each site receives Poisson(t) events. Protein: an event
  replaces x by y with P(y|x) = q_xy / sum_y q_xy, where q_xy = p_x p_y 2^(S_xy/2) are BLOSUM62's
  target frequencies (S from Biopython's BLOSUM62, which is in half bits; p solves
  sum_y p_y 2^(S_xy/2) = 1, i.e. the background the matrix implies); an event keeps the residue with
  probability ~1/3. DNA: K80-like; an event is a transition with probability kappa / (kappa + 2),
  each transversion 1 / (kappa + 2).
* Insertions and deletions: Poisson(indel_rate * t * (len + 1)) events per branch, half insertions
  and half deletions, geometric lengths of mean ``indel_mean``. An insertion places fresh residues
  (drawn from the background) at a uniform slot; a deletion removes a run starting at a uniform
  position (cut short by the sequence end). A deletion that would leave fewer than ``length // 2``
  residues is not applied (every member stays a real family member).
* True alignment: every residue carries the id of its homologous column. An insertion after column c
  puts its fresh column ids right after c in one global linked order, which agrees with the order
  of every lineage; at the end the column ids present in some leaf are ranked in that order (so
  there is no all-gap column). Residues inserted independently in different lineages are never
  homologous, so the true alignment keeps them in separate columns.

The number of true columns grows with the total tree length (about N * depth / ln N) times
indel_rate; ``Family.columns`` holds the true alignment compactly (each residue's column), and
``Family.alignment`` renders it as gapped strings on request.

Speed: substitutions are drawn per branch with NumPy (events are few per branch), indels are few;
100,000 x 250 residues take a few seconds.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bioaccel._core import atomic_output  # noqa: E402

PROTEIN = "ARNDCQEGHILKMFPSTWYV"
DNA = "ACGT"


@dataclass
class Family:
    """A simulated family: unaligned input, the true alignment (compact) and the true tree."""

    ids: list[str]
    sequences: list[str]
    columns: list[np.ndarray]  # columns[i][j]: true alignment column of residue j of sequence i
    n_columns: int
    newick: str
    alphabet: str
    _rows: list[str] | None = field(default=None, repr=False)

    def iter_alignment(self) -> Iterator[str]:
        """The true alignment rows ('-' for gaps, all ``n_columns`` long), one at a time."""
        gap = np.full(self.n_columns, ord("-"), dtype=np.uint8)
        for seq, cols in zip(self.sequences, self.columns):
            row = gap.copy()
            row[cols] = np.frombuffer(seq.encode(), dtype=np.uint8)
            yield row.tobytes().decode()

    @property
    def alignment(self) -> list[str]:
        """The true alignment rows in ``ids`` order (rendered once, on first use)."""
        if self._rows is None:
            self._rows = list(self.iter_alignment())
        return self._rows


# ---------------------------------------------------------------------------------------- models


def protein_model() -> tuple[np.ndarray, np.ndarray]:
    """(background p, event matrix P[x, y]) from BLOSUM62's target frequencies."""
    from Bio.Align import substitution_matrices

    m = substitution_matrices.load("BLOSUM62")
    score = np.array([[m[a][b] for b in PROTEIN] for a in PROTEIN], dtype=float)
    odds = 2.0 ** (score / 2.0)
    p = np.linalg.solve(odds, np.ones(len(PROTEIN)))
    p /= p.sum()
    q = p[:, None] * p[None, :] * odds
    q /= q.sum()
    return q.sum(axis=1), q / q.sum(axis=1, keepdims=True)


def dna_model(kappa: float) -> tuple[np.ndarray, np.ndarray]:
    """(uniform background, K80-like event matrix: transitions A<->G, C<->T weighted kappa)."""
    ev = np.full((4, 4), 1.0)
    np.fill_diagonal(ev, 0.0)
    for a, b in ((0, 2), (1, 3)):
        ev[a, b] = ev[b, a] = kappa
    return np.full(4, 0.25), ev / ev.sum(axis=1, keepdims=True)


class _Powers:
    """Cumulative rows of P^k, k = 1, 2, ..., extended on demand (exact for any event count)."""

    def __init__(self, P: np.ndarray):
        self.P = P
        self.mats = [P]
        self.cum = self._cum([P])

    @staticmethod
    def _cum(mats):
        c = np.cumsum(np.stack(mats), axis=2)
        c[:, :, -1] = 1.0
        return c

    def table(self, kmax: int) -> np.ndarray:
        if kmax > len(self.mats):
            while len(self.mats) < kmax:
                self.mats.append(self.mats[-1] @ self.P)
            self.cum = self._cum(self.mats)
        return self.cum


# ------------------------------------------------------------------------------------------ tree


def yule_tree(n: int, rng: np.random.Generator, depth: float, rate_sd: float):
    """(children lists, branch lengths, leaf node ids); node 0 is the root."""
    children: list[list[int]] = [[]]
    split = [0.0]
    active = [0]
    t = 0.0
    waits = rng.exponential(1.0, n) / np.arange(1, n + 1)
    picks = rng.random(n)
    for k in range(1, n):
        t += waits[k - 1]
        i = int(picks[k] * k)
        node = active[i]
        split[node] = t
        a, b = len(children), len(children) + 1
        children[node] = [a, b]
        children.extend(([], []))
        split.extend((0.0, 0.0))
        active[i] = a
        active.append(b)
    t_end = t + waits[n - 1]
    end = np.array(split)
    end[active] = t_end
    parent = np.zeros(len(children), dtype=np.int64)
    for v, ch in enumerate(children):
        parent[ch] = v
    start = end[parent]
    height = t_end - end[0]
    lengths = (end - start) * (depth / height if height > 0 else 0.0)
    if rate_sd > 0:
        lengths *= rng.lognormal(-(rate_sd**2) / 2, rate_sd, len(lengths))
    lengths[0] = 0.0
    return children, lengths, active


def newick(children, lengths, labels: dict[int, str]) -> str:
    """Newick text of the tree (iterative: no recursion limit)."""
    out: list[str] = []
    stack: list[tuple[int, int]] = [(0, 0)]
    while stack:
        v, state = stack.pop()
        ch = children[v]
        if not ch:
            out.append(labels[v])
        elif state < len(ch):
            out.append("(" if state == 0 else ",")
            stack.append((v, state + 1))
            stack.append((ch[state], 0))
            continue
        else:
            out.append(")")
        if v != 0:
            out.append(f":{lengths[v]:.6g}")
    return "".join(out) + ";"


# ------------------------------------------------------------------------------------ simulation


def simulate_family(
    n: int,
    length: int = 250,
    alphabet: str = "protein",
    seed: int = 0,
    *,
    depth: float = 1.0,
    indel_rate: float = 0.01,
    indel_mean: float = 2.5,
    rate_sd: float = 0.3,
    kappa: float = 4.0,
) -> Family:
    """Simulate ``n`` sequences (root ``length`` residues) down a random tree; see the module text.

    ``depth``: root-to-tip substitution events per site (mean). ``indel_rate``: indel events per
    site per unit branch length (half insertions, half deletions), geometric lengths of mean
    ``indel_mean``.
    """
    if n < 1 or length < 1:
        raise ValueError(
            f"simulate_family: need n >= 1 and length >= 1, got n={n}, length={length}"
        )
    if alphabet not in ("protein", "dna"):
        raise ValueError(f"simulate_family: alphabet must be 'protein' or 'dna', got {alphabet!r}")
    if depth < 0 or indel_rate < 0 or indel_mean < 1:
        raise ValueError(
            f"simulate_family: need depth >= 0, indel_rate >= 0, indel_mean >= 1; got "
            f"depth={depth}, indel_rate={indel_rate}, indel_mean={indel_mean}"
        )
    letters_str = PROTEIN if alphabet == "protein" else DNA
    background, P = protein_model() if alphabet == "protein" else dna_model(kappa)
    powers = _Powers(P)
    rng = np.random.default_rng(seed)
    children, lengths, leaves = yule_tree(n, rng, depth, rate_sd)

    bg_cum = np.cumsum(background)
    bg_cum[-1] = 1.0

    def draw(k: int) -> np.ndarray:
        return np.searchsorted(bg_cum, rng.random(k), side="right").astype(np.uint8)

    # global column order: a linked list over column ids; id 0 is the head sentinel
    nxt = list(range(1, length + 1)) + [-1]
    root = (np.arange(1, length + 1, dtype=np.int32), draw(length))
    min_len = max(1, length // 2)
    p_geom = 1.0 / indel_mean

    def evolve(cols: np.ndarray, res: np.ndarray, t: float):
        k = rng.poisson(indel_rate * t * (len(cols) + 1)) if indel_rate > 0 else 0
        own = False  # res is a new array (not the parent's)
        for _ in range(k):
            size = int(rng.geometric(p_geom))
            if rng.random() < 0.5:  # insertion after lineage position j (-1: at the start)
                j = int(rng.integers(-1, len(cols)))
                anchor = int(cols[j]) if j >= 0 else 0
                first = len(nxt)
                new = np.arange(first, first + size, dtype=np.int32)
                nxt.extend(range(first + 1, first + size + 1))
                nxt[-1] = nxt[anchor]
                nxt[anchor] = first
                cols = np.concatenate((cols[: j + 1], new, cols[j + 1 :]))
                res = np.concatenate((res[: j + 1], draw(size), res[j + 1 :]))
                own = True
            else:
                j = int(rng.integers(0, len(cols)))
                stop = min(len(cols), j + size)
                if len(cols) - (stop - j) >= min_len:
                    cols = np.concatenate((cols[:j], cols[stop:]))
                    res = np.concatenate((res[:j], res[stop:]))
                    own = True
        m = rng.poisson(t * len(res))
        if m:
            hits = np.bincount(rng.integers(0, len(res), m), minlength=len(res))
            sites = np.flatnonzero(hits)
            counts = hits[sites]
            cum = powers.table(int(hits.max()))[counts - 1, res[sites]]
            res = res if own else res.copy()
            res[sites] = (rng.random(len(sites))[:, None] > cum).sum(axis=1)
        return cols, res

    state: dict[int, tuple[np.ndarray, np.ndarray]] = {0: root}
    pending = [len(c) for c in children]
    parent_of = {c: v for v, ch in enumerate(children) for c in ch}
    final: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    stack = list(reversed(children[0])) if children[0] else []
    if not children[0]:
        final[0] = root
    while stack:
        v = stack.pop()
        p = parent_of[v]
        cols, res = evolve(*state[p], float(lengths[v]))
        pending[p] -= 1
        if pending[p] == 0:
            del state[p]
        if children[v]:
            state[v] = (cols, res)
            stack.extend(reversed(children[v]))
        else:
            final[v] = (cols, res)

    # rank the column ids present in some leaf by the global order
    order = np.empty(len(nxt) - 1, dtype=np.int64)
    c, i = nxt[0], 0
    while c != -1:
        order[i] = c
        c, i = nxt[c], i + 1
    present = np.zeros(len(nxt), dtype=bool)
    for cols, _ in final.values():
        present[cols] = True
    kept = order[present[order]]
    rank = np.full(len(nxt), -1, dtype=np.int32)
    rank[kept] = np.arange(len(kept), dtype=np.int32)

    perm = rng.permutation(n)
    width = len(str(n - 1))
    labels = {leaf: f"s{int(perm[j]):0{width}d}" for j, leaf in enumerate(leaves)}
    by_index: list = [None] * n
    for j, leaf in enumerate(leaves):
        by_index[perm[j]] = leaf
    letters = np.frombuffer(letters_str.encode(), dtype=np.uint8)
    ids, seqs, columns = [], [], []
    for leaf in by_index:
        cols, res = final[leaf]
        ids.append(labels[leaf])
        seqs.append(letters[res].tobytes().decode())
        columns.append(rank[cols])
    return Family(ids, seqs, columns, int(len(kept)), newick(children, lengths, labels), alphabet)


# ----------------------------------------------------------------------------------------- FASTA


def write_fasta(path, ids: Iterable[str], seqs: Iterable[str]) -> None:
    """Write records (one line per sequence) atomically."""
    with atomic_output(path) as fh:
        for name, seq in zip(ids, seqs):
            fh.write(f">{name}\n{seq}\n")


def read_fasta(path) -> tuple[list[str], list[str]]:
    """(ids, sequences) of a FASTA file in file order; ids are the first word of each header."""
    ids: list[str] = []
    chunks: list[list[str]] = []
    with open(path) as fh:
        for lineno, line in enumerate(fh, 1):
            line = line.strip()
            if line.startswith(">"):
                ids.append(line[1:].split()[0] if len(line) > 1 else "")
                chunks.append([])
            elif line:
                if not chunks:
                    raise ValueError(f"{path}:{lineno}: sequence text before the first '>' header")
                chunks[-1].append(line)
    return ids, ["".join(c) for c in chunks]


def write_family(family: Family, out_dir) -> dict[str, Path]:
    """DIR/family.fa (input), DIR/true.fa (true alignment), DIR/true.nwk (true tree)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"family": out / "family.fa", "true": out / "true.fa", "tree": out / "true.nwk"}
    write_fasta(paths["family"], family.ids, family.sequences)
    write_fasta(paths["true"], family.ids, family.iter_alignment())
    with atomic_output(paths["tree"]) as fh:
        fh.write(family.newick + "\n")
    return paths


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("n", type=int)
    ap.add_argument("--length", type=int, default=250)
    ap.add_argument("--alphabet", choices=("protein", "dna"), default="protein")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--depth", type=float, default=1.0)
    ap.add_argument("--indel-rate", type=float, default=0.01)
    ap.add_argument("--indel-mean", type=float, default=2.5)
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    fam = simulate_family(
        a.n,
        a.length,
        a.alphabet,
        a.seed,
        depth=a.depth,
        indel_rate=a.indel_rate,
        indel_mean=a.indel_mean,
    )
    paths = write_family(fam, a.out)
    lens = [len(s) for s in fam.sequences]
    print(
        f"{a.n} sequences, lengths {min(lens)}-{max(lens)} (mean {sum(lens) / len(lens):.0f}), "
        f"{fam.n_columns} true columns -> {', '.join(str(p) for p in paths.values())}"
    )


if __name__ == "__main__":
    main()
