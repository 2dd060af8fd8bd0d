"""The arbiter service (``bioaccel arbiterd``) against hostile local users, as real
Unix users alice, bob and eve (created when the tests run as root, as in CI; skipped
otherwise). Each test sets up a reported attack or mistake (S-N1..S-N5, N1..N13, N-F, N-D,
N-FW, N-AL, D2 and the earlier S1-S3, H1-H6, D1-D3, M1-M4) and shows that it is refused,
survived or shown correctly -- or, where the service leaves nothing to attack, its docstring
says why and the test checks that the thing attacked no longer exists.

Most findings of the file-based arbiter had one root: users read and locked files that other
users could create, lock, replace or flood in a world-writable folder. With the service,
users hold nothing but a connection: no file of the arbiter lies where a user can write
(:func:`test_nothing_of_the_service_lies_where_a_user_can_write`)."""

import contextlib
import json
import os
import pwd
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from benchmarks.arbiter_host import Service
from benchmarks.two_users import kill_marked, preload, run_as, spawn_as, users_unavailable, wait
from bioaccel.cli import main as cli_main
from tests.cli_runner import COMMAND
from tests.datasets import unavailable

USERS = ("alice", "bob", "eve")


@pytest.fixture(scope="module")
def users():
    why = users_unavailable(USERS)
    if why:
        unavailable(why)
    preload()
    import bioaccel.sched.client  # noqa: F401 -- what the forked users import lazily

    return {u: pwd.getpwnam(u).pw_uid for u in USERS}


@pytest.fixture(scope="module")
def service(users):
    """One service for the module: 4 virtual GPUs, fcfs, 4 waiting requests and 24
    connections per user."""
    svc = Service(
        4,
        shares="policy fcfs\nalice 2\nbob 1\neve 1\nlab 1 alice\n",
        max_waiting=4,
        max_connections=24,
    ).start()
    yield svc
    print(svc.log.read_text())  # shown with a failure
    svc.close()


@pytest.fixture
def svc(service, users):
    """The module's service, idle at the start and the end of each test."""
    yield service
    for user in USERS:
        kill_marked(user, f"BIOACCEL_ARBITER_SOCKET={service.socket}")
    deadline = time.time() + 10
    while service.held() and time.time() < deadline:
        time.sleep(0.02)
    assert service.proc.poll() is None, service.log.read_text()
    assert not service.held(), service.held()


def gpu_run(*args) -> None:
    cli_main(["gpu-run", *args])


def until(cond, timeout=15.0, what="condition"):
    deadline = time.time() + timeout
    while not cond():
        if time.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in "ZX"
    except OSError:
        return False


def gpus_as(user: str, svc: Service, scratch: Path, text: bool = False):
    out = scratch / f"gpus-{user}.txt"
    out.unlink(missing_ok=True)
    code = run_as(
        user,
        cli_main,
        ["gpus"] + ([] if text else ["--json"]),
        env=svc.user_env(COLUMNS="300"),
        output=out,
    )
    assert code == 0, out.read_text()
    return out.read_text() if text else json.loads(out.read_text())


@pytest.fixture
def scratch(tmp_path):
    os.chmod(tmp_path, 0o1777)
    # the other users traverse every folder pytest made above it (one more under xdist:
    # pytest-of-root/pytest-N/popen-gwK/)
    top = Path(tempfile.gettempdir()).resolve()
    for p in tmp_path.resolve().parents:
        if p == top or p == p.parent:
            break
        os.chmod(p, os.stat(p).st_mode | 0o011)
    return tmp_path


def holder_pids(svc: Service, user: str) -> list[int]:
    return [p["pid"] for h in svc.held() if h["user"] == user for p in h["processes"]]


