"""MSA benchmark: bioaccel.msa beside FAMSA2, Kalign, Clustal Omega and MAFFT, ratios printed.

    python benchmarks/bench_msa.py [--balibase DIR] [--sizes 1000,10000] [--huge 100000]
                                   [--repeat 1] [--bali-repeat 1] [--json OUT]

(a) BAliBASE 3 RV11 + RV12 (the 164 cases of ../shared/msa/balibase-rv11-rv12), 1 thread, every
    tool on every case (tools interleaved case by case), scored with the shared msa_score.py (SP and
    TC as bali_score computes them over core columns, and qscore's Q/TC): means over all cases and per
    reference set, total alignment time, and bioaccel / FAMSA ratios. A case a tool fails on scores 0
    (bali_score's convention) and is listed.
(b) Simulated protein families (benchmarks/family_sim.py, --sizes sequences of ~250 residues, seeded):
    bioaccel and FAMSA at --threads (default 2) and at 1 thread, each run in a fresh subprocess: time
    (best of --repeat, tools interleaved), peak RSS of that process (wait4's ru_maxrss; the process's
    RSS after reading the input and importing the tool, without aligning, is shown as "base"), SP/TC
    against the true alignment (benchmarks/msa_accuracy.py); ratios bioaccel / FAMSA and bioaccel's
    1 -> N thread speedup.
(c) --huge N: bioaccel alone on an N-sequence family at --threads: wall time, peak RSS, SP/TC.
(e) --accurate: the accurate (consistency) mode on BAliBASE beside the default progressive engine
    on every case, and beside MAFFT L-INS-i (--localpair --maxiterate 1000), ProbCons, MUSCLE 5 and
    FAMSA2 on every --peer-every-th case (all on one thread, one run side by side); times are wall
    and CPU seconds (this process's CPU time for in-process tools, the child's user + system time for
    programs: on a shared machine CPU time is the fairer figure). The goals are checked on the
    peer subset: SP and TC >= L-INS-i's at <= 1/4 of its time, and SP >= the default mode's + 0.03.
(g) --seed-families: public seed families with reference alignments (benchmarks/seed_families.py:
    Pfam seeds of HMMER's tutorial and pyhmmer's test data, Rfam seeds of Infernal's test suite,
    a Dfam seed, bali-phy's Miklos-2008 families; apt-get install hmmer-doc infernal bali-phy,
    pip install pyhmmer): bioaccel accurate, bioaccel auto (msa()'s default) and the peers of
    (e), one thread, interleaved family by family, scored by the shared msa_score.py against
    the seed (SP/TC/Q/TC_Q over core columns, Q_all over every residue); per family and means,
    wall and CPU seconds, accurate / peer time; the goal against MUSCLE 5 and ProbCons.
(h) --auto-limits: the fast and the accurate mode on simulated families near `auto`'s limits
    (--auto-sizes, default 100x300,150x400,200x150,250x120,300x200; depth 1.5, indel rate
    0.02: divergent, as RV11), one thread, in this process (CPU seconds of each call), SP/TC
    against the truth, and the mode `auto` chooses with its reason: what the limits are set by.
(f) --accurate-memory: bioaccel's accurate mode alone on simulated families of 200 x 500 and
    500 x 300 residues (1 thread, a fresh process each): time, peak RSS, SP/TC against the truth.
(d) --dna: four simulated DNA families (200-1,000 sequences, 0.3-1.5 substitutions per site),
    SP/TC against the truth for bioaccel's default nucleotide scores (NUC.4.4 mapped to +5/-1),
    for raw NUC.4.4 (+5/-4) and for FAMSA2: what the default was chosen by.
(e) --dna-speed: real influenza genes first (adegenet's pdH1N1 HA and NA, 433 each, and usflu,
    80 HA genes; apt-get install r-cran-adegenet; and mothur's 599 HA genes when found:
    apt-get install mothur, or the copy the tests fetch), bioaccel and every peer at --threads, best
    of --repeat interleaved, time and peak memory; then influenza-like gene families (simulated: 433 x 1,470 nt like NA, 599 x 1,700 nt
    like HA; 0.15 substitutions per site, few indels) and --long-genomes N x L genomes (default
    20 x 30 kb, 0.05 substitutions per site): bioaccel, FAMSA2, MAFFT and Clustal Omega at
    --threads, as (b) measures them (time, peak RSS, SP/TC against the truth); ratios to each.
(f) --add: benchmarks/bench_msa_add.py (genomes and fragments added with keep-length, against
    mafft --add/--addfragments --keeplength and clustalo --p1), sizes from --add-genomes,
    --add-length.

What is timed: the alignment call only. bioaccel gets a SeqBatch read beforehand, FAMSA and Kalign
their sequence objects built beforehand; Clustal Omega and MAFFT are programs, so their time is the
whole run (process start and reading a small FASTA included). Writing the output is never timed.
A tool that is not installed (or bioaccel without ``bioaccel.msa``) is reported as "skipped: why".
Peers: pip install pyfamsa==0.7.0 kalign-python; apt-get install -y clustalo mafft probcons muscle.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._peers import show_compared  # noqa: E402
from benchmarks.family_sim import read_fasta, simulate_family, write_fasta  # noqa: E402
from benchmarks.msa_accuracy import load_msa_score, shared_msa_dir, sp_tc_family  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TOOLS = ("bioaccel", "famsa", "kalign", "clustalo", "mafft")
#: tools of (e) and (f) as well: bioaccel's accurate mode and the consistency-based peers
ALL_TOOLS = TOOLS + ("bioaccel-accurate", "linsi", "probcons", "muscle")


# ----------------------------------------------------------------------------------------- tools
# Each runner: (ids, seqs, input path, output path, threads, backend, dry) -> seconds of the
# alignment call alone; it writes the aligned FASTA to the output path (untimed). dry: everything
# but the alignment (for the baseline memory).


def _run_bioaccel(ids, seqs, inp, out, threads, backend, dry):
    import bioaccel

    batch = bioaccel.read_sequences(inp)
    if dry:
        return 0.0
    kw = {"backend": backend} if backend else {}
    if MODE_OF.get("bioaccel"):
        kw["mode"] = MODE_OF["bioaccel"]
    t0 = time.perf_counter()
    aln = bioaccel.msa(batch, threads=threads, **kw)
    seconds = time.perf_counter() - t0
    aln.write(out)
    return seconds


def _run_bioaccel_accurate(ids, seqs, inp, out, threads, backend, dry):
    import bioaccel

    batch = bioaccel.read_sequences(inp)
    if dry:
        return 0.0
    kw = {"backend": backend} if backend else {}
    t0 = time.perf_counter()
    aln = bioaccel.msa(batch, threads=threads, mode="accurate", **kw)
    seconds = time.perf_counter() - t0
    aln.write(out)
    return seconds


def _run_famsa(ids, seqs, inp, out, threads, backend, dry):
    import pyfamsa

    records = [pyfamsa.Sequence(i.encode(), s.encode()) for i, s in zip(ids, seqs)]
    aligner = pyfamsa.Aligner(threads=threads)
    if dry:
        return 0.0
    t0 = time.perf_counter()
    msa = aligner.align(records)
    seconds = time.perf_counter() - t0
    write_fasta(out, (r.id.decode() for r in msa), (r.sequence.decode() for r in msa))
    return seconds


def _run_kalign(ids, seqs, inp, out, threads, backend, dry):
    import kalign

    if dry:
        return 0.0
    t0 = time.perf_counter()
    rows = kalign.align(list(seqs), seq_type="protein", n_threads=threads)
    seconds = time.perf_counter() - t0
    write_fasta(out, ids, rows)  # kalign returns the rows in input order
    return seconds


def _run_program(cmd, out, dry, stdout_to_out=False):
    if dry:
        return 0.0
    t0 = time.perf_counter()
    if stdout_to_out:
        with open(out, "w") as fh:
            subprocess.run(cmd, stdout=fh, stderr=subprocess.PIPE, check=True)
    else:
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=True)
    return time.perf_counter() - t0


def _run_clustalo(ids, seqs, inp, out, threads, backend, dry):
    return _run_program(
        [
            "clustalo",
            "-i",
            str(inp),
            "-o",
            str(out),
            "--outfmt=fa",
            "--force",
            f"--threads={threads}",
        ],
        out,
        dry,
    )


def _run_mafft(ids, seqs, inp, out, threads, backend, dry):
    return _run_program(
        ["mafft", "--auto", "--thread", str(threads), "--quiet", str(inp)],
        out,
        dry,
        stdout_to_out=True,
    )


def _run_linsi(ids, seqs, inp, out, threads, backend, dry):
    return _run_program(
        [
            "mafft",
            "--localpair",
            "--maxiterate",
            "1000",
            "--thread",
            str(threads),
            "--quiet",
            str(inp),
        ],
        out,
        dry,
        stdout_to_out=True,
    )


def _run_probcons(ids, seqs, inp, out, threads, backend, dry):
    return _run_program(["probcons", str(inp)], out, dry, stdout_to_out=True)  # one thread


def _run_muscle(ids, seqs, inp, out, threads, backend, dry):
    return _run_program(
        ["muscle", "-align", str(inp), "-output", str(out), "-threads", str(threads)], out, dry
    )


RUNNERS = {
    "bioaccel": _run_bioaccel,
    "famsa": _run_famsa,
    "kalign": _run_kalign,
    "clustalo": _run_clustalo,
    "mafft": _run_mafft,
    "bioaccel-accurate": _run_bioaccel_accurate,
    "linsi": _run_linsi,
    "probcons": _run_probcons,
    "muscle": _run_muscle,
}
CALLS = {
    "bioaccel": "bioaccel.msa(read_sequences(path), threads=T)  (the call timed)",
    "famsa": "pyfamsa.Aligner(threads=T).align(records)  (the call timed)",
    "kalign": "kalign.align(seqs, seq_type='protein', n_threads=T)  (the call timed)",
    "clustalo": "clustalo -i in.fa -o out.fa --outfmt=fa --force --threads=T  (the whole run)",
    "mafft": "mafft --auto --thread T --quiet in.fa > out.fa  (the whole run)",
    "bioaccel-accurate": "bioaccel.msa(read_sequences(path), threads=T, mode='accurate')  (the call timed)",
    "linsi": "mafft --localpair --maxiterate 1000 --thread T in.fa > out.fa  (the whole run)",
    "probcons": "probcons in.fa > out.fa  (the whole run, one thread)",
    "muscle": "muscle -align in.fa -output out.fa -threads T  (the whole run)",
}
LABELS = {
    "bioaccel": "bioaccel",
    "famsa": "FAMSA2",
    "kalign": "Kalign",
    "clustalo": "ClustalO",
    "mafft": "MAFFT",
    "bioaccel-accurate": "bioaccel-acc",
    "linsi": "L-INS-i",
    "probcons": "ProbCons",
    "muscle": "MUSCLE5",
}
#: the mode the "bioaccel" runner passes (None: msa()'s default); (e) sets "fast" there
MODE_OF: dict[str, str | None] = {"bioaccel": None}
#: programs of each tool (for why_missing)
PROGRAM_OF = {"linsi": "mafft", "probcons": "probcons", "muscle": "muscle"}


def cpu_seconds() -> float:
    """CPU time of this process and its finished children (user + system)."""
    own = time.process_time()
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own + kids.ru_utime + kids.ru_stime


def why_missing(tool: str) -> str | None:
    """None when the tool can run here, else the reason it cannot."""
    if tool in ("bioaccel", "bioaccel-accurate"):
        import bioaccel

        return (
            None
            if hasattr(bioaccel, "msa")
            else f"bioaccel.msa is not in {Path(bioaccel.__file__).parent}"
        )
    if tool in PROGRAM_OF:
        prog = PROGRAM_OF[tool]
        return (
            None if shutil.which(prog) else f"no {prog} program on PATH (apt-get install -y {prog})"
        )
    if tool in ("famsa", "kalign"):
        module = "pyfamsa" if tool == "famsa" else "kalign"
        try:
            __import__(module)
        except ImportError as exc:
            return f"cannot import {module} ({exc}); pip install " + (
                "pyfamsa==0.7.0" if tool == "famsa" else "kalign-python"
            )
        return None
    return None if shutil.which(tool) else f"no {tool} program on PATH (apt-get install -y {tool})"


def tool_version(tool: str) -> str:
    try:
        if tool in ("bioaccel", "bioaccel-accurate"):
            import bioaccel

            return getattr(bioaccel, "__version__", "?")
        if tool in PROGRAM_OF:
            cmd = {
                "linsi": ["mafft", "--version"],
                "probcons": ["probcons", "--version"],
                "muscle": ["muscle", "--version"],
            }[tool]
            res = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
            text = (res.stdout + res.stderr).strip().splitlines()
            return text[0] if text else "?"
        if tool == "famsa":
            import pyfamsa

            return pyfamsa.__version__
        if tool == "kalign":
            import kalign

            return getattr(kalign, "__version__", None) or str(kalign.version())
        cmd = [tool, "--version"]
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
        return (res.stdout or res.stderr).strip().splitlines()[0]
    except Exception as exc:  # a version string is informative only
        return f"? ({type(exc).__name__})"


# ------------------------------------------------------------------------------ (a) BAliBASE


def balibase(
    cases_dir: Path,
    tools,
    repeat: int,
    limit: int | None,
    workdir: Path,
    backend,
    every: dict[str, int] | None = None,
):
    """Every tool on every case (``every[tool] = k``: that tool on every k-th case only)."""
    msa_score = load_msa_score(
        cases_dir.parent if (cases_dir.parent / "msa_score.py").is_file() else shared_msa_dir()
    )
    refs = sorted(cases_dir.glob("*.ref.fa"))
    if not refs:
        raise FileNotFoundError(f"no *.ref.fa cases in {cases_dir}")
    refs = refs[:limit] if limit else refs
    res = {
        t: {"seconds": 0.0, "cpu_seconds": 0.0, "scores": {}, "failed": {}, "times": {}}
        for t in tools
    }
    every = every or {}
    for t in tools:
        (workdir / t).mkdir(parents=True, exist_ok=True)
    for k, ref in enumerate(refs, 1):
        case = ref.name[: -len(".ref.fa")]
        inp = cases_dir / f"{case}.fa"
        ids, seqs = read_fasta(inp)
        for t in tools:
            if (k - 1) % every.get(t, 1):
                continue
            out = workdir / t / f"{case}.fa"
            best = float("inf")
            best_cpu = float("inf")
            try:
                for _ in range(repeat):
                    c0 = cpu_seconds()
                    best = min(best, RUNNERS[t](ids, seqs, inp, out, 1, backend, False))
                    best_cpu = min(best_cpu, cpu_seconds() - c0)
                res[t]["scores"][case] = msa_score.score(str(ref), str(out))
            except Exception as exc:  # a failure on one case scores 0 and is listed
                detail = (
                    exc.stderr.decode(errors="replace").strip()[-200:]
                    if isinstance(exc, subprocess.CalledProcessError) and exc.stderr
                    else str(exc)[:200]
                )
                res[t]["failed"][case] = f"{type(exc).__name__}: {detail}"
                res[t]["scores"][case] = {"sp": 0.0, "tc": 0.0, "q": 0.0, "tc_q": 0.0}
                best = 0.0 if best == float("inf") else best
                best_cpu = 0.0 if best_cpu == float("inf") else best_cpu
            res[t]["seconds"] += best
            res[t]["cpu_seconds"] += best_cpu
            res[t]["times"][case] = (best, best_cpu)
        if k % 20 == 0 or k == len(refs):
            print(f"  {k}/{len(refs)} cases", file=sys.stderr, flush=True)
    summary = {}
    for t in tools:
        scores = res[t]["scores"]
        entry = {
            "seconds": res[t]["seconds"],
            "cpu_seconds": res[t]["cpu_seconds"],
            "cases": len(scores),
            "failed": res[t]["failed"],
            "per_case": scores,
            "times": res[t]["times"],
        }
        for subset in ("all", "RV11", "RV12"):  # BB11001, BBS11001: RV11; BB12001, BBS12001: RV12
            chosen = [
                s
                for c, s in scores.items()
                if subset in ("all", "RV" + c.replace("BBS", "BB")[2:4])
            ]
            entry[subset] = (
                {m: sum(s[m] for s in chosen) / len(chosen) for m in ("sp", "tc", "q", "tc_q")}
                if chosen
                else {}
            )
            entry[subset]["cases"] = len(chosen)
        summary[t] = entry
    return summary


def print_balibase(summary):
    print(
        f"{'tool':9s} {'SP':>6s} {'TC':>6s} {'Q':>6s} {'TC_q':>6s} {'time s':>8s}  "
        f"{'RV11 SP/TC':>11s}  {'RV12 SP/TC':>11s}  failed"
    )
    for t, e in summary.items():
        a, r1, r2 = e["all"], e["RV11"], e["RV12"]
        print(
            f"{LABELS[t]:9s} {a['sp']:6.3f} {a['tc']:6.3f} {a['q']:6.3f} {a['tc_q']:6.3f} "
            f"{e['seconds']:8.2f}  {r1.get('sp', 0):5.3f}/{r1.get('tc', 0):5.3f}  "
            f"{r2.get('sp', 0):5.3f}/{r2.get('tc', 0):5.3f}  {len(e['failed'])}"
        )
        for case, why in list(e["failed"].items())[:3]:
            print(f"    failed {case}: {why}")
    if "bioaccel" in summary and "famsa" in summary:
        b, f = summary["bioaccel"], summary["famsa"]
        ratios = {
            "sp": _ratio(b["all"]["sp"], f["all"]["sp"]),
            "tc": _ratio(b["all"]["tc"], f["all"]["tc"]),
            "time": _ratio(b["seconds"], f["seconds"]),
        }
        print(
            f"bioaccel / FAMSA2: SP {ratios['sp']:.3f}  TC {ratios['tc']:.3f}  time {ratios['time']:.2f} "
            f"(goals: SP, TC >= 1; time <= 2)"
        )
        return ratios
    return None


def _ratio(a, b):
    return a / b if b else float("nan")


# ------------------------------------------------------------- (e) the accurate mode on BAliBASE

ACCURATE_PEERS = ("linsi", "probcons", "muscle", "famsa")


def _means(entry, cases):
    scores = [entry["per_case"][c] for c in cases]
    times = [entry["times"][c] for c in cases]
    n = max(1, len(cases))
    return {
        "cases": len(cases),
        "sp": sum(x["sp"] for x in scores) / n,
        "tc": sum(x["tc"] for x in scores) / n,
        "seconds": sum(t[0] for t in times),
        "cpu_seconds": sum(t[1] for t in times),
    }


def accurate_balibase(
    cases_dir: Path, ok, peer_every: int, repeat: int, workdir: Path, limit: int | None = None
):
    """(e): bioaccel accurate and default (fast) on every case, the peers on every
    ``peer_every``-th case; tables over all cases and over the peer subset; the goals."""
    ours = [t for t in ("bioaccel-accurate", "bioaccel") if t in ok]
    peers = [t for t in ACCURATE_PEERS if t in ok]
    MODE_OF["bioaccel"] = "fast"
    try:
        summary = balibase(
            cases_dir,
            ours + peers,
            repeat,
            limit,
            workdir,
            None,
            every={p: peer_every for p in peers},
        )
    finally:
        MODE_OF["bioaccel"] = None
    all_cases = sorted(summary[ours[0]]["per_case"]) if ours else []
    subset = sorted(summary[peers[0]]["per_case"]) if peers else all_cases
    table = {
        "all": {t: _means(summary[t], all_cases) for t in ours},
        "peer_subset": {t: _means(summary[t], subset) for t in ours + peers},
    }
    for name, rows in (("all cases", table["all"]), ("peer subset", table["peer_subset"])):
        print(f"  {name}:")
        print(f"  {'tool':13s} {'cases':>5s} {'SP':>6s} {'TC':>6s} {'wall s':>8s} {'CPU s':>8s}")
        for t, m in rows.items():
            print(
                f"  {LABELS[t]:13s} {m['cases']:5d} {m['sp']:6.3f} {m['tc']:6.3f} "
                f"{m['seconds']:8.2f} {m['cpu_seconds']:8.2f}"
            )
    goals = {}
    sub = table["peer_subset"]
    if "bioaccel-accurate" in sub and "linsi" in sub:
        a, li = sub["bioaccel-accurate"], sub["linsi"]
        goals["sp_vs_linsi"] = a["sp"] >= li["sp"]
        goals["tc_vs_linsi"] = a["tc"] >= li["tc"]
        goals["cpu_ratio_vs_linsi"] = _ratio(a["cpu_seconds"], li["cpu_seconds"])
        goals["wall_ratio_vs_linsi"] = _ratio(a["seconds"], li["seconds"])
        print(
            f"  accurate vs L-INS-i on {a['cases']} cases: SP {a['sp']:.3f} vs {li['sp']:.3f}, "
            f"TC {a['tc']:.3f} vs {li['tc']:.3f}, time ratio CPU "
            f"{goals['cpu_ratio_vs_linsi']:.3f} / wall {goals['wall_ratio_vs_linsi']:.3f} "
            "(goals: SP, TC >= L-INS-i; time <= 0.25)"
        )
    for label, rows in (("all", table["all"]), ("peer_subset", sub)):
        if "bioaccel-accurate" in rows and "bioaccel" in rows:
            gain = rows["bioaccel-accurate"]["sp"] - rows["bioaccel"]["sp"]
            goals[f"sp_gain_{label}"] = gain
            print(
                f"  accurate - default SP ({label.replace('_', ' ')}): {gain:+.3f} (goal >= +0.03)"
            )
    return {"summary": summary, "table": table, "goals": goals, "peer_every": peer_every}


# ------------------------------------------------------- (g) public seed families, references

#: (g)'s labels: the "bioaccel" runner passes no mode there (msa()'s default, "auto")
SEED_LABELS = {**LABELS, "bioaccel": "bioaccel-auto"}
SEED_METRICS = ("sp", "tc", "q", "tc_q", "q_all")


def seed_families(args, ok, workdir: Path):
    """(g): bioaccel accurate, bioaccel auto and every consistency peer (ACCURATE_PEERS) on
    every public seed family of benchmarks/seed_families.py, one thread, interleaved family by
    family (balibase() runs and scores them); per family and mean SP/TC/Q/TC_Q (core columns),
    Q over all residues, wall and CPU seconds, bioaccel accurate / peer time; the issue's goal
    against MUSCLE 5 and ProbCons."""
    from benchmarks.seed_families import describe, find_families, write_family

    families, skipped, missing = find_families(args.seed_max_rows)
    if args.seed_only:
        wanted = args.seed_only.split(",")
        families = [f for f in families if any(w in f.name for w in wanted)]
    describe(families, skipped, missing)
    scorer_dir = shared_msa_dir()
    if not families or scorer_dir is None:
        why = "no family found" if not families else "no ../shared/msa/msa_score.py"
        print(f"  skipped: {why}")
        return {"skipped": why, "missing": missing, "not_used": skipped}
    msa_score = load_msa_score(scorer_dir)
    cases_dir = workdir / "seed-cases"
    for f in families:
        write_family(f, cases_dir)
    tools = [t for t in ("bioaccel-accurate", "bioaccel") if t in ok]
    tools += [t for t in ACCURATE_PEERS if t in ok]
    show_compared(
        "each seed family's rows without gaps (one FASTA), every tool on one thread",
        [(SEED_LABELS[t], CALLS[t], 1) for t in tools],
    )
    summary = balibase(cases_dir, tools, args.bali_repeat, None, workdir / "seed", None)
    rows = {}
    for f in families:
        case = f.name
        ceiling = msa_score.score(
            str(cases_dir / f"{case}.ref.fa"), str(cases_dir / f"{case}.ref.fa")
        )
        row = {"kind": f.kind, "n": len(f.ids), "ceiling": ceiling, "tools": {}}
        for t in tools:
            scores = dict(summary[t]["per_case"][case])
            out = workdir / "seed" / t / f"{case}.fa"
            scores["q_all"] = (
                0.0
                if case in summary[t]["failed"]
                else msa_score.score(str(cases_dir / "allcols" / f"{case}.ref.fa"), str(out))["q"]
            )
            wall, cpu = summary[t]["times"][case]
            row["tools"][t] = {**scores, "seconds": wall, "cpu_seconds": cpu}
            if case in summary[t]["failed"]:
                row["tools"][t]["failed"] = summary[t]["failed"][case]
        rows[case] = row
        _print_seed_table(f"{case} ({f.kind}, {len(f.ids)} rows)", row["tools"], ceiling)
    groups = {"all": list(rows)}
    for f in families:
        groups.setdefault(f.kind, []).append(f.name)
    means = {}
    for group, cases in groups.items():
        means[group] = {
            t: {
                "families": len(cases),
                **{
                    m: sum(rows[c]["tools"][t][m] for c in cases) / len(cases) for m in SEED_METRICS
                },
                "seconds": sum(rows[c]["tools"][t]["seconds"] for c in cases),
                "cpu_seconds": sum(rows[c]["tools"][t]["cpu_seconds"] for c in cases),
                "failed": sorted(c for c in cases if "failed" in rows[c]["tools"][t]),
            }
            for t in tools
        }
        ceiling = {
            m: sum(rows[c]["ceiling"][m] for c in cases) / len(cases)
            for m in ("sp", "tc", "q", "tc_q")
        }
        _print_seed_table(
            f"means over {len(cases)} {'families' if group == 'all' else group + ' families'} "
            "(times: totals; a failure scores 0)",
            means[group],
            ceiling,
        )
    goals = _seed_goals(rows, means["all"])
    return {
        "families": rows,
        "means": means,
        "goals": goals,
        "not_used": skipped,
        "missing": missing,
        "sources": {f.name: f.source for f in families},
    }


def _print_seed_table(title, by_tool, ceiling):
    print(f"\n  {title}")
    print(
        f"  {'tool':14s} {'SP':>6s} {'TC':>6s} {'Q':>6s} {'TC_Q':>6s} {'Q_all':>6s} "
        f"{'wall s':>8s} {'CPU s':>8s} {'acc/tool wall':>13s} {'acc/tool CPU':>12s}"
    )
    print(
        f"  {'(reference)':14s} {ceiling['sp']:6.3f} {ceiling['tc']:6.3f} {ceiling['q']:6.3f} "
        f"{ceiling['tc_q']:6.3f}"
    )
    acc = by_tool.get("bioaccel-accurate")
    for t, m in by_tool.items():
        ratios = (
            f"{_ratio(acc['seconds'], m['seconds']):13.3f} {_ratio(acc['cpu_seconds'], m['cpu_seconds']):12.3f}"
            if acc and t != "bioaccel-accurate"
            else ""
        )
        failed = m.get("failed")
        note = (
            f"  failed: {failed}"
            if isinstance(failed, str)
            else (f"  failed on {len(failed)}: {', '.join(failed)}" if failed else "")
        )
        print(
            f"  {SEED_LABELS[t]:14s} {m['sp']:6.3f} {m['tc']:6.3f} {m['q']:6.3f} {m['tc_q']:6.3f} "
            f"{m['q_all']:6.3f} {m['seconds']:8.2f} {m['cpu_seconds']:8.2f} {ratios}{note}"
        )


def _seed_goals(rows, means):
    """The issue's goal: accurate mode >= MUSCLE 5 and ProbCons on SP and TC at <= 1/10 of
    their time (one thread); the families where accurate scores below each peer."""
    goals = {}
    acc = means.get("bioaccel-accurate")
    if not acc:
        return goals
    print("\n  goal: accurate >= MUSCLE 5 and ProbCons on SP and TC, at <= 1/10 of their time")
    for peer in ("muscle", "probcons"):
        if peer not in means:
            print(f"  {LABELS[peer]}: not run")
            continue
        p = means[peer]
        g = {
            "sp": acc["sp"] >= p["sp"],
            "tc": acc["tc"] >= p["tc"],
            "cpu_ratio": _ratio(acc["cpu_seconds"], p["cpu_seconds"]),
            "wall_ratio": _ratio(acc["seconds"], p["seconds"]),
        }
        g["time"] = g["cpu_ratio"] <= 0.1
        for m in ("sp", "tc", "q", "tc_q"):
            g[f"below_{m}"] = [
                c
                for c, r in rows.items()
                if r["tools"]["bioaccel-accurate"][m] < r["tools"][peer][m]
            ]
        goals[peer] = g
        met = lambda ok: "met" if ok else "NOT met"  # noqa: E731
        print(
            f"  vs {LABELS[peer]}: SP {acc['sp']:.3f} vs {p['sp']:.3f} ({met(g['sp'])}), "
            f"TC {acc['tc']:.3f} vs {p['tc']:.3f} ({met(g['tc'])}), time CPU {g['cpu_ratio']:.3f} "
            f"/ wall {g['wall_ratio']:.3f} of its ({met(g['time'])})"
        )
        for m in ("sp", "tc"):
            print(
                f"    accurate below {LABELS[peer]} on {m.upper()}: {', '.join(g[f'below_{m}']) or 'none'}"
            )
    return goals


def accurate_memory(args, workdir: Path, sizes=((200, 500), (500, 300))):
    """(f): the accurate mode's time and peak RSS on simulated families (1 thread)."""
    rows = []
    print(
        f"  {'family':>10s} {'time s':>8s} {'peak MiB':>9s} {'base MiB':>9s} {'SP':>6s} {'TC':>6s}"
    )
    for n, length in sizes:
        fam = simulate_family(
            n, length, "protein", args.seed, depth=args.depth, indel_rate=args.indel_rate
        )
        inp = workdir / f"accurate-{n}x{length}.fa"
        write_fasta(inp, fam.ids, fam.sequences)
        (run,) = family_runs(
            n, fam, inp, workdir, [("bioaccel-accurate", 1)], 1, None, args.timeout
        )
        run.update({"n": n, "length": length})
        rows.append(run)
        if "error" in run:
            print(f"  {f'{n} x {length}':>10s}  failed: {run['error']}")
            continue
        print(
            f"  {f'{n} x {length}':>10s} {run['seconds']:8.2f} {run['rss_mib']:9.0f} "
            f"{run['base_rss_mib']:9.0f} {run['sp']:6.3f} {run['tc']:6.3f}",
            flush=True,
        )
    return rows


