"""Neighbour joining at scale: bioaccel beside QuickTree (the NJ Pfam uses), Clearcut (relaxed
NJ) and ape::nj, the same matrix, one thread each, as programs.

    python benchmarks/bench_nj.py [--n 10000] [--sites 2000] [--repeat 1] [--skip ape,clearcut]

What is compared: the whole program run from a distance-matrix file to a Newick file, each
tool a fresh process on one thread (none of the peers has threads; bioaccel gets ``-t 1``):
- QuickTree: ``quicktree -in m -out t m.phy`` (square PHYLIP text, the only matrix it reads);
- Clearcut: ``clearcut --in=m.phy --out=t.nwk -q`` (relaxed NJ) and with ``-N`` (exact NJ);
- bioaccel: ``bioaccel tree m.phy -t 1 -o t.nwk`` from the same text, and from ``m.npy``;
- bioaccel ``--low-memory`` (a float32 triangle, as QuickTree): from ``m.cdist`` (the float32
  condensed file ``bioaccel distance -o m.cdist`` streams), from ``m.npy`` and from ``m.phy``
  (streamed row by row to a scratch triangle); the ``bioaccel`` process checks the input and
  then hands itself over to the ``bioaccel-nj`` program (exec), so its peak RSS is the larger
  of the two phases, as the kernel counts a process across exec;
- ape::nj: ``Rscript`` reading the raw float64 matrix (``readBin``), ``nj()``, ``write.tree``.
Wall time and peak RSS of each process (GNU time); Robinson-Foulds distances of every tree
to ape::nj's and to QuickTree's (splits of the unrooted trees, by tip label). Data: a K80 matrix of a seeded
simulated alignment (benchmarks/simulate.py, ``--sites`` columns); zero off-diagonal
distances (identical sequences: exact ties, where NJ implementations may differ) are counted.
Times are the best of --repeat runs, the tools interleaved.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._peers import (
    bioaccel_cli,
    checkout_env,
    command_line,
    run_program,
    show_compared,
)

R_NJ = """args <- commandArgs(TRUE); n <- as.integer(args[2])
suppressMessages(library(ape))
d <- matrix(readBin(args[1], "double", n * n), n, n)
rownames(d) <- colnames(d) <- paste0("t", seq_len(n) - 1L)
write.tree(nj(d), args[3])
"""


def write_phylip(d: np.ndarray, path: Path) -> None:
    n = len(d)
    with open(path, "w") as f:
        f.write(f"{n}\n")
        f.writelines(
            f"t{i} " + " ".join(f"{v:.10g}" for v in d[i].tolist()) + "\n" for i in range(n)
        )


def split_hashes(path: Path) -> set[int]:
    """The nontrivial splits of an unrooted Newick tree, each as the XOR of random 64-bit
    tip keys on the side without tip 't0' (collisions: about n^2 / 2^64)."""
    from bioaccel.trees import read_newick

    tree = read_newick(path)
    n = tree.n_tips
    rng = np.random.default_rng(0)
    key_of = {f"t{i}": int(k) for i, k in enumerate(rng.integers(1, 2**63, n, dtype=np.int64))}
    keys = np.zeros(tree.n_nodes, dtype=np.int64)
    for tip, label in enumerate(tree.labels):
        keys[tip] = key_of[label]
    total = np.bitwise_xor.reduce(keys[:n])
    below = keys.copy()
    order, stack = [], [tree.root]
    while stack:
        v = stack.pop()
        order.append(v)
        stack.extend(int(tree.child[e]) for e in tree._children[v])
    out, sizes = set(), np.zeros(tree.n_nodes, dtype=np.int64)
    sizes[:n] = 1
    t0 = tree.labels.index("t0")
    has_t0 = np.zeros(tree.n_nodes, dtype=bool)
    has_t0[t0] = True
    for v in reversed(order):
        for e in tree._children[v]:
            c = int(tree.child[e])
            below[v] ^= below[c]
            sizes[v] += sizes[c]
            has_t0[v] |= has_t0[c]
    for v in order:
        if v < n or v == tree.root:
            continue
        if 1 < sizes[v] < n - 1:
            out.add(int(below[v] ^ total) if has_t0[v] else int(below[v]))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--sites", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--skip", default="", help="comma-separated tools to leave out")
    ap.add_argument("--workdir", default=None, help="keep the files here")
    args = ap.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    import bioaccel
    from benchmarks.simulate import tree_alignment

    tmp = Path(args.workdir or tempfile.mkdtemp(prefix="bioaccel-nj-"))
    tmp.mkdir(parents=True, exist_ok=True)
    n = args.n
    npy, phy, raw, cdist = tmp / "m.npy", tmp / "m.phy", tmp / "m.f64", tmp / "m.cdist"
    if not npy.exists():
        batch = bioaccel.SeqBatch.from_strings(tree_alignment(n, args.sites, seed=7))
        dm = bioaccel.distance_matrix(batch, "k80", pairwise_deletion=True, threads=2)
        d = dm.data
        del batch
        np.save(npy, d)
        d.T.astype("<f8").tofile(raw)  # column-major for R's matrix()
        write_phylip(d, phy)
        (tmp / "m.npy.ids.txt").write_text("".join(f"t{i}\n" for i in range(n)))
    d = np.load(npy, mmap_mode="r")
    if not cdist.exists():
        from bioaccel.distances import cdist_header

        with open(cdist, "wb") as f:
            f.write(cdist_header([f"t{i}" for i in range(n)], 4))
            for i in range(n - 1):
                f.write(np.asarray(d[i, i + 1 :], dtype="<f4").tobytes())
    zeros = int(np.count_nonzero(np.asarray(d) == 0) - n) // 2
    print(
        f"n = {n:,}, K80 of a simulated {n} x {args.sites} alignment; {zeros} zero distances "
        f"off the diagonal (identical sequences: exact ties)"
    )
    del d

    cli = bioaccel_cli()
    tools = {
        "bioaccel (.phy)": ([*cli, "tree", phy, "-t", "1", "-o", tmp / "bioaccel_phy.nwk"], None),
        "bioaccel (.npy)": ([*cli, "tree", npy, "-t", "1", "-o", tmp / "bioaccel.nwk"], None),
        "bioaccel --low-memory (.cdist)": (
            [*cli, "tree", cdist, "--low-memory", "-t", "1", "-o", tmp / "lowmem_cdist.nwk"],
            None,
        ),
        "bioaccel --low-memory (.npy)": (
            [*cli, "tree", npy, "--low-memory", "-t", "1", "-o", tmp / "lowmem_npy.nwk"],
            None,
        ),
        "bioaccel --low-memory (.phy)": (
            [*cli, "tree", phy, "--low-memory", "-t", "1", "-o", tmp / "lowmem_phy.nwk"],
            None,
        ),
        "quicktree": (["quicktree", "-in", "m", "-out", "t", phy], tmp / "quicktree.nwk"),
        "clearcut": (["clearcut", f"--in={phy}", f"--out={tmp / 'clearcut.nwk'}", "-q"], None),
        "clearcut -N": (
            ["clearcut", f"--in={phy}", f"--out={tmp / 'clearcut_N.nwk'}", "-q", "-N"],
            None,
        ),
        "ape::nj": (["Rscript", "-e", R_NJ, raw, str(n), tmp / "ape.nwk"], None),
    }
    trees = {
        "bioaccel (.phy)": "bioaccel_phy.nwk",
        "bioaccel (.npy)": "bioaccel.nwk",
        "bioaccel --low-memory (.cdist)": "lowmem_cdist.nwk",
        "bioaccel --low-memory (.npy)": "lowmem_npy.nwk",
        "bioaccel --low-memory (.phy)": "lowmem_phy.nwk",
        "quicktree": "quicktree.nwk",
        "clearcut": "clearcut.nwk",
        "clearcut -N": "clearcut_N.nwk",
        "ape::nj": "ape.nwk",
    }
    tools = {
        k: v
        for k, v in tools.items()
        if not any(k.startswith(s) for s in skip)
        and (k.startswith("bioaccel") or shutil.which(str(v[0][0])) is not None)
    }
    show_compared(
        "NJ tree from a distance-matrix file to a Newick file, each a fresh process, "
        "one thread each",
        [(k, command_line(c, out), 1) for k, (c, out) in tools.items()],
    )
    env = checkout_env(OMP_NUM_THREADS="1")
    best: dict[str, tuple[float, float]] = {}
    for _ in range(args.repeat):
        for name, (cmd, out) in tools.items():
            wall, rss = run_program(cmd, stdout=out, env=env)
            if name not in best or wall < best[name][0]:
                best[name] = (wall, max(rss, best.get(name, (0, 0))[1]))
            print(f"  {name:30s} {wall:9.2f} s  peak RSS {rss:8.0f} MiB", flush=True)
    refs = {
        name: split_hashes(tmp / trees[name]) for name in ("ape::nj", "quicktree") if name in best
    }
    ours = next(iter(best.values()))
    print(
        f"\n{'tool':30s} {'best s':>9s} {'peak MiB':>9s} {'time / ' + next(iter(best)):>16s} "
        f"{'RF to ape::nj':>14s} {'RF to quicktree':>16s}"
    )
    for name, (wall, rss) in best.items():
        mine = split_hashes(tmp / trees[name])
        rf = [str(len(refs[r] ^ mine)) if r in refs else "n/a" for r in ("ape::nj", "quicktree")]
        print(
            f"{name:30s} {wall:9.2f} {rss:9.0f} {wall / ours[0]:15.2f}x {rf[0]:>14s} {rf[1]:>16s}"
        )
    if not args.workdir:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
