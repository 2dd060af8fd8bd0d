"""Every "one X" of the package, pinned: each test fails when a second copy appears.

The rules (each docstring names where the one copy lives):

- one file-format sniffer: magic bytes and matrix-suffix tables only in ``_core/sniff.py``
  (and the output-name table of ``_core/outputs.py``);
- no public name meaning two things (two ``FORMATS`` once did); ``save_scores`` names
  through the one output-name rule;
- one -0.0 rule (``_core.outputs.without_negative_zero``); one condensed-triangle offset
  helper (``_core.tiling.pairs_before``);
- one ``auto`` resolver (``backends.auto_backend``); one device dispatch
  (``Backend.device_scope``, the tile runner knows no backend by name);
- one meaning of ``threads=0`` (``_core.threads.all_cores``, handed to the C++ core);
  every SIMD dispatcher through the one CPU probe (``active_isa()``);
- one error class per fault (``DuplicateIdError``), one ``check_*`` per name, one matrix
  loader (``pairwise.load_matrix``).

On the tree before these were made true, each scan below found its second copy: the magic
bytes in ``cli/_main.py`` and ``sequences/_read.py``, ``_clean_negative_zero`` and its
``signbit``, ``_row_starts`` and ``_first``, ``("cpu", "auto")`` in trees/msa/cli, the
backend names and ``import cupy`` in ``devices/_multigpu.py``, ``os.cpu_count()`` there and
``sched_getaffinity`` in ``msa_engine/accurate.py``, ``omp_get_max_threads`` in
``common.hpp``, ``target_clones`` in ``posteriors.cpp``, ``SequenceFormatError`` /
``ValueError`` / ``NewickError`` for repeated ids, two ``check_mode``, two matrix loaders,
``FORMATS`` in two ``__all__``.
"""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.datasets import not_applicable

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "bioaccel"
CSRC = ROOT / "csrc"


def sources():
    """(path relative to the repository, text, tree) of every module of bioaccel."""
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        yield path.relative_to(ROOT).as_posix(), text, ast.parse(text)


def cpp_sources():
    for path in sorted(CSRC.rglob("*")):
        if path.suffix in (".cpp", ".hpp", ".h", ".cc", ".inc"):
            yield path.relative_to(ROOT).as_posix(), path.read_text(encoding="utf-8")


# -- one file-format sniffer ------------------------------------------------------------


#: the binary kinds bioaccel reads: .cdist, .npy, zip (.npz), gzip
MAGIC = {b"BACDIST1", b"\x93NUMPY", b"PK", b"\x1f\x8b"}


def test_magic_bytes_live_in_the_one_sniffer():
    """A bytes literal that is (or starts with) a magic number of ``_core.sniff.MAGIC``
    anywhere else is a second sniffer."""
    found = []
    for name, _, tree in sources():
        if name == "bioaccel/_core/sniff.py":
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, bytes):
                v = node.value
                if len(v) >= 2 and any(v.startswith(m) or m.startswith(v) for m in MAGIC):
                    found.append(f"{name}:{node.lineno} {v!r}")
    assert not found, "magic bytes outside bioaccel/_core/sniff.py: " + ", ".join(found)
    from bioaccel._core.sniff import MAGIC as TABLE

    assert set(TABLE.values()) == MAGIC


MATRIX_SUFFIXES = {".npy", ".npz", ".cdist", ".tsv", ".dist", ".mat"}


def test_matrix_suffix_tables_live_in_core():
    """A dict or set literal holding two or more matrix suffixes is a suffix table: only
    the output-name rule (``_core/outputs.py``) and the sniffer hold one."""
    found = []
    for name, _, tree in sources():
        if name in ("bioaccel/_core/outputs.py", "bioaccel/_core/sniff.py"):
            continue
        for node in ast.walk(tree):
            keys = (
                node.keys
                if isinstance(node, ast.Dict)
                else node.elts
                if isinstance(node, (ast.Set, ast.Tuple, ast.List))
                else []
            )
            values = {k.value for k in keys if isinstance(k, ast.Constant)}
            if len(values & MATRIX_SUFFIXES) >= 2:
                found.append(f"{name}:{node.lineno}")
    assert not found, "matrix suffix tables outside _core: " + ", ".join(found)