# -- nothing to plant -------------------------------------------------------------------------
def test_nothing_of_the_service_lies_where_a_user_can_write(svc, users, scratch):
    """S1, S2, S3, S-N2, S-N3, S-N4, N4, N7, N10, N11, N-F, N-D, H2, H3, M2, M4, D3, S-N5:
    every one attacked a file in the shared run folder (a planted SQLite journal, slot lock
    files made before first use, an eve-owned folder, a user's history folder squatted, a
    lock on another's finished lease record, a slot lock removed by a tmp cleaner, a
    recursive view in one's own history, folders or files that flood a pass, a full inode
    table, a rewritten lease record). The service keeps every one of those facts in its own
    memory and in SQLite in a folder only root may enter: the state folder is root's 0700,
    the socket folder root's 0755 (nobody else may create or replace anything in it) and the
    socket the only thing users touch. Eve can neither read the database nor create a file
    in either folder; her own files anywhere else are read by nobody."""
    st, so, sk = (os.lstat(p) for p in (svc.state, svc.sock_dir, svc.socket))
    assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (0, 0o700)
    assert (so.st_uid, stat.S_IMODE(so.st_mode)) == (0, 0o755)
    assert stat.S_ISSOCK(sk.st_mode) and (sk.st_uid, stat.S_IMODE(sk.st_mode)) == (0, 0o666)

    def attack():
        failed = []
        for target in (
            svc.state / "arbiter.sqlite",
            svc.state / "arbiter.sqlite-journal",
            svc.sock_dir / "slot.lock",
            svc.sock_dir / ".arbiter.sock.x",
        ):
            try:
                if target.name == "arbiter.sqlite":
                    target.read_bytes()
                else:
                    target.write_bytes(b"x")
            except PermissionError:
                failed.append(target.name)
        try:
            os.rename(svc.socket, svc.sock_dir / "moved")
        except PermissionError:
            failed.append("rename")
        (scratch / "eve.json").write_text(json.dumps(failed))

    assert run_as("eve", attack, env=svc.user_env()) == 0
    assert len(json.loads((scratch / "eve.json").read_text())) == 5
    # what is shown is the service's: a user sees every holder with the kernel's name
    assert gpus_as("eve", svc, scratch)["mode"] == "service"


def test_admin_init_never_follows_a_planted_symlink_or_folder(users, scratch):
    """S-N1, N12: eve pre-creates the service's folders in a sticky folder -- a symlink to a
    root-only file where the state folder goes, a folder of hers where the socket folder goes
    -- and swaps them while root sets up. Root opens every component of the path with
    O_NOFOLLOW from its parent's descriptor and sets owner and mode through the descriptor,
    so nothing lands on the symlink's target; anything not root's is moved aside (and said)
    and made afresh, never reported as a success while it is eve's."""
    secret = scratch / "secret"
    secret.write_text("root only")
    os.chmod(secret, 0o600)

    def plant():
        os.symlink(secret, scratch / "state")
        os.mkdir(scratch / "run", 0o777)
        os.chmod(scratch / "run", 0o777)

    assert run_as("eve", plant) == 0
    svc = Service(2, base=scratch)
    try:
        st = os.stat(secret)
        assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (0, 0o600)
        s = os.lstat(scratch / "state")
        assert stat.S_ISDIR(s.st_mode) and (s.st_uid, stat.S_IMODE(s.st_mode)) == (0, 0o700)
        svc.start()
        r = os.lstat(scratch / "run")
        assert (r.st_uid, stat.S_IMODE(r.st_mode)) == (0, 0o755)
        planted = sorted(p.name for p in scratch.iterdir() if ".planted-uid" in p.name)
        assert len(planted) == 2 and all(f"uid{users['eve']}" in p for p in planted), planted
        assert "moved it aside" in svc.log.read_text()
    finally:
        svc.kill()


