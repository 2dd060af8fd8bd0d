"""Scale-out: a real single-node Slurm on localhost, bioaccel inside its allocations, and
the workflow through Snakemake's Slurm executor with the repository's profile."""

import re
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest

from bioaccel.distances._compute import distance_matrix
from bioaccel.distances._matrix import DistanceMatrix
from bioaccel.sequences._read import read_sequences
from tests import workflow_helpers
from tests.datasets import child_env, unavailable
from tests.slurm_local import LocalSlurm, SlurmUnavailable

pytestmark = [pytest.mark.workflow, pytest.mark.slow]


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    cluster = LocalSlurm(tmp_path_factory.mktemp("slurm"), gpus=4)
    # the environment from before rpy2 touched LD_LIBRARY_PATH (see tests/datasets.py)
    cluster.env = child_env(SLURM_CONF=str(cluster.conf), BIOACCEL_VIRTUAL_GPUS="4")
    cluster.env.pop("CUDA_VISIBLE_DEVICES", None)
    try:
        cluster.start()
    except SlurmUnavailable as exc:
        # a machine that cannot host slurmd (no root, no mknod, no munge) is not a test
        # failure, even in strict CI: the skip line says exactly what failed
        cluster.stop()
        unavailable(f"local Slurm cannot run here: {exc}")
    yield cluster
    cluster.stop()


def wait_for(cluster, job_id, timeout=120):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if not cluster.run(["squeue", "-h", "-j", job_id]).stdout.strip():
            return
        time.sleep(0.5)
    pytest.fail(f"Slurm job {job_id} did not finish")


def test_leases_stay_inside_the_slurm_allocation(slurm, tmp_path):
    script = tmp_path / "probe.sh"
    script.write_text(
        "#!/bin/sh\n"
        f"echo granted=$SLURM_JOB_GPUS visible=$CUDA_VISIBLE_DEVICES\n"
        f'{sys.executable} -c "from bioaccel.devices._discover import discover_devices; '
        "print('devices=' + ','.join(d.visible_id for d in discover_devices()))\"\n"
        f"bioaccel gpu-run -- sh -c 'echo leased=$CUDA_VISIBLE_DEVICES'\n"
    )
    jobs = []
    for k in range(3):
        out = tmp_path / f"out{k}.txt"
        sub = slurm.run(["sbatch", "--parsable", "--gpus=1", "-o", str(out), str(script)])
        assert sub.returncode == 0, sub.stderr
        jobs.append((sub.stdout.strip().split(";")[0], out))
    seen = set()
    for job_id, out in jobs:
        wait_for(slurm, job_id)
        text = out.read_text()
        granted = re.search(r"granted=(\S+)", text).group(1)
        assert f"visible={granted}" in text, text  # Slurm binds the id it granted
        assert f"devices={granted}\n" in text, text  # bioaccel sees only that GPU
        assert f"leased={granted}\n" in text, text  # and leases only that GPU
        seen.add(granted)
    assert seen <= {"0", "1", "2", "3"}


