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
(d) --dna: four simulated DNA families (200-1,000 sequences, 0.3-1.5 substitutions per site),
    SP/TC against the truth for bioaccel's default nucleotide scores (NUC.4.4 mapped to +5/-1),
    for raw NUC.4.4 (+5/-4) and for FAMSA2: what the default was chosen by.

What is timed: the alignment call only. bioaccel gets a SeqBatch read beforehand, FAMSA and Kalign
their sequence objects built beforehand; Clustal Omega and MAFFT are programs, so their time is the
whole run (process start and reading a small FASTA included). Writing the output is never timed.
A tool that is not installed (or bioaccel without ``bioaccel.msa``) is reported as "skipped: why".
Peers: pip install pyfamsa==0.7.0 kalign-python; apt-get install -y clustalo mafft.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.family_sim import read_fasta, simulate_family, write_fasta  # noqa: E402
from benchmarks.msa_accuracy import load_msa_score, shared_msa_dir, sp_tc_family  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TOOLS = ("bioaccel", "famsa", "kalign", "clustalo", "mafft")


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
    t0 = time.perf_counter()
    aln = bioaccel.msa(batch, threads=threads, **kw)
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
    write_fasta(out, ids, rows)     # kalign returns the rows in input order
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
    return _run_program(["clustalo", "-i", str(inp), "-o", str(out), "--outfmt=fa", "--force",
                         f"--threads={threads}"], out, dry)


def _run_mafft(ids, seqs, inp, out, threads, backend, dry):
    return _run_program(["mafft", "--auto", "--thread", str(threads), "--quiet", str(inp)], out, dry,
                        stdout_to_out=True)


RUNNERS = {"bioaccel": _run_bioaccel, "famsa": _run_famsa, "kalign": _run_kalign,
           "clustalo": _run_clustalo, "mafft": _run_mafft}
LABELS = {"bioaccel": "bioaccel", "famsa": "FAMSA2", "kalign": "Kalign", "clustalo": "ClustalO",
          "mafft": "MAFFT"}


def why_missing(tool: str) -> str | None:
    """None when the tool can run here, else the reason it cannot."""
    if tool == "bioaccel":
        import bioaccel
        return None if hasattr(bioaccel, "msa") else f"bioaccel.msa is not in {Path(bioaccel.__file__).parent}"
    if tool in ("famsa", "kalign"):
        module = "pyfamsa" if tool == "famsa" else "kalign"
        try:
            __import__(module)
        except ImportError as exc:
            return f"cannot import {module} ({exc}); pip install " + \
                ("pyfamsa==0.7.0" if tool == "famsa" else "kalign-python")
        return None
    return None if shutil.which(tool) else f"no {tool} program on PATH (apt-get install -y {tool})"


def tool_version(tool: str) -> str:
    try:
        if tool == "bioaccel":
            import bioaccel
            return getattr(bioaccel, "__version__", "?")
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