def test_identity_is_the_kernels_and_accounts_are_checked(svc, users, scratch):
    """M2, H4, N2/N3 (credit for another's GPU): the user of a request is SO_PEERCRED's uid;
    a request naming another user's account is refused; ``$USER`` means nothing."""
    log = scratch / "eve.log"
    env = svc.user_env(USER="alice", LOGNAME="alice")
    assert run_as("eve", gpu_run, "--user", "alice", "--", "true", env=env, output=log) == 2
    assert "may not charge account 'alice'" in log.read_text()
    log2 = scratch / "alice.log"
    assert (
        run_as("alice", gpu_run, "--user", "lab", "--", "true", env=svc.user_env(), output=log2)
        == 0
    )

    def forged():
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(str(svc.socket))
        s.sendall(b'{"op": "acquire", "uid": 1001, "user": "alice", "label": "forged"}\n')
        f = s.makefile("rb")
        assert json.loads(f.readline())["event"] == "queued"
        assert json.loads(f.readline())["event"] == "granted"
        time.sleep(30)

    pid = spawn_as("eve", forged, env=env)
    try:
        until(lambda: any(h["label"] == "forged" for h in svc.held()), what="eve's lease")
        (h,) = [h for h in svc.held() if h["label"] == "forged"]
        assert (h["user"], h["uid"], h["account"]) == ("eve", users["eve"], "eve")
    finally:
        os.kill(pid, signal.SIGKILL)
        wait(pid)


# -- leases live as long as a connection ------------------------------------------------------
def test_kill9_of_gpu_run_ends_its_job_and_frees_the_gpu_within_a_second(svc, users, scratch):
    """D1, N6: alice's gpu-run holds all 4 GPUs; SIGKILL of it closes its connection, the
    service ends her job (and what it started) and bob's waiting request is granted within a
    second; no job of alice's runs on a GPU without a lease."""
    a = spawn_as(
        "alice", gpu_run, "--gpus", "4", "--", "sh", "-c", "sleep 60 & sleep 60", env=svc.user_env()
    )
    until(lambda: len(holder_pids(svc, "alice")) >= 3, what="alice's job and its children")
    job = holder_pids(svc, "alice")
    b = spawn_as(
        "bob", gpu_run, "--", "sh", "-c", f"date +%s.%N > {scratch / 'b'}", env=svc.user_env()
    )
    until(lambda: any(q["user"] == "bob" for q in svc.status()["queue"]), what="bob waits")
    t0 = time.time()
    os.kill(a, signal.SIGKILL)
    assert wait(a) == -9
    assert wait(b, 30) == 0
    assert float((scratch / "b").read_text()) - t0 < 1.0
    assert not any(alive(p) for p in job)


def test_kill9_of_the_job_ends_the_run_and_the_lease(svc, users, scratch):
    """A SIGKILLed job: gpu-run exits 137 and the lease ends at once."""
    log = scratch / "alice.log"
    pid = spawn_as("alice", gpu_run, "--", "sleep", "60", env=svc.user_env(), output=log)
    until(lambda: holder_pids(svc, "alice"), what="alice's job")
    os.kill(holder_pids(svc, "alice")[0], signal.SIGKILL)
    assert wait(pid, 20) == 137
    until(lambda: not svc.held(), what="the lease ends")


def test_a_detached_worker_is_shown_and_ended_not_silently_released(svc, users, scratch):
    """N6, D1, N-AL: a job that starts a worker in a session of its own
    (``start_new_session``) and exits. While it runs, ``gpus`` lists the worker under the
    lease (the service tracks the job's descendants); when the job exits, gpu-run names the
    worker ("left its process group") and the service ends it; the GPU is free only after.
    No false warning for a job that leaves nothing."""
    marker = scratch / "worker.pid"
    job = (
        "import subprocess, time; "
        f"p = subprocess.Popen(['sleep', '60'], start_new_session=True); "
        f"open('{marker}', 'w').write(str(p.pid)); time.sleep(1.0)"
    )
    log = scratch / "alice.log"
    pid = spawn_as(
        "alice",
        gpu_run,
        "--grace",
        "0",
        "--",
        "python3",
        "-c",
        job,
        env=svc.user_env(PATH="/usr/bin:/bin"),
        output=log,
    )
    if not Path("/usr/bin/python3").exists():
        unavailable("no /usr/bin/python3 for the user's job")
    until(lambda: marker.exists() and marker.read_text(), what="the worker starts")
    worker = int(marker.read_text())
    until(lambda: worker in holder_pids(svc, "alice"), what="the worker is shown")
    assert wait(pid, 30) == 0
    text = log.read_text()
    assert f"pid {worker} (descendant" in text and "left its process group" in text, text
    until(lambda: not alive(worker), timeout=3, what="the worker is ended")
    until(lambda: not svc.held(), what="the GPU is free")
    log2 = scratch / "bob.log"
    assert run_as("bob", gpu_run, "--", "true", env=svc.user_env(), output=log2) == 0
    assert "warning" not in log2.read_text()