def auto_limits(sizes: str, workdir: Path):  # noqa: ARG001 (the sections' signature)
    """(h): per N x L family (simulated, seed 1, depth 1.5, indel rate 0.02), the fast and the
    accurate mode on one thread in this process: CPU seconds of the call, SP/TC against the
    truth; and what ``auto`` chooses and why."""
    import numpy as np

    import bioaccel

    rows = []
    print(
        f"  {'family':>9s} {'pair cells':>10s} {'fast SP/TC':>12s} {'fast s':>7s} "
        f"{'accurate SP/TC':>15s} {'accurate s':>10s}  auto"
    )
    for size in sizes.split(","):
        n, length = (int(x) for x in size.lower().split("x"))
        fam = simulate_family(n, length, "protein", 1, depth=1.5, indel_rate=0.02)
        lens = np.array([len(x) for x in fam.sequences], dtype=np.float64)
        cells = float((lens.sum() ** 2 - (lens**2).sum()) / 2)
        row = {"n": n, "length": length, "pair_cells": cells}
        for mode in ("fast", "accurate"):
            t0 = time.process_time()
            aln = bioaccel.msa(list(zip(fam.ids, fam.sequences)), mode=mode, threads=1)
            row[f"{mode}_cpu_s"] = time.process_time() - t0
            sc = sp_tc_family(dict(zip(aln.ids, aln.sequences)), fam)
            row[f"{mode}_sp"], row[f"{mode}_tc"] = sc["sp"], sc["tc"]
        from bioaccel.msa_engine import resolve_mode  # the rule auto applies

        row["auto"] = resolve_mode("auto", lens)
        rows.append(row)
        print(
            f"  {size:>9s} {cells:10.2e} {row['fast_sp']:6.3f}/{row['fast_tc']:5.2f} "
            f"{row['fast_cpu_s']:7.1f} {row['accurate_sp']:8.3f}/{row['accurate_tc']:5.2f} "
            f"{row['accurate_cpu_s']:10.1f}  {row['auto'][0]}: {row['auto'][1]}",
            flush=True,
        )
    return rows


