"""The import graph of ``bioaccel/``: no circles, and every import points down the layers.

Every module is parsed (``ast``; imports inside functions count as much as those at the
top), each ``import``/``from ... import`` naming a ``bioaccel`` module becomes an edge, and

- a circle of modules importing each other fails (it is named, module by module);
- an import from a layer to a layer of the same or a higher rank fails, unless both are
  the same layer. Layers of the same rank are siblings: neither may import the other
  (``backends`` and ``devices`` do not know about each other; nor do ``sched`` and the
  operations);
- a module that no layer claims fails, so a new module or package is placed on purpose.

The layer table (rank, layer, packages or modules directly under ``bioaccel``), bottom first:

====  ==========  ==========================================================================
rank  layer       packages and modules
====  ==========  ==========================================================================
0     foundation  ``errors``, ``_core`` (threads, progress, output formats, atomic files,
                  the native loader), the compiled ``_native``
1     data        ``sequences`` (alphabets, SeqBatch, readers, DNA site views)
2     kernels     ``kernels`` (Numba and CUDA C sources)
3     backends    ``backends`` (the registry and the engines)
3     devices     ``devices`` (discovery, topology, the multi-GPU tile runner) -- a sibling
                  of ``backends``: the runner is handed the engine, it never looks one up
4     operations  ``pairwise``, ``distances``, ``trees``, ``msa_engine``, ``neighbors``,
                  ``clusters``
4     sched       ``sched`` (host-wide leases, policies, history, placement, simulator) --
                  a sibling of the operations
5     interface   the package ``bioaccel`` itself (``__init__``), ``cli``, ``rinterop``,
                  ``config``
====  ==========  ==========================================================================

Operations may import each other (without a circle): ``msa_engine`` uses ``trees``,
``distances``, ``pairwise``, ``backends`` and ``sequences``, never ``cli``.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

PACKAGE_DIR = Path(__file__).resolve().parents[2] / "bioaccel"

LAYERS: list[tuple[int, str, tuple[str, ...]]] = [
    (0, "foundation", ("errors", "_core", "_native")),
    (1, "data", ("sequences",)),
    (2, "kernels", ("kernels",)),
    (3, "backends", ("backends",)),
    (3, "devices", ("devices",)),
    (4, "operations", ("pairwise", "distances", "trees", "msa_engine", "neighbors", "clusters")),
    (4, "sched", ("sched",)),
    (5, "interface", ("", "cli", "rinterop", "config")),
]

SUBPACKAGES = (
    "_core",
    "sequences",
    "pairwise",
    "distances",
    "trees",
    "msa_engine",
    "neighbors",
    "clusters",
    "devices",
    "sched",
    "backends",
    "backends.cupy",
    "backends.numba",
    "kernels",
    "cli",
)


def layer_of(module: str) -> tuple[int, str] | None:
    """(rank, layer) of a dotted module name, by its first component under ``bioaccel``."""
    parts = module.split(".")
    assert parts[0] == "bioaccel", module
    head = parts[1] if len(parts) > 1 else ""
    for rank, name, prefixes in LAYERS:
        if head in prefixes:
            return rank, name
    return None


def module_names(root: Path = PACKAGE_DIR) -> dict[str, Path]:
    """Dotted name -> file of every module (``.py``, and ``.pyi`` for compiled ones)."""
    out: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py*")):
        if path.suffix not in (".py", ".pyi") or "__pycache__" in path.parts:
            continue
        rel = path.relative_to(root.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        name = ".".join(parts)
        if path.suffix == ".py" or name not in out:
            out[name] = path
    return out


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    """The longest known module that ``name`` is or lies in."""
    while name:
        if name in known:
            return name
        name = name.rpartition(".")[0]
    return None


def imports_of(module: str, path: Path, known: dict[str, Path]) -> list[tuple[str, int]]:
    """(imported bioaccel module, line) of every import in the file, at any depth."""
    if path.suffix == ".pyi":
        return []
    tree = ast.parse(path.read_text(), filename=str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "bioaccel" or alias.name.startswith("bioaccel."):
                    target = _resolve(alias.name, known)
                    if target:
                        out.append((target, node.lineno))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = package.split(".")
                if node.level > 1:
                    base_parts = base_parts[: len(base_parts) - (node.level - 1)]
                base = ".".join(base_parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            if not (base == "bioaccel" or base.startswith("bioaccel.")):
                continue
            for alias in node.names:
                target = _resolve(f"{base}.{alias.name}", known) if alias.name != "*" else None
                if target != f"{base}.{alias.name}":
                    target = _resolve(base, known)  # a name defined in ``base``
                if target and target != module:
                    out.append((target, node.lineno))
    return out


def import_graph(root: Path = PACKAGE_DIR) -> dict[str, list[tuple[str, int]]]:
    known = module_names(root)
    return {m: imports_of(m, p, known) for m, p in known.items()}


def find_cycles(graph: dict[str, list[tuple[str, int]]]) -> list[list[str]]:
    """One circle per strongly connected component of more than one module (Tarjan)."""
    adj = {m: sorted({t for t, _ in edges if t in graph}) for m, edges in graph.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    comps: list[list[str]] = []
    counter = [0]

    def strong(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in adj[v]:
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in adj[v]:
                comps.append(comp)

    for v in sorted(adj):
        if v not in index:
            strong(v)
    cycles = []
    for comp in comps:  # the shortest circle through the component's first module
        members, start = set(comp), min(comp)
        parent: dict[str, str] = {}
        frontier, end = [start], None
        while frontier and end is None:
            nxt = []
            for v in frontier:
                for w in adj[v]:
                    if w == start:
                        end = v
                        break
                    if w in members and w not in parent:
                        parent[w] = v
                        nxt.append(w)
                if end is not None:
                    break
            frontier = nxt
        path = [end]
        while path[-1] != start:
            path.append(parent[path[-1]])
        cycles.append(path[::-1] + [start])
    return cycles


def upward_imports(graph: dict[str, list[tuple[str, int]]]) -> list[str]:
    bad = []
    for module, edges in graph.items():
        src = layer_of(module)
        for target, line in edges:
            dst = layer_of(target)
            if src is None or dst is None or src[1] == dst[1]:
                continue
            if dst[0] >= src[0]:
                bad.append(
                    f"{module}:{line} ({src[1]}, rank {src[0]}) imports {target} "
                    f"({dst[1]}, rank {dst[0]})"
                )
    return sorted(bad)


def test_every_module_has_a_layer():
    unplaced = sorted(m for m in module_names() if layer_of(m) is None)
    assert not unplaced, f"modules in no layer of tests/core/test_layering.py's table: {unplaced}"


def test_no_import_circle():
    cycles = find_cycles(import_graph())
    assert not cycles, "import circles: " + "; ".join(" -> ".join(c) for c in cycles)


def test_imports_point_down_the_layers():
    bad = upward_imports(import_graph())
    assert not bad, "imports against the layers:\n" + "\n".join(bad)


def test_function_level_imports_are_seen():
    graph = import_graph()
    # backends/__init__ imports its engines inside a function only
    assert "bioaccel.backends.reference" in {t for t, _ in graph["bioaccel.backends"]}


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / "bioaccel" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root / "bioaccel"


def test_checker_catches_a_circle_inside_functions(tmp_path):
    pkg = _write(
        tmp_path,
        {
            "__init__.py": "",
            "backends/__init__.py": "def f():\n    from .reference import R\n",
            "backends/reference.py": "def g():\n    from ..pairwise._edit import e\n",
            "pairwise/__init__.py": "",
            "pairwise/_edit.py": "from ..devices._multigpu import run\n",
            "devices/__init__.py": "",
            "devices/_multigpu.py": "def h():\n    from ..backends import get_backend\n",
        },
    )
    graph = import_graph(pkg)
    cycles = find_cycles(graph)
    assert len(cycles) == 1
    assert set(cycles[0]) == {
        "bioaccel.backends",
        "bioaccel.backends.reference",
        "bioaccel.pairwise._edit",
        "bioaccel.devices._multigpu",
    }
    bad = upward_imports(graph)
    assert any(
        b.startswith("bioaccel.backends.reference:2 (backends") and "bioaccel.pairwise._edit" in b
        for b in bad
    ), bad
    assert any(
        b.startswith("bioaccel.devices._multigpu:2 (devices") and "bioaccel.backends" in b
        for b in bad
    ), bad


@pytest.mark.parametrize(
    "source, allowed",
    [
        (
            "from ..backends import get_backend\nfrom ..trees import nj\n"
            "from ..sequences import read_sequences\nfrom ..distances import distance_matrix\n"
            "from ..pairwise import Scoring\n",
            True,
        ),
        ("def main():\n    from ..cli import main\n", False),
        ("from ..sched import leases\n", False),
    ],
)
def test_msa_package_is_an_operation(tmp_path, source, allowed):
    files = {
        "__init__.py": "",
        "msa_engine/__init__.py": "",
        "msa_engine/engine.py": source,
        "cli/__init__.py": "",
        "backends/__init__.py": "",
        "trees/__init__.py": "",
        "sequences/__init__.py": "",
        "distances/__init__.py": "",
        "pairwise/__init__.py": "",
        "sched/__init__.py": "",
        "sched/leases.py": "",
    }
    bad = upward_imports(import_graph(_write(tmp_path, files)))
    assert (not bad) == allowed, bad


@pytest.mark.parametrize("name", SUBPACKAGES)
def test_every_subpackage_imports_and_documents_itself(name):
    module = importlib.import_module(f"bioaccel.{name}")
    assert (module.__doc__ or "").strip(), f"bioaccel.{name} has no docstring"


def test_top_level_holds_only_the_interface():
    """Everything else lives in a feature subpackage."""
    top = sorted(p.stem for p in PACKAGE_DIR.glob("*.py"))
    assert top == ["__init__", "config", "errors", "rinterop"], top
