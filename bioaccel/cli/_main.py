"""The ``bioaccel`` command line.

Exit status: 0 on success (``--help`` and ``--version`` included); 2 for a usage error
(click's message) or bad input (one line on stderr naming the file, record, position and
value at fault, never a traceback); 1 for an internal failure (one line saying so; the
traceback with ``bioaccel -v``). Results go to stdout or to files, everything else to
stderr. Outputs are written to a temporary file and renamed, so a failed run leaves no
output behind.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import sys
from pathlib import Path

import click

from .. import __version__
from .._core import MATRIX_FORMATS
from ..errors import BioaccelError
from ._io import (
    TEXT_MATRIX_FORMATS,
    check_outputs,
    is_stdio,
    read_sequences_arg,
    refuse_stdio,
    shown,
    text_output,
    write_via_file,
)
from ._options import (
    CommandLineError,
    alphabet_option,
    backend_option,
    devices_option,
    fail,
    output_option,
    parse_matrix,
    scoring_options,
    sketch_options,
    threads_option,
    ungap_option,
)

EXIT_INTERNAL = 1

#: True in the ``bioaccel`` program itself (:func:`run`), False where ``main`` is called
#: inside another Python program (tests, scripts): only the program may hand its process to
#: another (``exec``), as ``tree --low-memory`` does.
_REPLACE_PROCESS = False


#: The temporary name ``atomic_output`` writes to before renaming: never shown to users.
_TEMP_NAME = re.compile(r"(^|/)\.[^/]+\.[A-Za-z0-9_]{8}\.tmp$")


def _os_error_message(exc: OSError) -> str:
    """``PATH: reason`` without the ``[Errno N]`` prefix and without temporary file names."""
    reason = exc.strerror
    if not reason or isinstance(exc, BioaccelError):
        return str(exc)  # a message of our own (LeaseTimeoutError is a TimeoutError)
    if exc.filename is None:
        return reason  # OSError(errno, "cannot write 'x': ...") as atomic_output raises it
    names = [str(n) for n in (exc.filename, exc.filename2) if n is not None]
    shown = [n for n in names if not _TEMP_NAME.search(n)]
    reason = reason[:1].lower() + reason[1:]  # the system's "No such file or directory"
    if not shown:
        return reason
    if len(shown) < len(names):  # a rename of our temporary file onto the user's path failed
        return f"cannot write {shown[-1]!r}: {reason}"
    return f"{shown[0]}: {reason}"


def one_line(text: str) -> str:
    """``text`` on one line: each line break, with the whitespace around it, becomes one space;
    other whitespace stays as it is (a value quoted in the message, such as a header line
    ``'Homo  sapiens'``, keeps its spaces)."""
    return re.sub(r"\s*[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]\s*", " ", text).strip()


def error_message(exc: BaseException) -> str:
    """One line for an expected error: the message, its line breaks folded (:func:`one_line`)."""
    text = _os_error_message(exc) if isinstance(exc, OSError) else str(exc)
    text = re.sub(r"^\[Errno \d+\]\s*", "", text)
    return one_line(text) or type(exc).__name__


#: Errors that mean bad input or a bad environment (files, devices): one line, exit 2.
#: Any other exception is a bug or an internal failure: exit 1, traceback with -v.
EXPECTED_ERRORS = (BioaccelError, ValueError, OSError)


def _closed_pipe() -> None:
    """The reader of stdout went away (``bioaccel ... -o - | head``): stop quietly with
    128 + SIGPIPE, as coreutils do (killed by SIGPIPE, the shell shows 141). stdout goes
    to /dev/null so that Python's final flush does not complain again."""
    import signal

    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    sys.exit(128 + signal.SIGPIPE)


#: Commands whose modules import the scheduler or the MSA engine at definition (their
#: options' choices): loaded when named, or listed by ``--help``, so that the other
#: commands start without them.
_LAZY_COMMANDS = {
    "gpu-run": ("._sched", "gpu_run"),
    "gpus": ("._sched", "gpus"),
    "sched": ("._sched", "sched"),
    "admin": ("._sched", "admin"),
    "arbiterd": ("._sched", "arbiterd"),
    "msa": ("._msa", "msa_cmd"),
    "neighbors": ("._neighbors", "neighbors_cmd"),
    "cluster": ("._cluster", "cluster_cmd"),
}


