"""``bioaccel gpu-run``, ``bioaccel gpus`` and ``bioaccel sched ...`` (GPU scheduling)."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path

import click


@click.command("gpu-run", context_settings={"ignore_unknown_options": True})
@click.option("--gpus", type=click.IntRange(min=1), default=1, show_default=True)
@click.option(
    "--slots",
    type=click.IntRange(min=1),
    default=None,
    help="Slots to take on each GPU (default: all of them, i.e. exclusive).",
)
@click.option(
    "--slots-per-gpu",
    type=click.IntRange(min=1),
    default=None,
    help="Allow sharing: each GPU has K slots (fixed per run directory).",
)
@click.option("--mem-gb", type=float, default=None, help="Memory budget per GPU.")
@click.option("--priority", type=float, default=0, show_default=True)
@click.option(
    "--user",
    default=None,
    help="Fair-share account to charge (default: your own; another one only if the "
    "shares file lists you in it).",
)
@click.option("--timeout", type=float, default=None, help="Seconds to wait for the GPUs.")
@click.option(
    "--kind",
    default="command",
    show_default=True,
    help="What runs (e.g. align, distance): recorded for runtime prediction.",
)
@click.option(
    "--cells",
    type=float,
    default=None,
    help="Cost of the job (sum of len_i * len_j): recorded, and with --kind used "
    "to predict its runtime for the 'predicted' policy.",
)
@click.option("--predicted-s", type=float, default=None, help="Predicted runtime in seconds.")
@click.option(
    "--grace",
    type=click.FloatRange(min=0),
    default=30.0,
    show_default=True,
    help="Seconds the processes a job leaves behind in its process group get before "
    "SIGTERM (the GPUs stay leased until they exit).",
)
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def gpu_run(
    gpus,
    slots,
    slots_per_gpu,
    mem_gb,
    priority,
    user,
    timeout,
    kind,
    cells,
    predicted_s,
    grace,
    command,
):
    """Run COMMAND with GPU(s) of its own: waits for a lease, sets CUDA_VISIBLE_DEVICES,
    returns COMMAND's exit status (127: COMMAND not found, 126: not executable, as shells
    do). The lease ends when COMMAND's process group has exited. Use `--` before COMMAND."""
    from ..errors import AccountError
    from ..sched import run_leased

    with _arbiter_warnings():
        _check_command(command)  # before waiting, possibly for hours, for a GPU
        try:
            code = run_leased(
                command,
                gpus=gpus,
                slots=slots,
                slots_per_gpu=slots_per_gpu,
                mem_gb=mem_gb,
                priority=priority,
                account=user,
                timeout=timeout,
                kind=kind,
                cells=cells,
                predicted_s=predicted_s,
                grace_s=grace,
                say=_say,
            )
        except AccountError:
            raise
        except KeyboardInterrupt:  # while waiting: the request is withdrawn, nothing ran
            _fail(130, "interrupted while waiting for GPU(s): nothing was run")
        except FileNotFoundError:
            _fail(127, f"{command[0]}: command not found")
        except PermissionError as exc:
            _fail(126, f"{command[0]}: {(exc.strerror or str(exc)).lower()}")
        _exit(code)


def _say(line: str) -> None:
    click.echo(f"bioaccel gpu-run: {line}", err=True)


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


def _fail(code: int, message: str):
    click.echo(f"bioaccel gpu-run: {message}", err=True)
    sys.exit(code)


def _exit(code: int):
    sys.exit(code if code >= 0 else 128 - code)