def balibase(cases_dir: Path, tools, repeat: int, limit: int | None, workdir: Path, backend):
    msa_score = load_msa_score(cases_dir.parent if (cases_dir.parent / "msa_score.py").is_file()
                               else shared_msa_dir())
    refs = sorted(cases_dir.glob("*.ref.fa"))
    if not refs:
        raise FileNotFoundError(f"no *.ref.fa cases in {cases_dir}")
    refs = refs[:limit] if limit else refs
    res = {t: {"seconds": 0.0, "scores": {}, "failed": {}} for t in tools}
    for t in tools:
        (workdir / t).mkdir(parents=True, exist_ok=True)
    for k, ref in enumerate(refs, 1):
        case = ref.name[:-len(".ref.fa")]
        inp = cases_dir / f"{case}.fa"
        ids, seqs = read_fasta(inp)
        for t in tools:
            out = workdir / t / f"{case}.fa"
            best = float("inf")
            try:
                for _ in range(repeat):
                    best = min(best, RUNNERS[t](ids, seqs, inp, out, 1, backend, False))
                res[t]["scores"][case] = msa_score.score(str(ref), str(out))
            except Exception as exc:  # a failure on one case scores 0 and is listed
                detail = exc.stderr.decode(errors="replace").strip()[-200:] if \
                    isinstance(exc, subprocess.CalledProcessError) and exc.stderr else str(exc)[:200]
                res[t]["failed"][case] = f"{type(exc).__name__}: {detail}"
                res[t]["scores"][case] = {"sp": 0.0, "tc": 0.0, "q": 0.0, "tc_q": 0.0}
                best = 0.0 if best == float("inf") else best
            res[t]["seconds"] += best
        if k % 20 == 0 or k == len(refs):
            print(f"  {k}/{len(refs)} cases", file=sys.stderr, flush=True)
    summary = {}
    for t in tools:
        scores = res[t]["scores"]
        entry = {"seconds": res[t]["seconds"], "cases": len(scores), "failed": res[t]["failed"]}
        for subset in ("all", "RV11", "RV12"):     # BB11001, BBS11001: RV11; BB12001, BBS12001: RV12
            chosen = [s for c, s in scores.items() if subset in ("all", "RV" + c.replace("BBS", "BB")[2:4])]
            entry[subset] = {m: sum(s[m] for s in chosen) / len(chosen) for m in ("sp", "tc", "q", "tc_q")} \
                if chosen else {}
            entry[subset]["cases"] = len(chosen)
        summary[t] = entry
    return summary


def print_balibase(summary):
    print(f"{'tool':9s} {'SP':>6s} {'TC':>6s} {'Q':>6s} {'TC_q':>6s} {'time s':>8s}  "
          f"{'RV11 SP/TC':>11s}  {'RV12 SP/TC':>11s}  failed")
    for t, e in summary.items():
        a, r1, r2 = e["all"], e["RV11"], e["RV12"]
        print(f"{LABELS[t]:9s} {a['sp']:6.3f} {a['tc']:6.3f} {a['q']:6.3f} {a['tc_q']:6.3f} "
              f"{e['seconds']:8.2f}  {r1.get('sp', 0):5.3f}/{r1.get('tc', 0):5.3f}  "
              f"{r2.get('sp', 0):5.3f}/{r2.get('tc', 0):5.3f}  {len(e['failed'])}")
        for case, why in list(e["failed"].items())[:3]:
            print(f"    failed {case}: {why}")
    if "bioaccel" in summary and "famsa" in summary:
        b, f = summary["bioaccel"], summary["famsa"]
        ratios = {"sp": _ratio(b["all"]["sp"], f["all"]["sp"]), "tc": _ratio(b["all"]["tc"], f["all"]["tc"]),
                  "time": _ratio(b["seconds"], f["seconds"])}
        print(f"bioaccel / FAMSA2: SP {ratios['sp']:.3f}  TC {ratios['tc']:.3f}  time {ratios['time']:.2f} "
              f"(goals: SP, TC >= 1; time <= 2)")
        return ratios
    return None


def _ratio(a, b):
    return a / b if b else float("nan")


# ------------------------------------------------------------------ (b, c) simulated families

