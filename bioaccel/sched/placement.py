"""Placing a batch of independent stages onto heterogeneous GPUs (R||Cmax with data locality).

Stage j on GPU i takes ``p[i, j] = work_j / speed_i + bytes_j / bandwidth(location_j, i)``
(:class:`~bioaccel.devices._topology.Topology` gives the bandwidths). The goal is the smallest
makespan, the largest GPU load.

Algorithms (all seeded and deterministic for a seed; the iterative ones stop at their time
budget or when they reach the lower bound):

- ``greedy``: min-min -- repeatedly place the stage with the earliest possible finish;
- ``lpt``: stages by decreasing best time, each on the GPU where it finishes first;
- ``local``: the local-search baseline: LPT, then local search (move a stage off the
  critical GPU, or swap it with a stage elsewhere, while the maximum load drops);
- ``ga``: a genetic algorithm over assignment vectors (tournament selection, uniform
  crossover, move mutations, elitism), seeded with the LPT and min-min solutions, with
  local search on the best of each generation (a memetic GA);
- ``aco``: MAX-MIN ant system: ants build assignments stage by stage (LPT order) choosing
  GPU i with probability ~ tau[i, j] * (1 / finish_i)^beta; the best ant is polished by
  local search and deposits pheromone;
- ``pso``: particle swarm over continuous positions in [0, m) decoded by flooring to a
  GPU per stage, one particle at the LPT solution, local search on the global best.

The lower bound is ``max(max_j min_i p_ij, sum_j min_i p_ij / m)``, raised to the LP
relaxation of R||Cmax when SciPy is installed and the instance is small enough.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..devices import Topology
from ..errors import SchedulerConfigError

ALGORITHMS = ("greedy", "lpt", "local", "ga", "aco", "pso")


@dataclass(frozen=True)
class Stage:
    name: str
    work: float  # seconds on a speed-1.0 GPU
    bytes: float = 0.0  # input to move to the GPU
    data: str | None = None  # data-set name or location (node or node:gpu)


def processing_times(stages: list[Stage], topology: Topology) -> np.ndarray:
    """p[i, j]: seconds of stage j on GPU i (compute + data transfer)."""
    p = np.empty((len(topology.gpus), len(stages)))
    for j, s in enumerate(stages):
        if not s.work >= 0 or not s.bytes >= 0:
            raise SchedulerConfigError(f"stage {s.name!r}: work and bytes must be >= 0")
        src = topology.location_of(s.data)
        for i, g in enumerate(topology.gpus):
            p[i, j] = s.work / g.speed + topology.transfer_s(s.bytes, src, g)
    return p


@dataclass
class Placement:
    algorithm: str
    assignment: np.ndarray  # GPU index per stage
    makespan: float
    lower_bound: float
    solve_s: float

    @property
    def ratio(self) -> float:
        return self.makespan / self.lower_bound if self.lower_bound > 0 else 1.0


def loads(assign: np.ndarray, p: np.ndarray) -> np.ndarray:
    return np.bincount(assign, weights=p[assign, np.arange(p.shape[1])], minlength=p.shape[0])


def makespan(assign: np.ndarray, p: np.ndarray) -> float:
    return float(loads(assign, p).max()) if p.shape[1] else 0.0


def check_budget(value, name: str = "time budget") -> float:
    """A time budget in seconds: a finite number >= 0 (:class:`SchedulerConfigError`)."""
    import math
    import numbers

    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not math.isfinite(value)
        or value < 0
    ):
        raise SchedulerConfigError(f"{name} must be a finite number of seconds >= 0, got {value!r}")
    return float(value)


#: The LP relaxation's share of a time budget (HiGHS stops at its time limit; the simple
#: bound stands then).
LP_SHARE = 0.25


def lower_bound(p: np.ndarray, lp: bool = True, time_limit_s: float = 1.0) -> float:
    """``max(max_j min_i p_ij, sum_j min_i p_ij / m)``, raised to the LP relaxation of
    R||Cmax when SciPy is installed, the instance has at most 40,000 cells and HiGHS
    solves it within ``time_limit_s`` (a 4 x 3,000 LP takes ~15 s on two cores)."""
    m, n = p.shape
    if n == 0:
        return 0.0
    best = p.min(axis=0)
    lb = max(float(best.max()), float(best.sum() / m))
    if lp and m * n <= 40000 and time_limit_s > 0:
        try:
            from scipy import sparse
            from scipy.optimize import linprog
        except ImportError:
            return lb
        # variables x_ij (m*n, index i*n + j) then C; min C s.t. sum_i x_ij = 1,
        # sum_j p_ij x_ij <= C; sparse (dense, 3,000 stages on 4 GPUs took 300 MB and seconds)
        c = np.zeros(m * n + 1)
        c[-1] = 1.0
        cols = np.arange(m * n)
        a_eq = sparse.csr_matrix((np.ones(m * n), (cols % n, cols)), shape=(n, m * n + 1))
        a_ub = sparse.csr_matrix(
            (
                np.concatenate([p.reshape(-1), -np.ones(m)]),
                (
                    np.concatenate([cols // n, np.arange(m)]),
                    np.concatenate([cols, np.full(m, m * n)]),
                ),
            ),
            shape=(m, m * n + 1),
        )
        res = linprog(
            c,
            A_ub=a_ub,
            b_ub=np.zeros(m),
            A_eq=a_eq,
            b_eq=np.ones(n),
            bounds=[(0, None)] * (m * n + 1),
            method="highs",
            options={"time_limit": float(time_limit_s)},
        )
        if res.status == 0:
            lb = max(lb, float(res.fun) * (1 - 1e-9))
    return lb


# -- constructive heuristics -----------------------------------------------------------------
def min_min(p: np.ndarray, deadline: float | None = None) -> np.ndarray:
    """Min-min, O(n^2) after the first step: placing a stage on GPU i only raises row i of
    the finish times, so only the stages whose best GPU was i need a new minimum. Past
    ``deadline`` the stages left go by LPT's rule (each where it finishes first)."""
    m, n = p.shape
    load = np.zeros(m)
    assign = np.full(n, -1)
    finish = p.copy()  # load[i] + p[i, j]
    best_i = finish.argmin(axis=0)
    best = finish[best_i, np.arange(n)]
    for step in range(n):
        if deadline is not None and step % 64 == 0 and time.perf_counter() > deadline:
            for j in np.flatnonzero(assign < 0)[
                np.argsort(-p.min(axis=0)[assign < 0], kind="stable")
            ]:
                i = int((load + p[:, j]).argmin())
                assign[j] = i
                load[i] += p[i, j]
            return assign
        j = int(best.argmin())
        i = int(best_i[j])
        assign[j] = i
        load[i] += p[i, j]
        best[j] = np.inf
        finish[:, j] = np.inf
        finish[i] += p[i, j]
        stale = np.flatnonzero((best_i == i) & (assign < 0))
        if stale.size:
            sub = finish[:, stale]
            best_i[stale] = sub.argmin(axis=0)
            best[stale] = sub[best_i[stale], np.arange(stale.size)]
    return assign