def test_slurm_binds_gpus_and_gpu_run_leases_only_those(slurm, tmp_path):
    """Slurm as the enforcing mode (README, 'For administrators'): jobs that run at once get
    different GPUs from Slurm's GRES; inside a job, bioaccel sees only the bound GPU, its
    run directory is the job's own (no host-wide state), and gpu-run can neither lease more
    GPUs than Slurm granted nor be talked into another GPU by CUDA_VISIBLE_DEVICES."""
    script = tmp_path / "job.sh"
    script.write_text(
        "#!/bin/sh\n"
        "echo granted=$SLURM_JOB_GPUS\n"
        f'{sys.executable} -c "from bioaccel.sched import run_dir; '
        "print('run_dir=' + str(run_dir()))\"\n"
        "bioaccel gpu-run -- sh -c 'echo leased=$CUDA_VISIBLE_DEVICES; sleep 4'\n"
        "bioaccel gpu-run --gpus 2 --timeout 2 -- true; echo two=$?\n"
    )
    env = {k: v for k, v in slurm.env.items() if k != "BIOACCEL_RUN_DIR"}
    jobs = []
    for k in range(2):
        out = tmp_path / f"out{k}.txt"
        sub = subprocess.run(
            ["sbatch", "--parsable", "--gpus=1", "-o", str(out), str(script)],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert sub.returncode == 0, sub.stderr
        jobs.append((sub.stdout.strip().split(";")[0], out))
    granted = []
    for job_id, out in jobs:
        wait_for(slurm, job_id)
        text = out.read_text()
        g = re.search(r"granted=(\S+)", text).group(1)
        assert f"leased={g}\n" in text, text
        assert re.search(rf"run_dir=\S*/bioaccel-0/slurm-{job_id}\n", text), text
        assert "two=2" in text and "only 1 GPU(s) are visible" in text, text
        granted.append(g)
    starts = [re.search(r"leased at (\S+ \S+)", o.read_text()).group(1) for _, o in jobs]
    if starts[0] == starts[1]:  # they ran at the same time: Slurm kept them apart
        assert granted[0] != granted[1], granted


def test_workflow_through_the_slurm_executor(slurm, tmp_path):
    if shutil.which("snakemake") is None:
        unavailable("snakemake is not installed (pip install '.[workflows]')")
    wd = workflow_helpers.copy_workflow(workflow_helpers.DISTANCES, tmp_path / "wf")
    cfg = (wd / ".test/config/config.yaml").read_text()
    # two tiles (three tile jobs): each Slurm job costs the executor's status polling
    # (its interval grows by 10 s while no job ends), not work
    assert "tiles: 4" in cfg
    cfg = cfg.replace("report:\n  enabled: true", "report:\n  enabled: false")
    cfg = cfg.replace("tiles: 4", "tiles: 2")
    (wd / ".test/config/slurm.yaml").write_text(cfg)
    env = dict(slurm.env, BIOACCEL_RUN_DIR=str(tmp_path / "run"))
    proc = subprocess.run(
        [
            shutil.which("snakemake"),
            "--profile",
            "profiles/slurm",
            "--configfile",
            ".test/config/slurm.yaml",
            "--slurm-no-account",
            "--slurm-status-command",
            "squeue",
            "--slurm-init-seconds-before-status-checks",
            "1",
            "--latency-wait",
            "5",
            "--jobs",
            "8",
            "--default-resources",
            "runtime=10",
            "mem_mb=500",
        ],
        cwd=wd,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert proc.returncode == 0, proc.stderr[-5000:]
    pooled = read_sequences(wd / "results/pool/sequences.fasta")
    merged = DistanceMatrix.read(wd / "results/merge/distances.cdist")
    np.testing.assert_array_equal(merged.data, distance_matrix(pooled, "edit", backend="cpu").data)
    # every tile ran as its own Slurm job with one GPU, and leased exactly that GPU
    import yaml

    blocks = int(yaml.safe_load(cfg)["distance"]["tiles"])
    logs = sorted((wd / "logs/distance_tile").glob("*.log"))
    assert len(logs) == blocks * (blocks + 1) // 2, [p.name for p in logs]  # one per tile
    for log in logs:
        text = log.read_text()
        granted = re.search(r"inside Slurm job \d+, which granted GPU\(s\) (\S+)", text)
        leased = re.search(r"GPU\(s\) (\S+) \(.*\) leased at", text)
        assert granted and leased, f"{log.name}:\n{text}"
        assert leased.group(1) == granted.group(1), text


def test_phylogeny_workflow_through_the_slurm_executor(slurm, tmp_path):
    """workflows/phylogeny with its Slurm profile: each family's alignment is a Slurm job
    with one GPU, and leases exactly that GPU."""
    if shutil.which("snakemake") is None:
        unavailable("snakemake is not installed (pip install '.[workflows]')")
    from bioaccel.msa_engine import read_alignment

    FILES = workflow_helpers.PHYLOGENY_FILES
    wd = workflow_helpers.copy_workflow(workflow_helpers.PHYLOGENY, tmp_path / "wf")
    families = ("mid", "small", "single")  # a few, to keep the Slurm round trips short
    (wd / "families.tsv").write_text(
        "family\tpath\n" + "".join(f"{f}\t.test/data/{FILES[f]}\n" for f in families)
    )
    (wd / "slurm.yaml").write_text(
        "families: families.tsv\nml_tree: {enabled: false}\n"
        "report: {enabled: false, heatmap_family: null}\n"
    )
    env = dict(slurm.env, BIOACCEL_RUN_DIR=str(tmp_path / "run"))
    proc = subprocess.run(
        [
            shutil.which("snakemake"),
            "--profile",
            "profiles/slurm",
            "--configfile",
            "slurm.yaml",
            "--slurm-no-account",
            "--slurm-status-command",
            "squeue",
            "--slurm-init-seconds-before-status-checks",
            "1",
            "--latency-wait",
            "5",
            "--jobs",
            "8",
            "--default-resources",
            "runtime=10",
            "mem_mb=500",
        ],
        cwd=wd,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert proc.returncode == 0, proc.stderr[-5000:]
    for family in families:
        source = read_sequences(wd / ".test/data" / FILES[family])
        aln = read_alignment(wd / f"results/msa/{family}.fa")
        assert [r.replace("-", "") for r in aln.sequences] == [
            source.sequence(i) for i in range(len(source))
        ]
        text = (wd / f"logs/msa/{family}.log").read_text()
        granted = re.search(r"inside Slurm job \d+, which granted GPU\(s\) (\S+)", text)
        leased = re.search(r"GPU\(s\) (\S+) \(.*\) leased at", text)
        assert granted and leased, f"{family}:\n{text}"
        assert leased.group(1) == granted.group(1), text
    assert "none: 1 sequence" in (wd / "results/summary/summary.tsv").read_text()