@click.command("gpus")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output (for monitoring).")
def gpus(as_json):
    """Show the GPUs, every user's holders (the process holding each lock, as the kernel
    says) and the queue of waiting requests (policy order), with user names, ages and
    labels. Creates no file (works on a full disk)."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from ..sched import gpus_snapshot, human_duration, human_time, printable

    st = gpus_snapshot()
    if as_json:
        click.echo(json.dumps(st, indent=1))
        return
    notes = st["warnings"]
    hint = st["hint"]
    devices = st["devices"]
    queue = st["queue"]
    console = Console(width=max(Console().width, 160))

    def lit(text, **kw):  # every user-provided string literally, never markup or escapes
        return Text(printable(text), **kw)

    if hint:
        console.print(lit(f"GPUs: none. {hint}"))
    else:
        where = f"arbiter service {st['socket']}" if st["mode"] == "service" else st["run_dir"]
        table = Table(
            title=lit(f"GPUs ({where}, {st['slots_per_gpu']} slot(s) each, policy {st['policy']})")
        )
        for col in (
            "GPU",
            "name",
            "memory",
            "held slots",
            "holder",
            "account",
            "pid (kernel)",
            "held for",
            "since",
            "label",
        ):
            table.add_column(col)
        for d in devices:
            hs = d["holders"]
            first = [
                lit(f"{d['index']} ({d['token']})"),
                lit(d["name"]),
                lit(f"{d['memory_gb']:.0f} GB"),
                lit(f"{d['held_slots']}/{st['slots_per_gpu']}"),
            ]
            if not hs:
                table.add_row(*first, *[lit(x) for x in ("-", "", "", "", "", "")])
            for k, h in enumerate(hs):
                pid = str(h["pid"] or "?")
                if h["state"] != "held" or h["processes"]:
                    pid += f" [{h['state']}]" if h["state"] != "held" else ""
                    pid += "".join(
                        f"; {p['pid']} ({p['how']}) {p['cmd'][:40]}"
                        for p in h["processes"][:4]
                        if p["pid"] != h["pid"]
                    )
                elif h["pid"] and not h.get("pid_alive"):
                    pid += (
                        f" (exited; held by {', '.join(map(str, h['held_by']))})"
                        if h.get("held_by")
                        else " (exited; held by a process it started: run as root to see it)"
                    )
                table.add_row(
                    *(first if k == 0 else [lit("")] * 4),
                    lit(h["user"]),
                    lit(h["account"] or ""),
                    lit(pid),
                    lit(human_duration(h["held_s"]) if h["held_s"] is not None else "?"),
                    lit(human_time(h["since"]) if h["since"] else "?"),
                    lit((h["label"] or "")[:60]),
                )
        console.print(table)
    if queue:
        q = Table(title="queue (policy order)")
        for col in (
            "request",
            "user",
            "account",
            "priority",
            "gpus",
            "waited",
            "predicted",
            "now",
            "label",
        ):
            q.add_column(col)
        for r in queue:
            state = (
                "lapsed (waiter stopped?)"
                if r["lapsed"]
                else f"gets {','.join(r['planned'])}"
                if r["planned"]
                else "waits"
            )
            q.add_row(
                *[
                    lit(x)
                    for x in (
                        r["id"],
                        r["user"],
                        r["account"],
                        f"{r['priority']:g}",
                        str(r["gpus"]),
                        human_duration(r["waited_s"]),
                        "-" if r["predicted_s"] is None else human_duration(r["predicted_s"]),
                        state,
                        r["label"][:60],
                    )
                ]
            )
        console.print(q)
    else:
        console.print("queue: empty")
    for note in notes:
        console.print(lit(f"warning: {note}", style="yellow"))


@click.group("admin")
def admin():
    """Set-up of the host's GPU arbiter service (run as root)."""


@admin.command("init")
@click.option(
    "--slots-per-gpu",
    type=click.IntRange(min=1),
    default=None,
    help="Each GPU has K slots (default 1: exclusive).",
)
@click.option(
    "--shares-file",
    type=click.Path(dir_okay=False),
    default=None,
    help="The host's one shares file (default: BIOACCEL_SHARES_FILE, else /etc/bioaccel/shares).",
)
@click.option(
    "--max-waiting",
    type=click.IntRange(1, 100000),
    default=None,
    help="Waiting requests per user (default 32).",
)
@click.option(
    "--max-connections",
    type=click.IntRange(4, 200000),
    default=None,
    help="Connections to the service per user (default 256).",
)
@click.option(
    "--policy",
    type=click.Choice(["fcfs", "priority", "fair", "predicted", "largest"]),
    default=None,
    help="Queue policy (default: the shares file's 'policy' line, else fcfs).",
)
@click.option(
    "--state-dir",
    type=click.Path(),
    default=None,
    help="The service's root-only state folder (default /var/lib/bioaccel).",
)
@click.option(
    "--socket-dir",
    type=click.Path(),
    default=None,
    help="The folder of its socket (default /run/bioaccel).",
)
@click.option(
    "--no-start", is_flag=True, help="Write the configuration (and unit) but start nothing."
)
def admin_init(
    slots_per_gpu,
    shares_file,
    max_waiting,
    max_connections,
    policy,
    state_dir,
    socket_dir,
    no_start,
):
    """Install and start the arbiter service (`bioaccel arbiterd`): its configuration with
    this host's GPUs in a root-only folder, a systemd unit where systemd runs (else the
    daemon is started directly), and the migration away from the old shared /tmp/bioaccel."""
    from ..sched import install

    install(
        slots_per_gpu=slots_per_gpu,
        shares_file=shares_file,
        max_waiting=max_waiting,
        max_connections=max_connections,
        policy=policy,
        state_dir=state_dir,
        socket_dir=socket_dir,
        start=not no_start,
        say=lambda line: click.echo(f"bioaccel admin init: {line}", err=True),
    )


