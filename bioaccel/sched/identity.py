"""Who a request is for: the kernel's real uid, and the accounts the shares file grants it.

Identity never comes from the environment: ``$USER``/``$LOGNAME`` are whatever the caller
set, so the user is ``getuid()`` and its name in the password database; another user's
record is attributed to the owner of its file (``st_uid``), whatever it says inside.

The shares file (``/etc/bioaccel/shares``; ``BIOACCEL_SHARES_FILE`` names another one),
edited by the administrator, sets the fair-share shares, which accounts each user may charge
(as Slurm limits ``--account``) and optionally the queue policy of every user of the host::

    # account  share  [members: users who may charge it besides the user of that name]
    policy fair
    alice      2
    bob        1
    genomics   3      alice,carol

Every user may charge the account named like themselves. A shares file is trusted only if
root or the owner of the run directory owns it and nobody else may write it; otherwise it is
refused (a user could else grant themselves any account).
"""

from __future__ import annotations

import os
import pwd
import stat
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import AccountError, SchedulerConfigError

SHARES_FILE = Path("/etc/bioaccel/shares")
#: Shares lie in this range, so their ratios and sums stay finite and non-zero.
MIN_SHARE, MAX_SHARE = 1e-6, 1e6


def user_name(uid: int) -> str:
    """The password database's name of ``uid`` (the number as text if it has none)."""
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def current_user() -> str:
    """The real user of this process (not ``$USER``, which anyone can set)."""
    return user_name(os.getuid())


@dataclass
class SharesConfig:
    """What the shares file says (empty when there is none)."""

    path: Path | None = None
    shares: dict[str, float] = field(default_factory=dict)
    members: dict[str, set[str]] = field(default_factory=dict)
    policy: str | None = None

    def accounts_of(self, user: str) -> list[str]:
        return [user] + sorted(a for a, m in self.members.items() if user in m and a != user)

    def check_account(self, user: str, account: str | None) -> str:
        """The account to charge: ``account`` if ``user`` may charge it (default: ``user``).

        Raises
        ------
        AccountError
            ``user`` is not a member of ``account`` in the shares file.
        """
        if account is None or account == user:
            return user
        if user in self.members.get(account, ()):
            return account
        where = (
            f"the shares file {str(self.path)!r}"
            if self.path
            else f"no shares file ({SHARES_FILE} is absent)"
        )
        raise AccountError(
            f"user {user!r} may not charge account {account!r}: {where} lists "
            f"{user!r} in {self.accounts_of(user)} only"
        )

    def charged(self, user: str, claimed: object) -> tuple[str, bool]:
        """The account a record of ``user`` that claims ``claimed`` is charged to, and whether
        the claim was honoured."""
        if isinstance(claimed, str):
            try:
                return self.check_account(user, claimed), True
            except AccountError:
                pass
        return user, claimed is None or claimed == user


def parse_shares_file(path: Path, text: str) -> SharesConfig:
    from .policies import POLICIES

    cfg = SharesConfig(path)
    for no, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].split()
        if not line:
            continue
        where = f"{path}: line {no}: {raw.strip()!r}"
        if line[0] == "policy":
            if len(line) != 2 or line[1].lower() not in POLICIES:
                raise SchedulerConfigError(
                    f"{where}: expected 'policy NAME' with NAME one of {list(POLICIES)}"
                )
            cfg.policy = line[1].lower()
            continue
        if len(line) not in (2, 3):
            raise SchedulerConfigError(f"{where}: expected 'account share [user,user...]'")
        try:
            share = float(line[1])
        except ValueError:
            share = float("nan")
        if not share > 0 or share == float("inf"):
            raise SchedulerConfigError(f"{where}: share {line[1]!r} is not a positive number")
        if not MIN_SHARE <= share <= MAX_SHARE:
            raise SchedulerConfigError(
                f"{where}: share {line[1]!r} is outside {MIN_SHARE:g}..{MAX_SHARE:g}"
            )
        if line[0] in cfg.shares:
            raise SchedulerConfigError(f"{where}: account {line[0]!r} is listed twice")
        cfg.shares[line[0]] = share
        if len(line) == 3:
            cfg.members[line[0]] = {u for u in line[2].split(",") if u}
    return cfg


def load_shares(run_dir_uid: int | None = None, env=None) -> SharesConfig:
    """The host's shares file (see the module), or an empty config if there is none.

    Raises
    ------
    SchedulerConfigError
        ``BIOACCEL_SHARES_FILE`` names a missing file; the file is malformed, a symlink, or
        owned or writable by someone the run directory does not trust.
    """
    env = os.environ if env is None else env
    named = env.get("BIOACCEL_SHARES_FILE")
    path = Path(named) if named else SHARES_FILE
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        if named:
            raise SchedulerConfigError(f"BIOACCEL_SHARES_FILE={named!r}: no such file") from None
        return SharesConfig()
    except OSError as exc:
        raise SchedulerConfigError(
            f"shares file {str(path)!r}: {exc.strerror} (a symlink is never followed)"
        ) from None
    try:
        st = os.fstat(fd)
        mode = stat.S_IMODE(st.st_mode)
        trusted = {0} | ({run_dir_uid} if run_dir_uid is not None else set())
        if not stat.S_ISREG(st.st_mode) or st.st_uid not in trusted or mode & 0o022:
            raise SchedulerConfigError(
                f"shares file {str(path)!r} (owner {user_name(st.st_uid)}, mode {mode:04o}) is "
                f"not trusted: expected a regular file owned by root"
                + (f" or {user_name(run_dir_uid)}" if run_dir_uid not in (None, 0) else "")
                + " and writable by its owner only"
            )
        if st.st_size > 1 << 20:
            raise SchedulerConfigError(
                f"shares file {str(path)!r}: {st.st_size} bytes; expected at most 1 MiB"
            )
        text = os.read(fd, 1 << 20).decode(errors="replace")
    finally:
        os.close(fd)
    return parse_shares_file(path, text)
