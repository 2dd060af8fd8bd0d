"""``bioaccel gpu-run``, ``bioaccel gpus`` and ``bioaccel sched ...`` (GPU scheduling)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import click


@click.command("gpu-run", context_settings={"ignore_unknown_options": True})
@click.option("--gpus", type=click.IntRange(min=1), default=1, show_default=True)
@click.option("--slots", type=click.IntRange(min=1), default=None,
              help="Slots to take on each GPU (default: all of them, i.e. exclusive).")
@click.option("--slots-per-gpu", type=click.IntRange(min=1), default=None,
              help="Allow sharing: each GPU has K slots (fixed per run directory).")
@click.option("--mem-gb", type=float, default=None, help="Memory budget per GPU.")
@click.option("--priority", type=float, default=0, show_default=True)
@click.option("--user", default=None,
              help="Fair-share account to charge (default: your own; another one only if the "
                   "shares file lists you in it).")
@click.option("--timeout", type=float, default=None, help="Seconds to wait for the GPUs.")
@click.option("--kind", default="command", show_default=True,
              help="What runs (e.g. align, distance): recorded for runtime prediction.")
@click.option("--cells", type=float, default=None,
              help="Cost of the job (sum of len_i * len_j): recorded, and with --kind used "
                   "to predict its runtime for the 'predicted' policy.")
@click.option("--predicted-s", type=float, default=None, help="Predicted runtime in seconds.")
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def gpu_run(gpus, slots, slots_per_gpu, mem_gb, priority, user, timeout, kind, cells,
            predicted_s, command):
    """Run COMMAND with GPU(s) of its own: waits for a lease, sets CUDA_VISIBLE_DEVICES,
    returns COMMAND's exit status (127: COMMAND not found, 126: not executable, as shells
    do). Use `--` before COMMAND."""
    import sqlite3

    from ..errors import SchedulerConfigError
    from ..sched.history import Run, RuntimePredictor
    from ..sched.leases import ENV_HELD, GpuBroker, human_duration, human_time

    with _arbiter_warnings():
        _check_command(command)  # before waiting, possibly for hours, for a GPU
        if os.environ.get(ENV_HELD) is not None:
            # already inside a lease (gpu-run under gpu-run): leasing again from the same run
            # directory would wait on our own parent; the GPUs are ours already
            click.echo(f"bioaccel gpu-run: inside a lease on GPU(s) {os.environ[ENV_HELD]}: "
                       "running there", err=True)
            _exit(_spawn(command).wait())
        broker = GpuBroker(slots_per_gpu=slots_per_gpu)
        if not broker.devices:
            click.echo("bioaccel gpu-run: no GPU is visible (no CUDA device, no "
                       "BIOACCEL_VIRTUAL_GPUS): running on the CPU without a lease", err=True)
            _exit(_spawn(command, dict(os.environ, CUDA_VISIBLE_DEVICES="")).wait())
        if predicted_s is None and cells is not None:
            predicted_s = RuntimePredictor(broker.history.runs(kind)).predict(kind, cells)
        label = " ".join(command)[:200]
        asked = time.time()
        held = broker.acquire(gpus, slots, mem_gb, timeout, priority, user, predicted_s, label)
        env = dict(os.environ, CUDA_VISIBLE_DEVICES=held.visible, **{ENV_HELD: held.visible})
        if os.environ.get("SLURM_JOB_ID"):
            granted = os.environ.get("CUDA_VISIBLE_DEVICES") or os.environ.get("SLURM_STEP_GPUS") \
                or os.environ.get("SLURM_JOB_GPUS") or "none"
            click.echo(f"bioaccel gpu-run: inside Slurm job {os.environ['SLURM_JOB_ID']}, which "
                       f"granted GPU(s) {granted}", err=True)
        start = time.time()
        click.echo(f"bioaccel gpu-run: GPU(s) {held.visible} "
                   f"({', '.join(d.name for d in held.devices)}) leased at {human_time(start)} "
                   f"after waiting {human_duration(start - asked)}, for: {label}", err=True)
        # the child shares the lock descriptors: the GPUs stay taken while it runs, even
        # if this wrapper is killed
        try:
            child = _spawn(command, env, held.lock_fds)
        except SystemExit:
            held.release()
            raise

        def forward(signum, _frame):
            child.send_signal(signum)

        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, forward)
        code = child.wait()
        end = time.time()
        held.release()
        click.echo(f"bioaccel gpu-run: GPU(s) {held.visible} released at {human_time(end)} after "
                   f"{human_duration(end - start)}, exit status {code}", err=True)
        try:
            broker.history.record(Run(kind, broker.config.check_account(_login(), user),
                                      held.devices[0].name, len(held.devices), cells, None, start,
                                      end, code, label))
        except (SchedulerConfigError, sqlite3.Error, OSError) as exc:  # the run itself is done
            click.echo(f"bioaccel gpu-run: warning: this run is not recorded in the history: {exc}",
                       err=True)
        _exit(code)


@contextlib.contextmanager
def _arbiter_warnings():
    """Show each warning about the run directory once, as a line of gpu-run's."""
    import warnings

    from ..errors import ArbiterWarning

    def show(message, *_args, **_kwargs):
        click.echo(f"bioaccel gpu-run: warning: {message}", err=True)

    with warnings.catch_warnings():
        warnings.simplefilter("default", ArbiterWarning)
        warnings.showwarning = show
        yield