@click.command("arbiterd")
@click.option(
    "--foreground", is_flag=True, help="Stay in the foreground, logging to stderr (systemd)."
)
@click.option(
    "--state-dir",
    type=click.Path(),
    default=None,
    help="Its root-only state folder (default /var/lib/bioaccel).",
)
@click.option(
    "--socket-dir",
    type=click.Path(),
    default=None,
    help="The folder of its socket (default /run/bioaccel).",
)
def arbiterd(foreground, state_dir, socket_dir):
    """The host's GPU arbiter service (run as root; `bioaccel admin init` sets it up and
    starts it). Without --foreground it detaches and logs to arbiterd.log in its state
    folder."""
    from ..sched import run_daemon

    run_daemon(state_dir, socket_dir, foreground)


@click.group("sched")
def sched():
    """Scheduling tools: simulate policies and placements, place a batch of stages."""


def _cluster(spec: str):
    from ..devices import Topology, load_topology

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
    from ..errors import SchedulerConfigError
    from ._io import check_outputs, is_stdio

    names = {f"--{k.replace('_', '-')}": v for k, v in paths}
    if as_json and any(is_stdio(p) for p in names.values()):
        raise SchedulerConfigError("--json writes to stdout: give the other outputs file names")
    check_outputs(inputs, **{k: v for k, v in paths})


def _topology_schema() -> str:
    """The topology YAML schema, as the topology module documents it (for --help)."""
    from ..devices import topology_schema

    return "\b\n" + topology_schema()


def _workload(spec: str, seed: int):
    from ..errors import SchedulerConfigError
    from ..sched import simulator

    if spec.startswith("heavy-tailed"):
        _, _, n = spec.partition(":")
        if n and not (n.isdigit() and int(n) > 0):
            raise SchedulerConfigError(
                f"--workload {spec!r}: expected heavy-tailed:N with N a positive number of jobs"
            )
        return simulator.heavy_tailed_workload(int(n or 200), seed=seed)
    if spec == "flood":
        return simulator.flood_workload(seed=seed)
    path = Path(spec)
    if not path.is_file():
        raise SchedulerConfigError(
            f"--workload {spec!r}: no such file; expected a trace CSV, a "
            "sequence file, 'heavy-tailed[:N]' or 'flood'"
        )
    if path.suffix.lower() == ".csv":
        return simulator.read_trace(path)
    return simulator.workload_from_sequences([path])


def _names(values) -> str:
    return ", ".join(values)


def _policies() -> tuple[str, ...]:
    from ..sched import POLICIES

    return tuple(POLICIES)


def _placements() -> tuple[str, ...]:
    from ..sched import PLACEMENTS

    return tuple(PLACEMENTS)