# ------------------------------------------------------------------ (b, c) simulated families


def run_worker(tool, threads, inp, out, backend, dry, timeout):
    """One tool run in a fresh process: (seconds of the alignment call, peak RSS in MiB)."""
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--worker",
        tool,
        str(threads),
        str(inp),
        str(out),
    ]
    if backend:
        cmd += ["--backend", backend]
    if dry:
        cmd.append("--dry")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    t0 = time.monotonic()
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if timeout and time.monotonic() - t0 > timeout:
            proc.kill()
            os.wait4(proc.pid, 0)
            raise TimeoutError(f"{tool} ({threads} threads) ran over {timeout} s on {inp}")
        time.sleep(0.05)
    proc.returncode = os.waitstatus_to_exitcode(status)
    out_text, err_text = proc.stdout.read().decode(), proc.stderr.read().decode()
    if proc.returncode:
        raise RuntimeError(
            f"{tool} ({threads} threads) failed on {inp} (exit {proc.returncode}): "
            f"{err_text.strip()[-400:]}"
        )
    return json.loads(out_text.strip().splitlines()[-1])["seconds"], usage.ru_maxrss / 1024


def family_runs(n, fam, inp, workdir, configs, repeat, backend, timeout):
    """Best time, peak RSS, baseline RSS and SP/TC of every (tool, threads) in configs."""
    results = {}
    for tool, threads in configs:
        results[(tool, threads)] = {
            "tool": tool,
            "threads": threads,
            "seconds": float("inf"),
            "rss_mib": 0.0,
        }
    for _ in range(repeat):  # interleaved: this machine's speed drifts
        for tool, threads in configs:
            r = results[(tool, threads)]
            if "error" in r:
                continue
            out = workdir / f"{tool}-{threads}t-{n}.fa"
            try:
                sec, rss = run_worker(tool, threads, inp, out, backend, False, timeout)
            except (RuntimeError, TimeoutError) as exc:
                r["error"] = str(exc)
                continue
            r["seconds"], r["rss_mib"] = min(r["seconds"], sec), max(r["rss_mib"], rss)
            r["out"] = out
    for (tool, threads), r in results.items():
        if "error" in r:
            continue
        _, r["base_rss_mib"] = run_worker(
            tool, threads, inp, workdir / "dry.fa", backend, True, timeout
        )
        ids, rows = read_fasta(r.pop("out"))
        r.update(sp_tc_family(dict(zip(ids, rows)), fam))
    return list(results.values())