def _check_command(command) -> None:
    """Exit 127 (not found) or 126 (not executable) like a shell, before any lease."""
    import shutil
    name = command[0]
    if "/" in name:
        if not os.path.exists(name):
            _fail(127, f"{name}: no such file")
        if os.path.isdir(name) or not os.access(name, os.X_OK):
            why = "is a directory" if os.path.isdir(name) else "permission denied"
            _fail(126, f"{name}: {why}")
    elif shutil.which(name) is None:
        _fail(127, f"{name}: command not found")


def _spawn(command, env=None, pass_fds=()):
    try:
        return subprocess.Popen(list(command), env=env, pass_fds=pass_fds)
    except FileNotFoundError:
        _fail(127, f"{command[0]}: command not found")
    except OSError as exc:
        _fail(126, f"{command[0]}: {exc.strerror.lower()}")


def _fail(code: int, message: str):
    click.echo(f"bioaccel gpu-run: {message}", err=True)
    sys.exit(code)


def _exit(code: int):
    sys.exit(code if code >= 0 else 128 - code)


def _login() -> str:
    from ..sched.identity import current_user
    return current_user()


@click.command("gpus")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output (for monitoring).")
def gpus(as_json):
    """Show the GPUs, every user's holders and the queue of waiting requests (policy order),
    with user names, ages and labels."""
    import warnings

    from rich.console import Console
    from rich.table import Table

    from ..errors import ArbiterWarning
    from ..sched.leases import GpuBroker, human_duration, human_time

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ArbiterWarning)
        broker = GpuBroker()
        now = time.time()
        holders = broker.holders()
        leases = broker.leases()
        waiting = broker.policy.order(broker.queue(), now, broker._usage(now))
        busy = broker.arbiter_busy()
    notes = list(dict.fromkeys(str(w.message) for w in caught))
    from ..sched.identity import user_name
    dir_owner = user_name(broker.dir_uid)
    if broker.dir_uid not in (0, os.getuid()):
        notes.append(f"the run directory {broker.dir} belongs to {dir_owner}, who can remove "
                     "other users' files in it: an administrator should create it (see README)")
    if busy:
        notes.append("the arbiter lock has been held for over 1 s: no waiting request can be "
                     "served while a process holds it")
    hint = None
    if not broker.devices:
        hint = ("no GPU is visible here: CuPy, numba-cuda and nvidia-smi found none "
                f"(CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES', '(unset)')!r}); "
                "set BIOACCEL_VIRTUAL_GPUS=N for N virtual GPUs")
    listed = {lease["lease"] for hs in holders.values() for lease in hs}
    elsewhere = [rec for rec in leases if rec["lease"] not in listed]  # GPUs not visible here
    queue = []
    for r in waiting:
        info = r.payload
        queue.append({"id": r.id, "user": info["user"], "uid": info["uid"],
                      "account": info["account"], "priority": r.priority, "gpus": r.gpus,
                      "slots": info["slots"], "mem_gb": info["mem_gb"], "pid": info.get("pid"),
                      "host": info.get("host"), "submit_time": r.submit_time,
                      "waited_s": now - r.submit_time, "predicted_s": r.predicted_s,
                      "label": info["label"]})
    if as_json:
        def age(h):
            return {**h, "age_s": None if h["since"] is None else now - h["since"]}
        click.echo(json.dumps({
            "run_dir": str(broker.dir), "run_dir_owner": dir_owner,
            "slots_per_gpu": broker.slots_per_gpu, "policy": broker.policy.name,
            "shares_file": str(broker.config.path) if broker.config.path else None,
            "time": now, "hint": hint, "warnings": notes,
            "devices": [{"index": d.index, "visible_id": d.visible_id, "name": d.name,
                         "memory_gb": d.memory_gb, "virtual": d.virtual,
                         "held_slots": sum(len(h["slots"]) for h in holders[d.index]),
                         "holders": [age(h) for h in holders[d.index]]} for d in broker.devices],
            "other_leases": [age(h) for h in elsewhere],
            "queue": queue}, indent=1))
        return
    console = Console(width=max(Console().width, 160))
    if hint:
        console.print(f"GPUs: none. {hint}")
    else:
        table = Table(title=f"GPUs ({broker.dir}, {broker.slots_per_gpu} slot(s) each, "
                            f"policy {broker.policy.name})")
        for col in ("GPU", "name", "memory", "held slots", "holder", "account", "pid",
                    "held for", "since", "label"):
            table.add_column(col)
        for d in broker.devices:
            hs = holders[d.index]
            first = [f"{d.index} ({d.visible_id})", d.name + (" (virtual)" if d.virtual and "virtual" not in d.name else ""),
                     f"{d.memory_gb:.0f} GB",
                     f"{sum(len(h['slots']) for h in hs)}/{broker.slots_per_gpu}"]
            if not hs:
                table.add_row(*first, "-", "", "", "", "", "")
            for k, h in enumerate(hs):
                table.add_row(*(first if k == 0 else [""] * 4), h["user"], h["account"] or "",
                              str(h["pid"] or ""),
                              human_duration(now - h["since"]) if h["since"] else "?",
                              human_time(h["since"]) if h["since"] else "?",
                              (h["label"] or "")[:60])
        console.print(table)
    if elsewhere:
        console.print("leases on GPUs not visible here: " + "; ".join(
            f"{h['user']} ({h['account']}) GPU(s) {','.join(h['slots'])} for "
            f"{human_duration(now - h['since'])}: {h['label'][:40]}" for h in elsewhere))
    if queue:
        q = Table(title="queue (policy order)")
        for col in ("request", "user", "account", "priority", "gpus", "waited", "predicted",
                    "label"):
            q.add_column(col)
        for r in queue:
            q.add_row(r["id"], r["user"], r["account"], f"{r['priority']:g}", str(r["gpus"]),
                      human_duration(r["waited_s"]),
                      "-" if r["predicted_s"] is None else human_duration(r["predicted_s"]),
                      r["label"][:60])
        console.print(q)
    else:
        console.print("queue: empty")
    for note in notes:
        console.print(f"warning: {note}", style="yellow", markup=False)