def run_worker(tool, threads, inp, out, backend, dry, timeout):
    """One tool run in a fresh process: (seconds of the alignment call, peak RSS in MiB)."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", tool, str(threads), str(inp), str(out)]
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
        raise RuntimeError(f"{tool} ({threads} threads) failed on {inp} (exit {proc.returncode}): "
                           f"{err_text.strip()[-400:]}")
    return json.loads(out_text.strip().splitlines()[-1])["seconds"], usage.ru_maxrss / 1024


def family_runs(n, fam, inp, workdir, configs, repeat, backend, timeout):
    """Best time, peak RSS, baseline RSS and SP/TC of every (tool, threads) in configs."""
    results = {}
    for tool, threads in configs:
        results[(tool, threads)] = {"tool": tool, "threads": threads, "seconds": float("inf"), "rss_mib": 0.0}
    for _ in range(repeat):                 # interleaved: this machine's speed drifts
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
        _, r["base_rss_mib"] = run_worker(tool, threads, inp, workdir / "dry.fa", backend, True, timeout)
        ids, rows = read_fasta(r.pop("out"))
        r.update(sp_tc_family(dict(zip(ids, rows)), fam))
    return list(results.values())


def print_family(n, runs, threads):
    print(f"{'tool':9s} {'threads':>7s} {'time s':>8s} {'peak MiB':>9s} {'base MiB':>9s} {'SP':>6s} {'TC':>6s}")
    by = {}
    for r in runs:
        by[(r["tool"], r["threads"])] = r
        if "error" in r:
            print(f"{LABELS[r['tool']]:9s} {r['threads']:7d}  failed: {r['error']}")
            continue
        print(f"{LABELS[r['tool']]:9s} {r['threads']:7d} {r['seconds']:8.2f} {r['rss_mib']:9.0f} "
              f"{r['base_rss_mib']:9.0f} {r['sp']:6.3f} {r['tc']:6.3f}")
    ratios = {}
    b, f = by.get(("bioaccel", threads)), by.get(("famsa", threads))
    if b and f and "error" not in b and "error" not in f:
        ratios = {"time": _ratio(b["seconds"], f["seconds"]), "rss": _ratio(b["rss_mib"], f["rss_mib"]),
                  "sp": _ratio(b["sp"], f["sp"]), "tc": _ratio(b["tc"], f["tc"])}
        print(f"bioaccel / FAMSA2 at {threads} threads, n={n}: time {ratios['time']:.2f} (goal <= 1.5)  "
              f"peak memory {ratios['rss']:.2f} (goal <= 2)  SP {ratios['sp']:.3f}  TC {ratios['tc']:.3f} "
              f"(goals >= 1)")
    for tool in ("bioaccel", "famsa"):
        one, many = by.get((tool, 1)), by.get((tool, threads))
        if threads > 1 and one and many and "error" not in one and "error" not in many:
            ratios[f"{tool}_speedup"] = _ratio(one["seconds"], many["seconds"])
            print(f"{LABELS[tool]} 1 -> {threads} threads: {ratios[f'{tool}_speedup']:.2f}x"
                  + (" (goal >= 1.8)" if tool == "bioaccel" else ""))
    return ratios


def simulate(n, args, workdir):
    t0 = time.perf_counter()
    fam = simulate_family(n, args.length, "protein", args.seed, depth=args.depth, indel_rate=args.indel_rate)
    inp = workdir / f"family-{n}.fa"
    write_fasta(inp, fam.ids, fam.sequences)
    print(f"family of {n}: {fam.n_columns} true columns, depth {args.depth}, indel rate {args.indel_rate}, "
          f"seed {args.seed} (simulated in {time.perf_counter() - t0:.1f} s)")
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
                [pyfamsa.Sequence(i.encode(), s.encode()) for i, s in records])
            row["famsa"] = sp_tc_family({x.id.decode(): x.sequence.decode() for x in out}, fam)
        cells = [f"{row[k]['sp']:.3f}/{row[k]['tc']:.3f}" if k in row else "skipped"
                 for k in ("default", "nuc44", "famsa")]
        print(f"{f'{n} x {length}, depth {depth}':>24}  " + "  ".join(f"{c:>14}" for c in cells),
              flush=True)
        rows.append(row)
    return rows


def worker_main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", required=True, choices=TOOLS)
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
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    shared = shared_msa_dir() or ROOT.parent / "shared" / "msa"
    ap.add_argument("--balibase", default=str(shared / "balibase-rv11-rv12"),
                    help="folder of CASE.fa / CASE.ref.fa (default ../shared/msa/balibase-rv11-rv12)")
    ap.add_argument("--cases", type=int, default=None, help="only the first N BAliBASE cases (development)")
    ap.add_argument("--bali-repeat", type=int, default=1)
    ap.add_argument("--bali-tools", default=",".join(TOOLS))
    ap.add_argument("--sizes", default="1000,10000", help="family sizes for (b); '' for none")
    ap.add_argument("--family-tools", default="bioaccel,famsa")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--huge", type=int, default=0, help="(c): bioaccel alone on a family of this size")
    ap.add_argument("--length", type=int, default=250)
    ap.add_argument("--depth", type=float, default=1.0)
    ap.add_argument("--indel-rate", type=float, default=0.01)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--backend", default=None, help="passed to bioaccel.msa (default: its own)")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds per family run")
    ap.add_argument("--skip-balibase", action="store_true")
    ap.add_argument("--dna", action="store_true", help="(d): DNA families, scores compared")
    ap.add_argument("--workdir", default=None, help="keep alignments here (default: a temporary folder)")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)

    work = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="bench_msa."))
    work.mkdir(parents=True, exist_ok=True)
    report = {"machine": {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(),
                          "python": platform.python_version()}, "skipped": {}, "versions": {}}
    missing = {t: why_missing(t) for t in TOOLS}
    for t in TOOLS:
        if missing[t]:
            print(f"{LABELS[t]}: skipped: {missing[t]}")
            report["skipped"][t] = missing[t]
        else:
            report["versions"][t] = tool_version(t)
    print("versions: " + ", ".join(f"{LABELS[t]} {v}" for t, v in report["versions"].items()))
    ok = [t for t in TOOLS if not missing[t]]

    if args.skip_balibase:
        print("\n(a) BAliBASE: skipped: --skip-balibase")
    elif not Path(args.balibase).is_dir():
        print(f"\n(a) BAliBASE: skipped: no folder {args.balibase} (--balibase DIR)")
    else:
        tools = [t for t in args.bali_tools.split(",") if t in ok]
        print(f"\n(a) BAliBASE RV11+RV12 ({args.balibase}), 1 thread, best of {args.bali_repeat}")
        summary = balibase(Path(args.balibase), tools, args.bali_repeat, args.cases, work / "balibase", args.backend)
        report["balibase"] = summary
        report["balibase_ratios"] = print_balibase(summary)

    fam_tools = [t for t in args.family_tools.split(",") if t in ok]
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    report["families"] = []
    for n in sizes:
        print(f"\n(b) simulated protein family, n={n}, ~{args.length} residues, best of {args.repeat}")
        if not fam_tools:
            print("  skipped: no tool available")
            continue
        fam, inp = simulate(n, args, work)
        configs = [(t, th) for t in fam_tools for th in sorted({args.threads, 1}, reverse=True)]
        runs = family_runs(n, fam, inp, work, configs, args.repeat, args.backend, args.timeout)
        report["families"].append({"n": n, "columns": fam.n_columns, "runs": runs,
                                   "ratios": print_family(n, runs, args.threads)})
        del fam

    if args.huge:
        print(f"\n(c) bioaccel alone on {args.huge} sequences, {args.threads} threads "
              f"(goal: < 10 min, < 4 GiB)")
        if missing["bioaccel"]:
            print(f"  skipped: {missing['bioaccel']}")
        else:
            fam, inp = simulate(args.huge, args, work)
            runs = family_runs(args.huge, fam, inp, work, [("bioaccel", args.threads)], 1, args.backend,
                               args.timeout)
            print_family(args.huge, runs, args.threads)
            report["huge"] = {"n": args.huge, "columns": fam.n_columns, "runs": runs}

    if args.dna:
        print("\n(d) simulated DNA families, SP/TC against the truth, 2 threads")
        report["dna"] = dna_families(ok)

    if args.json:
        from bioaccel.sequences._read import atomic_output

        with atomic_output(args.json) as fh:
            json.dump(report, fh, indent=1, default=str)
        print(f"\nresults: {args.json}")
    if not args.workdir:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