def print_family(n, runs, threads):
    print(
        f"{'tool':9s} {'threads':>7s} {'time s':>8s} {'peak MiB':>9s} {'base MiB':>9s} {'SP':>6s} {'TC':>6s}"
    )
    by = {}
    for r in runs:
        by[(r["tool"], r["threads"])] = r
        if "error" in r:
            print(f"{LABELS[r['tool']]:9s} {r['threads']:7d}  failed: {r['error']}")
            continue
        print(
            f"{LABELS[r['tool']]:9s} {r['threads']:7d} {r['seconds']:8.2f} {r['rss_mib']:9.0f} "
            f"{r['base_rss_mib']:9.0f} {r['sp']:6.3f} {r['tc']:6.3f}"
        )
    ratios = {}
    b, f = by.get(("bioaccel", threads)), by.get(("famsa", threads))
    if b and f and "error" not in b and "error" not in f:
        ratios = {
            "time": _ratio(b["seconds"], f["seconds"]),
            "rss": _ratio(b["rss_mib"], f["rss_mib"]),
            "sp": _ratio(b["sp"], f["sp"]),
            "tc": _ratio(b["tc"], f["tc"]),
        }
        print(
            f"bioaccel / FAMSA2 at {threads} threads, n={n}: time {ratios['time']:.2f} (goal <= 1.5)  "
            f"peak memory {ratios['rss']:.2f} (goal <= 2)  SP {ratios['sp']:.3f}  TC {ratios['tc']:.3f} "
            f"(goals >= 1)"
        )
    for tool in ("bioaccel", "famsa"):
        one, many = by.get((tool, 1)), by.get((tool, threads))
        if threads > 1 and one and many and "error" not in one and "error" not in many:
            ratios[f"{tool}_speedup"] = _ratio(one["seconds"], many["seconds"])
            print(
                f"{LABELS[tool]} 1 -> {threads} threads: {ratios[f'{tool}_speedup']:.2f}x"
                + (" (goal >= 1.8)" if tool == "bioaccel" else "")
            )
    return ratios


