"""Run a command on leased GPUs: the lease lifecycle of ``bioaccel gpu-run``.

:func:`run_leased` waits for a lease, starts the command in a process group of
its own (given the terminal when run from one) with ``CUDA_VISIBLE_DEVICES`` bound and the lease's lock descriptors inherited,
forwards SIGTERM/SIGINT/SIGHUP to that group, and ends the lease only when the group has
exited: what the job left behind gets ``grace_s`` seconds, then SIGTERM, then SIGKILL, and
it says so. A process that left the group (``setsid``) keeps the lease as long as it keeps
the inherited descriptors; the run says which process holds it. While the job runs, a wiped
run directory (its lease's files deleted) is reported. The run is recorded in the user's
history with a duration from the monotonic clock.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import os
import signal
import subprocess
import time
from collections.abc import Callable, Sequence

from . import procs
from .broker import GpuBroker
from .display import human_duration, human_time, printable
from .held import ENV_HELD, ENV_LEASE, inherited_lease
from .history import Run, RuntimePredictor
from .identity import current_user
from .service import find_socket

_PR_SET_CHILD_SUBREAPER = 36


def _subreaper() -> None:
    """Orphans of the job become our children (so we can wait for them), where Linux can."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def _reap() -> None:
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass


def _end_group(pgid: int, grace_s: float, say: Callable[[str], None], leased: bool = True) -> None:
    """Wait up to ``grace_s`` for the processes left in group ``pgid``, then SIGTERM, then
    SIGKILL them; says what it found and did (``leased``: the GPUs are still leased)."""
    _reap()
    left = procs.group_members(pgid)
    if not left:
        return
    if grace_s > 0:
        say(
            f"the job left {len(left)} process(es) in its process group (pid(s) "
            f"{', '.join(map(str, left[:10]))})"
            + (": the GPUs stay leased while they run" if leased else "")
            + f"; waiting up to {grace_s:g} s for them"
        )
    deadline = time.monotonic() + grace_s
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        _reap()
        left = procs.group_members(pgid)
    for sig, wait_s in ((signal.SIGTERM, 2.0), (signal.SIGKILL, 5.0)):
        if not left:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, sig)
        say(f"sent {sig.name} to the job's leftover process(es) {', '.join(map(str, left[:10]))}")
        deadline = time.monotonic() + wait_s
        while left and time.monotonic() < deadline:
            time.sleep(0.02)
            _reap()
            left = procs.group_members(pgid)


def _spawn(command: Sequence[str], env: dict, pass_fds=()) -> tuple[subprocess.Popen, bool]:
    """The job in a process group of its own. From a terminal's foreground, that group gets
    the terminal (as a shell's job control does), so the job can read it and Ctrl-C reaches
    it; otherwise it gets a session of its own. Returns the child and whether it got the
    terminal."""
    foreground = False
    with contextlib.suppress(OSError):
        foreground = os.isatty(0) and os.tcgetpgrp(0) == os.getpgrp()
    if not foreground:
        return subprocess.Popen(
            list(command), env=env, pass_fds=pass_fds, start_new_session=True
        ), False
    child = subprocess.Popen(list(command), env=env, pass_fds=pass_fds, process_group=0)
    _give_terminal(child.pid)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(child.pid, signal.SIGCONT)  # if it read the terminal before it had it
    return child, True


def _give_terminal(pgid: int) -> None:
    old = signal.signal(signal.SIGTTOU, signal.SIG_IGN)
    try:
        with contextlib.suppress(OSError):
            os.tcsetpgrp(0, pgid)
    finally:
        signal.signal(signal.SIGTTOU, old)


