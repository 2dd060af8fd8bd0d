"""Adding to an alignment: bioaccel ``msa(add=, to=, keep_length=True[, fragments=True])``
against ``mafft --add/--addfragments --keeplength`` and Clustal Omega's sequences-to-profile
alignment (``clustalo --p1 ref.fa -i new.fa``; it has no keep-length, so its new columns are
dropped afterwards, which counts as keep-length) on simulated genomes with a known true
alignment (benchmarks/family_sim.py): time (best of --repeats, interleaved, same threads) and
the fraction of added residues placed in their true column (of those whose true column the
reference alignment holds).

    python benchmarks/bench_msa_add.py [--genomes 100] [--length 30000] [--reference 4]
        [--fragments 30] [--fragment-length 300] [--threads 2] [--repeats 3]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import bioaccel
from benchmarks.family_sim import simulate_family
from bioaccel.msa_engine import read_alignment


def placed_right(rows: dict[str, str], added, truth, occupied) -> tuple[int, int]:
    right = total = 0
    for (name, seq), cols in zip(added, truth):
        row = np.frombuffer(rows[name].encode(), np.uint8)
        letters = row != ord("-")
        # keep-length rows lose inserted residues: match the kept ones to the sequence in order
        kept_cols = np.nonzero(letters)[0]
        kept = row[letters].tobytes().decode().upper()
        p = 0
        got = {}
        for c, ch in zip(kept_cols, kept):
            while p < len(seq) and seq[p].upper() != ch:
                p += 1
            if p < len(seq):
                got[p] = c
                p += 1
        for q in range(len(seq)):
            if occupied[cols[q]]:
                total += 1
                right += got.get(q, -1) == cols[q]
    return right, total


def _clustalo_keep_length(path: Path, ref_ids: list[str]) -> dict[str, str]:
    """Clustal Omega's profile alignment with the columns the reference rows do not occupy
    dropped (its rows keep their residues there otherwise)."""
    m = read_alignment(path)
    mat = np.array([np.frombuffer(r.encode(), np.uint8) for r in m.sequences])
    ref_rows = [k for k, i in enumerate(m.ids) if i in set(ref_ids)]
    keep = (mat[ref_rows] != ord("-")).any(axis=0)
    return {i: mat[k, keep].tobytes().decode() for k, i in enumerate(m.ids)}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--genomes", type=int, default=100)
    ap.add_argument("--length", type=int, default=30000)
    ap.add_argument("--reference", type=int, default=4)
    ap.add_argument("--fragments", type=int, default=30)
    ap.add_argument("--fragment-length", type=int, default=300)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--no-clustalo",
        dest="clustalo",
        action="store_false",
        help="leave Clustal Omega out (slow on long genomes)",
    )
    args = ap.parse_args(argv)
    fam = simulate_family(
        args.reference + args.genomes,
        args.length,
        "dna",
        seed=args.seed,
        depth=0.05,
        indel_rate=0.002,
    )
    rows = fam.alignment() if callable(fam.alignment) else fam.alignment
    ref_ids = fam.ids[: args.reference]
    ref = bioaccel.MultipleAlignment(ref_ids, rows[: args.reference], bioaccel.DNA)
    occupied = np.array([any(r[c] != "-" for r in ref.sequences) for c in range(ref.width)])
    new = list(zip(fam.ids[args.reference :], fam.sequences[args.reference :]))
    new_truth = fam.columns[args.reference :]
    rng = np.random.default_rng(args.seed)
    frags, frag_truth = [], []
    for k in range(args.fragments):
        s = args.reference + int(rng.integers(0, args.genomes))
        seq = fam.sequences[s]
        st = int(rng.integers(0, len(seq) - args.fragment_length))
        frags.append((f"frag{k}", seq[st : st + args.fragment_length]))
        frag_truth.append(fam.columns[s][st : st + args.fragment_length])
    mafft = shutil.which("mafft")
    report = {}
    print(
        f"{args.genomes} genomes of {args.length} nt added to a {args.reference}-row "
        f"reference alignment ({ref.width} columns); {args.fragments} fragments of "
        f"{args.fragment_length} nt; {args.threads} threads, best of {args.repeats}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        ref.write(tmp / "ref.fa")
        (tmp / "new.fa").write_text("".join(f">{i}\n{s}\n" for i, s in new))
        (tmp / "frags.fa").write_text("".join(f">{i}\n{s}\n" for i, s in frags))
        cases = [
            ("genomes --keep-length", new, new_truth, "new.fa", "--add", False),
            ("fragments --keep-length", frags, frag_truth, "frags.fa", "--addfragments", True),
        ]
        for label, added, truth, fa, mafft_flag, fragments in cases:
            times = {"bioaccel": [], "mafft": [], "clustalo": []}
            clustalo = shutil.which("clustalo") if args.clustalo else None
            results = {}
            for _ in range(args.repeats):
                t = time.perf_counter()
                out = bioaccel.msa(
                    add=added, to=ref, keep_length=True, fragments=fragments, threads=args.threads
                )
                times["bioaccel"].append(time.perf_counter() - t)
                results["bioaccel"] = dict(zip(out.ids, out.sequences))
                if mafft:
                    t = time.perf_counter()
                    with open(tmp / "mafft.fa", "w") as f:
                        subprocess.run(
                            [
                                mafft,
                                "--thread",
                                str(args.threads),
                                mafft_flag,
                                str(tmp / fa),
                                "--keeplength",
                                str(tmp / "ref.fa"),
                            ],
                            stdout=f,
                            stderr=subprocess.DEVNULL,
                            check=True,
                        )
                    times["mafft"].append(time.perf_counter() - t)
                    m = read_alignment(tmp / "mafft.fa")
                    results["mafft"] = dict(zip(m.ids, m.sequences))
                if clustalo:
                    t = time.perf_counter()
                    subprocess.run(
                        [
                            clustalo,
                            "--p1",
                            str(tmp / "ref.fa"),
                            "-i",
                            str(tmp / fa),
                            "-o",
                            str(tmp / "clustalo.fa"),
                            "--outfmt=fa",
                            "--force",
                            f"--threads={args.threads}",
                        ],
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,
                        check=True,
                    )
                    times["clustalo"].append(time.perf_counter() - t)
                    results["clustalo"] = _clustalo_keep_length(tmp / "clustalo.fa", ref_ids)
            print(f"\n{label}:")
            row = {}
            for tool in ("bioaccel", "mafft", "clustalo"):
                if not times[tool]:
                    print(f"  {tool:9s} skipped (not installed, or --no-clustalo)")
                    continue
                r, n = placed_right(results[tool], added, truth, occupied)
                row[tool] = {"seconds": min(times[tool]), "right": r, "total": n}
                print(f"  {tool:9s} {min(times[tool]):8.2f} s   placed right {r}/{n} ({r / n:.4f})")
            for peer in ("mafft", "clustalo"):
                if times[peer]:
                    print(
                        f"  ratio bioaccel / {peer} time: "
                        f"{min(times['bioaccel']) / min(times[peer]):.2f}x"
                    )
            report[label] = row
    return report


if __name__ == "__main__":
    main()
