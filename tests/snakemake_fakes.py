"""Stand-ins for Snakemake's job objects: what the scheduler plugin reads of a job (its
name, rule, priority, resources and inputs), without a workflow."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class FakeJob:
    name: str
    priority: int = 0
    scheduler_resources: dict = field(default_factory=dict)
    input: tuple = ()

    @property
    def rule(self):
        return type("Rule", (), {"name": self.name.split("-")[0]})()


#: a Snakemake workflow of 12 GPU jobs through ``gpu-run``, each recording its GPU and times
SNAKEFILE = """
rule all:
    input: expand("out/{i}.json", i=range(12))

rule gpu_job:
    output: "out/{i}.json"
    log: "logs/{i}.log"
    resources: gpu=1
    priority: lambda wildcards: int(wildcards.i) % 3
    shell: "bioaccel gpu-run --kind test -- {PY} record.py {output} 2> {log}"
"""

RECORD = """
import json, os, sys, time
start = time.time()
time.sleep(0.4)
json.dump({"start": start, "end": time.time(), "gpu": os.environ["CUDA_VISIBLE_DEVICES"]},
          open(sys.argv[1], "w"))
"""


def check_no_sharing(jobs):
    for a in range(len(jobs)):
        for b in range(a + 1, len(jobs)):
            x, y = jobs[a], jobs[b]
            if x["start"] < y["end"] and y["start"] < x["end"]:
                assert x["gpu"] != y["gpu"], f"jobs {a} and {b} overlapped on GPU {x['gpu']}"
    assert {j["gpu"] for j in jobs} == {"0", "1", "2", "3"}