def simulate(n, args, workdir):
    t0 = time.perf_counter()
    fam = simulate_family(
        n, args.length, "protein", args.seed, depth=args.depth, indel_rate=args.indel_rate
    )
    inp = workdir / f"family-{n}.fa"
    write_fasta(inp, fam.ids, fam.sequences)
    print(
        f"family of {n}: {fam.n_columns} true columns, depth {args.depth}, indel rate {args.indel_rate}, "
        f"seed {args.seed} (simulated in {time.perf_counter() - t0:.1f} s)"
    )
    return fam, inp


# ------------------------------------------------------------------------------------------ main

#: (n, root length, substitutions per site, seed) of the DNA families of (d)
DNA_FAMILIES = ((200, 600, 0.5, 3), (1000, 400, 1.0, 3), (300, 1000, 0.3, 5), (500, 300, 1.5, 7))


def dna_families(tools) -> list[dict]:
    """(d): accuracy only, in this process (the alignments are small)."""
    import bioaccel

    rows = []
    print(f"{'family':>24}  {'default +5/-1':>14}  {'NUC.4.4 +5/-4':>14}  {'FAMSA2':>14}")
    for n, length, depth, seed in DNA_FAMILIES:
        fam = simulate_family(n, length, "dna", seed, depth=depth)
        records = list(zip(fam.ids, fam.sequences))
        row = {"n": n, "length": length, "depth": depth, "seed": seed}
        for key, matrix in (("default", "auto"), ("nuc44", "NUC.4.4")):
            aln = bioaccel.msa(records, threads=2, matrix=matrix)
            row[key] = sp_tc_family(dict(zip(aln.ids, aln.sequences)), fam)
        if "famsa" in tools:
            import pyfamsa

            out = pyfamsa.Aligner(threads=2).align(
                [pyfamsa.Sequence(i.encode(), s.encode()) for i, s in records]
            )
            row["famsa"] = sp_tc_family({x.id.decode(): x.sequence.decode() for x in out}, fam)
        cells = [
            f"{row[k]['sp']:.3f}/{row[k]['tc']:.3f}" if k in row else "skipped"
            for k in ("default", "nuc44", "famsa")
        ]
        print(
            f"{f'{n} x {length}, depth {depth}':>24}  " + "  ".join(f"{c:>14}" for c in cells),
            flush=True,
        )
        rows.append(row)
    return rows