class _OneLineError(CommandLineError):
    """A click error (a usage error, a bad option value, a file click could not open) shown as
    bioaccel shows every error: ``bioaccel: error: MESSAGE``, one line on stderr (no
    ``Usage:`` and ``Try ...`` lines: R and scripts read the one line), exit 2. The message is
    click's own :meth:`~click.ClickException.format_message` (which names the option)."""

    def __init__(self, error: click.ClickException):
        super().__init__(one_line(error.format_message()))


@contextlib.contextmanager
def _one_line_click_errors():
    """Click's errors raised inside as :class:`_OneLineError`: the hook of the group, where
    click parses the group's and every command's arguments (any command, any file). A bare
    group's help (click's ``NoArgsIsHelpError``) and exits pass as they are."""
    try:
        yield
    except (CommandLineError, click.exceptions.NoArgsIsHelpError):
        raise
    except click.ClickException as exc:
        raise _OneLineError(exc) from None


def _verbose_first(args: list[str]) -> list[str]:
    """``bioaccel msa in.fa -o out.fa -v`` as ``bioaccel -v msa in.fa -o out.fa``: -v and
    --verbose are the group's (no command has an option of that name), wherever they are
    given, up to a ``--`` that ends the options."""
    end = args.index("--") if "--" in args else len(args)
    flags = [a for a in args[:end] if a in ("-v", "--verbose")]
    if not flags:
        return args
    return flags[:1] + [a for a in args[:end] if a not in ("-v", "--verbose")] + args[end:]


class _Group(click.Group):
    """Turns expected errors into one clean line and unexpected ones into an 'internal
    error' line (traceback with -v); click's usage errors are one line too
    (:class:`_OneLineError`), for the group's arguments (:meth:`make_context`) and every
    command's (:meth:`invoke`, which parses them); help and version exits pass."""

    def make_context(self, info_name, args, parent=None, **extra):
        if parent is None:
            args = _verbose_first(list(args))
        with _one_line_click_errors():
            return super().make_context(info_name, args, parent=parent, **extra)

    def list_commands(self, ctx):
        return sorted({*super().list_commands(ctx), *_LAZY_COMMANDS})

    def get_command(self, ctx, name):
        if name in _LAZY_COMMANDS and name not in self.commands:
            import importlib

            module, attribute = _LAZY_COMMANDS[name]
            self.add_command(getattr(importlib.import_module(module, __package__), attribute), name)
        return super().get_command(ctx, name)

    def invoke(self, ctx):
        try:
            with _one_line_click_errors():
                result = super().invoke(ctx)
            sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
            return result
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except KeyboardInterrupt:  # Ctrl-C, any command: outputs are renamed into place only
            # on success (a streamed .cdist keeps its .partial files to resume); 128 + SIGINT
            click.echo("bioaccel: interrupted; nothing written", err=True)
            sys.exit(130)
        except BrokenPipeError:
            _closed_pipe()
        except EXPECTED_ERRORS as exc:
            if ctx.params.get("verbose"):
                import traceback

                traceback.print_exc(file=sys.stderr)
            fail(error_message(exc))
        except Exception as exc:
            if ctx.params.get("verbose"):
                import traceback

                traceback.print_exc(file=sys.stderr)
                hint = "a bug in bioaccel: please report it with the traceback above"
            else:
                hint = "a bug in bioaccel: rerun as `bioaccel -v ...` for the traceback"
            what = "out of memory" if isinstance(exc, MemoryError) else type(exc).__name__
            detail = one_line(str(exc))
            click.echo(
                f"bioaccel: internal error: {what}{': ' + detail if detail else ''} ({hint})",
                err=True,
            )
            sys.exit(EXIT_INTERNAL)


def _is_sketch_file(path) -> bool:
    """A sketch file of `bioaccel sketch` (:func:`bioaccel.sequences._read.is_sketch_file`); never stdin."""
    from ..sequences import is_sketch_file

    return not is_stdio(path) and is_sketch_file(path)


def _models_help() -> str:
    from ..distances import AA_MODELS, ALIGNMENT_MODELS, KMER_MODELS, MODELS

    return (
        f"{', '.join(MODELS)} (aligned DNA, as ape::dist.dna); "
        f"{', '.join(AA_MODELS)} (aligned protein); "
        f"{', '.join(ALIGNMENT_MODELS)} (from global alignments); edit (Levenshtein); "
        f"{', '.join(KMER_MODELS)} (k-mers; mash also from a sketch file)."
    )


