"""Cluster topology: nodes, their GPUs, link bandwidths and where data sets sit.

Described in YAML (or JSON)::

    nodes:
      - name: node1
        gpus:
          - {id: 0, name: H200, memory_gb: 141, compute_capability: "9.0", speed: 1.0}
          - {id: 1, name: A100, memory_gb: 80, compute_capability: "8.0", speed: 0.45}
    links:            # GB/s
      nvlink: 400     # GPU <-> GPU inside a node
      pcie: 25        # host memory <-> GPU inside a node
      network: 12.5   # node <-> node
    data:             # where each data set sits: a node (host memory) or node:gpu
      reads_a: node1
      reads_b: node2:0

``speed`` is relative throughput (1.0 = the reference GPU). Virtual GPUs (``virtual: true``
on a node or a GPU) may carry ``fail_after_tiles: N`` (the device fails after N tiles, a
failover drill) and ``max_tile_work: W`` (tiles with more work raise an out-of-memory
error, so the split-and-retry path can be exercised).
"""

from __future__ import annotations

import json
import socket
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import SchedulerConfigError

DEFAULT_LINKS = {"nvlink": 300.0, "pcie": 25.0, "network": 12.5}


@dataclass(frozen=True)
class GpuSpec:
    node: str
    id: str
    name: str = "GPU"
    memory_gb: float = 80.0
    compute_capability: str = "9.0"
    speed: float = 1.0
    virtual: bool = False
    fail_after_tiles: int | None = None
    max_tile_work: float | None = None

    @property
    def key(self) -> str:
        return f"{self.node}:{self.id}"


@dataclass
class Topology:
    gpus: list[GpuSpec]
    links: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_LINKS))
    data: dict[str, str] = field(default_factory=dict)
    source: str | None = None

    @property
    def nodes(self) -> list[str]:
        seen: list[str] = []
        for g in self.gpus:
            if g.node not in seen:
                seen.append(g.node)
        return seen

    @classmethod
    def identical(
        cls, n_gpus: int, node: str = "node1", speed: float = 1.0, virtual: bool = True
    ) -> Topology:
        """``n_gpus`` identical GPUs on one node."""
        if int(n_gpus) != n_gpus or n_gpus < 1:
            raise SchedulerConfigError(f"need a positive number of GPUs, got {n_gpus!r}")
        return cls(
            [
                GpuSpec(
                    node, str(i), "virtual GPU" if virtual else "GPU", speed=speed, virtual=virtual
                )
                for i in range(int(n_gpus))
            ]
        )

    def local_gpus(self) -> list[GpuSpec]:
        """The GPUs of this host: the node named like this host, else the first node."""
        host = socket.gethostname().split(".")[0]
        node = host if host in self.nodes else self.nodes[0]
        return [g for g in self.gpus if g.node == node]

    def bandwidth_gbs(self, src: str | None, gpu: GpuSpec) -> float:
        """GB/s from where data sit (``node`` or ``node:gpu``) to ``gpu``; inf when local."""
        if src is None:
            return float("inf")
        node, _, dev = str(src).partition(":")
        if node not in self.nodes:
            raise SchedulerConfigError(
                f"data location {src!r} names no node of the topology {self.nodes}"
            )
        if node != gpu.node:
            return min(self.links["network"], self.links["pcie"])
        if not dev:
            return self.links["pcie"]
        if dev == gpu.id:
            return float("inf")
        return self.links.get("nvlink") or self.links["pcie"]

    def transfer_s(self, nbytes: float, src: str | None, gpu: GpuSpec) -> float:
        bw = self.bandwidth_gbs(src, gpu)
        return 0.0 if nbytes == 0 or bw == float("inf") else nbytes / (bw * 1e9)

    def location_of(self, data_name: str | None) -> str | None:
        """A data set's location: looked up in ``data``, or taken as a location itself."""
        if data_name is None:
            return None
        return self.data.get(data_name, data_name)


def _number(value, where: str, *, positive: bool = True) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise SchedulerConfigError(f"{where}: expected a number, got {value!r}") from None
    if positive and not x > 0:
        raise SchedulerConfigError(f"{where}: expected a positive number, got {value!r}")
    return x


