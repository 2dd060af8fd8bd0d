"""Policies, runtime prediction, placement optimizers and the simulator."""

import itertools

import numpy as np
import pytest

from bioaccel.devices._topology import Topology, load_topology, parse_topology
from bioaccel.errors import SchedulerConfigError
from bioaccel.sched.history import History, Run, RuntimePredictor
from bioaccel.sched.placement import (
    ALGORITHMS,
    Stage,
    lower_bound,
    makespan,
    place,
    processing_times,
)
from bioaccel.sched.policies import FairShare, Request, make_policy, parse_shares
from bioaccel.sched.simulator import (
    Job,
    flood_workload,
    heavy_tailed_workload,
    read_trace,
    simulate,
    workload_from_sequences,
    write_trace,
)
from tests.cli_runner import invoke


# -- policies -----------------------------------------------------------------------------------
def ids(policy, reqs, now=100.0, usage=None):
    return [r.id for r in policy.order(reqs, now, usage)]


def test_policy_orders():
    reqs = [
        Request("a", "u1", priority=0, submit_time=1, predicted_s=100),
        Request("b", "u2", priority=9, submit_time=2, predicted_s=10),
        Request("c", "u1", priority=5, submit_time=3, predicted_s=50),
    ]
    assert ids(make_policy("fcfs"), reqs) == ["a", "b", "c"]
    assert ids(make_policy("priority"), reqs) == ["b", "c", "a"]
    # predicted, aging 0.1 at t=100: keys 100-9.9=90.1, 10-9.8=0.2, 50-9.7=40.3
    assert ids(make_policy("predicted"), reqs) == ["b", "c", "a"]
    # ... and a long wait lets a long job overtake newcomers: at t=1001, a (key 100 - 100 = 0)
    # goes before a fresh 10-second job (key 10)
    fresh = Request("d", "u2", submit_time=1001.0, predicted_s=10)
    assert ids(make_policy("predicted"), [reqs[0], fresh], now=1001.0) == ["a", "d"]
    # fair: u1 used 90 of 100 GPU-seconds with equal shares -> F(u1) = 2^-(0.9/0.5) < F(u2)
    assert ids(make_policy("fair"), reqs, usage={"u1": 90, "u2": 10}) == ["b", "c", "a"]
    assert ids(make_policy("fair"), reqs, usage={"u1": 10, "u2": 90}) == ["c", "a", "b"]
    with pytest.raises(SchedulerConfigError, match="unknown policy 'lifo'"):
        make_policy("lifo")


def test_fair_share_factor_matches_slurm_formula():
    f = FairShare({"alice": 3, "bob": 1}).factors(["alice", "bob"], {"alice": 50, "bob": 50})
    # alice: usage 0.5 / share 0.75 -> 2^-(2/3); bob: 0.5 / 0.25 -> 2^-2
    assert f["alice"] == pytest.approx(2 ** (-2 / 3))
    assert f["bob"] == pytest.approx(0.25)
    assert parse_shares("alice=3, bob=1") == {"alice": 3.0, "bob": 1.0}
    with pytest.raises(SchedulerConfigError, match="bob"):
        parse_shares("alice=3,bob")


def test_predicted_policy_never_starves_a_long_job():
    """A stream of short newcomers: the long job is still served within a bounded time."""
    pol = make_policy("predicted", aging=0.1)
    long = Request("long", submit_time=0.0, predicted_s=1000.0)
    for t in range(0, 20000, 10):
        newcomer = Request(f"n{t}", submit_time=float(t), predicted_s=1.0)
        if pol.order([long, newcomer], float(t))[0].id == "long":
            break
    else:
        pytest.fail("the long job never came first")
    assert t <= 1000.0 / 0.1 + 10


# -- history and prediction ---------------------------------------------------------------------
def test_runtime_predictor_recovers_a_linear_model(tmp_path):
    from bioaccel.sched.identity import SharesConfig, current_user

    h = History(tmp_path, SharesConfig(members={"u": {current_user()}}))
    for cells in (1e6, 2e6, 5e6, 1e7):
        h.record(Run("align", "u", "H200", 1, cells, 10, 0.0, 2.0 + cells / 1e6, 0))
    h.record(Run("align", "u", "H200", 1, 3e6, 10, 0.0, 999.0, 1))  # failed runs are ignored
    model = RuntimePredictor(h.runs("align"))
    assert model.predict("align", 4e6, "H200") == pytest.approx(6.0)
    assert model.throughput("align") == pytest.approx(1e6)
    assert model.predict("tree", 1e6) is None
    bench = tmp_path / "b.tsv"
    bench.write_text("s\th:m:s\tmax_rss\n3.5\t0:00:03\t10\n4.5\t0:00:04\t10\n")
    assert h.import_snakemake_benchmark(bench, kind="tree", cells=1e6) == 2
    assert RuntimePredictor(h.runs()).predict("tree", 1e6) == pytest.approx(4.0)
    bad = tmp_path / "bad.tsv"
    bad.write_text("s\th:m:s\nfast\t0:00:03\n")
    with pytest.raises(SchedulerConfigError, match="line 2"):
        h.import_snakemake_benchmark(bad, kind="tree")


