"""A real single-node Slurm cluster on localhost for the tests (Debian slurm-wlm + munge).

Needs root (slurmd runs as root, munged as the munge user). GPUs are generic resources:
slurmd 22.05 drops GPU GRES that have no device file ("Removing file-less GPU"), so each
GPU gets a character-device stand-in (``mknod c 1 3``, the same device as /dev/null) in the
cluster's directory; Slurm then hands out GPU ids and sets ``SLURM_JOB_GPUS`` and
``CUDA_VISIBLE_DEVICES`` for real, while the work runs on bioaccel's virtual GPUs.

The configuration goes to Slurm's default place, /etc/slurm/slurm.conf (and is removed
afterwards): snakemake-executor-plugin-slurm-jobstep strips every SLURM_* variable but a
few from the environment of its nested ``srun``, SLURM_CONF included, so a configuration
anywhere else is not found inside the jobs. An existing /etc/slurm/slurm.conf is never
touched (the harness then reports Slurm as unavailable).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path


class SlurmUnavailable(RuntimeError):
    pass


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalSlurm:
    def __init__(self, directory: Path, gpus: int = 4, cpus: int | None = None):
        self.dir = Path(directory)
        self.gpus = gpus
        self.cpus = cpus or os.cpu_count() or 2
        self.host = socket.gethostname().split(".")[0]
        self.conf = Path("/etc/slurm/slurm.conf")
        self.procs: list[int] = []
        self.env = dict(os.environ, SLURM_CONF=str(self.conf))

    def check(self) -> None:
        missing = [
            exe
            for exe in ("slurmctld", "slurmd", "munged", "sbatch", "squeue")
            if shutil.which(exe) is None and not Path(f"/usr/sbin/{exe}").exists()
        ]
        if missing:
            raise SlurmUnavailable(
                f"Slurm is not installed (missing {missing}; apt-get install slurm-wlm munge)"
            )
        if os.geteuid() != 0:
            raise SlurmUnavailable("a local Slurm needs root (slurmd runs as root)")
        if self.conf.exists():
            raise SlurmUnavailable(
                f"{self.conf} exists already: this machine has a Slurm "
                "configuration the test harness will not replace"
            )

    def _munge(self) -> None:
        if subprocess.run(["pgrep", "-x", "munged"], capture_output=True).returncode == 0:
            return
        key = Path("/etc/munge/munge.key")
        if not key.exists():
            subprocess.run(["mungekey", "--create"], check=True)
        run = Path("/run/munge")
        run.mkdir(parents=True, exist_ok=True)
        shutil.chown(run, "munge", "munge")
        subprocess.run(["runuser", "-u", "munge", "--", "/usr/sbin/munged"], check=True)

    def start(self) -> LocalSlurm:
        self.check()
        self._munge()
        self.conf.parent.mkdir(parents=True, exist_ok=True)
        for sub in ("state", "spool", "log", "dev"):
            (self.dir / sub).mkdir(parents=True, exist_ok=True)
        for i in range(self.gpus):
            dev = self.dir / "dev" / f"nvidia{i}"
            if not dev.exists():
                try:
                    os.mknod(dev, 0o666 | 0o020000, os.makedev(1, 3))  # char device, as /dev/null
                except OSError as exc:
                    raise SlurmUnavailable(
                        f"cannot create the GPU device stand-in {dev} (mknod: {exc.strerror})"
                    ) from None
        d = self.dir
        self.conf.write_text(f"""ClusterName=bioaccel-test
SlurmctldHost={self.host}
SlurmUser=root
SlurmdUser=root
SlurmctldPort={_free_port()}
SlurmdPort={_free_port()}
AuthType=auth/munge
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/log/slurmctld.log
SlurmdLogFile={d}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
ReturnToService=2
MinJobAge=3600
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=1
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
NodeName={self.host} CPUs={self.cpus} RealMemory=16000 Gres=gpu:{self.gpus} State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
""")
        (self.conf.parent / "gres.conf").write_text(
            f"AutoDetect=off\nNodeName={self.host} Name=gpu File={d}/dev/nvidia[0-{self.gpus - 1}]\n"
        )
        for daemon in ("slurmctld", "slurmd"):
            proc = subprocess.run(
                [f"/usr/sbin/{daemon}", "-f", str(self.conf)],
                env=self.env,
                capture_output=True,
                text=True,
            )
            if proc.returncode != 0:
                raise SlurmUnavailable(f"{daemon} did not start: {proc.stderr.strip()[-500:]}")
        deadline = time.time() + 60
        while time.time() < deadline:
            state = self.run(["sinfo", "-h", "-o", "%t"]).stdout.strip()
            if state in ("idle", "mix", "alloc"):
                return self
            time.sleep(0.5)
        raise SlurmUnavailable(
            f"the node never became idle (state {state!r}); slurmd log:\n"
            + (d / "log/slurmd.log").read_text()[-1500:]
        )

    def run(self, args, **kw) -> subprocess.CompletedProcess:
        return subprocess.run(args, env=self.env, capture_output=True, text=True, **kw)

    def stop(self) -> None:
        for pid_file in ("slurmd.pid", "slurmctld.pid"):
            path = self.dir / pid_file
            if path.exists():
                try:
                    os.kill(int(path.read_text().strip()), 15)
                except (ValueError, ProcessLookupError):
                    pass
        time.sleep(0.5)
        for name in ("slurm.conf", "gres.conf"):
            (self.conf.parent / name).unlink(missing_ok=True)