def run_leased(
    command: Sequence[str],
    *,
    gpus: int = 1,
    slots: int | None = None,
    slots_per_gpu: int | None = None,
    mem_gb: float | None = None,
    priority: float = 0,
    account: str | None = None,
    timeout: float | None = None,
    kind: str = "command",
    cells: float | None = None,
    predicted_s: float | None = None,
    grace_s: float = 30.0,
    say: Callable[[str], None] = print,
    broker: GpuBroker | None = None,
) -> int:
    """Run ``command`` on ``gpus`` leased GPU(s) (see the module); returns its exit status
    (negative: killed by that signal). ``say`` receives one line per event (leased, leftovers,
    released, warnings).

    Raises
    ------
    FileNotFoundError, PermissionError
        ``command`` cannot be started (the lease is released first).
    LeaseTimeoutError, QueueLimitError, AccountError, SchedulerConfigError
        As :meth:`GpuBroker.acquire`.
    """
    if broker is None:
        path = find_socket()
        if path is not None:
            return _run_via_service(
                path,
                command,
                slots_per_gpu,
                gpus,
                slots,
                mem_gb,
                priority,
                account,
                timeout,
                kind,
                cells,
                predicted_s,
                grace_s,
                say,
            )
    if os.environ.get(ENV_HELD) is not None:
        inherited = inherited_lease()
        if inherited is not None:
            # already inside a lease (gpu-run under gpu-run): leasing again from the same run
            # directory would wait on our own parent; the GPUs are ours already
            say(f"inside a lease on GPU(s) {os.environ[ENV_HELD]}: running there")
            return subprocess.Popen(list(command)).wait()
    env = {k: v for k, v in os.environ.items() if k not in (ENV_HELD, ENV_LEASE)}
    broker = broker or GpuBroker(slots_per_gpu=slots_per_gpu)
    if not broker.devices:
        say(
            "no GPU is visible (no CUDA device, no BIOACCEL_VIRTUAL_GPUS): running on the CPU "
            "without a lease"
        )
        return subprocess.Popen(list(command), env=dict(env, CUDA_VISIBLE_DEVICES="")).wait()
    if predicted_s is None and cells is not None:
        predicted_s = RuntimePredictor(broker.history.runs(kind)).predict(kind, cells)
    label = " ".join(command)[:200]
    asked = time.monotonic()
    held = broker.acquire(gpus, slots, mem_gb, timeout, priority, account, predicted_s, label)
    env.update(
        CUDA_VISIBLE_DEVICES=held.visible, **{ENV_HELD: held.visible, ENV_LEASE: held.request_id}
    )
    if os.environ.get("SLURM_JOB_ID"):
        granted = (
            os.environ.get("CUDA_VISIBLE_DEVICES")
            or os.environ.get("SLURM_STEP_GPUS")
            or os.environ.get("SLURM_JOB_GPUS")
            or "none"
        )
        say(f"inside Slurm job {os.environ['SLURM_JOB_ID']}, which granted GPU(s) {granted}")
    start_wall, start = time.time(), time.monotonic()
    say(
        f"GPU(s) {held.visible} ({', '.join(d.name for d in held.devices)}) leased at "
        f"{human_time(start_wall)} after waiting {human_duration(start - asked)}, for: {label}"
    )
    _subreaper()
    # the job shares the lock descriptors: the GPUs stay taken while any of it runs, even if
    # this wrapper is killed
    try:
        child, terminal = _spawn(command, env, held.lock_fds)
    except BaseException:
        held.release()
        raise

    def forward(signum, _frame):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(child.pid, signum)

    previous = {
        sig: signal.signal(sig, forward) for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
    }
    try:
        wiped_said = False
        while True:
            with contextlib.suppress(subprocess.TimeoutExpired):
                code = child.wait(timeout=0.5)
                break
            if not wiped_said and held.wiped():
                wiped_said = True
                say(
                    f"warning: the run directory {broker.dir} was wiped (this lease's files were "
                    "deleted) while the job holds GPU(s) "
                    f"{held.visible}: other jobs may be given these GPUs; tell the administrator"
                )
        if terminal:
            _give_terminal(os.getpgrp())
        _end_group(child.pid, grace_s, say)
        end = time.monotonic()
        record = held.record
        held.close()  # not unlocked: a process that left the group keeps the lease
        escaped = _still_held(broker, held, record)
        if escaped is None:
            held.release()
            with contextlib.suppress(OSError):
                if record is not None:
                    os.unlink(record)
            say(
                f"GPU(s) {held.visible} released at {human_time(start_wall + end - start)} after "
                f"{human_duration(end - start)}, exit status {code}"
            )
        else:
            say(
                f"warning: the job ended (exit status {code}) but {escaped} left its process "
                f"group with the lease's descriptors: GPU(s) {held.visible} stay leased until "
                "it exits"
            )
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    try:
        broker.history.record(
            Run(
                kind,
                broker.config.check_account(current_user(), account),
                held.devices[0].name,
                len(held.devices),
                cells,
                None,
                start_wall,
                start_wall + (end - start),
                code,
                label,
            )
        )
    except Exception as exc:  # noqa: BLE001 -- the run itself is done; say why it is not recorded
        say(f"warning: this run is not recorded in the history: {exc}")
    return code


