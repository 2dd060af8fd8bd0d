"""Queue policies: the order in which waiting leases and jobs are served.

One implementation serves the lease queue (:mod:`bioaccel.sched.broker`), the simulator and
the Snakemake scheduler plugin.

- ``fcfs``: first come, first served.
- ``priority``: higher ``priority`` first, then first come.
- ``fair``: Slurm's classic fair-share factor ``F = 2 ** (-U / S)`` with ``U`` the user's
  share of the (exponentially decayed) past usage and ``S`` the user's share of the
  configured shares; highest ``F`` first, then priority, then first come.
- ``predicted``: shortest predicted runtime first, aged so nothing starves: the key is
  ``predicted_s - aging * waited_s``, so a job that has waited ``predicted_s / aging``
  seconds overtakes any newcomer. Requests with no prediction rank as the mean of the
  others.
- ``largest``: longest predicted runtime first (LPT, Graham's list scheduling), for a batch of
  independent jobs that all wait at once, such as one multiple alignment per gene family:
  the big ones start first and the small ones fill the gaps, so no late giant holds up the
  end (makespan within 4/3 of the optimum). Requests with no prediction rank as the mean of
  the others; ties go first come first. No aging: it is meant for one user's batch, not a
  shared queue that keeps growing.

>>> reqs = [Request("a", submit_time=0, predicted_s=50), Request("b", submit_time=1, predicted_s=5)]
>>> [r.id for r in make_policy("fcfs").order(reqs, now=2)]
['a', 'b']
>>> [r.id for r in make_policy("predicted").order(reqs, now=2)]
['b', 'a']
>>> [r.id for r in make_policy("largest").order(reqs[::-1], now=2)]
['a', 'b']
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..errors import SchedulerConfigError

POLICIES = ("fcfs", "priority", "fair", "predicted", "largest")


@dataclass
class Request:
    """A waiting lease or job, as a policy sees it."""

    id: str
    user: str = "default"
    priority: float = 0.0
    gpus: int = 1
    submit_time: float = 0.0
    predicted_s: float | None = None
    payload: object = field(default=None, repr=False, compare=False)


class Policy(ABC):
    name = ""

    def order(
        self, requests: Sequence[Request], now: float, usage: Mapping[str, float] | None = None
    ) -> list[Request]:
        """``requests`` best first. ``usage``: decayed past GPU-seconds per user."""
        keyed = self._keys(list(requests), now, usage or {})
        return [r for _, r in sorted(zip(keyed, requests), key=lambda kr: kr[0])]

    @abstractmethod
    def _keys(
        self, requests: list[Request], now: float, usage: Mapping[str, float]
    ) -> list[tuple]: ...


class Fcfs(Policy):
    name = "fcfs"

    def _keys(self, requests, now, usage):
        return [(r.submit_time, r.id) for r in requests]


class PriorityPolicy(Policy):
    name = "priority"

    def _keys(self, requests, now, usage):
        return [(-r.priority, r.submit_time, r.id) for r in requests]


class FairShare(Policy):
    name = "fair"

    def __init__(self, shares: Mapping[str, float] | None = None, default_share: float = 1.0):
        self.shares = dict(shares or {})
        self.default_share = float(default_share)
        for user, s in self.shares.items():
            if not 1e-6 <= s <= 1e6:
                raise SchedulerConfigError(
                    f"fair-share: user {user!r} has share {s!r}; expected 1e-06..1e+06"
                )

    def factors(self, users, usage: Mapping[str, float]) -> dict[str, float]:
        users = set(users) | set(usage)
        share = {u: self.shares.get(u, self.default_share) for u in users}
        total_share = sum(share.values()) or 1.0
        use = {u: usage.get(u, 0.0) for u in users}
        use = {u: v if 0.0 <= v < math.inf else 0.0 for u, v in use.items()}  # NaN, < 0: none
        top = max(use.values(), default=0.0)
        total_use = math.fsum(v / top for v in use.values()) if top > 0 else 0.0
        out = {}
        for u in users:
            used = use[u] / top / total_use if total_use > 0 else 0.0
            out[u] = 2.0 ** (-used / (share[u] / total_share))
        return out

    def _keys(self, requests, now, usage):
        f = self.factors({r.user for r in requests}, usage)
        return [(-f[r.user], -r.priority, r.submit_time, r.id) for r in requests]


class Predicted(Policy):
    name = "predicted"

    def __init__(self, aging: float = 0.1):
        if not 0 < aging < math.inf:
            raise SchedulerConfigError(
                f"predicted: aging must be a finite number > 0 (else jobs starve), got {aging!r}"
            )
        self.aging = float(aging)

    def _keys(self, requests, now, usage):
        known = [r.predicted_s for r in requests if r.predicted_s is not None]
        fill = sum(known) / len(known) if known else 0.0
        return [
            (
                (fill if r.predicted_s is None else r.predicted_s)
                - self.aging * max(0.0, now - r.submit_time),
                r.submit_time,
                r.id,
            )
            for r in requests
        ]


class Largest(Policy):
    name = "largest"

    def _keys(self, requests, now, usage):
        known = [r.predicted_s for r in requests if r.predicted_s is not None]
        fill = sum(known) / len(known) if known else 0.0
        return [
            (-(fill if r.predicted_s is None else r.predicted_s), r.submit_time, r.id)
            for r in requests
        ]


def make_policy(
    name: str, *, shares: Mapping[str, float] | None = None, aging: float = 0.1
) -> Policy:
    """A policy by name (one of :data:`POLICIES`)."""
    key = str(name).lower()
    if key == "fcfs":
        return Fcfs()
    if key == "priority":
        return PriorityPolicy()
    if key in ("fair", "fairshare", "fair-share"):
        return FairShare(shares)
    if key in ("predicted", "sjf"):
        return Predicted(aging)
    if key in ("largest", "lpt"):
        return Largest()
    raise SchedulerConfigError(f"unknown policy {name!r}; expected one of {list(POLICIES)}")


def parse_shares(text: str | None) -> dict[str, float]:
    """``"alice=2,bob=1"`` -> ``{"alice": 2.0, "bob": 1.0}``."""
    out: dict[str, float] = {}
    for part in (text or "").split(","):
        if not part.strip():
            continue
        user, sep, value = part.partition("=")
        try:
            out[user.strip()] = float(value)
        except ValueError:
            raise SchedulerConfigError(f"shares entry {part!r}: expected user=number") from None
        if not sep or not user.strip() or not 1e-6 <= out[user.strip()] <= 1e6:
            raise SchedulerConfigError(
                f"shares entry {part!r}: expected user=number in 1e-06..1e+06"
            )
    return out


def decay(amount: float, age_s: float, half_life_s: float) -> float:
    """``amount`` halved every ``half_life_s`` seconds of age."""
    return amount * math.pow(0.5, max(0.0, age_s) / half_life_s)