#: (label, n, root length, substitutions per site, indel rate, seed) of (e)
DNA_SPEED_FAMILIES = (
    ("NA-like", 433, 1470, 0.15, 0.001, 11),
    ("HA-like", 599, 1700, 0.15, 0.001, 12),
)


#: real influenza gene sets of (e): R's adegenet package ships them
#: (apt-get install r-cran-adegenet; pdH1N1 HA and NA, 433 genes each; usflu, 80 HA genes)
REAL_FLU_DIRS = (
    "/usr/lib/R/site-library/adegenet/files",
    "/usr/local/lib/R/site-library/adegenet/files",
)
REAL_FLU_SETS = ("pdH1N1-HA.fasta", "pdH1N1-NA.fasta", "usflu.fasta")
#: mothur's influenza HA alignment (599 genes, aligned: its gaps are dropped), from Debian's
#: mothur package (apt-get install mothur), or the copy the tests fetch (tests/.data)
MOTHUR_HA = (
    Path("/usr/share/doc/mothur/HA.fasta.gz"),
    ROOT / "tests" / ".data" / "HA.fasta.gz",
)


def real_flu_sets() -> list[Path]:
    """The real influenza sets found here (none: the section says where to get them)."""
    found: list[Path] = []
    for d in REAL_FLU_DIRS:
        found = [Path(d) / f for f in REAL_FLU_SETS if (Path(d) / f).is_file()]
        if found:
            break
    return found + [p for p in MOTHUR_HA if p.is_file()][:1]