def _still_held(broker: GpuBroker, held, record) -> str | None:
    """Who still holds the lease's record lock after the job's group ended (a process that
    left it), or None."""
    if record is None:
        return None
    try:
        st = os.lstat(record)
    except FileNotFoundError:
        return None
    fd = os.open(record, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        from .rundir import is_locked

        if not is_locked(fd):
            return None
    finally:
        os.close(fd)
    pids = [p for p in procs.processes_holding(st.st_dev, st.st_ino) if p != os.getpid()]
    return f"pid(s) {', '.join(map(str, pids))}" if pids else "a process"


#: Started in place of the job (by ``/bin/sh``, which every user may run): waits until the
#: service knows the job (a line "1" on the descriptor ``$0``), then becomes the job.
_GATE = 'eval "read -r ok <&$0; exec $0<&-"; [ "$ok" = 1 ] || exit 125; exec "$@"'


@contextlib.contextmanager
def _low_pipe():
    """A pipe whose read end is a descriptor 3..9 (what ``/bin/sh`` redirections can name):
    a free one, else 9 with what was there put back after the job started."""
    r, w = os.pipe()
    saved = None
    for fd in range(3, 10):
        try:
            fcntl.fcntl(fd, fcntl.F_GETFD)
        except OSError:
            break
    else:
        fd, saved, inheritable = 9, os.dup(9), os.get_inheritable(9)
    os.dup2(r, fd, inheritable=False)
    os.close(r)
    try:
        yield fd, w
    finally:
        os.close(fd)
        if saved is not None:
            os.dup2(saved, 9, inheritable=inheritable)
            os.close(saved)


def _run_via_service(
    path,
    command,
    slots_per_gpu,
    gpus,
    slots,
    mem_gb,
    priority,
    account,
    timeout,
    kind,
    cells,
    predicted_s,
    grace_s,
    say,
) -> int:
    """:func:`run_leased` through the arbiter service: the lease is this process's connection;
    the job is registered with the service before it runs (a gate process waits for that),
    so the service can end it if this wrapper dies; if the service dies, the job is ended
    (fail closed) and :class:`~bioaccel.errors.ArbiterUnavailableError` raised."""
    from ..errors import ArbiterUnavailableError
    from . import client

    if os.environ.get(ENV_HELD) is not None:
        inherited = client.inherited()
        if inherited is not None:
            say(f"inside a lease on GPU(s) {os.environ[ENV_HELD]}: running there")
            return subprocess.Popen(list(command)).wait()
    env = {k: v for k, v in os.environ.items() if k not in (ENV_HELD, ENV_LEASE)}
    if slots_per_gpu is not None:
        conn = client.connect(path)
        try:
            k = conn.ask({"op": "hello"})["slots_per_gpu"]
        finally:
            conn.close()
        if k != slots_per_gpu:
            from ..errors import SchedulerConfigError

            raise SchedulerConfigError(
                f"--slots-per-gpu {slots_per_gpu}: the arbiter service shares each GPU {k} "
                "way(s) for every user (set by `bioaccel admin init --slots-per-gpu`)"
            )
    if predicted_s is None and cells is not None:
        predicted_s = client.predict(kind, cells)
    label = " ".join(command)[:200]
    asked = time.monotonic()
    held = client.acquire(
        gpus,
        slots,
        mem_gb,
        timeout,
        priority,
        account,
        predicted_s,
        label,
        kind=kind,
        cells=cells,
        path=path,
    )
    conn = held.conn
    env.update(
        CUDA_VISIBLE_DEVICES=held.visible, **{ENV_HELD: held.visible, ENV_LEASE: held.request_id}
    )
    start_wall, start = time.time(), time.monotonic()
    say(
        f"GPU(s) {held.visible} ({', '.join(d.name for d in held.devices)}) leased from the "
        f"arbiter service at {human_time(start_wall)} after waiting "
        f"{human_duration(start - asked)}, for: {printable(label)}"
    )
    _subreaper()
    with _low_pipe() as (r, w):
        try:
            child, terminal = _spawn(["/bin/sh", "-c", _GATE, str(r), *command], env, (r,))
        except BaseException:
            os.close(w)
            held.release(-1)
            raise
    try:
        held.register_job(child.pid)
        os.write(w, b"1\n")
    except BaseException:
        os.close(w)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGKILL)
        child.wait()
        held.close()
        raise
    os.close(w)

    def forward(signum, _frame):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(child.pid, signum)

    previous = {
        sig: signal.signal(sig, forward) for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
    }
    try:
        while True:
            with contextlib.suppress(subprocess.TimeoutExpired):
                code = child.wait(timeout=0.1)
                break
            if conn.closed_by_peer():
                say(
                    "the arbiter service closed the connection (it stopped or restarted): "
                    "ending the job, which no longer holds a lease"
                )
                if terminal:
                    _give_terminal(os.getpgrp())
                _end_group(child.pid, 0.0, say, leased=False)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    child.wait(timeout=5)
                held.close()
                raise ArbiterUnavailableError(
                    f"the bioaccel arbiter service at {str(path)!r} stopped while the job ran: "
                    "the job was ended (no GPU runs without a lease)"
                )
        if terminal:
            _give_terminal(os.getpgrp())
        _end_group(child.pid, grace_s, say)
        end = time.monotonic()
        left = held.release(code)
        if left:
            say(
                f"warning: the job ended (exit status {code}) but "
                + ", ".join(f"pid {p['pid']} ({p['how']}: {p['cmd'][:60]!r})" for p in left[:8])
                + " left its process group: the arbiter service ends them (SIGTERM, then "
                "SIGKILL); GPU(s) "
                f"{held.visible} are free when they are gone"
            )
        say(
            f"GPU(s) {held.visible} released at {human_time(start_wall + end - start)} after "
            f"{human_duration(end - start)}, exit status {code}"
        )
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        held.close()
    return code