class _ModelOption(click.Option):
    """``-m/--model``: its help lists the distance package's models, read when help is shown
    (importing that package at start-up cost every command 0.12 s, `cluster` too)."""

    def __init__(self, *args, help_prefix: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.help_prefix = help_prefix

    def get_help_record(self, ctx):
        self.help = self.help_prefix + _models_help()
        return super().get_help_record(ctx)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", "-V", prog_name="bioaccel")
@click.option(
    "-v",
    "--verbose",
    is_flag=True,
    help="Log backend choices and timings to stderr; show the traceback of an error.",
)
def main(verbose: bool) -> None:
    """GPU-accelerated pairwise sequence distances, alignments and guide trees."""
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(message)s",
        stream=sys.stderr,
        force=True,
    )


def _given(ctx: click.Context, names) -> list[str]:
    """The options among ``names`` that the user gave on the command line (or environment)."""
    from click.core import ParameterSource

    return [n for n in names if ctx.get_parameter_source(n) not in (None, ParameterSource.DEFAULT)]


def _spelling(ctx: click.Context):
    """An option's name as the user writes it (``-k/--kmer``)."""
    opts = {p.name: "/".join(p.opts) for p in ctx.command.params}
    return lambda name: opts.get(name, name)


_MATRIX_FORMATS = list(MATRIX_FORMATS)
_FORMAT_HELP = (
    "Output format; from the extension by default (else phylip). npy writes the "
    "ids to OUTPUT.ids.txt beside it. With -o - (stdout): phylip, phylip-lower or tsv."
)


def _matrix_stdout_format(output, fmt) -> None:
    """Refuse a binary matrix format on stdout."""
    if is_stdio(output) and (fmt or "phylip").lower() not in TEXT_MATRIX_FORMATS:
        refuse_stdio(
            output,
            "-o",
            f"{fmt} is binary; stdout takes {', '.join(TEXT_MATRIX_FORMATS)} (--format)",
        )


def _write_matrix(dm, output, fmt, threads: int = 0) -> None:
    fmt = fmt or ("phylip" if is_stdio(output) else None)
    write_via_file(output, lambda path: dm.write(path, fmt, threads=threads))


