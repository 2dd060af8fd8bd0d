"""Snakemake with bioaccel: GPU jobs through ``gpu-run``, and the scheduler plugin."""

import json
import logging
import os
import subprocess
import sys

import pytest

from tests.datasets import child_env
from tests.snakemake_fakes import RECORD, SNAKEFILE, FakeJob, check_no_sharing

pytestmark = pytest.mark.workflow


def run_snakemake(exe, tmp_path, *extra):
    (tmp_path / "Snakefile").write_text(f"PY = {sys.executable!r}\n" + SNAKEFILE)
    (tmp_path / "record.py").write_text(RECORD)
    env = child_env(BIOACCEL_VIRTUAL_GPUS="4", BIOACCEL_RUN_DIR=str(tmp_path / "run"))
    env.pop("CUDA_VISIBLE_DEVICES", None)
    proc = subprocess.run(
        [exe, "--cores", "6", *extra],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    jobs = [json.loads((tmp_path / "out" / f"{i}.json").read_text()) for i in range(12)]
    return jobs, proc


def test_snakemake_gpu_jobs_get_their_own_gpus(snakemake_exe, tmp_path):
    # 6 cores, no gpu limit: 6 jobs run at once and two of them must queue for a GPU
    jobs, _ = run_snakemake(snakemake_exe, tmp_path)
    check_no_sharing(jobs)
    overlaps = sum(
        1
        for a in jobs
        for b in jobs
        if a is not b and a["start"] < b["end"] and b["start"] < a["end"]
    )
    assert overlaps > 0, "the jobs never ran concurrently: the test proves nothing"


def test_snakemake_with_the_bioaccel_scheduler_plugin(snakemake_exe, tmp_path):
    jobs, proc = run_snakemake(
        snakemake_exe,
        tmp_path,
        "--scheduler",
        "bioaccel",
        "--scheduler-bioaccel-policy",
        "fair",
        "--resources",
        "gpu=4",
    )
    check_no_sharing(jobs)
    assert "bioaccel scheduler: policy fair" in proc.stderr  # the plugin was loaded and used
    assert "falling back" not in proc.stderr


# -- the plugin's selection logic, on stand-in jobs --------------------------------------------
def make_scheduler(**settings):
    from snakemake_scheduler_plugin_bioaccel import Scheduler, SchedulerSettings

    return Scheduler(None, SchedulerSettings(**settings), logging.getLogger("test"))


def test_plugin_selects_within_resources_by_policy():
    jobs = [
        FakeJob(f"align-{k}", priority=k, scheduler_resources={"_cores": 1, "gpu": 1})
        for k in range(5)
    ]
    sched = make_scheduler(policy="priority")
    chosen = sched.select_jobs(jobs, jobs, {"_cores": 8, "gpu": 2}, {})
    assert [j.name for j in chosen] == ["align-4", "align-3"]  # highest priority, gpu <= 2
    sched = make_scheduler(policy="fcfs")
    assert len(sched.select_jobs(jobs, jobs, {"_cores": 3, "gpu": 8}, {})) == 3


def test_plugin_fair_share_is_keyed_by_user_and_account_not_rule(tmp_path, monkeypatch, caplog):
    import pwd

    me = pwd.getpwuid(os.getuid()).pw_name
    shares = tmp_path / "shares"
    shares.write_text(f"policy fair\n{me} 1\nlab 1 {me}\n")
    monkeypatch.setenv("BIOACCEL_SHARES_FILE", str(shares))
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    # rules named differently but all of one user: the rule name plays no part (was: rules
    # shared fairly, so a user could win share by splitting work into more rules)
    jobs = [FakeJob(f"align-{k}", scheduler_resources={"_cores": 1}) for k in range(4)] + [
        FakeJob(f"tree-{k}", scheduler_resources={"_cores": 1, "user": "lab"}) for k in range(4)
    ]
    sched = make_scheduler(policy="fair", history=str(run))
    picked = []
    pool = list(jobs)
    for _ in range(4):
        (job,) = sched.select_jobs(pool, pool, {"_cores": 1}, {})
        picked.append(job.rule.name)
        pool.remove(job)
    assert picked.count("align") == 2 and picked.count("tree") == 2  # me and lab alternate
    claims = [FakeJob("x-0", scheduler_resources={"_cores": 1, "user": "alice-not-mine"})]
    with caplog.at_level(logging.WARNING):
        assert sched.select_jobs(claims, claims, {"_cores": 1}, {}) is None
    assert "may not charge account 'alice-not-mine'" in caplog.text


def test_plugin_returns_none_on_internal_error(caplog):
    class Broken(FakeJob):
        @property
        def scheduler_resources(self):
            raise RuntimeError("boom")

        @scheduler_resources.setter
        def scheduler_resources(self, value):
            pass

    sched = make_scheduler()
    with caplog.at_level(logging.WARNING):
        assert sched.select_jobs([Broken("x")], [], {"_cores": 1}, {}) is None
    assert "falling back" in caplog.text