def parse_topology(doc: dict, source: str = "<topology>") -> Topology:
    if not isinstance(doc, dict) or "nodes" not in doc:
        raise SchedulerConfigError(f"{source}: expected a mapping with a 'nodes' list")
    gpus: list[GpuSpec] = []
    allowed = {
        "id",
        "name",
        "memory_gb",
        "compute_capability",
        "speed",
        "virtual",
        "fail_after_tiles",
        "max_tile_work",
    }
    for n, node in enumerate(doc["nodes"] or []):
        if not isinstance(node, dict) or "name" not in node:
            raise SchedulerConfigError(f"{source}: nodes[{n}] needs a 'name'")
        name = str(node["name"])
        node_gpus = node.get("gpus", [])
        if isinstance(node_gpus, int):
            node_gpus = [{"id": i} for i in range(node_gpus)]
        for k, g in enumerate(node_gpus):
            where = f"{source}: nodes[{n}] ({name}) gpus[{k}]"
            if not isinstance(g, dict):
                raise SchedulerConfigError(f"{where}: expected a mapping, got {g!r}")
            unknown = set(g) - allowed
            if unknown:
                raise SchedulerConfigError(
                    f"{where}: unknown keys {sorted(unknown)}; expected some of {sorted(allowed)}"
                )
            fail = g.get("fail_after_tiles")
            gpus.append(
                GpuSpec(
                    node=name,
                    id=str(g.get("id", k)),
                    name=str(g.get("name", "GPU")),
                    memory_gb=_number(g.get("memory_gb", 80), f"{where} memory_gb"),
                    compute_capability=str(g.get("compute_capability", "9.0")),
                    speed=_number(g.get("speed", 1.0), f"{where} speed"),
                    virtual=bool(g.get("virtual", node.get("virtual", False))),
                    fail_after_tiles=None
                    if fail is None
                    else int(_number(fail, f"{where} fail_after_tiles", positive=False)),
                    max_tile_work=None
                    if g.get("max_tile_work") is None
                    else _number(g["max_tile_work"], f"{where} max_tile_work"),
                )
            )
    if not gpus:
        raise SchedulerConfigError(f"{source}: the topology has no GPUs")
    keys = [g.key for g in gpus]
    dup = sorted({k for k in keys if keys.count(k) > 1})
    if dup:
        raise SchedulerConfigError(f"{source}: GPU ids repeated on a node: {dup}")
    links = dict(DEFAULT_LINKS)
    for key, value in (doc.get("links") or {}).items():
        if key not in DEFAULT_LINKS:
            raise SchedulerConfigError(
                f"{source}: unknown link {key!r}; expected {sorted(DEFAULT_LINKS)}"
            )
        links[key] = _number(value, f"{source}: links.{key}")
    topo = Topology(
        gpus, links, {str(k): str(v) for k, v in (doc.get("data") or {}).items()}, source
    )
    for name, loc in topo.data.items():
        node, _, dev = loc.partition(":")
        if node not in topo.nodes or (dev and f"{node}:{dev}" not in keys):
            raise SchedulerConfigError(
                f"{source}: data {name!r} sits at {loc!r}, which is not a "
                f"node or node:gpu of this topology"
            )
    return topo


def load_topology(path: str | Path) -> Topology:
    """Read a topology from YAML or JSON (see the module docstring)."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise SchedulerConfigError(f"cannot read topology {str(path)!r}: {exc.strerror}") from None
    if path.suffix.lower() == ".json":
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SchedulerConfigError(
                f"{path}, line {exc.lineno}, column {exc.colno}: not valid JSON: {exc.msg}"
            ) from None
    else:
        import yaml

        try:
            doc = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            # one line naming the file and the line (PyYAML's own text spans several lines)
            mark = getattr(exc, "problem_mark", None)
            where = f", line {mark.line + 1}, column {mark.column + 1}" if mark else ""
            what = " ".join(
                str(x) for x in (getattr(exc, "context", None), getattr(exc, "problem", None)) if x
            ) or str(exc)
            raise SchedulerConfigError(
                f"{path}{where}: not valid YAML: {' '.join(what.split())}"
            ) from None
    return parse_topology(doc, str(path))


def topology_schema() -> str:
    """The topology YAML (or JSON) schema as text, from this module's documentation (the
    help of ``bioaccel sched --topology``)."""
    doc = __doc__
    block = doc[doc.index("::") + 2 : doc.index("``speed``")].strip("\n")
    rest = " ".join(doc[doc.index("``speed``") :].split()).replace("``", "")
    return (
        "Topology YAML (or JSON):\n"
        + "\n".join(line[2:] for line in block.splitlines())
        + "\n\n"
        + rest
        + " A node may give a count instead of the list: gpus: 4."
    )
