"""The options every command shares, as click decorators, and the one error style.

Each shared option is defined once here (its flags, type, default and checks) and applied by
every command that takes it: ``-t/--threads`` (:func:`threads_option`), ``-b/--backend``
(:func:`backend_option`, its names from the backend registry), ``--devices``,
``--alphabet``, ``-o/--output``, ``--ungap``, the scoring options (``--matrix``,
``--gap-open``, ``--gap-extend``) and the k-mer/sketch options. A command may word an
option's help for what it does with it (``help=``); the option itself stays the same.

The one error style of the command line: :func:`fail` (a bad combination of options or an
input the command refuses before the library sees it) raises :class:`CommandLineError`, a
``click.UsageError`` shown as one line ``bioaccel: error: MESSAGE`` with exit status 2,
the same line and status as an expected error of the library (see ``_main``).
"""

from __future__ import annotations

from pathlib import Path
from typing import NoReturn

import click

from .._core import MAX_THREADS_PER_CPU

#: exit status of bad input and of a usage error
EXIT_BAD_INPUT = 2


class CommandLineError(click.UsageError):
    """The one error of the command line: one line on stderr, exit 2."""

    exit_code = EXIT_BAD_INPUT

    def show(self, file=None) -> None:
        click.echo(f"bioaccel: error: {self.format_message()}", err=True, file=file)


def fail(message: str) -> NoReturn:
    """Stop the command with ``message`` (:class:`CommandLineError`)."""
    raise CommandLineError(message)


class Threads(click.ParamType):
    """``-t/--threads``: bioaccel._core.threads.check_threads, the check of the Python API."""

    name = "integer"

    def convert(self, value, param, ctx):
        from .._core import check_threads, threads_range
        from ..errors import ThreadCountError

        if isinstance(value, str):
            try:
                value = int(value)
            except ValueError:
                self.fail(f"{value!r} is not a number: {threads_range()}", param, ctx)
        try:
            return check_threads(value)
        except ThreadCountError as exc:
            self.fail(str(exc), param, ctx)


THREADS = Threads()
THREADS_HELP = f"CPU threads: 0 = all cores, at most {MAX_THREADS_PER_CPU} x the logical CPUs."


def threads_option(help: str = THREADS_HELP):
    """``-t/--threads`` (0 = all cores; the one check of ``threads=``)."""
    return click.option("-t", "--threads", type=THREADS, default=0, show_default=True, help=help)


def backend_names() -> list[str]:
    """``auto`` and the registry's backends, in its order."""
    from ..backends import AUTO_ORDER

    return ["auto", *AUTO_ORDER]


def backend_option(help: str | None = None, names: list[str] | None = None):
    """``-b/--backend``: ``auto`` or a backend of the registry (``names``: a subset)."""
    return click.option(
        "-b",
        "--backend",
        type=click.Choice(names or backend_names(), case_sensitive=False),
        default="auto",
        show_default=True,
        help=help,
    )


DEVICES_HELP = "Spread the work over these GPUs: 'all' or ids such as 0,2 (with failover)."


def devices_option(help: str = DEVICES_HELP):
    """``--devices``: GPUs to spread the work over (``all`` or ids)."""
    return click.option("--devices", default=None, help=help)


def output_option(help: str, allow_dash: bool = True):
    """``-o/--output`` (required; ``-`` for stdout where ``allow_dash``)."""
    return click.option(
        "-o",
        "--output",
        type=click.Path(path_type=Path, allow_dash=allow_dash),
        required=True,
        help=help,
    )


ALPHABET_HELP = (
    "How to read the sequences; auto: DNA when >= 90% of the residues are "
    "A/C/G/T/U/N, else protein (short inputs of only those letters read as DNA, "
    "logged with -v; a file mixing DNA and protein records is refused)."
)


def alphabet_option(f):
    """``--alphabet`` (auto, dna, rna, protein)."""
    return click.option(
        "--alphabet",
        type=click.Choice(["auto", "dna", "rna", "protein"]),
        default="auto",
        show_default=True,
        help=ALPHABET_HELP,
    )(f)


UNGAP_HELP = "Remove alignment gaps ('-', '.') first (identity, scoredist, edit, k-mer models)."


def abundance_annotation_option(help: str):
    """``--abundance-annotation size|underscore`` (``;size=N`` or swarm's default ``_N``), as
    ``cluster`` and ``neighbors`` take it."""
    return click.option(
        "--abundance-annotation",
        type=click.Choice(["size", "underscore"]),
        default="size",
        show_default=True,
        help=help,
    )


def ungap_option(help: str = UNGAP_HELP):
    """``--ungap``: remove alignment gaps from the input first."""
    return click.option("--ungap", is_flag=True, help=help)


def scoring_options(f):
    """``--matrix``, ``--gap-open``, ``--gap-extend`` of pairwise alignment scores."""
    f = click.option(
        "--gap-extend",
        type=int,
        default=None,
        help="Gap extension penalty (default 1 protein, 2 DNA).",
    )(f)
    f = click.option(
        "--gap-open",
        type=int,
        default=None,
        help="Gap open penalty: a gap of length L costs open + (L-1) * extend; "
        "open >= extend (default 11 protein, 5 DNA).",
    )(f)
    f = click.option(
        "--matrix",
        default=None,
        help="Substitution matrix name (BLOSUM62, PAM250, ...) or MATCH,MISMATCH "
        "(default BLOSUM62 protein, 2,-3 DNA).",
    )(f)
    return f


def parse_matrix(text: str | None):
    """``--matrix``: a matrix name, or "match,mismatch" (e.g. "2,-3")."""
    if text is None:
        return None
    parts = text.split(",")
    if len(parts) == 2:
        try:
            return int(parts[0]), int(parts[1])
        except ValueError:
            fail(
                f"--matrix {text!r}: expected a matrix name or MATCH,MISMATCH integers such as 2,-3"
            )
    return text


def sketch_options(f):
    """``-k/--kmer``, ``--sketch-size``, ``--seed`` of the k-mer models."""
    f = click.option(
        "--seed", type=int, default=None, help="MinHash seed [default: 42; a sketch file's own]."
    )(f)
    f = click.option(
        "--sketch-size",
        type=click.IntRange(min=1),
        default=None,
        help="MinHash sketch size [default: 1000; a sketch file's own].",
    )(f)
    f = click.option(
        "-k",
        "--kmer",
        "k",
        type=int,
        default=None,
        help="k for kmer/jaccard/mash (default: the model's).",
    )(f)
    return f