def test_d2_a_stale_or_copied_lease_variable_is_not_a_lease(svc, users, scratch):
    """D2, N5: ``BIOACCEL_LEASED_GPUS``/``BIOACCEL_LEASE`` of a finished lease of alice's, or
    of a live one she is not inside, are ignored with a warning: she waits for GPUs like
    anyone while bob holds them. Inside her own gpu-run a nested one runs in place."""
    log = scratch / "alice.log"
    assert (
        run_as(
            "alice",
            gpu_run,
            "--",
            "sh",
            "-c",
            f"echo $BIOACCEL_LEASE > {scratch / 'id'}",
            env=svc.user_env(),
        )
        == 0
    )
    old = (scratch / "id").read_text().strip()
    b = spawn_as("bob", gpu_run, "--gpus", "4", "--", "sleep", "30", env=svc.user_env())
    try:
        until(lambda: len(svc.held()) == 4, what="bob holds the 4 GPUs")
        env = svc.user_env(BIOACCEL_LEASED_GPUS="0,1,2,3", BIOACCEL_LEASE=old)
        code = run_as("alice", gpu_run, "--timeout", "1", "--", "true", env=env, output=log)
        assert code == 2, log.read_text()
        text = log.read_text()
        assert "is not backed by a live lease" in text and "no lease on 1 GPU(s) within 1" in text
    finally:
        os.kill(b, signal.SIGKILL)
        wait(b)


