"""Fred's metabarcoding pipeline (Frédéric Mahé's vsearch + swarm pipeline, the one the
swarm wiki describes), run step by step with the command-line tools on the same reads and
settings as workflows/amplicons: the oracle of its OTU table.

Per sample: cutadapt primer removal, ``vsearch --fastq_mergepairs``, ``vsearch
--fastq_filter``, ``vsearch --derep_fulllength --sizeout --relabel_sha1``; then the pooled
``vsearch --derep_fulllength --sizein --sizeout``, ``swarm -d 1 -f -z``, ``vsearch
--sortbysize`` and ``--uchime_denovo`` on the seeds, and the contingency table as the
pipeline's OTU_contingency_table.py builds it: each OTU of the swarm -o file sums the
per-sample abundances of its amplicons; OTUs whose seed is not called N are dropped."""

from __future__ import annotations

import re
import subprocess
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Settings:
    forward: str = "GTGYCAGCMGCCGCGGTAA"
    reverse: str = "GGACTACNVGGGTWTCTAAT"
    max_diffs: int = 20
    min_overlap: int = 10
    max_ee: float = 1.0
    max_ns: int = 0
    min_length: int = 200
    qmax: int = 41
    d: int = 1
    fastidious: bool = True
    chimeras: str = "uchime_denovo"


def sh(args, **kw):
    proc = subprocess.run(args, capture_output=True, text=True, **kw)
    assert proc.returncode == 0, (args, proc.stderr[-2000:])
    return proc


def amplicons(path: Path) -> dict[str, int]:
    """amplicon id -> abundance of a dereplicated FASTA."""
    out = {}
    for line in path.read_text().splitlines():
        if line.startswith(">"):
            amplicon, size = re.fullmatch(r">([^;]+);size=(\d+);?", line).groups()
            out[amplicon] = int(size)
    return out


def run(samples: dict[str, tuple[str, ...]], work: Path, s: Settings | None = None):
    """``samples``: name -> (fq1,) or (fq1, fq2). Returns (table, seeds, per-sample filtered
    read counts): table is {otu: {sample: reads}} of the non-chimeric OTUs (OTU named by
    its seed), seeds {otu: sequence}."""
    s = s or Settings()
    work.mkdir(parents=True, exist_ok=True)
    derep, filtered = {}, {}
    for name, files in samples.items():
        reads = list(files)
        if s.forward or s.reverse:
            if len(files) == 2:
                out = [str(work / f"{name}_R1.fq"), str(work / f"{name}_R2.fq")]
                primers = ["-g", s.forward, "-G", s.reverse]
                sh(
                    [
                        "cutadapt",
                        *primers,
                        "--discard-untrimmed",
                        "-o",
                        out[0],
                        "-p",
                        out[1],
                        *files,
                    ]
                )
            else:
                out = [str(work / f"{name}.fq")]
                sh(["cutadapt", "-g", s.forward, "--discard-untrimmed", "-o", out[0], files[0]])
            reads = out
        if len(reads) == 2:
            merged = str(work / f"{name}.merged.fq")
            sh(
                [
                    "vsearch",
                    "--fastq_mergepairs",
                    reads[0],
                    "--reverse",
                    reads[1],
                    "--fastq_maxdiffs",
                    str(s.max_diffs),
                    "--fastq_minovlen",
                    str(s.min_overlap),
                    "--fastq_allowmergestagger",
                    "--fastq_qmax",
                    str(s.qmax),
                    "--fastq_qmaxout",
                    str(s.qmax),
                    "--threads",
                    "1",
                    "--fastqout",
                    merged,
                ]
            )
            reads = [merged]
        fasta = work / f"{name}.fasta"
        sh(
            [
                "vsearch",
                "--fastq_filter",
                reads[0],
                "--fastq_maxee",
                str(s.max_ee),
                "--fastq_maxns",
                str(s.max_ns),
                "--fastq_minlen",
                str(s.min_length),
                "--fastq_qmax",
                str(s.qmax),
                "--fasta_width",
                "0",
                "--fastaout",
                str(fasta),
            ]
        )
        filtered[name] = fasta.read_text().count(">")
        out = work / f"{name}.derep.fasta"
        sh(
            [
                "vsearch",
                "--derep_fulllength",
                str(fasta),
                "--sizeout",
                "--relabel_sha1",
                "--fasta_width",
                "0",
                "--output",
                str(out),
            ]
        )
        derep[name] = amplicons(out)
    pooled_in = work / "all.fasta"
    pooled_in.write_text("".join((work / f"{n}.derep.fasta").read_text() for n in samples))
    pooled = work / "pooled.fasta"
    sh(
        [
            "vsearch",
            "--derep_fulllength",
            str(pooled_in),
            "--sizein",
            "--sizeout",
            "--fasta_width",
            "0",
            "--output",
            str(pooled),
        ]
    )
    swarms, seeds_fa = work / "swarms.txt", work / "seeds.fasta"
    sh(
        ["swarm", "-d", str(s.d), *(["-f"] if s.fastidious else []), "-z", "-t", "1"]
        + ["-w", str(seeds_fa), "-o", str(swarms), str(pooled)]
    )
    sorted_fa, uchime = work / "seeds.sorted.fasta", work / "uchime.tsv"
    sh(["vsearch", "--sortbysize", str(seeds_fa), "--fasta_width", "0", "--output", str(sorted_fa)])
    status = {}
    if s.chimeras != "none":
        sh(["vsearch", f"--{s.chimeras}", str(sorted_fa), "--uchimeout", str(uchime)])
        for line in uchime.read_text().splitlines():
            f = line.split("\t")
            status[f[1].split(";")[0]] = f[-1]
    lines = seeds_fa.read_text().splitlines()
    seeds = {lines[i][1:].split(";")[0]: lines[i + 1] for i in range(0, len(lines), 2)}
    table = {}
    for line in swarms.read_text().splitlines():
        members = [m.split(";")[0] for m in line.split()]
        seed = members[0]
        if status.get(seed, "N") != "N":
            continue
        row = defaultdict(int)
        for name in samples:
            row[name] = sum(derep[name].get(m, 0) for m in members)
        table[seed] = dict(row)
    return table, {k: seeds[k] for k in table}, filtered