@click.group("sched")
def sched():
    """Scheduling tools: simulate policies and placements, place a batch of stages."""


def _cluster(spec: str):
    from ..devices._topology import Topology, load_topology
    if spec.isdigit():
        return Topology.identical(int(spec))
    return load_topology(spec)


def _print_table(table) -> None:
    """A rich table on stdout; uncut when stdout is a pipe or a file (rich would otherwise
    squeeze it into 80 columns and cut the cells: "prior…")."""
    from rich.console import Console
    console = Console() if sys.stdout.isatty() else Console(width=100_000)
    console.print(table)


def _write_csv(path, header: list[str], rows: list[list]) -> None:
    """A CSV table to ``path`` (written atomically) or to stdout for ``-``."""
    import csv

    from ._io import text_output
    with text_output(path) as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)


def _check_stdout(as_json: bool, *paths, inputs=()) -> None:
    from ._io import check_outputs, is_stdio
    from ..errors import SchedulerConfigError
    names = {f"--{k.replace('_', '-')}": v for k, v in paths}
    if as_json and any(is_stdio(p) for p in names.values()):
        raise SchedulerConfigError("--json writes to stdout: give the other outputs file names")
    check_outputs(inputs, **{k: v for k, v in paths})


def _topology_schema() -> str:
    """The topology YAML schema, as the topology module documents it."""
    from ..devices import _topology as topology
    doc = topology.__doc__
    block = doc[doc.index("::") + 2:doc.index("``speed``")].strip("\n")
    rest = " ".join(doc[doc.index("``speed``"):].split()).replace("``", "")
    return ("\b\nTopology YAML (or JSON):\n" + "\n".join(line[2:] for line in block.splitlines())
            + "\n\n" + rest + " A node may give a count instead of the list: gpus: 4.")