def test_usage_decays_with_half_life(tmp_path):
    from bioaccel.sched.identity import SharesConfig, current_user

    h = History(tmp_path, SharesConfig(members={"alice": {current_user()}}), half_life_s=50)
    h.record(Run("x", "alice", "g", 2, None, None, 0.0, 100.0, 0))
    assert h.usage(now=100.0)["alice"] == pytest.approx(200.0)
    assert h.usage(now=150.0)["alice"] == pytest.approx(100.0)


def test_decayed_usage_sum_equals_decaying_every_run(tmp_path):
    """The running decayed sum (one number per account, Slurm-style) against the slow
    reference: every recorded run decayed by its own age, summed; runs recorded in any order
    of their ends, including a clock that stepped back."""
    from bioaccel.sched.identity import SharesConfig, current_user

    rng = np.random.default_rng(7)
    me = current_user()
    h = History(tmp_path, SharesConfig(members={"lab": {me}}), half_life_s=300.0)
    runs = []
    t = 1000.0
    for _ in range(60):
        t += float(rng.exponential(40.0))
        end = t - float(rng.uniform(0, 200)) if rng.random() < 0.2 else t  # some out of order
        run = Run(
            "x",
            str(rng.choice([me, "lab"])),
            "g",
            int(rng.integers(1, 5)),
            None,
            None,
            end - float(rng.uniform(0, 90)),
            end,
            0,
        )
        h.record(run)
        runs.append(run)
    now = t + 123.0
    expected = {}
    for r in runs:
        expected[r.user] = expected.get(r.user, 0.0) + r.gpus * r.runtime_s * 0.5 ** (
            max(0.0, now - r.end) / 300.0
        )
    got = h.usage(now=now)
    assert set(got) == set(expected)
    for account, value in expected.items():
        assert got[account] == pytest.approx(value, rel=1e-9)


# -- placement ----------------------------------------------------------------------------------
def brute_force(p):
    m, n = p.shape
    return min(makespan(np.array(a), p) for a in itertools.product(range(m), repeat=n))


@pytest.mark.parametrize("seed", range(6))
def test_placements_are_feasible_and_bounded_by_the_optimum(seed):
    rng = np.random.default_rng(seed)
    m, n = int(rng.integers(2, 4)), int(rng.integers(3, 8))
    p = rng.uniform(1, 10, (m, n))
    opt = brute_force(p)
    lb = lower_bound(p)
    assert lb <= opt * (1 + 1e-9)
    for alg in ALGORITHMS:
        r = place(p, alg, time_budget_s=0.2, seed=seed)
        assert r.assignment.shape == (n,) and set(r.assignment) <= set(range(m))
        assert r.makespan == pytest.approx(makespan(r.assignment, p))
        assert r.makespan >= opt - 1e-9
    # the metaheuristics reach the optimum on instances this small
    for alg in ("ga", "aco", "pso"):
        assert place(p, alg, time_budget_s=0.3, seed=seed).makespan == pytest.approx(opt)


def test_hand_checked_placement():
    # 2 identical GPUs, stages 3,3,2,2,2: LPT gives {3,2,2}=7 | {3,2}=5; optimum {3,3}=6 | {2,2,2}=6
    p = np.array([[3.0, 3, 2, 2, 2]] * 2)
    assert place(p, "lpt").makespan == 7.0
    assert place(p, "local").makespan == 6.0
    assert lower_bound(p) == pytest.approx(6.0)


def test_within_five_percent_of_the_bound_on_identical_gpus():
    rng = np.random.default_rng(0)
    p = np.tile(rng.lognormal(0, 1, 200), (8, 1))
    for alg in ALGORITHMS:
        r = place(p, alg, time_budget_s=0.3)
        if alg != "greedy":  # min-min is known to be poor on identical machines
            assert r.ratio <= 1.05, (alg, r.ratio)


