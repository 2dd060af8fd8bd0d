"""The ``largest`` policy (longest predicted first) and the scheduler plugin's ``cells``
resource: the order the phylogeny workflow starts its gene families in."""

import logging

import pytest

from bioaccel.devices._topology import Topology
from bioaccel.sched.history import History, Run
from bioaccel.sched.identity import current_user
from bioaccel.sched.policies import Request, make_policy
from bioaccel.sched.simulator import Job, simulate
from tests.snakemake_fakes import FakeJob


def lpt_makespan(durations, machines):
    """Graham's LPT by hand: the oracle for the policy's order."""
    loads = [0.0] * machines
    for d in sorted(durations, reverse=True):
        loads[loads.index(min(loads))] += d
    return max(loads)


def test_largest_orders_longest_first_and_unknowns_as_the_mean():
    reqs = [
        Request("a", submit_time=0, predicted_s=5),
        Request("b", submit_time=1, predicted_s=50),
        Request("c", submit_time=2, predicted_s=None),
        Request("d", submit_time=3, predicted_s=20),
    ]
    # c ranks as the mean of the known ones (25): between b and d
    assert [r.id for r in make_policy("largest").order(reqs, now=10)] == ["b", "c", "d", "a"]
    assert make_policy("lpt").name == "largest"


def test_largest_is_lpt_and_never_worse_than_fcfs_here():
    durations = [1, 2, 3, 4, 5, 6, 7, 8, 9, 50]
    jobs = [Job(f"j{k}", 1, 0.0, float(d), predicted_s=float(d)) for k, d in enumerate(durations)]
    cluster = Topology.identical(4)
    fcfs = simulate(jobs, cluster, "fcfs")
    lpt = simulate(jobs, cluster, "largest")
    assert lpt.makespan == pytest.approx(lpt_makespan(durations, 4))
    # the largest family submitted last: FCFS starts it after three rounds, LPT at once
    assert lpt.makespan == 50.0 and fcfs.makespan > 55.0


def test_plugin_starts_the_family_of_most_predicted_cost_first(tmp_path):
    from snakemake_scheduler_plugin_bioaccel import Scheduler, SchedulerSettings

    history = History(tmp_path)
    for cells, seconds in ((1e4, 1.0), (1e5, 10.0), (1e6, 100.0)):
        history.record(Run("msa", current_user(), "virtual GPU", 1, cells, None, 0.0, seconds, 0))
    sched = Scheduler(
        None, SchedulerSettings(policy="largest", history=str(tmp_path)), logging.getLogger("test")
    )
    sizes = {"small": 2_000, "huge": 900_000, "mid": 50_000, "tiny": 10}
    # input bytes say the opposite (a gzipped giant): the cells resource wins
    jobs = [
        FakeJob(
            f"msa-{name}",
            scheduler_resources={"_cores": 1, "gpu": 1, "cells": c},
            input=(f"{name}.fa",),
        )
        for name, c in sizes.items()
    ]
    input_sizes = {f"{n}.fa": 10**9 // (c + 1) for n, c in sizes.items()}
    picked = []
    pool = list(jobs)
    while pool:
        (job,) = sched.select_jobs(pool, pool, {"_cores": 1, "gpu": 4}, input_sizes)
        picked.append(job.name)
        pool.remove(job)
    assert picked == ["msa-huge", "msa-mid", "msa-small", "msa-tiny"]
    assert sched._predicted(jobs[1], input_sizes) == pytest.approx(90.0)