def test_every_reader_asks_the_one_sniffer(tmp_path):
    from bioaccel._core import looks_like_matrix, matrix_format_of
    from bioaccel.distances import DistanceMatrix
    from bioaccel.distances import matrix_format_of as from_distances

    assert from_distances is matrix_format_of
    dm = DistanceMatrix([[0, 1], [1, 0]], ["a", "b"])
    for fmt, name in [("npy", "m.npy"), ("cdist", "m.cdist"), ("npz", "m.npz"), ("tsv", "m.tsv")]:
        dm.write(tmp_path / name)
        blind = tmp_path / f"{fmt}-no-suffix"
        blind.write_bytes((tmp_path / name).read_bytes())
        assert matrix_format_of(blind, sniff=True) == fmt
        assert looks_like_matrix(blind)
    (tmp_path / "s.fa").write_text(">a\nACGT\n")
    assert not looks_like_matrix(tmp_path / "s.fa")


def test_no_public_name_means_two_things():
    """A name in two subpackages' ``__all__`` is one object (the sequence readers' and the
    MSA engine's ``FORMATS`` were two)."""
    seen: dict[str, tuple[str, object]] = {}
    clashes = []
    for path in sorted(PACKAGE.glob("*/__init__.py")):
        package = f"bioaccel.{path.parent.name}"
        module = importlib.import_module(package)
        for name in getattr(module, "__all__", []):
            value = getattr(module, name)
            if name in seen and seen[name][1] is not value:
                clashes.append(f"{name}: {seen[name][0]} and {package}")
            seen.setdefault(name, (package, value))
    assert not clashes, clashes
    from bioaccel import msa_engine, sequences

    # the old names still import, as the new ones
    assert sequences.FORMATS is sequences.SEQUENCE_FORMATS
    assert msa_engine.FORMATS is msa_engine.ALIGNMENT_FORMATS


def test_save_scores_goes_through_the_output_name_rule(tmp_path):
    from bioaccel.pairwise import save_scores

    with pytest.raises(ValueError, match=r"x\.csv: a score matrix is not written as \.csv"):
        save_scores(np.zeros((1, 1), np.int32), tmp_path / "x.csv", ["a"])
    with pytest.raises(ValueError, match="write_score_table"):
        save_scores(np.zeros((1, 1), np.int32), tmp_path / "x.tsv", ["a"])
    assert not list(tmp_path.iterdir())  # nothing written
    save_scores(np.zeros((1, 1), np.int32), tmp_path / "x.npy", ["a"])
    assert np.load(tmp_path / "x.npy").shape == (1, 1)


# -- one -0.0 rule, one offset helper -----------------------------------------------------


def test_one_negative_zero_rule():
    """Only ``_core/outputs.py`` looks for -0.0 (``signbit``) or defines a cleaner."""
    found = []
    for name, _text, tree in sources():
        if name == "bioaccel/_core/outputs.py":
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr == "signbit":
                found.append(f"{name}:{node.lineno} signbit")
            if isinstance(node, ast.FunctionDef) and "negative_zero" in node.name:
                found.append(f"{name}:{node.lineno} def {node.name}")
    assert not found, found
    from bioaccel._core import without_negative_zero
    from bioaccel.distances import DistanceMatrix

    caller = np.array([[0.0, -0.0], [-0.0, 0.0]])
    dm = DistanceMatrix(caller, ["a", "b"])
    assert not np.signbit(dm.data).any() and np.signbit(caller[0, 1])  # the caller's kept
    assert str(without_negative_zero(np.float32(-0.0))) == "0.0"


#: the arithmetic of "pairs before row i" (i n - i (i + 1) / 2) in any spelling
OFFSET = re.compile(r"\w+\s*\*\s*\w+\s*-\s*\w+\s*\*\s*\(\s*\w+\s*\+\s*1\s*\)\s*//\s*2")


