"""The README's layout map names exactly the folders of the tree: every package of
``bioaccel/``, every stage folder of ``csrc/`` and every subject folder of ``tests/``."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def mapped() -> set[str]:
    """Every folder the map names, as a path from the repository root."""
    text = (REPO / "README.md").read_text()
    section = text[text.index("## Layout") :]
    start = section.index("```") + 3
    block = section[start : section.index("```", start)]
    out, parent = set(), ""
    for line in block.splitlines():
        if not line.strip():
            continue
        name = line.split()[0].rstrip("/")
        if line.startswith("  "):
            out.add(f"{parent}/{name}")
        else:
            parent = name
            out.add(name)
    return out


def folders(top: str, *, packages_only: bool) -> set[str]:
    out = set()
    for d in (REPO / top).rglob("*"):
        if not d.is_dir() or "__pycache__" in d.parts or any(p.startswith(".") for p in d.parts):
            continue
        if packages_only and not (d / "__init__.py").exists():
            continue
        out.add(str(d.relative_to(REPO)))
    return out


def test_every_bioaccel_package_is_mapped():
    names = {m for m in mapped() if m.startswith("bioaccel/")} - {"bioaccel/data"}
    assert names == folders("bioaccel", packages_only=True)


def test_every_csrc_folder_is_mapped():
    names = {m for m in mapped() if m.startswith("csrc/")}
    assert names == folders("csrc", packages_only=False) - {"csrc/include"}


def test_every_test_subject_is_mapped():
    names = {m for m in mapped() if m.startswith("tests/")}
    assert names == folders("tests", packages_only=True)


def test_every_top_level_folder_is_mapped():
    tops = {
        p.name
        for p in REPO.iterdir()
        if p.is_dir()
        and not p.name.startswith(".")
        and p.name not in ("build", "shared", "bioaccel.egg-info")
    }
    assert tops <= mapped(), sorted(tops - mapped())
