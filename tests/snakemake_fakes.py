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