def heterogeneous_instance(seed):
    topo = parse_topology(
        {
            "nodes": [
                {
                    "name": "a",
                    "gpus": [
                        {"id": 0, "speed": 2.0},
                        {"id": 1, "speed": 1.0},
                        {"id": 2, "speed": 0.5},
                    ],
                },
                {"name": "b", "gpus": [{"id": 0, "speed": 1.0}, {"id": 1, "speed": 0.3}]},
            ],
            "links": {"nvlink": 300, "pcie": 20, "network": 5},
            "data": {"d0": "a", "d1": "b", "d2": "a:0"},
        }
    )
    rng = np.random.default_rng(seed)
    stages = [
        Stage(
            f"s{k}", float(rng.lognormal(1, 1)), float(rng.uniform(0, 30e9)), f"d{rng.integers(3)}"
        )
        for k in range(60)
    ]
    return processing_times(stages, topo)


@pytest.mark.parametrize("seed", range(3))
def test_metaheuristics_match_lpt_plus_local_search_with_locality(seed):
    p = heterogeneous_instance(seed)
    baseline = place(p, "local").makespan
    assert baseline <= place(p, "lpt").makespan + 1e-9
    for alg in ("ga", "aco", "pso"):
        r = place(p, alg, time_budget_s=0.5, seed=seed)
        assert r.makespan <= baseline + 1e-9, (alg, r.makespan, baseline)
        assert r.ratio >= 1 - 1e-9


def test_transfer_costs_follow_the_topology():
    topo = heterogeneous_instance.__globals__["parse_topology"](
        {
            "nodes": [{"name": "a", "gpus": [{"id": 0}, {"id": 1}]}, {"name": "b", "gpus": 1}],
            "links": {"nvlink": 100, "pcie": 10, "network": 1},
        }
    )
    a0, a1, b0 = topo.gpus
    assert topo.transfer_s(10e9, "a:0", a0) == 0.0  # already on that GPU
    assert topo.transfer_s(10e9, "a:0", a1) == pytest.approx(0.1)  # NVLink
    assert topo.transfer_s(10e9, "a", a1) == pytest.approx(1.0)  # PCIe from host
    assert topo.transfer_s(10e9, "a", b0) == pytest.approx(10.0)  # network
    with pytest.raises(SchedulerConfigError, match="'c'"):
        topo.transfer_s(1, "c", a0)


