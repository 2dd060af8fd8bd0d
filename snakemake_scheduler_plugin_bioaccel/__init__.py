"""Snakemake scheduler plugin: ``snakemake --scheduler bioaccel --scheduler-bioaccel-policy fair``.

Selects, among the jobs Snakemake says are ready, those to start now: ranked by a bioaccel
queue policy (:mod:`bioaccel.sched.policies`), then taken first-fit while every numeric
resource (``_cores``, ``_nodes``, ``gpu``, ``mem_mb``, ...) stays within what is available.
Which GPU a job gets is not decided here (the plugin API chooses jobs, not devices): GPU jobs
run through ``bioaccel gpu-run``, whose leases bind them.

Job attributes the policies read:

- priority: the rule's ``priority:``;
- user (fair share): the Unix user running Snakemake (the kernel's, not ``$USER``), or the
  account in the job's ``user`` resource when the shares file lets that user charge it (else
  the job is refused for this round with the reason, and Snakemake's greedy scheduler runs);
  fair share is between users and accounts, as the arbiter's, never between rules;
- predicted runtime: the ``runtime`` resource (minutes), else the history model
  (``--scheduler-bioaccel-history``, kind = rule name, cells = the job's ``cells`` resource
  when the rule declares one, e.g. sequences x length of a gene family, else input bytes),
  else the cells as a relative cost.

``--scheduler-bioaccel-policy largest`` starts the longest predicted jobs first (LPT): for a
batch of independent jobs of very different sizes (one alignment per gene family) the big
ones start first and the small ones fill the gaps.

The plugin and the ``bioaccel gpu-run`` jobs of a workflow use whichever arbiter is in force:
the host's arbiter service (``bioaccel arbiterd``) where it runs, so the workflows of several
users on one server share its GPUs by one policy (without
``--scheduler-bioaccel-policy``/``-shares`` the plugin takes the service's policy and shares,
and predicts runtimes and fair share from the service's history); else this user's private
run directory (:func:`bioaccel.sched.run_dir`); inside a Slurm job, Slurm's binding.
``--scheduler-bioaccel-history`` names another run directory to predict from.

On any internal error the plugin logs it and returns None, and Snakemake falls back to its
own greedy scheduler for that round.
"""

import time
from dataclasses import dataclass, field
from typing import Dict, Mapping, Optional, Sequence, Union

from snakemake_interface_common.io import AnnotatedStringInterface
from snakemake_interface_scheduler_plugins.base import SchedulerBase
from snakemake_interface_scheduler_plugins.interfaces.jobs import JobSchedulerInterface
from snakemake_interface_scheduler_plugins.settings import SchedulerSettingsBase


@dataclass
class SchedulerSettings(SchedulerSettingsBase):
    policy: Optional[str] = field(
        default=None,
        metadata={
            "help": "Queue policy: fcfs, priority, fair, predicted (shortest first), "
            "largest (longest first) (default: the host's shares file, else "
            "fcfs)."
        },
    )
    shares: Optional[str] = field(
        default=None,
        metadata={
            "help": "Fair-share shares per user/rule, e.g. 'align=2,tree=1' (default: "
            "the host's shares file)."
        },
    )
    aging: Optional[float] = field(
        default=0.1,
        metadata={
            "help": "Aging of the predicted policy (seconds of predicted runtime "
            "forgiven per second waited)."
        },
    )
    history: Optional[str] = field(
        default=None,
        metadata={
            "help": "bioaccel run directory whose history predicts runtimes (default: "
            "the host-wide one)."
        },
    )


def _gpu_count(job) -> int:
    """The job's ``gpu`` resource as a whole number (1.5 GPUs is refused, never cut to 1)."""
    value = job.scheduler_resources.get("gpu", 0) or 0
    try:
        count = float(value)
    except (TypeError, ValueError):
        count = float("nan")
    if isinstance(value, bool) or not 0 <= count < float("inf") or count != int(count):
        raise ValueError(
            f"rule {_rule_name(job)!r}: resources gpu={value!r}; expected a whole "
            "number of GPUs >= 0"
        )
    return int(count)


