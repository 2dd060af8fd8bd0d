"""The amplicon workflow (workflows/amplicons) at scale: 10^6 simulated MiSeq 2x250 16S V4
read pairs over 10 samples (~10^5 unique sequences after dereplication), time and peak
memory of every rule, and the clustering step against swarm on the same amplicons.

    python benchmarks/bench_amplicons.py [--pairs 1000000] [--samples 10] [--cores 2]
                                         [--seed 1] [--repeats 3] [--keep DIR]

Simulation (seeded, from real amplicons)
----------------------------------------
* Real parents: the bundled dada2 pairs (``bioaccel/data/dada2``, mouse gut V4) merged,
  filtered and dereplicated with vsearch as the workflow does; the 253-bp amplicons seen
  at least twice (real biological sequences).
* Species: the real parents, then copies with 0.5-8 % substitutions, ``--species`` in all.
  Each sample draws species from a Zipf law (exponent 1.1) over its own ranking of them
  (half shared between samples, half its own), so samples differ as real ones do.
* PCR: each read's template carries substitutions at 2.5e-4 per base (about 6 % of reads
  hold one: the error variants that make most uniques), and 2 % of templates are chimeras
  of two species joined at a random point.
* Sequencing: R1 = the 515F primer + the first 231 bases, R2 = the 806R primer + the first
  230 bases of the reverse complement; per-base qualities from a MiSeq-like profile (R1
  Q38 falling to ~30, R2 falling to ~20, noise sd 3, Q 2-40), a substitution with
  probability 10^(-Q/10). Written gzip-compressed (level 1).

What is measured
----------------
The workflow with ``--cores N`` (default config but the R report on, taxonomy off), every
rule's ``benchmark:`` records (wall seconds, peak RSS) summed per rule; then the pooled
amplicons clustered by ``bioaccel cluster`` (the workflow's rule) and by ``swarm -d 1 -f``
with the same threads, best of ``--repeats``, interleaved, with the same OTUs checked.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
WORKFLOW = REPO / "workflows" / "amplicons"
DADA2 = REPO / "bioaccel" / "data" / "dada2"
FORWARD = "GTGCCAGCAGCCGCGGTAA"  # one variant of 515F (GTGYCAGCMGCCGCGGTAA)
REVERSE = "GGACTACCAGGGTATCTAAT"  # one variant of 806R (GGACTACNVGGGTWTCTAAT)
LETTERS = np.frombuffer(b"ACGT", np.uint8)
CODE = np.full(256, 255, np.uint8)
CODE[LETTERS] = np.arange(4, dtype=np.uint8)


def real_amplicons(work: Path) -> list[bytes]:
    """The bundled pairs merged, filtered and dereplicated with vsearch; the 253-bp
    amplicons seen at least twice, most abundant first."""
    out = []
    for s in ("sam1", "sam2"):
        merged, fasta = work / f"{s}.fq", work / f"{s}.fa"
        subprocess.run(
            ["vsearch", "--fastq_mergepairs", str(DADA2 / f"{s}F.fastq.gz"), "--reverse"]
            + [str(DADA2 / f"{s}R.fastq.gz"), "--fastq_maxdiffs", "20"]
            + ["--fastq_allowmergestagger", "--fastqout", str(merged), "--quiet"],
            check=True,
            stderr=subprocess.DEVNULL,
        )
        subprocess.run(
            ["vsearch", "--fastq_filter", str(merged), "--fastq_maxee", "1"]
            + ["--fastq_maxns", "0", "--fasta_width", "0", "--fastaout", str(fasta), "--quiet"],
            check=True,
        )
        out += fasta.read_bytes().split(b"\n")[1::2]
    counts: dict[bytes, int] = {}
    for seq in out:
        if len(seq) == 253:
            counts[seq] = counts.get(seq, 0) + 1
    kept = [s for s, c in counts.items() if c >= 2]
    return sorted(kept, key=lambda s: (-counts[s], s))


def species(parents: list[bytes], count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` distinct species (codes 0-3, equal length): the parents, then mutants."""
    base = np.array([CODE[np.frombuffer(p, np.uint8)] for p in parents])
    out, seen = list(base), {p for p in parents}
    while len(out) < count:
        s = base[int(rng.integers(len(base)))].copy()
        k = max(1, round(rng.uniform(0.005, 0.08) * len(s)))
        pos = rng.choice(len(s), size=k, replace=False)
        s[pos] = (s[pos] + rng.integers(1, 4, size=k)) % 4
        key = LETTERS[s].tobytes()
        if key not in seen:
            seen.add(key)
            out.append(s)
    return np.array(out[:count], dtype=np.uint8)


def quality_profile(length: int, start: float, end: float) -> np.ndarray:
    x = np.linspace(0, 1, length)
    return start - (start - end) * x**2