@sched.command("simulate", epilog=_topology_schema())
@click.option(
    "--workload",
    "-w",
    required=True,
    help="Trace CSV (job_id,num_gpu,submit_time,duration[,user,priority,predicted_s,"
    "bytes,data]), a sequence file (one all-vs-all job), 'heavy-tailed[:N]' "
    "(N jobs, default 200, some of 2 GPUs) or 'flood' (one user floods the "
    "queue); built-in workloads run with every placement.",
)
@click.option(
    "--cluster",
    "-c",
    required=True,
    help="Topology YAML (schema below), or a number of identical GPUs.",
)
@click.option(
    "--policy",
    "-p",
    default="fcfs",
    show_default=True,
    help=f"{_names(_policies())}, or 'all' to compare them.",
)
@click.option(
    "--placement",
    "-a",
    default="first-free",
    show_default=True,
    help=f"{_names(_placements())}. The optimizers ({_names(_placements()[2:])}) place "
    "the single-GPU jobs offline; jobs of several GPUs take the first free ones.",
)
@click.option(
    "--budget", type=float, default=1.0, show_default=True, help="Seconds per placement optimizer."
)
@click.option(
    "--seed",
    type=int,
    default=0,
    show_default=True,
    help="Seed of the built-in workloads and of the placement optimizers.",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the metrics as JSON instead of the table: a list with one object per "
    "policy (policy, placement, jobs, gpus and the keys of SimResult.metrics()).",
)
@click.option(
    "--csv",
    "csv_out",
    type=click.Path(allow_dash=True),
    default=None,
    help="Also write the table as CSV (same columns as --json; - for stdout).",
)
def simulate_cmd(workload, cluster, policy, placement, budget, seed, as_json, csv_out):
    """Discrete-event simulation: makespan, JCT, wait, utilization, fairness, bytes moved."""
    from rich.table import Table

    from ..sched import simulate
    from ._io import is_stdio

    _check_stdout(as_json, ("csv", csv_out), inputs=[workload, cluster])
    jobs = _workload(workload, seed)
    topo = _cluster(cluster)
    rows = []
    for pol in _policies() if policy == "all" else [policy]:
        r = simulate(jobs, topo, pol, placement, placement_budget_s=budget, seed=seed)
        rows.append(
            {
                "policy": r.policy,
                "placement": r.placement,
                "jobs": len(jobs),
                "gpus": len(topo.gpus),
                **r.metrics(),
            }
        )
    if csv_out is not None:
        _write_csv(csv_out, list(rows[0]), [list(row.values()) for row in rows])
    if as_json:
        click.echo(json.dumps(rows, indent=1))
        return
    if is_stdio(csv_out):
        return
    table = Table(title=f"{len(jobs)} jobs on {len(topo.gpus)} GPU(s)")
    for c in (
        "policy",
        "placement",
        "makespan s",
        "avg JCT s",
        "p95 JCT s",
        "avg wait s",
        "GPU util",
        "Jain",
        "GB moved",
    ):
        table.add_column(c)
    for m in rows:
        table.add_row(
            m["policy"],
            m["placement"],
            f"{m['makespan_s']:.1f}",
            f"{m['avg_jct_s']:.1f}",
            f"{m['p95_jct_s']:.1f}",
            f"{m['avg_wait_s']:.1f}",
            f"{m['utilization']:.3f}",
            f"{m['jain']:.3f}",
            f"{m['bytes_moved'] / 1e9:.2f}",
        )
    _print_table(table)


def _read_stages(path):
    import csv

    from ..errors import SchedulerConfigError
    from ..sched import Stage

    rows = []
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        missing = [c for c in ("name", "work") if c not in (reader.fieldnames or [])]
        if missing:
            raise SchedulerConfigError(
                f"{path}: line 1: missing column(s) {missing}; expected name,work,bytes,data"
            )
        for line, row in enumerate(reader, start=2):
            try:
                rows.append(
                    Stage(
                        row["name"],
                        float(row["work"]),
                        float(row.get("bytes") or 0),
                        row.get("data") or None,
                    )
                )
            except (KeyError, TypeError, ValueError):
                raise SchedulerConfigError(
                    f"{path}: line {line}: expected name,work,bytes,data with numbers, got {row}"
                ) from None
    if not rows:
        raise SchedulerConfigError(
            f"{path}: no stages; expected a header name,work,bytes,data and one row per stage"
        )
    return rows


def _schedule(stages, placement, p, topo) -> list[dict]:
    """Each stage's GPU, start and end: the stages of a GPU run one after another, in the
    order of the stage file."""
    load = [0.0] * p.shape[0]
    out = []
    for j, s in enumerate(stages):
        i = int(placement.assignment[j])
        start, load[i] = load[i], load[i] + float(p[i, j])
        out.append(
            {
                "stage": s.name,
                "gpu": topo.gpus[i].key,
                "gpu_name": topo.gpus[i].name,
                "start_s": start,
                "end_s": load[i],
            }
        )
    return out