def lpt(p: np.ndarray) -> np.ndarray:
    m, n = p.shape
    load = np.zeros(m)
    assign = np.empty(n, dtype=np.int64)
    for j in np.argsort(-p.min(axis=0), kind="stable"):
        i = int((load + p[:, j]).argmin())
        assign[j] = i
        load[i] += p[i, j]
    return assign


def local_search(assign: np.ndarray, p: np.ndarray, deadline: float | None = None) -> np.ndarray:
    """Moves and swaps off a critical (most loaded) GPU, accepted when both GPUs involved end
    below the current maximum; the sorted load vector then drops lexicographically, so the
    search ends."""
    m, n = p.shape
    a = assign.copy()
    load = loads(a, p)
    idx = np.arange(n)
    improved = m > 1
    while improved and (deadline is None or time.perf_counter() < deadline):
        improved = False
        crit = int(load.argmax())
        cmax = load[crit] - 1e-12
        for j in idx[a == crit]:
            dst = load + p[:, j]
            dst[crit] = np.inf
            k = int(dst.argmin())
            if dst[k] < cmax and load[crit] - p[crit, j] < cmax:
                a[j] = k
                load[crit] -= p[crit, j]
                load[k] = dst[k]
                improved = True
                break
            others = idx[a != crit]
            if len(others):
                ko = a[others]
                new_crit = load[crit] - p[crit, j] + p[crit, others]
                new_other = load[ko] - p[ko, others] + p[ko, j]
                worst = np.maximum(new_crit, new_other)
                b = int(worst.argmin())
                if worst[b] < cmax:
                    o, k = int(others[b]), int(ko[b])
                    a[j], a[o] = k, crit
                    load[crit], load[k] = new_crit[b], new_other[b]
                    improved = True
                    break
    return a