def _workload(spec: str, seed: int):
    from ..errors import SchedulerConfigError
    from ..sched import simulator
    if spec.startswith("heavy-tailed"):
        _, _, n = spec.partition(":")
        if n and not (n.isdigit() and int(n) > 0):
            raise SchedulerConfigError(f"--workload {spec!r}: expected heavy-tailed:N with N a "
                                       "positive number of jobs")
        return simulator.heavy_tailed_workload(int(n or 200), seed=seed)
    if spec == "flood":
        return simulator.flood_workload(seed=seed)
    path = Path(spec)
    if not path.is_file():
        raise SchedulerConfigError(f"--workload {spec!r}: no such file; expected a trace CSV, a "
                                   "sequence file, 'heavy-tailed[:N]' or 'flood'")
    if path.suffix.lower() == ".csv":
        return simulator.read_trace(path)
    return simulator.workload_from_sequences([path])


def _names(values) -> str:
    return ", ".join(values)


def _policies() -> tuple[str, ...]:
    from ..sched.policies import POLICIES
    return tuple(POLICIES)


def _placements() -> tuple[str, ...]:
    from ..sched.simulator import PLACEMENTS
    return tuple(PLACEMENTS)


@sched.command("simulate", epilog=_topology_schema())
@click.option("--workload", "-w", required=True,
              help="Trace CSV (job_id,num_gpu,submit_time,duration[,user,priority,predicted_s,"
                   "bytes,data]), a sequence file (one all-vs-all job), 'heavy-tailed[:N]' "
                   "(N jobs, default 200, some of 2 GPUs) or 'flood' (one user floods the "
                   "queue); built-in workloads run with every placement.")
@click.option("--cluster", "-c", required=True,
              help="Topology YAML (schema below), or a number of identical GPUs.")
@click.option("--policy", "-p", default="fcfs", show_default=True,
              help=f"{_names(_policies())}, or 'all' to compare them.")
@click.option("--placement", "-a", default="first-free", show_default=True,
              help=f"{_names(_placements())}. The optimizers ({_names(_placements()[2:])}) place "
                   "the single-GPU jobs offline; jobs of several GPUs take the first free ones.")
@click.option("--budget", type=float, default=1.0, show_default=True,
              help="Seconds per placement optimizer.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the built-in workloads and of the placement optimizers.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the metrics as JSON instead of the table: a list with one object per "
                   "policy (policy, placement, jobs, gpus and the keys of SimResult.metrics()).")
@click.option("--csv", "csv_out", type=click.Path(allow_dash=True), default=None,
              help="Also write the table as CSV (same columns as --json; - for stdout).")