def _rule_name(job) -> str:
    rule = getattr(job, "rule", None)
    name = getattr(rule, "name", None)
    if name:
        return str(name)
    jobs = getattr(job, "jobs", None)
    if callable(jobs):
        names = sorted({_rule_name(j) for j in jobs()})
        return "+".join(names) if names else "group"
    return "job"


class Scheduler(SchedulerBase):
    def __post_init__(self) -> None:
        from pathlib import Path

        from bioaccel.sched import (
            History,
            RuntimePredictor,
            current_user,
            find_socket,
            host_shares,
            make_policy,
            parse_shares,
            policy_view,
            run_dir,
        )

        settings = self.settings or SchedulerSettings()
        self._login = current_user()
        self._seen: Dict[int, float] = {}
        self._usage: Dict[str, float] = {}
        service = None if settings.history else find_socket()
        if service is not None:  # the host's arbiter service: its policy, shares and history
            config, policy, shares, usage, runs = policy_view()
            where = f"the arbiter service ({service})"
            self.arbiter = service
        else:
            arbiter = Path(settings.history) if settings.history else run_dir()
            config = host_shares(arbiter)
            policy, shares = config.policy, config.shares
            history = History(arbiter, config)
            runs = history.runs()
            usage = history.usage()
            where = f"the arbiter in {arbiter}"
            self.arbiter = arbiter
        self._config = config
        self.policy = make_policy(
            settings.policy or policy or "fcfs",
            shares=parse_shares(settings.shares) if settings.shares else shares,
            aging=settings.aging if settings.aging is not None else 0.1,
        )
        self._predictor = RuntimePredictor(runs)
        if self.policy.name == "fair":
            self._usage = dict(usage)  # every user's recorded use on this host
        self.logger.info(
            f"bioaccel scheduler: policy {self.policy.name}; GPU jobs lease "
            f"through {where} (bioaccel gpu-run)"
        )

    def _predicted(self, job, input_sizes) -> float:
        res = job.scheduler_resources
        runtime = res.get("runtime")
        if isinstance(runtime, (int, float)) and runtime > 0:
            return float(runtime) * 60.0
        cells = res.get("cells")
        if isinstance(cells, (int, float)) and cells > 0:
            size = float(cells)
        else:
            size = 0.0
            for f in getattr(job, "input", ()) or ():
                size += float(input_sizes.get(f) or 0)
        if self._predictor is not None:
            guess = self._predictor.predict(_rule_name(job), size)
            if guess is not None:
                return guess
        return size

    def select_jobs(
        self,
        selectable_jobs: Sequence[JobSchedulerInterface],
        remaining_jobs: Sequence[JobSchedulerInterface],
        available_resources: Mapping[str, Union[int, str]],
        input_sizes: Dict[AnnotatedStringInterface, int],
    ) -> Optional[Sequence[JobSchedulerInterface]]:
        try:
            return self._select(selectable_jobs, available_resources, input_sizes)
        except Exception as exc:  # the interface asks for None: Snakemake's greedy takes over
            self.logger.warning(
                f"bioaccel scheduler: {type(exc).__name__}: {exc}; "
                "falling back to Snakemake's greedy scheduler for this round"
            )
            return None

    def _select(self, jobs, available, input_sizes):
        from bioaccel.sched import Request

        now = time.time()
        requests = []
        for k, job in enumerate(jobs):
            first = self._seen.setdefault(id(job), now)
            res = job.scheduler_resources
            claimed = res.get("user")
            requests.append(
                Request(
                    f"{k:09d}",
                    self._config.check_account(
                        self._login, str(claimed) if claimed is not None else None
                    ),
                    float(job.priority or 0),
                    _gpu_count(job),
                    first,
                    self._predicted(job, input_sizes),
                    payload=job,
                )
            )
        remaining = {
            name: value for name, value in available.items() if isinstance(value, (int, float))
        }
        chosen = []
        for req in self.policy.order(requests, now, self._usage):
            res = req.payload.scheduler_resources
            need = {name: res.get(name, 0) for name in remaining}
            if all(not isinstance(v, (int, float)) or v <= remaining[n] for n, v in need.items()):
                for n, v in need.items():
                    if isinstance(v, (int, float)):
                        remaining[n] -= v
                chosen.append(req.payload)
                cost = req.predicted_s or 1.0
                self._usage[req.user] = self._usage.get(req.user, 0.0) + cost
        return chosen