def real_dna_speed(args, ok, workdir) -> list[dict]:
    """(e) on real genes: bioaccel and FAMSA2 (the peers in ``ok`` of bioaccel, famsa, mafft,
    clustalo) at --threads on adegenet's influenza sets, each run a fresh process timing the
    alignment call (run_worker), best of --repeat, the tools interleaved; no truth, so time
    and peak memory only (and the alignment widths)."""
    tools = [t for t in ("bioaccel", "famsa", "mafft", "clustalo") if t in ok]
    sets = real_flu_sets()
    if not sets:
        print("real influenza sets: skipped (apt-get install r-cran-adegenet ships them)")
        return []
    rows = []
    for path in sets:
        from Bio import SeqIO

        with gzip.open(path, "rt") if path.suffix == ".gz" else open(path) as fh:
            recs = [
                (r.id, str(r.seq).upper().replace("-", "").replace(".", ""))
                for r in SeqIO.parse(fh, "fasta")
            ]
        inp = workdir / f"real-{path.name.removesuffix('.gz')}"
        write_fasta(inp, [i for i, _ in recs], [s for _, s in recs])
        mean = sum(len(s) for _, s in recs) / len(recs)
        print(
            f"\n{path.name}: {len(recs)} real genes of {mean:.0f} nt, {args.threads} threads, best of {args.repeat} (interleaved)"
        )
        best: dict[str, dict] = {}
        for _ in range(args.repeat):
            for tool in tools:
                out = workdir / f"real-{path.stem}-{tool}.fa"
                try:
                    seconds, rss = run_worker(
                        tool, args.threads, inp, out, args.backend, False, args.timeout
                    )
                except (RuntimeError, TimeoutError) as exc:
                    best[tool] = {"tool": tool, "error": str(exc)}
                    continue
                if tool not in best or "error" in best[tool] or seconds < best[tool]["seconds"]:
                    width = len(next(SeqIO.parse(str(out), "fasta")).seq)
                    best[tool] = {"tool": tool, "seconds": seconds, "rss_mib": rss, "width": width}
        for tool in tools:
            r = best[tool]
            if "error" in r:
                print(f"  {LABELS[tool]:>12}  failed: {r['error']}")
            else:
                print(
                    f"  {LABELS[tool]:>12}  {r['seconds']:8.2f} s  {r['rss_mib']:8.0f} MiB  {r['width']} columns"
                )
        ratios = {}
        if "seconds" in best.get("bioaccel", {}):
            for peer in tools[1:]:
                if "seconds" in best[peer]:
                    ratios[peer] = _ratio(best["bioaccel"]["seconds"], best[peer]["seconds"])
                    print(f"  bioaccel / {LABELS[peer]}: time {ratios[peer]:.2f}")
        rows.append(
            {"label": path.name, "n": len(recs), "runs": list(best.values()), "ratios": ratios}
        )
    return rows


def dna_speed(args, ok, workdir) -> list[dict]:
    """(e): DNA families and long genomes, every peer at --threads; bioaccel / peer ratios."""
    tools = [t for t in ("bioaccel", "famsa", "mafft", "clustalo") if t in ok]
    n_long, len_long = (int(x) for x in args.long_genomes.split("x"))
    specs = list(DNA_SPEED_FAMILIES) + [("genomes", n_long, len_long, 0.05, 0.002, 13)]
    rows = []
    for label, n, length, depth, indel, seed in specs:
        fam = simulate_family(n, length, "dna", seed, depth=depth, indel_rate=indel)
        inp = workdir / f"{label}.fa"
        write_fasta(inp, fam.ids, fam.sequences)
        print(
            f"\n{label}: {n} x {length} nt, depth {depth}, indel rate {indel}, "
            f"{args.threads} threads, best of {args.repeat}"
        )
        configs = [(t, args.threads) for t in tools]
        runs = family_runs(n, fam, inp, workdir, configs, args.repeat, args.backend, args.timeout)
        print_family(n, runs, args.threads)
        by = {r["tool"]: r for r in runs if "error" not in r}
        ratios = {}
        if "bioaccel" in by:
            for peer in tools[1:]:
                if peer in by:
                    ratios[peer] = {
                        "time": _ratio(by["bioaccel"]["seconds"], by[peer]["seconds"]),
                        "rss": _ratio(by["bioaccel"]["rss_mib"], by[peer]["rss_mib"]),
                        "sp": _ratio(by["bioaccel"]["sp"], by[peer]["sp"]),
                    }
                    print(
                        f"bioaccel / {LABELS[peer]}: time {ratios[peer]['time']:.2f}  "
                        f"peak memory {ratios[peer]['rss']:.2f}  SP {ratios[peer]['sp']:.3f}"
                    )
        rows.append({"label": label, "n": n, "length": length, "runs": runs, "ratios": ratios})
    return rows