# -- metaheuristics ----------------------------------------------------------------------------
def _perturbed(a: np.ndarray, m: int, rng, fraction: float = 0.1) -> np.ndarray:
    b = a.copy()
    k = max(1, int(len(a) * fraction))
    b[rng.choice(len(a), size=min(k, len(a)), replace=False)] = rng.integers(m, size=min(k, len(a)))
    return b


def _ga(p, rng, deadline, lb, pop_size=24) -> np.ndarray:
    """Memetic GA: every individual is polished by local search (Lamarckian)."""
    m, n = p.shape
    seed = local_search(lpt(p), p, deadline)
    pop = [seed, local_search(min_min(p, deadline), p, deadline)]
    while len(pop) < pop_size and time.perf_counter() < deadline:
        pop.append(local_search(_perturbed(seed, m, rng, 0.3), p, deadline))
    fit = np.array([makespan(a, p) for a in pop])
    while time.perf_counter() < deadline and fit.min() > lb * (1 + 1e-9):
        x, y = (pop[min(rng.choice(len(pop), 3), key=lambda k: fit[k])] for _ in range(2))
        child = np.where(rng.random(n) < 0.5, x, y)
        child = local_search(_perturbed(child, m, rng, 2.0 / max(n, 1)), p, deadline)
        c = makespan(child, p)
        worst = int(fit.argmax())
        if c < fit[worst] and not any(np.array_equal(child, q) for q in pop):
            pop[worst], fit[worst] = child, c  # steady state: replace the worst
    return pop[int(fit.argmin())]


def _aco(p, rng, deadline, lb, ants=10, beta=2.0, rho=0.1) -> np.ndarray:
    m, n = p.shape
    best = local_search(lpt(p), p, deadline)
    best_c = makespan(best, p)
    if best_c <= 0:
        return best
    tau_max = 1.0 / (rho * best_c)
    tau_min = tau_max / (2 * m)
    tau = np.full((m, n), tau_max)
    order = np.argsort(-p.min(axis=0), kind="stable")
    while time.perf_counter() < deadline and best_c > lb * (1 + 1e-9):
        it_best, it_c = None, np.inf
        for _ in range(ants):
            load = np.zeros(m)
            a = np.empty(n, dtype=np.int64)
            draws = rng.random(n)
            for step, j in enumerate(order):
                if step % 256 == 0 and time.perf_counter() > deadline:
                    break  # an ant cut short is dropped
                w = tau[:, j] * (1.0 / (load + p[:, j])) ** beta
                cum = np.cumsum(w)
                i = min(int(np.searchsorted(cum, draws[step] * cum[-1], side="right")), m - 1)
                a[j] = i
                load[i] += p[i, j]
            else:
                c = float(load.max())
                if c < it_c:
                    it_best, it_c = a, c
                continue
            break
        if it_best is None:
            break
        it_best = local_search(it_best, p, deadline)
        it_c = makespan(it_best, p)
        if it_c < best_c:
            best, best_c = it_best, it_c
            tau_max = 1.0 / (rho * best_c)
            tau_min = tau_max / (2 * m)
        tau *= 1 - rho
        tau[best, np.arange(n)] += 1.0 / best_c
        np.clip(tau, tau_min, tau_max, out=tau)
    return best