@main.command()
@click.argument("input", type=click.Path(path_type=Path, allow_dash=True))
@click.option(
    "-m",
    "--model",
    default="k80",
    show_default=True,
    cls=_ModelOption,
    help_prefix="Distance model: ",
)
@click.option(
    "--pairwise-deletion",
    is_flag=True,
    help="Drop missing sites per pair instead of for all pairs.",
)
@backend_option()
@threads_option()
@output_option("Matrix file, or - for stdout.")
@click.option(
    "--format", "fmt", type=click.Choice(_MATRIX_FORMATS), default=None, help=_FORMAT_HELP
)
@click.option(
    "--input-format", default=None, help="fasta, fastq, clustal, phylip, stockholm, nexus."
)
@scoring_options
@sketch_options
@devices_option()
@click.option(
    "--tile",
    default=None,
    metavar="A,B",
    help="Compute only tile (A, B), A <= B, of a --tiles x --tiles grid (cut by "
    "sequence length) and write it as .npz; `bioaccel merge-tiles` assembles them.",
)
@click.option("--tiles", type=click.IntRange(min=1), default=None, help="Grid size for --tile.")
@click.option(
    "--float64", "float64", is_flag=True, help=".cdist output: store float64 instead of float32."
)
@click.option(
    "--restart",
    is_flag=True,
    help=".cdist output: ignore the finished tiles of an interrupted run.",
)
@ungap_option()
@alphabet_option
@click.pass_context
def distance(
    ctx,
    input,
    model,
    pairwise_deletion,
    backend,
    threads,
    output,
    fmt,
    input_format,
    matrix,
    gap_open,
    gap_extend,
    k,
    sketch_size,
    seed,
    devices,
    tile,
    tiles,
    float64,
    restart,
    ungap,
    alphabet,
):
    """All-vs-all distance matrix of the sequences in INPUT (- for stdin), or of the sketches
    of a `bioaccel sketch` file with -m mash."""
    from .._core import MATRIX, TILE, output_format, progress_bar
    from ..distances import USED_BY, Sketches, check_model_options, distance_matrix

    if (tile is None) != (tiles is None):
        fail("--tile and --tiles go together")
    if tile is not None:
        refuse_stdio(output, "-o", "a tile is binary (.npz); give a file name")
        output_format(output, TILE, "tile", fmt, default="npz")
    else:
        fmt = output_format(output, MATRIX, "distance matrix", fmt, default="phylip")
        if fmt == "cdist":
            refuse_stdio(output, "-o", "cdist is binary; give a file name")
        else:
            _matrix_stdout_format(output, fmt)
    streamed = tile is None and fmt == "cdist"
    check_model_options(model, _given(ctx, USED_BY), _spelling(ctx))
    for name in _given(ctx, ["float64", "restart"]):
        if not streamed:
            fail(
                f"{_spelling(ctx)(name)} does nothing here: it applies to .cdist output only "
                "(PHYLIP and TSV hold exact decimals, .npy/.npz float64)"
            )
    check_outputs([input], output=output)
    if model.lower() == "mash" and (str(input).endswith(".npz") or _is_sketch_file(input)):
        if ungap or alphabet != "auto":
            fail(
                f"{'--ungap' if ungap else '--alphabet'} applies to sequences, not to a sketch file"
            )
        batch = Sketches.load(input)
    else:
        batch = read_sequences_arg(input, format=input_format, alphabet=alphabet)
        if ungap:
            batch = batch.ungapped()
        if len(batch) < 2:
            fail(
                f"{batch.source or input}: found {len(batch)} sequence; a distance matrix "
                "needs at least 2"
            )
    if tile is not None:
        from ..distances import distance_tile, tile_bounds, write_tile

        try:
            a, b = (int(x) for x in tile.split(","))
        except ValueError:
            fail(f"--tile {tile!r}: expected A,B such as 0,2")
        bounds = tile_bounds(batch, a, b, tiles)
        values, params = distance_tile(
            batch,
            model,
            bounds[:2],
            bounds[2:],
            pairwise_deletion=pairwise_deletion,
            backend=backend,
            threads=threads,
            matrix=parse_matrix(matrix),
            gap_open=gap_open,
            gap_extend=gap_extend,
            k=k,
            sketch_size=sketch_size,
            seed=seed,
        )
        params["ungap"] = bool(ungap)  # changes the values; the fingerprint is the ungapped input's
        write_tile(output, values, bounds, len(batch), batch.ids, params)
        click.echo(
            f"wrote tile ({a}, {b}): rows {bounds[0]}:{bounds[1]} x columns "
            f"{bounds[2]}:{bounds[3]} of {len(batch)} ({model}) to {output}",
            err=True,
        )
        return
    if streamed:
        if devices is not None:
            fail("--devices does not apply to streamed .cdist output yet; write .npy instead")
        # condensed binary, streamed tile by tile: never a square in memory; an interrupted
        # run resumes from its finished tiles
        from ..distances import stream_distances

        with progress_bar(f"distances ({model}) -> {output.name}") as update:
            d = stream_distances(
                batch,
                model,
                output,
                dtype="float64" if float64 else "float32",
                backend=backend,
                threads=threads,
                resume=not restart,
                progress=update,
                pairwise_deletion=pairwise_deletion,
                matrix=parse_matrix(matrix),
                gap_open=gap_open,
                gap_extend=gap_extend,
                k=k,
                sketch_size=sketch_size,
                seed=seed,
            )
        click.echo(
            f"wrote {len(d)} x {len(d)} {model} matrix ({d.dtype.name}, condensed) to {output}",
            err=True,
        )
        return
    with progress_bar(f"distances ({model})") as update:
        dm = distance_matrix(
            batch,
            model,
            pairwise_deletion=pairwise_deletion,
            backend=backend,
            threads=threads,
            progress=update,
            matrix=parse_matrix(matrix),
            gap_open=gap_open,
            gap_extend=gap_extend,
            k=k,
            sketch_size=sketch_size,
            seed=seed,
            devices=devices,
        )
    _write_matrix(dm, output, fmt, threads)
    click.echo(f"wrote {len(dm)} x {len(dm)} {model} matrix to {shown(output)}", err=True)