def simulate_cmd(workload, cluster, policy, placement, budget, seed, as_json, csv_out):
    """Discrete-event simulation: makespan, JCT, wait, utilization, fairness, bytes moved."""
    from rich.table import Table

    from ._io import is_stdio
    from ..sched.simulator import simulate

    _check_stdout(as_json, ("csv", csv_out), inputs=[workload, cluster])
    jobs = _workload(workload, seed)
    topo = _cluster(cluster)
    rows = []
    for pol in (_policies() if policy == "all" else [policy]):
        r = simulate(jobs, topo, pol, placement, placement_budget_s=budget, seed=seed)
        rows.append({"policy": r.policy, "placement": r.placement, "jobs": len(jobs),
                     "gpus": len(topo.gpus), **r.metrics()})
    if csv_out is not None:
        _write_csv(csv_out, list(rows[0]), [list(row.values()) for row in rows])
    if as_json:
        click.echo(json.dumps(rows, indent=1))
        return
    if is_stdio(csv_out):
        return
    table = Table(title=f"{len(jobs)} jobs on {len(topo.gpus)} GPU(s)")
    for c in ("policy", "placement", "makespan s", "avg JCT s", "p95 JCT s", "avg wait s",
              "GPU util", "Jain", "GB moved"):
        table.add_column(c)
    for m in rows:
        table.add_row(m["policy"], m["placement"], f"{m['makespan_s']:.1f}",
                      f"{m['avg_jct_s']:.1f}", f"{m['p95_jct_s']:.1f}", f"{m['avg_wait_s']:.1f}",
                      f"{m['utilization']:.3f}", f"{m['jain']:.3f}",
                      f"{m['bytes_moved'] / 1e9:.2f}")
    _print_table(table)


def _read_stages(path):
    import csv

    from ..errors import SchedulerConfigError
    from ..sched.placement import Stage
    rows = []
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        missing = [c for c in ("name", "work") if c not in (reader.fieldnames or [])]
        if missing:
            raise SchedulerConfigError(f"{path}: line 1: missing column(s) {missing}; expected "
                                       "name,work,bytes,data")
        for line, row in enumerate(reader, start=2):
            try:
                rows.append(Stage(row["name"], float(row["work"]), float(row.get("bytes") or 0),
                                  row.get("data") or None))
            except (KeyError, TypeError, ValueError):
                raise SchedulerConfigError(f"{path}: line {line}: expected name,work,bytes,data "
                                           f"with numbers, got {row}") from None
    if not rows:
        raise SchedulerConfigError(f"{path}: no stages; expected a header name,work,bytes,data "
                                   "and one row per stage")
    return rows


def _schedule(stages, placement, p, topo) -> list[dict]:
    """Each stage's GPU, start and end: the stages of a GPU run one after another, in the
    order of the stage file."""
    load = [0.0] * p.shape[0]
    out = []
    for j, s in enumerate(stages):
        i = int(placement.assignment[j])
        start, load[i] = load[i], load[i] + float(p[i, j])
        out.append({"stage": s.name, "gpu": topo.gpus[i].key, "gpu_name": topo.gpus[i].name,
                    "start_s": start, "end_s": load[i]})
    return out


@sched.command("place", epilog=_topology_schema())
@click.option("--topology", "-t", required=True,
              help="Topology YAML (schema below), or a number of identical GPUs.")
@click.option("--stages", "-s", required=True, type=click.Path(exists=True, dir_okay=False),
              help="CSV name,work,bytes,data (work: seconds on a speed-1 GPU; bytes: input to "
                   "move; data: a data set of the topology or a node[:gpu] it sits on).")
@click.option("--algorithm", "-a", default="all", show_default=True,
              help="greedy, lpt, local, ga, aco, pso, or 'all' to compare them.")
@click.option("--budget", type=float, default=1.0, show_default=True,
              help="Seconds per iterative algorithm.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--json", "as_json", is_flag=True,
              help="Print JSON instead of tables: one object per algorithm (algorithm, "
                   "makespan_s, lower_bound_s, ratio, solve_s, and the assignment: stage, gpu, "
                   "start_s, end_s).")
