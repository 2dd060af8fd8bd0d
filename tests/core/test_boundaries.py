"""Each subpackage's ``__init__`` is its API, and its docstring is its map.

- No module of ``bioaccel`` imports a module inside another package: what a package offers
  to the others is re-exported by its ``__init__`` (``from ..sequences import read_sequences``,
  never ``from ..sequences._read import ...``). The same holds for the Snakemake plugin, the
  workflows' scripts, the benchmarks and the README's examples: they use public paths only.
  Tests may reach inside a package (they test its parts).
- Each package docstring lists its modules (``name``: what it does, or :mod:`.name`): every
  module of the folder is named there, and every name written as a module claim is a module.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "bioaccel"


def module_name(path: Path) -> tuple[str, bool]:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), True
    return ".".join(parts), False


def package_of(module: str) -> str:
    """``bioaccel.X`` of any module under ``bioaccel.X`` (``bioaccel`` itself for its
    top-level modules)."""
    parts = module.split(".")
    return (
        ".".join(parts[:2])
        if len(parts) > 2 or (len(parts) == 2 and _is_package(parts[1]))
        else parts[0]
    )


def _is_package(name: str) -> bool:
    return (PACKAGE / name / "__init__.py").exists()


def imported_modules(source: str, module: str, is_package: bool):
    """(line, absolute module) of every ``from ... import`` and ``import`` in ``source``; a
    private name imported from a package (``from bioaccel.distances import _matrix``)
    counts as that module."""
    base = module.split(".") if is_package else module.split(".")[:-1]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                parts = base[: len(base) - node.level + 1] + ([node.module] if node.module else [])
                target = ".".join(parts)
            else:
                target = node.module or ""
            yield node.lineno, target
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    yield node.lineno, f"{target}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name


def reaches_inside(importer_package: str, target: str) -> bool:
    """True when ``target`` is a module inside a package other than the importer's
    (``bioaccel._native``, the compiled core, is a module of its own)."""
    if not target.startswith("bioaccel.") or target == "bioaccel._native":
        return False
    parts = target.split(".")
    if len(parts) < 3 or not _is_package(parts[1]):
        return False
    return ".".join(parts[:2]) != importer_package


#: the exceptions that remain, each with its reason: (file, module it reaches into)
ALLOWED = {
    # its "before" rows time the Python reference path of matrix text, which no public API
    # switches on (the compiled path is the only one bioaccel runs)
    ("benchmarks/bench_matrix_io.py", "bioaccel.distances._text"),
}


def violations_in(path: Path, importer_package: str, module: str = "", is_package=False):
    found = []
    relative = str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)
    for line, target in imported_modules(path.read_text(), module, is_package):
        if (relative, target) in ALLOWED:
            continue
        if reaches_inside(importer_package, target):
            found.append(f"{relative}:{line} imports {target}")
    return found


def test_no_package_imports_another_packages_modules():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module, is_package = module_name(path)
        found += violations_in(path, package_of(module), module, is_package)
    assert not found, "import these through the package's __init__:\n" + "\n".join(found)


@pytest.mark.parametrize(
    "folder", ["snakemake_scheduler_plugin_bioaccel", "workflows", "benchmarks", "scripts"]
)
def test_plugin_workflows_and_benchmarks_use_public_paths(folder):
    found = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        found += violations_in(path, "")
    assert not found, "\n".join(found)


def test_readme_examples_use_public_paths():
    text = (ROOT / "README.md").read_text()
    # a private module inside a package, or any module inside the private foundation
    private = re.findall(r"\bbioaccel\.(?:\w+\._\w+|_core\.\w+)", text)
    assert not private, f"the README names private modules: {sorted(set(private))}"


def test_the_checker_sees_a_private_import(tmp_path):
    """The rule fails on a second package's module (so it cannot pass vacuously), and lets
    the package itself and its own modules pass."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from bioaccel.sequences._read import read_sequences\n"
        "import bioaccel.sequences\nfrom bioaccel._native import x\n"
        "from bioaccel.distances import _matrix\n"
    )
    assert len(violations_in(probe, "")) == 2
    # the package's own modules are its own business; the other package's still counts
    assert [v.split(" imports ")[1] for v in violations_in(probe, "bioaccel.sequences")] == [
        "bioaccel.distances._matrix"
    ]


#: packages whose docstring maps their modules
PACKAGES = sorted(p.parent for p in PACKAGE.rglob("__init__.py") if p.parent != PACKAGE)

#: a module claim: an item (or a ``;``-separated part of one) that starts with module names,
#: ``name`` or :mod:`.name` (several joined by commas or "and"), then a colon or a bracket
_NAME = r"(?:``(?:\w+\.)?\w+``|:mod:`\.?\w+`)"
_CLAIM = re.compile(rf"^\s*({_NAME}(?:\s*(?:,|and)\s*{_NAME})*)\s*[:(]")


def claimed_modules(doc: str) -> set[str]:
    """The modules a package docstring claims, from its list items."""
    names = set()
    items = re.split(r"\n\s*-\s+", "\n" + doc)[1:]
    for item in items:
        for part in re.split(r";\s*", item):
            match = _CLAIM.match(part)
            if match:
                for name in re.findall(r"``(?:\w+\.)?(\w+)``|:mod:`\.?(\w+)`", match.group(1)):
                    names.add(name[0] or name[1])
    return names


@pytest.mark.parametrize("folder", PACKAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_package_docstring_names_its_modules(folder):
    doc = ast.get_docstring(ast.parse((folder / "__init__.py").read_text())) or ""
    modules = {p.stem for p in folder.glob("*.py") if p.stem != "__init__"}
    modules |= {p.name for p in folder.iterdir() if (p / "__init__.py").exists()}
    claimed = claimed_modules(doc)
    assert modules - claimed == set(), (
        f"{folder.name}/__init__ does not name {sorted(modules - claimed)}"
    )
    assert claimed - modules == set(), (
        f"{folder.name}/__init__ names no such module {sorted(claimed - modules)}"
    )