def worker_main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", required=True, choices=ALL_TOOLS)
    ap.add_argument("threads", type=int)
    ap.add_argument("inp")
    ap.add_argument("out")
    ap.add_argument("--backend")
    ap.add_argument("--dry", action="store_true")
    a = ap.parse_args(argv)
    ids, seqs = read_fasta(a.inp)
    seconds = RUNNERS[a.worker](ids, seqs, Path(a.inp), Path(a.out), a.threads, a.backend, a.dry)
    print(json.dumps({"seconds": seconds}))


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if "--worker" in argv:
        return worker_main(argv)
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    shared = shared_msa_dir() or ROOT.parent / "shared" / "msa"
    ap.add_argument(
        "--balibase",
        default=str(shared / "balibase-rv11-rv12"),
        help="folder of CASE.fa / CASE.ref.fa (default ../shared/msa/balibase-rv11-rv12)",
    )
    ap.add_argument(
        "--cases", type=int, default=None, help="only the first N BAliBASE cases (development)"
    )
    ap.add_argument("--bali-repeat", type=int, default=1)
    ap.add_argument("--bali-tools", default=",".join(TOOLS))
    ap.add_argument("--sizes", default="1000,10000", help="family sizes for (b); '' for none")
    ap.add_argument("--family-tools", default="bioaccel,famsa")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument(
        "--huge", type=int, default=0, help="(c): bioaccel alone on a family of this size"
    )
    ap.add_argument("--length", type=int, default=250)
    ap.add_argument("--depth", type=float, default=1.0)
    ap.add_argument("--indel-rate", type=float, default=0.01)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--backend", default=None, help="passed to bioaccel.msa (default: its own)")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds per family run")
    ap.add_argument("--skip-balibase", action="store_true")
    ap.add_argument("--dna", action="store_true", help="(d): DNA families, scores compared")
    ap.add_argument(
        "--dna-speed",
        action="store_true",
        help="(e): influenza-like DNA families and long genomes against every peer",
    )
    ap.add_argument("--long-genomes", default="20x30000", help="(e): N x LENGTH of the genomes")
    ap.add_argument("--add", action="store_true", help="(f): adding genomes and fragments")
    ap.add_argument("--add-genomes", type=int, default=100)
    ap.add_argument("--add-length", type=int, default=30000)
    ap.add_argument(
        "--accurate",
        action="store_true",
        help="(e): the accurate mode on BAliBASE beside the default mode and the consistency peers",
    )
    ap.add_argument(
        "--peer-every",
        type=int,
        default=1,
        help="(e): peers on every k-th case only (bioaccel on all)",
    )
    ap.add_argument(
        "--seed-families",
        action="store_true",
        help="(g): the accurate mode, auto mode and the consistency peers on public seed "
        "families with reference alignments (benchmarks/seed_families.py)",
    )
    ap.add_argument(
        "--seed-max-rows", type=int, default=200, help="(g): skip families with more rows"
    )
    ap.add_argument(
        "--seed-only", default=None, help="(g): only families whose names hold one of these (a,b)"
    )
    ap.add_argument(
        "--auto-limits",
        action="store_true",
        help="(h): fast and accurate near auto's limits (time, SP/TC, auto's choice)",
    )
    ap.add_argument("--auto-sizes", default="100x300,150x400,200x150,250x120,300x200")
    ap.add_argument(
        "--accurate-memory",
        action="store_true",
        help="(f): accurate mode time and peak RSS, 200 x 500 and 500 x 300 families",
    )
    ap.add_argument(
        "--workdir", default=None, help="keep alignments here (default: a temporary folder)"
    )
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)

    work = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="bench_msa."))
    work.mkdir(parents=True, exist_ok=True)
    report = {
        "machine": {
            "cpu": platform.processor() or platform.machine(),
            "cores": os.cpu_count(),
            "python": platform.python_version(),
        },
        "skipped": {},
        "versions": {},
    }
    listed = ALL_TOOLS if (args.accurate or args.accurate_memory or args.seed_families) else TOOLS
    missing = {t: why_missing(t) for t in listed}
    for t in listed:
        if missing[t]:
            print(f"{LABELS[t]}: skipped: {missing[t]}")
            report["skipped"][t] = missing[t]
        else:
            report["versions"][t] = tool_version(t)
    print("versions: " + ", ".join(f"{LABELS[t]} {v}" for t, v in report["versions"].items()))
    ok = [t for t in TOOLS if not missing[t]]
    # every tool gets the same threads in each table: 1 in (a), --threads and 1 in (b)
    show_compared(
        "multiple alignment of the same FASTA file, each tool in a fresh worker process, "
        f"the same threads T for every tool (T = 1 in (a); {args.threads} and 1 in (b))",
        [(LABELS[t], CALLS[t], args.threads) for t in ok],
    )
    ok = [t for t in listed if not missing[t]]

    if args.skip_balibase:
        print("\n(a) BAliBASE: skipped: --skip-balibase")
    elif not Path(args.balibase).is_dir():
        print(f"\n(a) BAliBASE: skipped: no folder {args.balibase} (--balibase DIR)")
    else:
        tools = [t for t in args.bali_tools.split(",") if t in ok]
        print(f"\n(a) BAliBASE RV11+RV12 ({args.balibase}), 1 thread, best of {args.bali_repeat}")
        summary = balibase(
            Path(args.balibase),
            tools,
            args.bali_repeat,
            args.cases,
            work / "balibase",
            args.backend,
        )
        report["balibase"] = summary
        report["balibase_ratios"] = print_balibase(summary)

    fam_tools = [t for t in args.family_tools.split(",") if t in ok]
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    report["families"] = []
    for n in sizes:
        print(
            f"\n(b) simulated protein family, n={n}, ~{args.length} residues, best of {args.repeat}"
        )
        if not fam_tools:
            print("  skipped: no tool available")
            continue
        fam, inp = simulate(n, args, work)
        configs = [(t, th) for t in fam_tools for th in sorted({args.threads, 1}, reverse=True)]
        runs = family_runs(n, fam, inp, work, configs, args.repeat, args.backend, args.timeout)
        report["families"].append(
            {
                "n": n,
                "columns": fam.n_columns,
                "runs": runs,
                "ratios": print_family(n, runs, args.threads),
            }
        )
        del fam

    if args.huge:
        print(
            f"\n(c) bioaccel alone on {args.huge} sequences, {args.threads} threads "
            f"(goal: < 10 min, < 4 GiB)"
        )
        if missing["bioaccel"]:
            print(f"  skipped: {missing['bioaccel']}")
        else:
            fam, inp = simulate(args.huge, args, work)
            runs = family_runs(
                args.huge,
                fam,
                inp,
                work,
                [("bioaccel", args.threads)],
                1,
                args.backend,
                args.timeout,
            )
            print_family(args.huge, runs, args.threads)
            report["huge"] = {"n": args.huge, "columns": fam.n_columns, "runs": runs}

    if args.dna:
        print("\n(d) simulated DNA families, SP/TC against the truth, 2 threads")
        report["dna"] = dna_families(ok)

    if args.dna_speed:
        print("\n(e) DNA families and long genomes, every peer")
        report["dna_speed_real"] = real_dna_speed(args, ok, work)
        report["dna_speed"] = dna_speed(args, ok, work)

    if args.add:
        print("\n(f) adding to an alignment")
        from benchmarks.bench_msa_add import main as bench_add

        report["add"] = bench_add(
            [
                "--genomes",
                str(args.add_genomes),
                "--length",
                str(args.add_length),
                "--threads",
                str(args.threads),
                "--repeats",
                str(max(args.repeat, 1)),
            ]
        )
    if args.accurate:
        print(
            f"\n(e) accurate mode on BAliBASE ({args.balibase}), 1 thread, best of "
            f"{args.bali_repeat}; peers on every {args.peer_every}-th case"
        )
        report["accurate"] = accurate_balibase(
            Path(args.balibase),
            ok,
            args.peer_every,
            args.bali_repeat,
            work / "accurate",
            args.cases,
        )

    if args.seed_families:
        print(
            f"\n(g) public seed families (Pfam, Rfam, Dfam seeds; bali-phy's Miklos-2008), "
            f"1 thread, best of {args.bali_repeat}, tools interleaved family by family"
        )
        t0 = time.perf_counter()
        report["seed_families"] = seed_families(args, ok, work)
        print(f"  (g) took {time.perf_counter() - t0:.0f} s")

    if args.auto_limits:
        print("\n(h) fast and accurate near auto's limits, 1 thread, CPU s")
        report["auto_limits"] = auto_limits(args.auto_sizes, work)

    if args.accurate_memory:
        print("\n(f) accurate mode on simulated families, 1 thread: time and peak RSS")
        report["accurate_memory"] = accurate_memory(args, work)

    if args.json:
        from bioaccel._core import atomic_output

        with atomic_output(args.json) as fh:
            json.dump(report, fh, indent=1, default=str)
        print(f"\nresults: {args.json}")
    if not args.workdir:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
