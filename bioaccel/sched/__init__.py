"""GPU scheduling on one server and beyond.

- :mod:`.broker`: exclusive or K-way shared GPU leases through a run directory (``flock``):
  the per-user private mode, and Slurm jobs; :mod:`.held` (a held lease, the lease a job
  inherits from ``bioaccel gpu-run``), :mod:`.admin` (the run directory and its
  configuration), :mod:`.rundir` (files safe in a shared folder), :mod:`.identity` (the
  kernel's user, the shares file and its accounts), :mod:`.procs` (what ``/proc`` says);
- :mod:`.arbiterd`: the root-owned arbiter service (one process decides; leases live as
  long as a connection), :mod:`.service` (where it lives, found safely), :mod:`.client`,
  :mod:`.install` (`admin init`: install, start, migrate);
- :mod:`.run`: ``bioaccel gpu-run``'s lease lifecycle;
- :mod:`.snapshot`: the one schema of ``bioaccel gpus --json``;
- :mod:`.display`: times, durations and GPU names as people read them;
- :mod:`.policies`: fcfs, priority, fair-share, predicted (aged shortest-first);
- :mod:`.history`: run history in SQLite and the runtime predictor fitted from it;
- :mod:`.placement`: greedy, LPT, local search, GA, ACO, PSO placement with data locality;
- :mod:`.simulator`: a discrete-event simulator comparing them;
- ``snakemake_scheduler_plugin_bioaccel``: the Snakemake scheduler plugin.

Which GPUs a process may use (CUDA, Slurm, virtual GPUs) and multi-GPU data parallelism live
in :mod:`bioaccel.devices`.
"""

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

__all__ = [
    "DEFAULT_RUN_DIR",
    "History",
    "RuntimePredictor",
    "current_user",
    "install",
    "parse_shares",
    "run_daemon",
    "run_leased",
    "ENV_HELD",
    "ENV_LEASE",
    "POLICIES",
    "GpuBroker",
    "find_socket",
    "gpus_snapshot",
    "policy_view",
    "Lease",
    "Request",
    "host_shares",
    "human_duration",
    "human_time",
    "init_run_dir",
    "inherited_lease",
    "lease",
    "make_policy",
    "run_dir",
    "printable",
    "token_of",
]