def test_topology_errors_name_the_place(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text("nodes:\n  - name: a\n    gpus:\n      - {id: 0, speed: fast}\n")
    with pytest.raises(SchedulerConfigError, match=r"nodes\[0\] \(a\) gpus\[0\] speed.*'fast'"):
        load_topology(path)
    path.write_text("nodes:\n  - name: a\n    gpus: 1\ndata:\n  x: b\n")
    with pytest.raises(SchedulerConfigError, match="'x' sits at 'b'"):
        load_topology(path)


# -- simulator ----------------------------------------------------------------------------------
def test_simulator_hand_computed():
    # 2 GPUs; jobs: A(2 GPUs, 10 s) at 0, B(1 GPU, 4 s) at 1, C(1 GPU, 4 s) at 1.
    # A runs 0-10; B and C start at 10, end at 14.
    jobs = [Job("A", 2, 0.0, 10.0), Job("B", 1, 1.0, 4.0), Job("C", 1, 1.0, 4.0)]
    r = simulate(jobs, Topology.identical(2), "fcfs")
    by = {rec.job.id: rec for rec in r.records}
    assert (by["A"].start, by["A"].end, by["B"].start, by["C"].end) == (0.0, 10.0, 10.0, 14.0)
    assert r.makespan == 14.0
    assert r.avg_jct == pytest.approx((10 + 13 + 13) / 3)
    assert r.avg_wait == pytest.approx((0 + 9 + 9) / 3)
    assert r.utilization == pytest.approx((20 + 4 + 4) / (2 * 14))
    # speeds: a job on a speed-2 GPU takes half as long
    fast = parse_topology({"nodes": [{"name": "n", "gpus": [{"id": 0, "speed": 2.0}]}]})
    assert simulate([Job("x", 1, 0.0, 10.0)], fast).makespan == 5.0


def test_predicted_cuts_average_completion_by_a_fifth_on_heavy_tails():
    for seed in range(3):
        jobs = heavy_tailed_workload(300, seed=seed, arrival_s=4.0)
        fcfs = simulate(jobs, Topology.identical(4), "fcfs").avg_jct
        pred = simulate(jobs, Topology.identical(4), "predicted").avg_jct
        assert pred <= 0.8 * fcfs, (seed, pred, fcfs)


def test_fair_share_lifts_jain_when_one_user_floods():
    jobs = flood_workload()
    fcfs = simulate(jobs, Topology.identical(4), "fcfs")
    fair = simulate(jobs, Topology.identical(4), "fair")
    assert fair.jain > fcfs.jain + 0.1
    light = [r.wait for r in fair.records if r.job.user != "flooder"]
    assert max(light) < min(r.wait for r in fcfs.records if r.job.user != "flooder")


def test_locality_placement_moves_fewer_bytes():
    topo = parse_topology(
        {
            "nodes": [{"name": "a", "gpus": 2}, {"name": "b", "gpus": 2}],
            "links": {"network": 1.0},
            "data": {"da": "a", "db": "b:0"},
        }
    )
    jobs = [Job(f"j{k}", 1, float(k), 5.0, bytes=4e9, data="db") for k in range(8)]
    blind = simulate(jobs, topo, "fcfs", "first-free")
    local = simulate(jobs, topo, "fcfs", "locality")
    assert local.bytes_moved < blind.bytes_moved
    # offline placement on predicted times keeps jobs near their data and waits for those
    # GPUs instead of paying the network: shorter makespan than either greedy rule
    batch = simulate(jobs, topo, "fcfs", "lpt")
    assert batch.makespan < min(blind.makespan, local.makespan)
    assert batch.bytes_moved <= local.bytes_moved


def test_trace_round_trip_and_errors(tmp_path):
    jobs = heavy_tailed_workload(20, seed=1)
    path = tmp_path / "trace.csv"
    write_trace(jobs, path)
    again = read_trace(path)
    assert [(j.id, j.num_gpu, j.user) for j in again] == [(j.id, j.num_gpu, j.user) for j in jobs]
    assert simulate(again, Topology.identical(4)).makespan == pytest.approx(
        simulate(jobs, Topology.identical(4)).makespan
    )
    minimal = tmp_path / "min.csv"
    minimal.write_text("job_id,num_gpu,submit_time,duration\n1,1,0,10\n2,2,5,20\n")
    assert simulate(read_trace(minimal), Topology.identical(2)).makespan == 30.0
    minimal.write_text("job_id,num_gpu,submit_time,duration\n1,1,0,ten\n")
    with pytest.raises(SchedulerConfigError, match="line 2: duration = 'ten'"):
        read_trace(minimal)
    minimal.write_text("job_id,gpus,submit_time,duration\n")
    with pytest.raises(SchedulerConfigError, match="num_gpu"):
        read_trace(minimal)
    with pytest.raises(SchedulerConfigError, match=r"repeated: \['x'\]"):
        simulate([Job("x", 1, 0, 1), Job("x", 1, 0, 2)], Topology.identical(2))
    with pytest.raises(SchedulerConfigError, match="asks for 3 GPU"):
        simulate([Job("x", 3, 0, 1)], Topology.identical(2))


def test_workload_from_real_sequences(tmp_path):
    fasta = tmp_path / "s.fa"
    fasta.write_text(">a\nACGTACGTAC\n>b\nACGTAC\n>c\nACG\n")
    (job,) = workload_from_sequences([fasta], cells_per_s=1.0)
    assert job.duration == 10 * 6 + 10 * 3 + 6 * 3


def test_fair_share_charges_usage_up_to_each_completion():
    """One GPU, no decay. A1 (alice) runs 0-4; at t=4 bob has used nothing, so B1 runs 4-10.
    At t=10 bob's 6 GPU-seconds end at this very event and must be charged before the queue
    is ranked: alice (4) then goes before bob (6), although bob's B2 arrived first."""
    jobs = [
        Job("A1", 1, 0.0, 4.0, "alice"),
        Job("B1", 1, 0.0, 6.0, "bob"),
        Job("B2", 1, 1.0, 1.0, "bob"),
        Job("A2", 1, 2.0, 1.0, "alice"),
    ]
    one = Topology.identical(1)
    fcfs = {r.job.id: r.start for r in simulate(jobs, one, "fcfs").records}
    fair = {r.job.id: r.start for r in simulate(jobs, one, "fair", half_life_s=1e12).records}
    assert (fcfs["A1"], fcfs["B1"], fcfs["B2"], fcfs["A2"]) == (0.0, 4.0, 10.0, 11.0)
    # fair: at t=4 alice 4 vs bob 0 -> B1; at t=10 alice 4 vs bob 6 -> A2 before B2
    assert (fair["A1"], fair["B1"], fair["A2"], fair["B2"]) == (0.0, 4.0, 10.0, 11.0)


def test_simulate_cli_prints_the_table_and_names_bad_workloads(tmp_path):
    ok = invoke("sched", "simulate", "-w", "flood", "-c", "4", "-p", "all")
    assert ok.exit_code == 0, ok.output
    assert "fair" in ok.output and "Jain" in ok.output
    bad = invoke("sched", "simulate", "-w", "heavy-tailed:abc", "-c", "4")
    assert bad.exit_code == 2 and "heavy-tailed:abc" in bad.output
    missing = invoke("sched", "simulate", "-w", str(tmp_path / "t.csv"), "-c", "4")
    assert missing.exit_code == 2 and "no such file" in missing.output