def test_nested_gpu_run_inside_a_lease_runs_in_place(svc, users, scratch, monkeypatch):
    """D2 (the honest case): a process inside a live gpu-run lease of its own user is
    recognised by the service (it is one of the job's processes) and runs on those GPUs."""
    monkeypatch.setenv("BIOACCEL_ARBITER_SOCKET", str(svc.socket))
    monkeypatch.setenv("BIOACCEL_VIRTUAL_GPUS", "4")
    inner = (
        f"{sys.executable} -c 'from bioaccel.cli import main; "
        'main(["gpu-run", "--timeout", "2", "--", "true"])\''
    )
    done = subprocess.run(
        [*COMMAND, "gpu-run", "--gpus", "4", "--", "sh", "-c", inner],
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "inside a lease on GPU(s) 0,1,2,3: running there" in done.stderr


# -- bounded requests -------------------------------------------------------------------------
def test_garbage_stalls_and_floods_cost_the_sender_only(svc, users, scratch):
    """N1, N10, N11, N-F, N-D, H1, H2: eve opens more connections than a user may (the rest
    are refused with a line saying so), sends garbage, a line over the size limit, a line she
    never finishes and bursts of requests; bob is served at once and ``gpus`` answers
    meanwhile. Eve's own requests are what waits."""

    def flood():
        conns = []
        for _ in range(40):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(str(svc.socket))
            conns.append(s)
        conns[0].sendall(b"\xff\xfe garbage\n")
        conns[1].sendall(b"{" + b"x" * (100 * 1024))
        conns[2].sendall(b'{"op": "sta')  # never finished
        for s in conns[3:10]:
            s.sendall(b'{"op": "status"}\n' * 200)  # and never read
        time.sleep(30)

    pid = spawn_as("eve", flood, env=svc.user_env())
    try:
        time.sleep(1.0)
        t0 = time.monotonic()
        log = scratch / "bob.log"
        assert run_as("bob", gpu_run, "--", "true", env=svc.user_env(), output=log) == 0
        assert time.monotonic() - t0 < 3.0  # a fork, an interpreter's imports and a grant
        status = svc.status()
        assert status["mode"] == "service"

        def refused():
            conns = []
            for _ in range(30):
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(str(svc.socket))
                conns.append(s)
            for s in conns:
                s.settimeout(0.1)
                with contextlib.suppress(TimeoutError):
                    print(s.recv(4096).decode().strip())

        out = scratch / "refused.txt"
        assert run_as("eve", refused, env=svc.user_env(), output=out) == 0
        assert "the limit per user" in out.read_text()
    finally:
        os.kill(pid, signal.SIGKILL)
        wait(pid)


def test_h1_waiting_requests_per_user_are_bounded(svc, users, scratch):
    """H1: eve's waiting requests are capped (4 here): the fifth is refused at once; bob
    is still served."""
    holders = spawn_as("alice", gpu_run, "--gpus", "4", "--", "sleep", "20", env=svc.user_env())
    waiters = []
    try:
        until(lambda: len(svc.held()) == 4, what="alice holds all")
        for _ in range(4):
            waiters.append(spawn_as("eve", gpu_run, "--", "true", env=svc.user_env()))
        until(lambda: len(svc.status()["queue"]) == 4, what="eve's 4 requests wait")
        log = scratch / "eve.log"
        assert run_as("eve", gpu_run, "--", "true", env=svc.user_env(), output=log) == 2
        assert "already has 4 waiting request(s)" in log.read_text()
    finally:
        os.kill(holders, signal.SIGKILL)
        wait(holders)
        for w in waiters:
            wait(w, 30)


def test_h1_a_stopped_waiter_holds_nothing_and_is_served_when_it_resumes(svc, users, scratch):
    """H1: eve's waiting gpu-run is stopped (SIGSTOP, as Ctrl-Z does): when a GPU frees, the
    service passes her over (a lease given to a stopped process would sit idle) and bob gets
    it; once she resumes, she is served."""
    a = spawn_as("alice", gpu_run, "--gpus", "4", "--", "sleep", "2", env=svc.user_env())
    until(lambda: len(svc.held()) == 4, what="alice holds all")
    e = spawn_as("eve", gpu_run, "--", "sleep", "0.2", env=svc.user_env())
    until(lambda: any(q["user"] == "eve" for q in svc.status()["queue"]), what="eve waits")
    os.kill(e, signal.SIGSTOP)
    b = spawn_as(
        "bob", gpu_run, "--", "sh", "-c", f"date +%s.%N > {scratch / 'b'}", env=svc.user_env()
    )
    try:
        assert wait(a, 30) == 0
        assert wait(b, 30) == 0
        assert [q["user"] for q in svc.status()["queue"]] == ["eve"]
    finally:
        os.kill(e, signal.SIGCONT)
    assert wait(e, 30) == 0


def test_h6_impossible_requests_are_refused_at_once(svc, users, scratch):
    """H6: a request no GPU set could serve is refused at once, in one line; a request's age
    is the service's clock, never the client's."""
    log = scratch / "eve.log"
    assert run_as("eve", gpu_run, "--gpus", "5", "--", "true", env=svc.user_env(), output=log) == 2
    assert "gpus=5 but 4 GPU(s) may be used" in log.read_text()
    log.unlink()
    assert (
        run_as("eve", gpu_run, "--mem-gb", "1000", "--", "true", env=svc.user_env(), output=log)
        == 2
    )
    assert "mem_gb=1000" in log.read_text()


def test_h5_cuda_visible_devices_limits_the_request(svc, users, scratch):
    """H5: a request of a process that may use only GPU 2 is planned on GPU 2."""
    out = scratch / "alice.out"
    env = svc.user_env(CUDA_VISIBLE_DEVICES="2")
    assert (
        run_as("alice", gpu_run, "--", "sh", "-c", f"echo $CUDA_VISIBLE_DEVICES > {out}", env=env)
        == 0
    )
    assert out.read_text().strip() == "2"


def test_labels_are_printed_with_control_characters_escaped(svc, users, scratch):
    """N8, N9, M1: a label with terminal escapes, a non-UTF-8 byte and rich markup: ``gpus``
    prints it as text with the control characters escaped and the byte as ``\\xff``; the
    JSON keeps every character."""
    label = "\x1b]0;pwned\x07[red]x[/red] \udcff"
    pid = spawn_as("alice", gpu_run, "--", "sh", "-c", "sleep 20", label, env=svc.user_env())
    try:
        until(lambda: svc.held(), what="alice's lease")
        text = gpus_as("bob", svc, scratch, text=True)
        assert "\x1b" not in text and "\x07" not in text
        assert "\\x1b]0;pwned\\x07[red]x[/red] \\xff" in text
        v = gpus_as("bob", svc, scratch)
        assert v["devices"][0]["holders"][0]["label"].endswith(label)
    finally:
        os.kill(pid, signal.SIGKILL)
        wait(pid)


def test_umask_077_does_not_deadlock_two_users(svc, users, scratch):
    """N13: with a umask of 077 nothing of a user's is read by another (there are no files
    to share), so two users with a GPU free are both served."""
    pids = [
        spawn_as(u, gpu_run, "--", "sleep", "0.3", env=svc.user_env(), umask=0o077)
        for u in ("alice", "bob")
    ]
    assert [wait(p, 30) for p in pids] == [0, 0]


def test_python_lease_and_a_killed_holder(svc, users, scratch):
    """``bioaccel.lease()`` uses the service where it runs (same interface); a SIGKILLed
    holder frees its GPU, and what it started during the lease is ended."""

    def hold():
        import bioaccel

        with bioaccel.lease(gpus=2, label="py") as held:
            assert os.environ["CUDA_VISIBLE_DEVICES"] == held.visible
            child = subprocess.Popen(["sleep", "60"])
            (scratch / "child").write_text(str(child.pid))
            time.sleep(60)

    pid = spawn_as("alice", hold, env=svc.user_env())
    until(lambda: (scratch / "child").exists() and len(svc.held()) == 2, what="the lease")
    child = int((scratch / "child").read_text())
    until(lambda: child in holder_pids(svc, "alice"), what="the child is shown")
    os.kill(pid, signal.SIGKILL)
    wait(pid)
    until(lambda: not svc.held(), timeout=3, what="the GPUs are free")
    assert not alive(child)


def test_fair_share_uses_the_services_own_accounting(users, scratch):
    """N4, N11, N-FW: usage is what the service measured (GPU-seconds of its leases, decayed
    as an aggregate per account): nothing a user writes changes it. Under a plain load of
    three users nobody is warned of anything."""
    svc = Service(2, shares="policy fair\nalice 2\nbob 1\neve 1\n").start()
    try:
        logs = []
        pids = []
        for user in USERS:
            for k in range(3):
                log = scratch / f"{user}{k}.log"
                logs.append(log)
                pids.append(
                    spawn_as(user, gpu_run, "--", "sleep", "0.2", env=svc.user_env(), output=log)
                )
        assert all(wait(p, 60) == 0 for p in pids)
        usage = svc.ask({"op": "policy"})["usage"]
        assert set(usage) == set(USERS)
        assert all(0.5 < usage[u] < 1.5 for u in USERS), usage  # 3 x 0.2 s each, + overhead
        assert not any("warning" in log.read_text() for log in logs)
    finally:
        svc.close()


# -- the service itself dies ------------------------------------------------------------------
def test_kill9_of_the_service_fails_closed_and_a_restart_recovers(users, scratch):
    """kill -9 of the service: a running gpu-run ends its job and exits 2 with one line; a
    new one fails closed at once ("not running"); a worker that left its job's session
    keeps running (nobody is left to end it) -- until the restarted service reads its leases
    table and the kernel's view: that lease is ``recovered``, its worker is ended, and only
    then is its GPU granted again (nothing double-booked)."""
    svc = Service(1).start()
    try:
        marker = scratch / "worker.pid"
        job = f"setsid sleep 60 & echo $! > {marker}; sleep 60"
        log = scratch / "alice.log"
        a = spawn_as("alice", gpu_run, "--", "sh", "-c", job, env=svc.user_env(), output=log)
        until(lambda: marker.exists() and marker.read_text().strip(), what="the worker")
        worker = int(marker.read_text())
        until(lambda: worker in holder_pids(svc, "alice"), what="the worker is tracked")
        log3 = scratch / "eve.log"
        e = spawn_as("eve", gpu_run, "--", "true", env=svc.user_env(), output=log3)
        until(lambda: [q["user"] for q in svc.status()["queue"]] == ["eve"], what="eve waits")
        svc.kill(signal.SIGKILL)
        assert wait(e, 20) == 2
        assert (
            "closed the connection: it stopped or restarted; no GPU is leased" in log3.read_text()
        )
        assert wait(a, 20) == 2
        (line,) = [ln for ln in log.read_text().splitlines() if ln.startswith("bioaccel: error")]
        assert "stopped while the job ran: the job was ended" in line
        log2 = scratch / "bob.log"
        assert run_as("bob", gpu_run, "--", "true", env=svc.user_env(), output=log2) == 2
        assert "the bioaccel arbiter service is not running" in log2.read_text()
        assert alive(worker)
        svc.start()
        until(lambda: not alive(worker), timeout=5, what="the recovered worker is ended")
        assert "recovered lease" in svc.log.read_text()
        assert run_as("bob", gpu_run, "--", "true", env=svc.user_env(), output=log2) == 0
    finally:
        svc.close()


def test_one_snapshot_schema_for_the_service_and_the_private_mode(svc, tmp_path, monkeypatch):
    """``gpus --json`` has one schema (:mod:`bioaccel.sched.snapshot`) whoever arbitrates."""
    from bioaccel.devices import discover_devices
    from bioaccel.sched import GpuBroker

    monkeypatch.setenv("BIOACCEL_VIRTUAL_GPUS", "2")
    private = GpuBroker(tmp_path / "run", discover_devices()).snapshot()
    with GpuBroker(tmp_path / "run", discover_devices()).acquire(1, label="x"):
        held = GpuBroker(tmp_path / "run", discover_devices()).snapshot()
    service = svc.status()
    assert set(private) == set(service) and private["mode"] == "private"
    assert set(private["devices"][0]) == set(service["devices"][0])
    (h,) = [h for d in held["devices"] for h in d["holders"]]
    pid = spawn_as("alice", gpu_run, "--", "sleep", "20", env=svc.user_env())
    try:
        until(lambda: svc.held(), what="alice's lease")
        assert set(h) == set(svc.held()[0])
    finally:
        os.kill(pid, signal.SIGKILL)
        wait(pid)


def test_the_plugin_and_lease_use_the_service_as_a_user(svc, users, scratch):
    """The Snakemake plugin's view (policy, shares, usage, history) comes from the service."""
    out = scratch / "view.txt"

    def view():
        from bioaccel.sched import policy_view

        config, policy, shares, usage, runs = policy_view()
        print(json.dumps([policy, shares, config.check_account("alice", "lab")]))

    assert run_as("alice", view, env=svc.user_env(), output=out) == 0
    assert json.loads(out.read_text()) == [
        "fcfs",
        {"alice": 2, "bob": 1, "eve": 1, "lab": 1},
        "lab",
    ]


def test_admin_init_migrates_the_old_shared_run_folder(users, scratch):
    """Migration: an old shared run folder is removed when no process holds a lease in it,
    and installing is refused (naming the holder) while one does."""
    from bioaccel.devices import discover_devices
    from bioaccel.errors import SchedulerConfigError
    from bioaccel.sched import GpuBroker, init_run_dir
    from bioaccel.sched.install import migrate_old_run_dir

    old = scratch / "bioaccel"
    os.mkdir(old)
    os.chmod(old, 0o1777)
    devices = discover_devices({"BIOACCEL_VIRTUAL_GPUS": "1"})
    init_run_dir(old, devices)
    held = GpuBroker(old, devices).acquire(1)
    said = []
    try:
        with pytest.raises(
            SchedulerConfigError, match=f"still has live leases .pid.s. {os.getpid()}"
        ):
            migrate_old_run_dir(said.append, old)
    finally:
        held.release()
    os.symlink("/etc", old / "planted")
    migrate_old_run_dir(said.append, old)
    assert not old.exists() and os.path.isfile("/etc/passwd")  # the symlink, not followed
    assert "removed the old shared run directory" in said[-1]


def test_an_installed_service_that_is_down_fails_closed(tmp_path, monkeypatch):
    """Once the service is installed (its root-owned state folder exists), a missing socket
    means a stopped service: leases fail closed in one line instead of falling back to a
    private mode that no other user's jobs would see."""
    from bioaccel.errors import ArbiterUnavailableError
    from bioaccel.sched import find_socket, service

    monkeypatch.setattr(service, "SOCKET_DIR", tmp_path / "run")
    monkeypatch.delenv("BIOACCEL_ARBITER_SOCKET", raising=False)
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    monkeypatch.setattr(service, "STATE_DIR", tmp_path / "absent")
    assert find_socket() is None  # never installed: the private mode
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    monkeypatch.setattr(service, "STATE_DIR", state)
    with pytest.raises(ArbiterUnavailableError, match="installed here .* but not running"):
        find_socket()


@pytest.mark.workflow
def test_snakemake_with_the_plugin_through_the_service(svc, snakemake_exe, tmp_path):
    """The Snakemake plugin and its ``gpu-run`` jobs use the service when it runs (the same
    interfaces): 8 GPU jobs on 4 GPUs, none sharing one, and the plugin says where it
    leases."""
    from tests.datasets import child_env
    from tests.snakemake_fakes import RECORD, SNAKEFILE, check_no_sharing

    (tmp_path / "Snakefile").write_text(f"PY = {sys.executable!r}\n" + SNAKEFILE)
    (tmp_path / "record.py").write_text(RECORD)
    env = child_env(BIOACCEL_VIRTUAL_GPUS="4", BIOACCEL_ARBITER_SOCKET=str(svc.socket))
    env.pop("CUDA_VISIBLE_DEVICES", None)
    env.pop("BIOACCEL_RUN_DIR", None)
    proc = subprocess.run(
        [snakemake_exe, "--cores", "6", "--scheduler", "bioaccel", "--resources", "gpu=4"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    jobs = [json.loads((tmp_path / "out" / f"{i}.json").read_text()) for i in range(12)]
    check_no_sharing(jobs)
    assert f"through the arbiter service ({svc.socket})" in proc.stderr
    assert "leased from the arbiter service" in "".join(
        p.read_text() for p in (tmp_path / "logs").iterdir()
    )


def test_s_n5_a_shared_gpus_memory_is_never_over_committed(users, scratch):
    """S-N5: with 2 slots per GPU, a lease's memory budget is what its request said, kept by
    the service (no record of hers to rewrite): alice's 60 GB of the 80 GB GPU leave room for
    bob's 20 GB, not for his 30 GB."""
    svc = Service(1, slots_per_gpu=2).start()
    try:
        a = spawn_as(
            "alice",
            gpu_run,
            "--slots",
            "1",
            "--mem-gb",
            "60",
            "--",
            "sleep",
            "20",
            env=svc.user_env(),
        )
        until(lambda: svc.held(), what="alice's lease")
        log = scratch / "bob.log"
        code = run_as(
            "bob",
            gpu_run,
            "--slots",
            "1",
            "--mem-gb",
            "30",
            "--timeout",
            "1",
            "--",
            "true",
            env=svc.user_env(),
            output=log,
        )
        assert code == 2 and "no lease on 1 GPU(s) within 1" in log.read_text()
        code = run_as(
            "bob",
            gpu_run,
            "--slots",
            "1",
            "--mem-gb",
            "20",
            "--timeout",
            "5",
            "--",
            "true",
            env=svc.user_env(),
            output=log,
        )
        assert code == 0, log.read_text()
        os.kill(a, signal.SIGKILL)
        wait(a)
    finally:
        svc.close()