def test_one_triangle_offset_helper():
    found = [
        f"{name}:{text[: m.start()].count(chr(10)) + 1}"
        for name, text, _ in sources()
        if name != "bioaccel/_core/tiling.py"
        for m in OFFSET.finditer(text)
    ]
    assert not found, "condensed offsets outside _core.tiling.pairs_before: " + ", ".join(found)
    from bioaccel._core import condensed_pair, pairs_before

    n = 7
    k = 0
    for i in range(n):
        assert pairs_before(i, n) == k
        for j in range(i + 1, n):
            assert condensed_pair(k, n) == (i, j)
            k += 1


# -- one auto resolver, one device dispatch ------------------------------------------------

#: a tuple treating "auto" as the CPU: an auto decision of its own
AUTO_AS_CPU = re.compile(r"""\(\s*["'](?:cpu|auto)["']\s*,\s*["'](?:cpu|auto)["']\s*\)""")


def test_auto_is_resolved_in_the_registry_only():
    found = [
        f"{name}:{text[: m.start()].count(chr(10)) + 1}"
        for name, text, _ in sources()
        if not name.startswith("bioaccel/backends/")
        for m in AUTO_AS_CPU.finditer(text)
    ]
    assert not found, "auto decided outside bioaccel.backends: " + ", ".join(found)
    # size thresholds for picking a GPU live in the registry's table
    for name, _, tree in sources():
        if name.startswith("bioaccel/backends/"):
            continue
        for node in tree.body:
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    if isinstance(t, ast.Name) and "GPU" in t.id and "MIN" in t.id:
                        pytest.fail(f"{name}:{node.lineno}: {t.id}: a size rule of auto")


def test_auto_resolver_takes_operation_and_size(monkeypatch):
    from bioaccel.backends import AUTO_GPU_FROM, _instances, auto_backend, get_backend
    from bioaccel.backends.cupy._backend import CupyBackend

    monkeypatch.setitem(_instances, "cupy", CupyBackend(xp=np))  # a usable GPU backend
    # the rule's mechanism (measured rules keep NJ on the C++ core: AUTO_GPU_FROM's figures)
    at = 4096
    monkeypatch.setitem(AUTO_GPU_FROM, "neighbor_joining", at)
    assert get_backend("auto", "neighbor_joining", size=at).name == "cupy"
    assert get_backend("auto", "neighbor_joining", size=at - 1).name == "cpu"
    for operation in ("msa_profile_dp", "pair_posteriors", "neighbor_joining_low_memory"):
        assert auto_backend(operation, 10**9).name == "cpu"