@sched.command("place", epilog=_topology_schema())
@click.option(
    "--topology",
    "-t",
    required=True,
    help="Topology YAML (schema below), or a number of identical GPUs.",
)
@click.option(
    "--stages",
    "-s",
    required=True,
    type=click.Path(exists=True, dir_okay=False),
    help="CSV name,work,bytes,data (work: seconds on a speed-1 GPU; bytes: input to "
    "move; data: a data set of the topology or a node[:gpu] it sits on).",
)
@click.option(
    "--algorithm",
    "-a",
    default="all",
    show_default=True,
    help="greedy, lpt, local, ga, aco, pso, or 'all' to compare them.",
)
@click.option(
    "--budget", type=float, default=1.0, show_default=True, help="Seconds per iterative algorithm."
)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print JSON instead of tables: one object per algorithm (algorithm, "
    "makespan_s, lower_bound_s, ratio, solve_s, and the assignment: stage, gpu, "
    "start_s, end_s).",
)
@click.option(
    "--csv",
    "csv_out",
    type=click.Path(allow_dash=True),
    default=None,
    help="Also write the comparison table as CSV (- for stdout).",
)
@click.option(
    "--assignment",
    "assignment_out",
    type=click.Path(allow_dash=True),
    default=None,
    help="Also write every algorithm's stage -> GPU assignment with start and end as "
    "CSV (algorithm,stage,gpu,gpu_name,start_s,end_s; - for stdout).",
)
def place_cmd(topology, stages, algorithm, budget, seed, as_json, csv_out, assignment_out):
    """Place a batch of stages on the GPUs of a topology; compare makespan to the lower bound
    and show which stage runs on which GPU, when (for the best algorithm)."""
    from rich.table import Table

    from ..sched import ALGORITHMS, lower_bound, place, processing_times
    from ._io import is_stdio

    _check_stdout(
        as_json, ("csv", csv_out), ("assignment", assignment_out), inputs=[stages, topology]
    )
    topo = _cluster(topology)
    rows = _read_stages(stages)
    p = processing_times(rows, topo)
    lb = lower_bound(p)
    results = []
    for alg in ALGORITHMS if algorithm == "all" else [algorithm]:
        r = place(p, alg, time_budget_s=budget, seed=seed, lb=lb)
        results.append(
            {
                "algorithm": r.algorithm,
                "makespan_s": r.makespan,
                "lower_bound_s": lb,
                "ratio": r.ratio,
                "solve_s": r.solve_s,
                "assignment": _schedule(rows, r, p, topo),
            }
        )
    columns = ["algorithm", "makespan_s", "lower_bound_s", "ratio", "solve_s"]
    if csv_out is not None:
        _write_csv(csv_out, columns, [[r[c] for c in columns] for r in results])
    if assignment_out is not None:
        _write_csv(
            assignment_out,
            ["algorithm", "stage", "gpu", "gpu_name", "start_s", "end_s"],
            [[r["algorithm"], *a.values()] for r in results for a in r["assignment"]],
        )
    if as_json:
        click.echo(json.dumps(results, indent=1))
        return
    if is_stdio(csv_out) or is_stdio(assignment_out):
        return
    table = Table(title=f"{len(rows)} stages on {len(topo.gpus)} GPU(s), lower bound {lb:.2f} s")
    for c in ("algorithm", "makespan s", "makespan / LB", "solve s"):
        table.add_column(c)
    for r in results:
        table.add_row(
            r["algorithm"], f"{r['makespan_s']:.2f}", f"{r['ratio']:.4f}", f"{r['solve_s']:.3f}"
        )
    _print_table(table)
    best = min(results, key=lambda r: r["makespan_s"])
    sched_table = Table(
        title=f"assignment of {best['algorithm']} (makespan {best['makespan_s']:.2f} s)"
    )
    for c in ("stage", "GPU", "start s", "end s"):
        sched_table.add_column(c)
    for a in sorted(best["assignment"], key=lambda a: (a["gpu"], a["start_s"])):
        sched_table.add_row(
            a["stage"], f"{a['gpu']} ({a['gpu_name']})", f"{a['start_s']:.2f}", f"{a['end_s']:.2f}"
        )
    _print_table(sched_table)


@sched.command("import-benchmark")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--kind", required=True, help="What the benchmarked rule runs (align, distance, ...)."
)
@click.option("--cells", type=float, default=None, help="The job's cost (sum of len_i * len_j).")
@click.option("--device-kind", default="unknown", show_default=True)
def import_benchmark(files, kind, cells, device_kind):
    """Add Snakemake benchmark: files to the run history (for runtime prediction)."""
    from ..sched import GpuBroker

    history = GpuBroker().history
    n = sum(
        history.import_snakemake_benchmark(f, kind=kind, cells=cells, device_kind=device_kind)
        for f in files
    )
    click.echo(f"imported {n} run(s) into {history.path}", err=True)