@main.command("merge-tiles")
@click.argument("tiles", nargs=-1, required=True, type=click.Path(path_type=Path))
@output_option("Matrix file, or - for stdout.")
@click.option(
    "--format", "fmt", type=click.Choice(_MATRIX_FORMATS), default=None, help=_FORMAT_HELP
)
def merge_tiles_cmd(tiles, output, fmt):
    """Assemble a distance matrix from the tiles (.npz) of `bioaccel distance --tile`; fails,
    naming a pair, when a pair is missing or covered twice."""
    from .._core import MATRIX, output_format
    from ..distances import merge_tiles

    for t in tiles:
        refuse_stdio(t, "TILES", "tiles are binary files; give their names")
    fmt = output_format(output, MATRIX, "distance matrix", fmt, default="phylip")
    _matrix_stdout_format(output, fmt)
    check_outputs(tiles, output=output)
    dm = merge_tiles(list(tiles))
    _write_matrix(dm, output, fmt)
    click.echo(
        f"merged {len(tiles)} tile(s) into a {len(dm)} x {len(dm)} matrix: {shown(output)}",
        err=True,
    )


@main.command()
@click.argument("input", type=click.Path(path_type=Path, allow_dash=True))
@click.option("--method", type=click.Choice(["nj", "upgma"]), default="nj", show_default=True)
@click.option(
    "-m",
    "--model",
    default=None,
    cls=_ModelOption,
    help_prefix="Distance model when INPUT holds sequences (default k80; mash for a sketch file). ",
)
@click.option("--pairwise-deletion", is_flag=True)
@backend_option(
    help="Sequences: the backend of the distances. A matrix: the backend of NJ "
    "(cpu, cupy, reference; UPGMA is CPU only)."
)
@threads_option()
@scoring_options
@sketch_options
@click.option("--clamp-negative", is_flag=True, help="NJ: set negative branch lengths to 0.")
@click.option(
    "--low-memory",
    is_flag=True,
    help="NJ in a float32 triangle, as QuickTree: n^2/2 x 4 bytes (0.2 GB at n = 10,000) "
    "instead of an n x n float64 square. The input is checked here and the joining handed to "
    "the bioaccel-nj program, which takes over this process (the interpreter's memory is given "
    "back first): a .cdist file is read in place, .npy and PHYLIP files are streamed to a "
    "scratch triangle beside the output, TSV and npz read as a square first (and joined "
    "in-process); distances of sequences or sketches are streamed to a "
    "scratch .cdist beside the output (or to --matrix-output, which must then be .cdist). "
    "Distances (joined ones "
    "too) are rounded to float32, so near-ties (Q values closer than that rounding) may join "
    "differently from the default exact mode and ape::nj. CPU backend only.",
)
@output_option("Newick file, or - for stdout.")
@click.option(
    "--matrix-output",
    type=click.Path(path_type=Path, allow_dash=True),
    default=None,
    help="Also write the distance matrix computed from sequences or sketches "
    "(format from the extension; - for stdout as PHYLIP).",
)
@ungap_option("Remove alignment gaps first (identity, scoredist, edit, k-mer models).")
@alphabet_option
@click.pass_context
def tree(
    ctx,
    input,
    method,
    model,
    pairwise_deletion,
    backend,
    threads,
    matrix,
    gap_open,
    gap_extend,
    k,
    sketch_size,
    seed,
    clamp_negative,
    low_memory,
    output,
    matrix_output,
    ungap,
    alphabet,
):
    """Guide tree (Newick) from sequences (- for stdin), a distance matrix, or the sketches
    of a `bioaccel sketch` file (mash distances) in INPUT."""
    from .._core import (
        MATRIX,
        NEWICK,
        looks_like_matrix,
        output_format,
        progress_bar,
    )
    from ..distances import (
        USED_BY,
        DistanceMatrix,
        Sketches,
        check_model_options,
        distance_matrix,
    )
    from ..sequences import parse_sequences, read_sequences
    from ..trees import nj, upgma

    nj_backend = "cpu"  # sequence input: -b computes the distances
    if low_memory and method != "nj":
        fail(f"--low-memory applies to --method nj, not {method}")
    if clamp_negative and method != "nj":
        fail(f"--clamp-negative applies to --method nj; {method} branch lengths are never negative")
    check_outputs([input], output=output, matrix_output=matrix_output)
    output_format(output, NEWICK, "Newick tree", default="newick")
    if matrix_output is not None:
        _matrix_stdout_format(
            matrix_output, output_format(matrix_output, MATRIX, "distance matrix", default="phylip")
        )
    if not is_stdio(input) and not input.exists():
        fail(f"{input}: no such file")
    if _is_sketch_file(input):
        if (model or "mash").lower() != "mash":
            fail(
                f"{input}: a sketch file gives mash distances only, not -m {model}; give the "
                "sequences for other models"
            )
        if ungap or alphabet != "auto":
            fail(
                f"{'--ungap' if ungap else '--alphabet'} applies to sequences, not to a sketch file"
            )
        batch, model = Sketches.load(input), "mash"
        check_model_options(model, _given(ctx, USED_BY), _spelling(ctx))
    elif not is_stdio(input) and looks_like_matrix(input):
        for name in _given(
            ctx,
            [
                "model",
                "pairwise_deletion",
                "ungap",
                "matrix",
                "gap_open",
                "gap_extend",
                "k",
                "sketch_size",
                "seed",
                "alphabet",
            ],
        ):
            fail(f"{_spelling(ctx)(name)} does nothing here: {input} is a distance matrix already")
        if _given(ctx, ["backend"]):  # the backend builds the tree: NJ has cpu/cupy/reference
            if method != "nj":
                fail(
                    f"-b {backend} does nothing here: {input} is a distance matrix already "
                    "and UPGMA runs on the CPU only"
                )
            nj_backend = backend.lower()
            _refuse_unfit(nj_backend, "neighbor_joining", "-b {}: neighbour joining runs on {}")
            if low_memory:
                _refuse_unfit(
                    nj_backend,
                    "neighbor_joining_low_memory",
                    "--low-memory runs on the {1} backend only, not -b {0} (its neighbour "
                    "joining holds the float64 square)",
                )
        batch = None
        if not low_memory:
            dm = DistanceMatrix.read(input)
        if matrix_output is not None:
            fail(f"{input} is a distance matrix already: --matrix-output applies to sequence input")
    else:
        model = model or "k80"
        check_model_options(model, _given(ctx, USED_BY), _spelling(ctx))
        if is_stdio(input):
            raw = sys.stdin.buffer.read()
            lines = raw.lstrip().splitlines()
            if lines and lines[0].strip().isdigit():
                fail("-: a distance matrix is not read from stdin; give its file name")
            batch = parse_sequences(raw, "<stdin>", alphabet=alphabet)
        else:
            batch = read_sequences(input, alphabet=alphabet)
        if ungap:
            batch = batch.ungapped()
        if len(batch) < 2:
            fail(f"{batch.source or input}: found {len(batch)} sequence; a tree needs at least 2")
    if low_memory:
        # the library's pipeline (bioaccel.trees.low_memory_tree): distances streamed to a
        # .cdist, never a square; the join handed to the bioaccel-nj program, which takes
        # over this process, only when this is the bioaccel program (not a caller's process)
        from ..trees import low_memory_tree

        options = (
            {}
            if batch is None
            else _distance_options(
                pairwise_deletion, matrix, gap_open, gap_extend, k, sketch_size, seed
            )
        )
        t = low_memory_tree(
            input if batch is None else batch,
            output,
            model=model or "k80",
            clamp_negative=clamp_negative,
            threads=threads,
            backend=backend if batch is not None else nj_backend,
            matrix_output=matrix_output,
            hand_over=_REPLACE_PROCESS,
            **options,
        )
        click.echo(f"wrote {method} tree of {t.n_tips} tips to {shown(output)}", err=True)
        return
    if batch is not None:
        model = model or "k80"
        with progress_bar(f"distances ({model})") as update:
            dm = distance_matrix(
                batch,
                model,
                pairwise_deletion=pairwise_deletion,
                backend=backend,
                threads=threads,
                progress=update,
                matrix=parse_matrix(matrix),
                gap_open=gap_open,
                gap_extend=gap_extend,
                k=k,
                sketch_size=sketch_size,
                seed=seed,
            )
    if method == "nj":
        # the matrix is ours and written before the tree only if asked: join in its memory
        t = nj(
            dm,
            clamp_negative=clamp_negative,
            threads=threads,
            backend=nj_backend,
            inplace=matrix_output is None,
        )
    else:
        t = upgma(dm)
    # written only once everything is computed: a failure leaves neither file behind
    if matrix_output is not None:
        _write_matrix(dm, matrix_output, None)
    with text_output(output) as f:
        f.write(t.to_newick() + "\n")
    click.echo(f"wrote {method} tree of {t.n_tips} tips to {shown(output)}", err=True)