def test_the_tile_runner_knows_no_backend_by_name():
    """``devices/_multigpu.py`` imports no GPU stack and names no backend: each backend
    binds its own device selection (``Backend.device_scope``)."""
    name = "bioaccel/devices/_multigpu.py"
    tree = ast.parse((ROOT / name).read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            bad = [a.name for a in node.names if a.name.split(".")[0] in ("cupy", "numba")]
            assert not bad, f"{name}:{node.lineno} imports {bad}"
        if isinstance(node, ast.ImportFrom):
            assert (node.module or "").split(".")[0] not in ("cupy", "numba"), node.lineno
        if isinstance(node, ast.Constant) and node.value in ("cupy", "numba", "numba-cuda"):
            pytest.fail(f"{name}:{node.lineno} switches on {node.value!r}")
    # device selection calls live in the backends only
    for mod, text, _ in sources():
        if mod.startswith("bioaccel/backends/"):
            continue
        assert "select_device(" not in text and "cuda.Device(" not in text, mod


def test_every_gpu_backend_binds_the_device_scope():
    from bioaccel.backends import Backend
    from bioaccel.backends.cupy._backend import CupyBackend
    from bioaccel.backends.numba._backend import NumbaCudaBackend

    for cls in (CupyBackend, NumbaCudaBackend):
        assert cls.on_gpu
        assert cls.device_scope is not Backend.device_scope, cls
        assert cls.is_device_failure is not Backend.is_device_failure, cls


def test_auto_on_real_devices_takes_a_gpu_backend_whatever_the_size_rules(monkeypatch):
    """devices= naming real GPUs asks for them: `auto` takes a GPU backend there even for the
    operations whose measured rule keeps a call without devices= on the C++ core."""
    from bioaccel import BackendUnavailableError
    from bioaccel.backends import AUTO_GPU_FROM, _instances, backend_for_devices, get_backend
    from bioaccel.backends.cupy._backend import CupyBackend
    from bioaccel.devices import Device

    real = Device(index=0, visible_id="0", name="H200", memory_bytes=1, compute_capability=(9, 0))
    # a usable GPU backend (its NumPy array path has DNA counts and NJ)
    monkeypatch.setitem(_instances, "cupy", CupyBackend(xp=np))
    for operation in ("dna_counts", "neighbor_joining"):
        assert AUTO_GPU_FROM[operation] is None
        assert get_backend("auto", operation).name == "cpu"
        assert backend_for_devices([real], "auto", operation).name == "cupy"
    # an operation no GPU backend has: refused, naming the backends that have it
    with pytest.raises(BackendUnavailableError, match="no GPU backend with kmer_neighbors"):
        backend_for_devices([real], "auto", "kmer_neighbors")


def test_virtual_devices_select_nothing():
    from bioaccel.backends import get_backend
    from bioaccel.devices import Device, device_scope

    virtual = Device(
        index=0,
        visible_id="0",
        name="virtual",
        memory_bytes=1,
        compute_capability=(0, 0),
        virtual=True,
    )
    with device_scope(virtual, get_backend("cpu")):
        pass


# -- one meaning of threads=0, one CPU probe -----------------------------------------------


def test_threads_zero_has_one_meaning():
    found = []
    for name, text, _ in sources():
        if name == "bioaccel/_core/threads.py":
            continue
        for word in ("sched_getaffinity", "cpu_count("):
            if word in text:
                found.append(f"{name}: {word}")
    for name, text in cpp_sources():
        for word in ("omp_get_max_threads", "omp_get_num_procs"):
            if word in text:
                found.append(f"{name}: {word}")
    assert not found, "threads=0 decided outside _core/threads.py: " + ", ".join(found)


def test_the_core_starts_the_team_python_sized():
    """In a process limited to one CPU (its affinity), Python's threads=0 and the C++
    core's are both 1 (the machine may have more)."""
    code = (
        "import os; os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})\n"
        "from bioaccel._core import load_native, resolve_threads\n"
        "print(resolve_threads(0), load_native().max_threads())\n"
    )
    if not hasattr(__import__("os"), "sched_setaffinity"):
        not_applicable("no affinity on this system")
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.split() == ["1", "1"]
    from bioaccel._core import all_cores, load_native

    assert load_native().max_threads() == all_cores()


def test_every_simd_dispatcher_goes_through_the_one_probe():
    """No ``target_clones`` (GCC's own dispatch ignores BIOACCEL_NO_AVX2); every file with
    ``target(...)`` builds picks them by ``active_isa()``."""
    found = []
    for name, text in cpp_sources():
        if "__attribute__((target_clones" in text:
            found.append(f"{name}: target_clones")
        if "__attribute__((target(" in text and "active_isa()" not in text:
            found.append(f"{name}: target() builds without active_isa()")
    assert not found, found


# -- one error class per fault, one check per name, one matrix loader ----------------------

#: a message about an id or label (words or the values shown) that says it repeats (words)
NAMES_AN_ID = re.compile(r"\b(id|ids|label|labels)\b")
SAYS_REPEAT = re.compile(r"\b(twice|repeats|duplicate)\b")


def message_parts(text: str, call: ast.Call) -> tuple[str, str]:
    """(the words of a raised error's message, its words and shown values)."""
    words, shown = [], []
    for node in ast.walk(call):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            words.append(node.value)
        elif isinstance(node, ast.FormattedValue):
            shown.append(ast.get_source_segment(text, node.value) or "")
    return " ".join(words), " ".join(words + shown)


def test_a_repeated_id_is_one_error_class():
    found = []
    for name, text, tree in sources():
        for node in ast.walk(tree):
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
                words, everything = message_parts(text, node.exc)
                func = node.exc.func
                cls = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
                repeated_id = SAYS_REPEAT.search(words) and NAMES_AN_ID.search(everything)
                if repeated_id and cls != "DuplicateIdError":
                    found.append(f"{name}:{node.lineno} {cls}")
    assert not found, "a repeated id raised as another class: " + ", ".join(found)
    from bioaccel.errors import DuplicateIdError
    from bioaccel.trees import parse_newick

    with pytest.raises(DuplicateIdError, match="'a' appears twice"):
        parse_newick("(a,a);")


def test_a_repeated_alignment_row_is_a_duplicate_id(tmp_path):
    from bioaccel.errors import DuplicateIdError
    from bioaccel.msa_engine import read_alignment

    path = tmp_path / "a.fa"
    path.write_text(">a\nAC-T\n>a\nACGT\n")
    with pytest.raises(DuplicateIdError, match="id 'a' repeats row 1"):
        read_alignment(path)


def test_each_check_function_is_defined_once():
    defined: dict[str, str] = {}
    clashes = []
    for name, _, tree in sources():
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("check_"):
                if node.name in defined:
                    clashes.append(f"{node.name}: {defined[node.name]} and {name}")
                defined.setdefault(node.name, name)
    assert not clashes, clashes


def test_one_matrix_loader_for_align_and_msa():
    found = []
    for name, text, _ in sources():
        if name == "bioaccel/pairwise/_scoring.py":
            continue
        for word in ("substitution_matrices.load(", "ScoringMatrix.from_name("):
            if word in text:
                found.append(f"{name}: {word}")
    assert not found, "matrices loaded outside pairwise.load_matrix: " + ", ".join(found)
    from bioaccel import align_scores
    from bioaccel.msa_engine.scoring import _load_matrix
    from bioaccel.pairwise import ScoringError, load_matrix

    name, letters, values = load_matrix("pfasum43")
    got = _load_matrix("PFASUM43")
    assert name == got[2] == "PFASUM43" and letters == got[0]
    assert np.array_equal(values, got[1])
    # align finds it too, and names the real reason it cannot use it
    with pytest.raises(ScoringError, match="PFASUM43 scores .* integer scores"):
        align_scores(["MKV", "MKL"], matrix="PFASUM43")


POSTERIORS_CHILD = """
import numpy as np
import bioaccel
rng = np.random.default_rng(11)
base = "".join(rng.choice(list("ACDEFGHIKLMNPQRSTVWY"), 70))
recs = [(f"s{k}", "".join(c for c in base if rng.random() > 0.1)) for k in range(6)]
aln = bioaccel.msa(recs, mode="accurate", threads=2)
print(aln.to_text("fasta"))
"""


def test_the_posteriors_follow_the_probe_and_agree():
    """The accurate mode's posteriors (``csrc/msa/posteriors.cpp``) give the same alignment
    with BIOACCEL_NO_AVX2=1 (the baseline build) as with the probe's choice."""
    from tests.datasets import child_env

    runs = [
        subprocess.run(
            [sys.executable, "-c", POSTERIORS_CHILD],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
            env=child_env(**env),
        ).stdout
        for env in ({}, {"BIOACCEL_NO_AVX2": "1"})
    ]
    assert runs[0] and runs[0] == runs[1]


def test_aligned_input_is_refused_by_one_rule_everywhere():
    """The models that take unaligned sequences refuse a gap through the one rule
    (sequences.refuse_aligned: its message and its way out); neighbors kept a copy of its
    own, and sketch had none (k-mers across gaps were dropped silently)."""
    import bioaccel
    from bioaccel.distances import sketch
    from bioaccel.errors import AlphabetError
    from bioaccel.neighbors import neighbors

    aligned = bioaccel.SeqBatch.from_strings(["ACGT-ACGTACGTTTGACA", "ACGTAACGTACGTTTG-CA"])
    calls = [
        lambda: neighbors(aligned, max_distance=1),
        lambda: sketch(aligned, k=5),
        lambda: bioaccel.distance_matrix(aligned, "edit"),
        lambda: bioaccel.distance_matrix(aligned, "mash", k=5),
    ]
    for call in calls:
        with pytest.raises(
            AlphabetError, match=r"look aligned: remove the gaps with SeqBatch\.ungapped\(\)"
        ):
            call()
