"""The shared command-line options (``bioaccel/cli/_options.py``) and the one error style.

Every command that takes ``-t``, ``-b``, ``--alphabet`` takes the one definition: the same
type and checks (``-t abc`` and ``-t -1`` are refused alike everywhere). Every refusal of a
command goes through ``fail()`` (one line, exit 2): no command prints its own error line
or raises click's usage errors itself.
"""

from __future__ import annotations

import ast
from pathlib import Path

import click
import pytest

from bioaccel.cli import main
from bioaccel.cli._options import THREADS, CommandLineError, backend_names
from tests.cli_runner import invoke

ROOT = Path(__file__).resolve().parents[2]

#: commands whose modules adopt the shared options in their own files (each a module of
#: its own owner): the reason they are not held to the rule yet
PENDING = {
    "msa": "cli/_msa.py still defines its own -t/-b/--alphabet (moves to _options next)",
}


def commands():
    ctx = click.Context(main)

    def walk(group, prefix):
        for name in group.list_commands(ctx):
            cmd = group.get_command(ctx, name)
            yield " ".join([*prefix, name]), cmd
            if isinstance(cmd, click.Group):
                yield from walk(cmd, [*prefix, name])

    return list(walk(main, []))


def test_every_threads_backend_and_alphabet_option_is_the_shared_one():
    checked = 0
    for name, cmd in commands():
        if name in PENDING:
            continue
        for p in cmd.params:
            if p.name == "threads":
                assert p.type is THREADS, f"{name}: -t is its own"
                checked += 1
            if p.name == "backend":
                assert list(p.type.choices) == backend_names(), f"{name}: -b is its own"
                checked += 1
            if p.name == "alphabet":
                assert list(p.type.choices) == ["auto", "dna", "rna", "protein"], name
    assert checked >= 7  # distance, tree, sketch, align: -t; distance, tree, align: -b


@pytest.mark.parametrize("command", ["distance", "tree", "align", "sketch"])
@pytest.mark.parametrize("value", ["abc", "-1"])
def test_a_bad_thread_count_is_refused_alike(tmp_path, command, value):
    seqs = tmp_path / "s.fa"
    seqs.write_text(">a\nACGT\n>b\nACGA\n")
    out = {"sketch": "s.npz", "align": "a.tsv", "tree": "t.nwk"}.get(command, "d.phy")
    res = invoke(command, str(seqs), "-t", value, "-o", str(tmp_path / out))
    assert res.exit_code == 2 and "--threads" in res.output and value in res.output


def test_a_refusal_is_one_line_and_exit_2(tmp_path):
    seqs = tmp_path / "s.fa"
    seqs.write_text(">a\nACGT\n>b\nACGA\n")
    res = invoke("tree", str(seqs), "--method", "upgma", "--low-memory", "-o", "t.nwk")
    assert res.exit_code == 2
    assert res.output == "bioaccel: error: --low-memory applies to --method nj, not upgma\n"
    assert issubclass(CommandLineError, click.UsageError)


#: modules outside the rule, with the reason
OWN_STYLE = {
    "bioaccel/cli/_sched.py": "gpu-run exits 126/127 as a shell does for a command that "
    "cannot run (its own exit statuses, not bad input)",
    "bioaccel/cli/_msa.py": "raises click.UsageError; moves to fail() with the shared options",
}


def test_one_error_style():
    """No command module prints its own error line, exits 2 itself or raises click's
    usage errors: ``fail()`` does (``_options.py``)."""
    found = []
    for path in sorted((ROOT / "bioaccel/cli").glob("*.py")):
        name = path.relative_to(ROOT).as_posix()
        if name == "bioaccel/cli/_options.py" or name in OWN_STYLE:
            continue
        text = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Call):
                func = ast.get_source_segment(text, node.func) or ""
                if func in ("click.UsageError", "click.BadParameter", "UsageError"):
                    found.append(f"{name}:{node.lineno} {func}")
                if func == "sys.exit" and ast.get_source_segment(text, node) in (
                    "sys.exit(2)",
                    "sys.exit(EXIT_BAD_INPUT)",
                ):
                    found.append(f"{name}:{node.lineno} sys.exit(2)")
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if node.value.startswith("bioaccel: error:"):
                    found.append(f"{name}:{node.lineno} prints its own error line")
            if isinstance(node, ast.JoinedStr):
                head = node.values[0] if node.values else None
                if isinstance(head, ast.Constant) and str(head.value).startswith(
                    "bioaccel: error:"
                ):
                    found.append(f"{name}:{node.lineno} prints its own error line")
    assert not found, found