@click.option("--csv", "csv_out", type=click.Path(allow_dash=True), default=None,
              help="Also write the comparison table as CSV (- for stdout).")
@click.option("--assignment", "assignment_out", type=click.Path(allow_dash=True), default=None,
              help="Also write every algorithm's stage -> GPU assignment with start and end as "
                   "CSV (algorithm,stage,gpu,gpu_name,start_s,end_s; - for stdout).")
def place_cmd(topology, stages, algorithm, budget, seed, as_json, csv_out, assignment_out):
    """Place a batch of stages on the GPUs of a topology; compare makespan to the lower bound
    and show which stage runs on which GPU, when (for the best algorithm)."""
    from rich.table import Table

    from ._io import is_stdio
    from ..sched.placement import ALGORITHMS, lower_bound, place, processing_times

    _check_stdout(as_json, ("csv", csv_out), ("assignment", assignment_out),
                  inputs=[stages, topology])
    topo = _cluster(topology)
    rows = _read_stages(stages)
    p = processing_times(rows, topo)
    lb = lower_bound(p)
    results = []
    for alg in (ALGORITHMS if algorithm == "all" else [algorithm]):
        r = place(p, alg, time_budget_s=budget, seed=seed, lb=lb)
        results.append({"algorithm": r.algorithm, "makespan_s": r.makespan, "lower_bound_s": lb,
                        "ratio": r.ratio, "solve_s": r.solve_s,
                        "assignment": _schedule(rows, r, p, topo)})
    columns = ["algorithm", "makespan_s", "lower_bound_s", "ratio", "solve_s"]
    if csv_out is not None:
        _write_csv(csv_out, columns, [[r[c] for c in columns] for r in results])
    if assignment_out is not None:
        _write_csv(assignment_out, ["algorithm", "stage", "gpu", "gpu_name", "start_s", "end_s"],
                   [[r["algorithm"], *a.values()] for r in results for a in r["assignment"]])
    if as_json:
        click.echo(json.dumps(results, indent=1))
        return
    if is_stdio(csv_out) or is_stdio(assignment_out):
        return
    table = Table(title=f"{len(rows)} stages on {len(topo.gpus)} GPU(s), lower bound {lb:.2f} s")
    for c in ("algorithm", "makespan s", "makespan / LB", "solve s"):
        table.add_column(c)
    for r in results:
        table.add_row(r["algorithm"], f"{r['makespan_s']:.2f}", f"{r['ratio']:.4f}",
                      f"{r['solve_s']:.3f}")
    _print_table(table)
    best = min(results, key=lambda r: r["makespan_s"])
    sched_table = Table(title=f"assignment of {best['algorithm']} (makespan "
                              f"{best['makespan_s']:.2f} s)")
    for c in ("stage", "GPU", "start s", "end s"):
        sched_table.add_column(c)
    for a in sorted(best["assignment"], key=lambda a: (a["gpu"], a["start_s"])):
        sched_table.add_row(a["stage"], f"{a['gpu']} ({a['gpu_name']})", f"{a['start_s']:.2f}",
                            f"{a['end_s']:.2f}")
    _print_table(sched_table)


@sched.command("import-benchmark")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--kind", required=True, help="What the benchmarked rule runs (align, distance, ...).")
@click.option("--cells", type=float, default=None, help="The job's cost (sum of len_i * len_j).")
@click.option("--device-kind", default="unknown", show_default=True)
def import_benchmark(files, kind, cells, device_kind):
    """Add Snakemake benchmark: files to the run history (for runtime prediction)."""
    from ..sched.leases import GpuBroker
    history = GpuBroker().history
    n = sum(history.import_snakemake_benchmark(f, kind=kind, cells=cells, device_kind=device_kind)
            for f in files)
    click.echo(f"imported {n} run(s) into {history.path}", err=True)


COMMANDS = (gpu_run, gpus, sched)