def _refuse_unfit(backend: str, operation: str, message: str) -> None:
    """Refuse a backend named with ``-b`` that has no kernels for ``operation``, as the
    registry knows it (:func:`bioaccel.backends.backends_with`); ``message`` is formatted
    with the name given and those that fit ("a, b or c"). ``auto`` always fits."""
    from ..backends import backends_with, resolve_backend_name

    fits = backends_with(operation)
    if resolve_backend_name(backend, operation) not in fits:
        names = fits[0] if len(fits) == 1 else ", ".join(fits[:-1]) + " or " + fits[-1]
        fail(message.format(backend, names))


def _distance_options(pairwise_deletion, matrix, gap_open, gap_extend, k, sketch_size, seed):
    """The distance options of the command line as the library's keywords."""
    return dict(
        pairwise_deletion=pairwise_deletion,
        matrix=parse_matrix(matrix),
        gap_open=gap_open,
        gap_extend=gap_extend,
        k=k,
        sketch_size=sketch_size,
        seed=seed,
    )


@main.command()
@click.argument("inputs", nargs=-1, required=True, type=click.Path(path_type=Path, allow_dash=True))
@click.option(
    "-k",
    "--kmer",
    "k",
    type=click.IntRange(min=1),
    default=None,
    help="k-mer length [default: 21 for DNA, 9 for proteins (as mash sketch -a)].",
)
@click.option("-s", "--sketch-size", type=click.IntRange(min=1), default=1000, show_default=True)
@click.option("--seed", type=int, default=42, show_default=True)
@threads_option()
@output_option("Sketch file (.npz).", allow_dash=False)
@alphabet_option
@ungap_option("Remove alignment gaps first (aligned input is refused without it).")
def sketch(inputs, k, sketch_size, seed, threads, output, alphabet, ungap):
    """MinHash sketches of every sequence in INPUTS (files, directories standing for their
    sequence files, or - for stdin), saved for `bioaccel distance -m mash SKETCHES.npz` and
    `bioaccel tree SKETCHES.npz`."""
    from .._core import SKETCHES, output_format
    from ..distances import sketch as make_sketch
    from ..sequences import read_many

    refuse_stdio(output, "-o", "a sketch file is binary (.npz); give a file name")
    output_format(output, SKETCHES, "sketch file", default="npz")
    check_outputs(inputs, output=output)
    if any(is_stdio(p) for p in inputs):
        if len(inputs) > 1:
            fail("- (stdin) is the only input when given; give the other inputs as files")
        seqs = read_sequences_arg(inputs[0], alphabet=alphabet)
    else:
        seqs = read_many(inputs, alphabet=alphabet)
    if ungap:
        seqs = seqs.ungapped()
    s = make_sketch(seqs, k=k, size=sketch_size, seed=seed, threads=threads)
    s.save(output)
    click.echo(f"wrote {len(s.ids)} sketches (k={s.k}, size={sketch_size}) to {output}", err=True)