def _pso(p, rng, deadline, lb, particles=20, w=0.7, c1=1.5, c2=1.5) -> np.ndarray:
    """Discrete PSO by flooring positions; improved particles are polished by local search
    and moved to the polished solution (Lamarckian)."""
    m, n = p.shape

    def decode(pos):
        return np.minimum(pos.astype(np.int64), m - 1)

    x = rng.random((particles, n)) * m
    x[0] = local_search(lpt(p), p, deadline) + 0.5
    v = rng.normal(0, 0.5, (particles, n))
    pbest = x.copy()
    pfit = np.array([makespan(decode(r), p) for r in x])
    g = int(pfit.argmin())
    gbest, gfit = pbest[g].copy(), pfit[g]
    while time.perf_counter() < deadline and gfit > lb * (1 + 1e-9):
        r1, r2 = rng.random((2, particles, n))
        v = np.clip(w * v + c1 * r1 * (pbest - x) + c2 * r2 * (gbest - x), -m / 2, m / 2)
        x = np.clip(x + v, 0, m - 1e-9)
        for k in range(particles):
            a = decode(x[k])
            c = makespan(a, p)
            if c < pfit[k]:
                a = local_search(a, p, deadline)
                c = makespan(a, p)
                x[k] = a + 0.5
                pbest[k], pfit[k] = x[k], c
                if c < gfit:
                    gbest, gfit = x[k].copy(), c
    return decode(gbest)


def place(
    p: np.ndarray,
    algorithm: str = "lpt",
    *,
    time_budget_s: float = 1.0,
    seed: int = 0,
    lb: float | None = None,
) -> Placement:
    """Place the stages (columns of ``p``) with ``algorithm`` (one of :data:`ALGORITHMS`).

    ``time_budget_s`` (finite, >= 0) bounds the whole call: the LP lower bound (when ``lb``
    is not given) takes at most :data:`LP_SHARE` of it, and every algorithm, the
    constructive ones and the seeds of the metaheuristics too, stops at the deadline with
    the best assignment so far (LPT's at least; LPT itself is one pass, O(n m)).

    Examples
    --------
    >>> p = np.array([[3.0, 3.0, 2.0, 2.0, 2.0], [3.0, 3.0, 2.0, 2.0, 2.0]])
    >>> place(p, "lpt").makespan, place(p, "local").makespan
    (7.0, 6.0)
    """
    time_budget_s = check_budget(time_budget_s, "time_budget_s (--budget)")
    p = np.asarray(p, dtype=np.float64)
    if p.ndim != 2 or p.shape[0] < 1:
        raise SchedulerConfigError(f"p must be a (GPUs, stages) matrix, got shape {p.shape}")
    if not np.all(np.isfinite(p)) or (p < 0).any():
        raise SchedulerConfigError("processing times must be finite and >= 0")
    key = str(algorithm).lower()
    if key not in ALGORITHMS:
        raise SchedulerConfigError(
            f"unknown placement {algorithm!r}; expected one of {list(ALGORITHMS)}"
        )
    t0 = time.perf_counter()
    deadline = t0 + time_budget_s
    lb = lower_bound(p, time_limit_s=LP_SHARE * time_budget_s) if lb is None else lb
    rng = np.random.default_rng(seed)
    if p.shape[1] == 0:
        a = np.zeros(0, dtype=np.int64)
    elif key == "greedy":
        a = min_min(p, deadline)
    elif key == "lpt":
        a = lpt(p)
    elif key == "local":
        a = local_search(lpt(p), p, deadline)
    elif key == "ga":
        a = _ga(p, rng, deadline, lb)
    elif key == "aco":
        a = _aco(p, rng, deadline, lb)
    else:
        a = _pso(p, rng, deadline, lb)
    return Placement(
        key, np.asarray(a, dtype=np.int64), makespan(a, p), lb, time.perf_counter() - t0
    )
