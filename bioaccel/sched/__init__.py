"""GPU scheduling on one server and beyond (the GPUs themselves, and multi-GPU data
parallelism: :mod:`bioaccel.devices`).

- ``arbiterd``: the root-owned arbiter service (one process decides; a lease lives as long as
  its client's connection);
- ``service``: where the service lives, found safely; ``client``: talking to it;
- ``install``: ``admin init``'s install, start and migration of the service;
- ``broker``: exclusive or K-way shared GPU leases through a run directory (``flock``): the
  per-user private mode without the service, and Slurm jobs;
- ``held``: a held lease, and the lease a job inherits from ``bioaccel gpu-run``;
- ``admin``: the run directory and its configuration;
- ``rundir``: files in a run directory, created and read safely;
- ``identity``: the kernel's user, the shares file and its accounts;
- ``procs``: what the kernel says about locks and processes (``/proc``);
- ``run``: a command run on leased GPUs (``bioaccel gpu-run``'s lease lifecycle);
- ``snapshot``: the one schema of ``bioaccel gpus --json`` (broker and service alike);
- ``display``: times, durations and GPU names as people read them;
- ``policies``: fcfs, priority, fair-share, predicted (aged shortest-first);
- ``history``: run history in SQLite and the runtime predictor fitted from it;
- ``placement``: greedy, LPT, local search, GA, ACO, PSO placement with data locality;
- ``simulator``: a discrete-event simulator comparing them.

The Snakemake scheduler plugin is the package ``snakemake_scheduler_plugin_bioaccel``.
"""

from .._core import lazy_getattr
from .admin import DEFAULT_RUN_DIR, host_shares, init_run_dir, run_dir
from .broker import GpuBroker, gpus_snapshot, lease
from .client import policy_view
from .display import human_duration, human_time, printable, token_of
from .held import ENV_HELD, ENV_LEASE, Lease, inherited_lease
from .history import History, RuntimePredictor
from .identity import current_user
from .install import install, run_daemon
from .policies import POLICIES, Request, make_policy, parse_shares
from .run import run_leased
from .service import find_socket

#: Names other packages use, from the module that defines them, loaded on first use (PEP 562)
#: so that importing this package stays cheap.
_LAZY = {
    "ALGORITHMS": (".placement", "ALGORITHMS"),
    "Arbiter": (".arbiterd", "Arbiter"),
    "STATE_SCHEMA": (".arbiterd", "STATE_SCHEMA"),
    "Waiting": (".arbiterd", "Waiting"),
    "Job": (".simulator", "Job"),
    "PLACEMENTS": (".simulator", "PLACEMENTS"),
    "Run": (".history", "Run"),
    "Stage": (".placement", "Stage"),
    "flood_workload": (".simulator", "flood_workload"),
    "heavy_tailed_workload": (".simulator", "heavy_tailed_workload"),
    "lower_bound": (".placement", "lower_bound"),
    "place": (".placement", "place"),
    "processing_times": (".placement", "processing_times"),
    "simulate": (".simulator", "simulate"),
    "workload_from_sequences": (".simulator", "workload_from_sequences"),
}

__getattr__ = lazy_getattr(__name__, _LAZY)

__all__ = [
    "ALGORITHMS",
    "STATE_SCHEMA",
    "Arbiter",
    "Waiting",
    "DEFAULT_RUN_DIR",
    "ENV_HELD",
    "ENV_LEASE",
    "PLACEMENTS",
    "POLICIES",
    "GpuBroker",
    "History",
    "Job",
    "Lease",
    "Request",
    "Run",
    "RuntimePredictor",
    "Stage",
    "current_user",
    "find_socket",
    "flood_workload",
    "gpus_snapshot",
    "heavy_tailed_workload",
    "host_shares",
    "human_duration",
    "human_time",
    "inherited_lease",
    "init_run_dir",
    "install",
    "lease",
    "lower_bound",
    "make_policy",
    "parse_shares",
    "place",
    "policy_view",
    "printable",
    "processing_times",
    "run_daemon",
    "run_dir",
    "run_leased",
    "simulate",
    "token_of",
    "workload_from_sequences",
]