@main.command()
@click.argument("queries", type=click.Path(path_type=Path, allow_dash=True))
@click.argument("targets", type=click.Path(path_type=Path, allow_dash=True), required=False)
@click.option(
    "--mode",
    type=click.Choice(["global", "local", "semiglobal"]),
    default="global",
    show_default=True,
)
@scoring_options
@click.option(
    "--traceback",
    is_flag=True,
    help="Write alignments (TSV: coordinates, CIGAR, identity, aligned strings) "
    "instead of a score matrix.",
)
@backend_option()
@threads_option()
@devices_option(
    "Scores: spread the work over these GPUs: 'all' or ids such as 0,2 (with failover)."
)
@output_option(
    "Scores: .npy (matrix; query ids to OUTPUT.ids.txt, target ids to "
    "OUTPUT.target_ids.txt when TARGETS is given) or .tsv (labelled matrix). "
    "--traceback: TSV. - for stdout (TSV)."
)
@ungap_option("Remove alignment gaps ('-', '.') from the input first.")
@alphabet_option
def align(
    queries,
    targets,
    mode,
    matrix,
    gap_open,
    gap_extend,
    traceback,
    backend,
    threads,
    devices,
    output,
    ungap,
    alphabet,
):
    """Align every sequence of QUERIES to every one of TARGETS (or all pairs of QUERIES);
    either may be - for stdin."""
    from .._core import ALIGNMENT_TABLE, SCORES, output_format
    from ..pairwise import align as align_pairs
    from ..pairwise import (
        align_scores,
        save_scores,
        scoring_defaults,
        write_alignment_table,
        write_score_table,
    )

    if is_stdio(queries) and is_stdio(targets):
        fail("QUERIES and TARGETS cannot both be - (stdin)")
    if traceback and devices is not None:
        fail("--devices applies to scores; --traceback alignments run on the CPU")
    if traceback:
        _refuse_unfit(
            backend,
            "align_traceback",
            "-b {}: --traceback alignments run on the CPU only ({} backend, C++ core); leave -b "
            "out or give -b cpu (scores run on every backend)",
        )
    if traceback:
        fmt = output_format(output, ALIGNMENT_TABLE, "alignment table (--traceback)", default="tsv")
    else:
        fmt = output_format(
            output, SCORES, "score matrix", default="tsv" if is_stdio(output) else "npy"
        )
        if fmt != "tsv":
            refuse_stdio(output, "-o", "npy is binary; stdout takes the TSV score matrix")
    check_outputs([queries, targets], output=output)
    q = read_sequences_arg(queries, alphabet=alphabet)
    t = read_sequences_arg(targets, alphabet=alphabet) if targets is not None else None
    if t is not None:  # as the Python API does: DNA targets are not read as protein silently
        from ..sequences import same_alphabet

        q, t = same_alphabet(q, t, alphabet == "auto", alphabet == "auto")
    if ungap:
        q, t = q.ungapped(), (t.ungapped() if t is not None else None)
    spec, gap_open, gap_extend = scoring_defaults(
        q.alphabet, parse_matrix(matrix), gap_open, gap_extend
    )
    kw = dict(mode=mode, matrix=spec, gap_open=gap_open, gap_extend=gap_extend)
    if traceback:
        alns = align_pairs(q, t, threads=threads, **kw)
        with text_output(output) as f:
            write_alignment_table(alns, f)
        click.echo(f"wrote {len(alns)} {mode} alignments to {shown(output)}", err=True)
        return
    scores = align_scores(q, t, backend=backend, threads=threads, devices=devices, **kw)
    tids = (t or q).ids
    if fmt == "tsv":
        with text_output(output) as f:
            write_score_table(scores, q.ids, tids, f)
    else:
        save_scores(scores, output, q.ids, t.ids if t is not None else None)
    click.echo(
        f"wrote {scores.shape[0]} x {scores.shape[1]} {mode} scores to {shown(output)}", err=True
    )