def write_reads(path: Path, names: np.ndarray, seqs: np.ndarray, quals: np.ndarray, mate: int):
    """FASTQ records of fixed-width names, one matrix of bytes written at once."""
    n, length = seqs.shape
    head = np.array([f"@{nm} {mate}:N:0:1\n".encode() for nm in names])
    width = len(head[0])
    rec = np.empty((n, width + length + 3 + length + 1), np.uint8)
    rec[:, :width] = np.frombuffer(b"".join(head), np.uint8).reshape(n, width)
    rec[:, width : width + length] = LETTERS[seqs]
    rec[:, width + length : width + length + 3] = np.frombuffer(b"\n+\n", np.uint8)
    rec[:, width + length + 3 : -1] = quals + 33
    rec[:, -1] = ord("\n")
    with gzip.open(path, "ab", compresslevel=1) as f:
        f.write(rec.tobytes())


def simulate(work: Path, pairs: int, samples: int, n_species: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    parents = real_amplicons(work)
    sp = species(parents, n_species, rng)
    length = sp.shape[1]
    fwd = CODE[np.frombuffer(FORWARD.encode(), np.uint8)]
    rev = CODE[np.frombuffer(REVERSE.encode(), np.uint8)]
    q1 = quality_profile(250, 38, 30)
    q2 = quality_profile(250, 37, 20)
    shared = rng.permutation(n_species)
    names = []
    per_sample = pairs // samples
    for k in range(samples):
        name = f"s{k + 1:02d}"
        names.append(name)
        own = rng.permutation(n_species)
        ranking = np.where(rng.random(n_species) < 0.5, shared, own)
        weight = np.zeros(n_species)
        np.add.at(weight, ranking, np.arange(1, n_species + 1, dtype=float) ** -1.1)
        weight /= weight.sum()
        for path in (work / f"{name}_R1.fastq.gz", work / f"{name}_R2.fastq.gz"):
            path.unlink(missing_ok=True)
        block = 50_000
        for start in range(0, per_sample, block):
            b = min(block, per_sample - start)
            idx = rng.choice(n_species, size=b, p=weight)
            amp = sp[idx]
            chim = np.flatnonzero(rng.random(b) < 0.02)
            if len(chim):
                other = sp[rng.choice(n_species, size=len(chim), p=weight)]
                cut = rng.integers(40, length - 40, size=len(chim))
                cols = np.arange(length)
                amp[chim] = np.where(cols[None, :] < cut[:, None], amp[chim], other)
            pcr = rng.random(amp.shape) < 2.5e-4
            amp[pcr] = (amp[pcr] + rng.integers(1, 4, size=int(pcr.sum()))) % 4
            r1 = np.concatenate([np.broadcast_to(fwd, (b, len(fwd))), amp[:, :231]], axis=1)
            rc = (3 - amp)[:, ::-1]
            r2 = np.concatenate([np.broadcast_to(rev, (b, len(rev))), rc[:, :230]], axis=1)
            reads = []
            for r, prof in ((r1, q1), (r2, q2)):
                q = np.clip(np.rint(prof + rng.normal(0, 3, r.shape)), 2, 40).astype(np.uint8)
                err = rng.random(r.shape) < 10 ** (-q.astype(np.float64) / 10)
                r = r.copy()
                r[err] = (r[err] + rng.integers(1, 4, size=int(err.sum()))) % 4
                reads.append((r, q))
            ids = np.array([f"{name}_r{start + i + 1:07d}" for i in range(b)])
            write_reads(work / f"{name}_R1.fastq.gz", ids, *reads[0], 1)
            write_reads(work / f"{name}_R2.fastq.gz", ids, *reads[1], 2)
    return names


def rule_table(wd: Path) -> list[tuple[str, int, float, float, float]]:
    """(rule, jobs, total seconds, longest job seconds, peak RSS MiB) from benchmark:."""
    rows = []
    for folder in sorted((wd / "benchmarks").iterdir()):
        secs, rss = [], []
        for f in folder.glob("*.tsv"):
            with open(f) as fh:
                r = next(csv.DictReader(fh, delimiter="\t"))
            secs.append(float(r["s"]))
            rss.append(float(r["max_rss"]) if r["max_rss"] not in ("", "NA", "-") else 0.0)
        rows.append((folder.name, len(secs), sum(secs), max(secs), max(rss)))
    return rows


def timed(cmd: list[str], log: Path) -> tuple[float, float]:
    """Wall seconds and the peak RSS (MiB) of ``cmd``, run in a child of its own."""
    code = (
        "import resource, subprocess, sys, time; t = time.perf_counter(); "
        f"r = subprocess.run({cmd!r}, stdout=subprocess.DEVNULL, stderr=open({str(log)!r}, 'w')); "
        "w = time.perf_counter() - t; "
        "m = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024; "
        "print(r.returncode, w, m)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    rc, wall, peak = out.stdout.split()
    if rc != "0":
        raise SystemExit(f"{cmd[0]} failed ({log}):\n{log.read_text()[-2000:]}")
    return float(wall), float(peak)


def otus(path: Path) -> set[frozenset[str]]:
    return {
        frozenset(m.split(";")[0] for m in line.split()) for line in path.read_text().splitlines()
    }


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=int, default=1_000_000)
    ap.add_argument("--samples", type=int, default=10)
    ap.add_argument("--species", type=int, default=3000)
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--keep", type=Path, default=None, help="work here and keep it")
    a = ap.parse_args(argv)
    work = a.keep or Path(tempfile.mkdtemp(prefix="bench_amplicons-"))
    work.mkdir(parents=True, exist_ok=True)
    data = work / "data"
    data.mkdir(exist_ok=True)
    t = time.perf_counter()
    names = simulate(data, a.pairs, a.samples, a.species, a.seed)
    print(f"simulated {a.pairs:,} pairs in {a.samples} samples: {time.perf_counter() - t:.0f} s")
    wd = work / "wf"
    shutil.rmtree(wd, ignore_errors=True)
    for part in ("workflow", "config", "profiles"):
        shutil.copytree(WORKFLOW / part, wd / part)
    (wd / "bench.tsv").write_text(
        "sample\tfq1\tfq2\n"
        + "".join(f"{n}\t{data / f'{n}_R1.fastq.gz'}\t{data / f'{n}_R2.fastq.gz'}\n" for n in names)
    )
    (wd / "bench.yaml").write_text(
        f"samples: bench.tsv\nthreads: {a.cores}\n"
        "primers: {forward: GTGYCAGCMGCCGCGGTAA, reverse: GGACTACNVGGGTWTCTAAT}\n"
        "taxonomy: {method: none}\nbiom: false\nreport: {enabled: true}\n"
    )
    t = time.perf_counter()
    proc = subprocess.run(
        ["snakemake", "--cores", str(a.cores), "--configfile", "bench.yaml"],
        cwd=wd,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - t
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-4000:])
    pooled = wd / "results/pool/amplicons.fasta"
    uniques = pooled.read_bytes().count(b">")
    tracking = (wd / "results/read_tracking.tsv").read_text().splitlines()
    head = tracking[0].split("\t")
    total = {k: 0 for k in head[1:]}
    for line in tracking[1:]:
        for k, v in zip(head[1:], line.split("\t")[1:]):
            total[k] += int(v)
    n_otus = len((wd / "results/otu_table.tsv").read_text().splitlines()) - 1
    print(
        f"workflow --cores {a.cores}: {wall / 60:.1f} min wall; {total['reads_in']:,} pairs in, "
        f"{total['merged']:,} merged, {total['filtered']:,} kept, {uniques:,} uniques pooled, "
        f"{n_otus:,} non-chimeric OTUs ({total['nonchimeric']:,} reads)"
    )
    print(f"{'rule':<14}{'jobs':>5}{'total s':>10}{'longest s':>11}{'peak MiB':>10}")
    for rule, jobs, secs, longest, rss in rule_table(wd):
        print(f"{rule:<14}{jobs:>5}{secs:>10.1f}{longest:>11.1f}{rss:>10.0f}")
    # the clustering step against swarm, same threads, interleaved
    tdir = work / "cluster"
    tdir.mkdir(exist_ok=True)
    ours_cmd = ["bioaccel", "cluster", str(pooled), "--method", "swarm", "-d", "1"]
    ours_cmd += ["--fastidious", "-t", str(a.cores), "-o", str(tdir / "ours.txt")]
    swarm_cmd = ["swarm", "-d", "1", "-f", "-z", "-t", str(a.cores), "-o", str(tdir / "swarm.txt")]
    swarm_cmd.append(str(pooled))
    best = {"bioaccel cluster": (1e9, 0.0), "swarm -d 1 -f": (1e9, 0.0)}
    for _ in range(a.repeats):
        for label, cmd in (("bioaccel cluster", ours_cmd), ("swarm -d 1 -f", swarm_cmd)):
            w, m = timed(cmd, tdir / f"{label.split()[0]}.log")
            best[label] = (min(best[label][0], w), max(best[label][1], m))
    same = otus(tdir / "ours.txt") == otus(tdir / "swarm.txt")
    print(
        f"clustering {uniques:,} uniques, {a.cores} threads, best of {a.repeats} (interleaved): "
        + ", ".join(f"{k} {w:.1f} s / {m:.0f} MiB" for k, (w, m) in best.items())
        + f"; ratio swarm/bioaccel {best['swarm -d 1 -f'][0] / best['bioaccel cluster'][0]:.2f}x"
        + f"; same OTUs: {'yes' if same else 'NO'}"
    )
    print(f"load average at the end: {os.getloadavg()[0]:.1f} (a shared machine when > cores)")
    if a.keep is None:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
