"""The public names of ``bioaccel`` and of each feature subpackage: listed here, so a move
that drops or renames one fails, and every listed name resolves."""

from __future__ import annotations

import importlib

import pytest

import bioaccel

PUBLIC = [
    "Alignment",
    "AlignmentLengthError",
    "Alphabet",
    "AlphabetError",
    "BackendUnavailableError",
    "BioaccelError",
    "Clustering",
    "DNA",
    "DeviceError",
    "DeviceSelectionError",
    "DistanceMatrix",
    "DuplicateIdError",
    "LeaseTimeoutError",
    "MODELS",
    "MatrixFormatError",
    "ModelError",
    "MultipleAlignment",
    "Neighbors",
    "PROTEIN",
    "SchedulerConfigError",
    "SeqBatch",
    "SequenceFormatError",
    "ThreadCountError",
    "Tree",
    "align",
    "align_scores",
    "available_backends",
    "cluster",
    "distance_matrix",
    "edit_distances",
    "get_backend",
    "lease",
    "msa",
    "neighbors",
    "nj",
    "read_many",
    "read_neighbors",
    "read_newick",
    "read_sequences",
    "show_config",
    "upgma",
]


def test_public_names_are_unchanged():
    assert sorted(bioaccel.__all__) == sorted(PUBLIC)
    for name in PUBLIC:
        assert getattr(bioaccel, name) is not None


@pytest.mark.parametrize(
    "package",
    [
        "sequences",
        "pairwise",
        "distances",
        "trees",
        "devices",
        "msa_engine",
        "neighbors",
        "clusters",
        "sched",
        "backends.cupy",
        "backends.numba",
        "cli",
    ],
)
def test_each_subpackage_lists_what_it_offers(package):
    module = importlib.import_module(f"bioaccel.{package}")
    names = getattr(module, "__all__", None)
    assert names, f"bioaccel.{package} has no __all__"
    for name in names:
        assert hasattr(module, name), f"bioaccel.{package}.__all__ lists {name!r}, not defined"


def test_a_module_is_not_shadowed_by_a_function():
    """``import bioaccel.x.y as m`` gives the module (``bioaccel.align`` used to be both)."""
    import bioaccel.pairwise._align as module

    assert module.__name__ == "bioaccel.pairwise._align"
    assert callable(bioaccel.align)


def test_import_needs_no_gpu_library():
    import subprocess
    import sys

    code = (
        "import sys, bioaccel; bad = [m for m in ('cupy', 'numba', 'rpy2') if m in sys.modules];"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _modules_after(code: str) -> set[str]:
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys; print(' '.join(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
    )
    return set(proc.stdout.split())


def test_names_load_on_first_use():
    """``import bioaccel`` loads no subpackage (nor NumPy): each public name loads its own
    on first use, and the subpackages stay reachable as attributes."""
    loaded = _modules_after("import bioaccel")
    assert "numpy" not in loaded and "bioaccel.distances" not in loaded
    loaded = _modules_after(
        "import bioaccel; bioaccel.nj; bioaccel.trees.Tree; bioaccel.sched.lease"
    )
    assert {"bioaccel.trees", "bioaccel.sched"} <= loaded
    assert "bioaccel.msa_engine" not in loaded
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        bioaccel.nope  # noqa: B018
    assert set(PUBLIC) <= set(dir(bioaccel))


def test_command_line_starts_without_the_engines_it_does_not_run():
    """The ``bioaccel`` program loads what a command needs: defining the commands loads no
    scheduler, MSA engine, Numba or rich (a MinHash matrix or a tree starts faster
    and smaller); the scheduler and MSA commands load when named or listed."""
    loaded = _modules_after("import bioaccel.cli")
    heavy = {"bioaccel.sched", "bioaccel.msa_engine", "numba", "rich", "click.testing"}
    assert not heavy & loaded, heavy & loaded
    import click

    from bioaccel.cli._main import _LAZY_COMMANDS, main

    ctx = click.Context(main)
    for name in _LAZY_COMMANDS:
        assert main.get_command(ctx, name).name == name
    assert set(_LAZY_COMMANDS) <= set(main.list_commands(ctx))


def test_a_function_named_as_its_subpackage_stays_callable_once_the_subpackage_is_imported():
    """``bioaccel.neighbors`` is a function and a subpackage: importing the subpackage (as
    ``bioaccel.cluster(..., edges=...)`` does) binds the module to the name, so every such
    module must call its function. A second name shared this way fails here until its
    module does the same."""
    import subprocess
    import sys

    shared = sorted(set(bioaccel._LAZY) & bioaccel._SUBPACKAGES)
    assert shared == ["neighbors"]  # a new one is checked below like this one
    for name in shared:
        code = (
            f"import bioaccel.{name}, bioaccel\n"
            f"from bioaccel import {name} as f\n"
            f"assert callable(f) and callable(bioaccel.{name}), type(f)\n"
            "print(repr(f(['ACGTACGT', 'ACGTACGA'], max_distance=1)))\n"
        )
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        assert "1 pairs of 2 sequences" in out.stdout