@main.command()
@click.option(
    "--require",
    default="",
    help="Comma-separated: cpu, openmp, cupy, numba-cuda, gpu, r, nvcc. "
    "Exit non-zero when one of them is broken.",
)
@click.option("--no-r", is_flag=True, help="Skip the R/rpy2 probe.")
def doctor(require: str, no_r: bool):
    """Show what this installation can use and how to fix what is broken."""
    from ..config import REQUIREMENTS, collect

    wanted = [w.strip().lower() for w in require.split(",") if w.strip()]
    unknown = [w for w in wanted if w not in REQUIREMENTS]
    if unknown:
        fail(f"unknown requirement {unknown[0]!r}; expected some of {sorted(REQUIREMENTS)}")
    rep = collect(check_r=not no_r or "r" in wanted)
    broken = []
    for c in rep.checks:
        mark = click.style("ok", fg="green") if c.ok else click.style("--", fg="yellow")
        click.echo(f"{mark} {c.name:18s} {c.detail}")
        if c.fix and not c.ok:
            click.echo(f"   {'':18s} fix: {c.fix}")
    for w in wanted:
        for name in REQUIREMENTS[w]:
            if not rep.get(name).ok:
                broken.append(f"{w} ({name}: {rep.get(name).detail})")
    if broken:
        click.echo("broken: " + "; ".join(broken), err=True)
        sys.exit(1)


def run() -> None:
    """The ``bioaccel`` program's entry point: :data:`main` as a process of its own."""
    global _REPLACE_PROCESS
    _REPLACE_PROCESS = True
    main(prog_name="bioaccel")
