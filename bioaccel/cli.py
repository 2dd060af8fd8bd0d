"""The ``bioaccel`` command line.

Bad input exits with status 2 and one line on stderr naming the file, record, position
and value at fault; never a traceback. Outputs are written to a temporary file and
renamed, so a failed run leaves no output behind.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import click

from .errors import BioaccelError

EXIT_BAD_INPUT = 2


def _fail(message: str) -> None:
    click.echo(f"bioaccel: error: {message}", err=True)
    sys.exit(EXIT_BAD_INPUT)


class _Group(click.Group):
    """Turns expected errors into one clean line instead of a traceback."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except (BioaccelError, ValueError, OSError, RuntimeError, MemoryError) as exc:
            _fail(str(exc) or type(exc).__name__)


_MATRIX_SUFFIXES = {".npy", ".npz", ".tsv", ".dist", ".mat", ".cdist"}


def _looks_like_matrix(path: Path) -> bool:
    """A distance-matrix file (npy/npz/TSV/PHYLIP matrix) rather than sequences."""
    if path.suffix.lower() in _MATRIX_SUFFIXES:
        return True
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    if head.startswith((b"\x93NUMPY", b"PK", b"\t", b"BACDIST1")):
        return True
    first = head.split(b"\n", 1)[0].strip()
    return first.isdigit()  # PHYLIP matrix: "n"; PHYLIP alignment: "n sites"


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="bioaccel")
@click.option("-v", "--verbose", is_flag=True, help="Log backend choices and timings to stderr.")
def main(verbose: bool) -> None:
    """GPU-accelerated pairwise sequence distances, alignments and guide trees."""
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING,
                        format="%(message)s", stream=sys.stderr)


_BACKENDS = click.Choice(["auto", "cupy", "numba-cuda", "cpu", "reference"], case_sensitive=False)


def _parse_matrix(text: str | None):
    """A matrix name, or "match,mismatch" (e.g. "2,-3")."""
    if text is None:
        return None
    parts = text.split(",")
    if len(parts) == 2:
        try:
            return int(parts[0]), int(parts[1])
        except ValueError:
            _fail(f"--matrix {text!r}: expected a matrix name or MATCH,MISMATCH integers such as 2,-3")
    return text


def _given(ctx: click.Context, names) -> list[str]:
    """The options among ``names`` that the user gave on the command line (or environment)."""
    from click.core import ParameterSource
    return [n for n in names if ctx.get_parameter_source(n) not in (None, ParameterSource.DEFAULT)]


def _spelling(ctx: click.Context):
    """An option's name as the user writes it (``-k/--kmer``)."""
    opts = {p.name: "/".join(p.opts) for p in ctx.command.params}
    return lambda name: opts.get(name, name)


def _scoring_options(f):
    f = click.option("--gap-extend", type=int, default=None,
                     help="Gap extension penalty (default 1 protein, 2 DNA).")(f)
    f = click.option("--gap-open", type=int, default=None,
                     help="Gap open penalty: a gap of length L costs open + (L-1) * extend "
                          "(default 11 protein, 5 DNA).")(f)
    f = click.option("--matrix", default=None,
                     help="Substitution matrix name (BLOSUM62, PAM250, ...) or MATCH,MISMATCH "
                          "(default BLOSUM62 protein, 2,-3 DNA).")(f)
    return f


@main.command()
@click.argument("input", type=click.Path(path_type=Path))
@click.option("-m", "--model", default="k80", show_default=True,
              help="raw, jc69, k80, f81, tn93 or logdet (aligned DNA).")
@click.option("--pairwise-deletion", is_flag=True,
              help="Drop missing sites per pair instead of for all pairs.")
@click.option("-b", "--backend", type=_BACKENDS, default="auto", show_default=True)
@click.option("-t", "--threads", type=click.IntRange(min=0), default=0, show_default=True,
              help="CPU threads, 0 = all cores.")
@click.option("-o", "--output", type=click.Path(path_type=Path), required=True)
@click.option("--format", "fmt", type=click.Choice(["phylip", "phylip-lower", "tsv", "npy", "npz", "cdist"]),
              default=None, help="Output format; from the extension by default (else phylip).")
@click.option("--input-format", default=None, help="fasta, fastq, clustal, phylip, stockholm, nexus.")
@_scoring_options
@click.option("-k", "--kmer", "k", type=int, default=None, help="k for kmer/jaccard/mash.")
@click.option("--sketch-size", type=click.IntRange(min=1), default=1000, show_default=True)
@click.option("--seed", type=int, default=42, show_default=True, help="MinHash seed.")
@click.option("--devices", default=None,
              help="Spread the work over these GPUs: 'all' or ids such as 0,2 (with failover).")
@click.option("--tile", default=None, metavar="A,B",
              help="Compute only tile (A, B), A <= B, of a --tiles x --tiles grid (cut by "
                   "sequence length) and write it as .npz; `bioaccel merge-tiles` assembles them.")
@click.option("--tiles", type=click.IntRange(min=1), default=None, help="Grid size for --tile.")
@click.option("--float64", "float64", is_flag=True,
              help=".cdist output: store float64 instead of float32.")
@click.option("--restart", is_flag=True,
              help=".cdist output: ignore the finished tiles of an interrupted run.")
@click.option("--ungap", is_flag=True,
              help="Remove alignment gaps ('-', '.') first (identity, scoredist, edit, k-mer models).")
@click.pass_context
def distance(ctx, input, model, pairwise_deletion, backend, threads, output, fmt, input_format,
             matrix, gap_open, gap_extend, k, sketch_size, seed, devices, tile, tiles, float64,
             restart, ungap):
    """All-vs-all distance matrix of the sequences in INPUT (or of saved sketches).

    Models: raw, jc69, k80, f81, tn93, logdet (aligned DNA, as ape::dist.dna); identity,
    scoredist (from global alignments); edit (Levenshtein); kmer (MUSCLE), jaccard, mash
    (MinHash; INPUT may be a sketch file from `bioaccel sketch`).
    """
    from .distance import distance_matrix
    from .io import is_sketch_file, read_sequences
    from .progress import progress_bar

    from .kmers import Sketches
    from .model_options import USED_BY, check_model_options
    from .outputs import MATRIX, TILE, output_format

    if tile is not None:
        output_format(output, TILE, "tile", fmt, default="npz")
    else:
        fmt = output_format(output, MATRIX, "distance matrix", fmt, default="phylip")
    check_model_options(model, _given(ctx, USED_BY), _spelling(ctx))
    for name in _given(ctx, ["float64", "restart"]):
        if fmt != "cdist":
            _fail(f"{_spelling(ctx)(name)} does nothing here: it applies to .cdist output only "
                  "(PHYLIP and TSV hold exact decimals, .npy/.npz float64)")
    if model.lower() == "mash" and (str(input).endswith(".npz") or is_sketch_file(input)):
        if ungap:
            _fail("--ungap applies to sequences, not to a sketch file")
        batch = Sketches.load(input)
    else:
        batch = read_sequences(input, format=input_format)
        if ungap:
            batch = batch.ungapped()
        if len(batch) < 2:
            _fail(f"{input}: found {len(batch)} sequence; a distance matrix needs at least 2")
    if (tile is None) != (tiles is None):
        _fail("--tile and --tiles go together")
    if tile is not None:
        from .tiles import distance_block, tile_bounds, write_tile
        try:
            a, b = (int(x) for x in tile.split(","))
        except ValueError:
            _fail(f"--tile {tile!r}: expected A,B such as 0,2")
        bounds = tile_bounds(batch, a, b, tiles)
        values = distance_block(batch, model, bounds[:2], bounds[2:],
                                pairwise_deletion=pairwise_deletion, backend=backend,
                                threads=threads, matrix=_parse_matrix(matrix), gap_open=gap_open,
                                gap_extend=gap_extend, k=k, sketch_size=sketch_size, seed=seed)
        write_tile(output, values, bounds, len(batch), batch.ids)
        click.echo(f"wrote tile ({a}, {b}): rows {bounds[0]}:{bounds[1]} x columns "
                   f"{bounds[2]}:{bounds[3]} of {len(batch)} ({model}) to {output}", err=True)
        return
    if fmt == "cdist":
        if devices is not None:
            _fail("--devices does not apply to streamed .cdist output yet; write .npy instead")
        # condensed binary, streamed tile by tile: never a square in memory; an interrupted
        # run resumes from its finished tiles
        from .ondisk import stream_distances
        with progress_bar(f"distances ({model}) -> {output.name}") as update:
            d = stream_distances(batch, model, output, dtype="float64" if float64 else "float32",
                                 backend=backend, threads=threads, resume=not restart,
                                 progress=update, pairwise_deletion=pairwise_deletion,
                                 matrix=_parse_matrix(matrix), gap_open=gap_open,
                                 gap_extend=gap_extend, k=k, sketch_size=sketch_size, seed=seed)
        click.echo(f"wrote {len(d)} x {len(d)} {model} matrix ({d.dtype.name}, condensed) to "
                   f"{output}", err=True)
        return
    with progress_bar(f"distances ({model})") as update:
        dm = distance_matrix(batch, model, pairwise_deletion=pairwise_deletion, backend=backend,
                             threads=threads, progress=update, matrix=_parse_matrix(matrix),
                             gap_open=gap_open, gap_extend=gap_extend, k=k,
                             sketch_size=sketch_size, seed=seed, devices=devices)
    dm.write(output, fmt)
    click.echo(f"wrote {len(dm)} x {len(dm)} {model} matrix to {output}", err=True)


@main.command("merge-tiles")
@click.argument("tiles", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("-o", "--output", type=click.Path(path_type=Path), required=True)
@click.option("--format", "fmt", type=click.Choice(["phylip", "phylip-lower", "tsv", "npy", "npz", "cdist"]),
              default=None, help="Output format; from the extension by default (else phylip).")
def merge_tiles_cmd(tiles, output, fmt):
    """Assemble a distance matrix from the tiles of `bioaccel distance --tile`; fails, naming
    a pair, when a pair is missing or covered twice."""
    from .outputs import MATRIX, output_format
    from .tiles import merge_tiles

    fmt = output_format(output, MATRIX, "distance matrix", fmt, default="phylip")
    dm = merge_tiles(list(tiles))
    dm.write(output, fmt)
    click.echo(f"merged {len(tiles)} tile(s) into a {len(dm)} x {len(dm)} matrix: {output}", err=True)


@main.command()
@click.argument("input", type=click.Path(path_type=Path))
@click.option("--method", type=click.Choice(["nj", "upgma"]), default="nj", show_default=True)
@click.option("-m", "--model", default="k80", show_default=True,
              help="Distance model when INPUT is an alignment.")
@click.option("--pairwise-deletion", is_flag=True)
@click.option("-b", "--backend", type=_BACKENDS, default="auto", show_default=True)
@click.option("-t", "--threads", type=click.IntRange(min=0), default=0, show_default=True)
@click.option("--clamp-negative", is_flag=True, help="NJ: set negative branch lengths to 0.")
@click.option("-o", "--output", type=click.Path(path_type=Path), required=True)
@click.option("--matrix-output", type=click.Path(path_type=Path), default=None,
              help="Also write the distance matrix computed from an alignment.")
@click.option("--ungap", is_flag=True,
              help="Remove alignment gaps first (identity, scoredist, edit, k-mer models).")
@click.pass_context
def tree(ctx, input, method, model, pairwise_deletion, backend, threads, clamp_negative, output,
         matrix_output, ungap):
    """Guide tree (Newick) from an alignment or a distance matrix in INPUT."""
    from .distance import distance_matrix
    from .distmatrix import DistanceMatrix
    from .io import read_sequences
    from .progress import progress_bar
    from .model_options import USED_BY, check_model_options
    from .outputs import MATRIX, NEWICK, output_format
    from .tree import nj, upgma

    output_format(output, NEWICK, "Newick tree", default="newick")
    if matrix_output is not None:
        output_format(matrix_output, MATRIX, "distance matrix", default="phylip")
    if not input.exists():
        _fail(f"{input}: no such file")
    if _looks_like_matrix(input):
        for name in _given(ctx, ["model", "pairwise_deletion", "ungap", "matrix_output"]):
            _fail(f"{_spelling(ctx)(name)} does nothing here: {input} is a distance matrix already")
        dm = DistanceMatrix.read(input)
    else:
        check_model_options(model, _given(ctx, USED_BY), _spelling(ctx))
        batch = read_sequences(input)
        if ungap:
            batch = batch.ungapped()
        if len(batch) < 2:
            _fail(f"{input}: found {len(batch)} sequence; a tree needs at least 2")
        with progress_bar(f"distances ({model})") as update:
            dm = distance_matrix(batch, model, pairwise_deletion=pairwise_deletion,
                                 backend=backend, threads=threads, progress=update)
        if matrix_output is not None:
            dm.write(matrix_output)
    t = nj(dm, clamp_negative=clamp_negative, threads=threads) if method == "nj" else upgma(dm)
    t.write(output)
    click.echo(f"wrote {method} tree of {t.n_tips} tips to {output}", err=True)


@main.command()
@click.argument("inputs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("-k", "--kmer", "k", type=click.IntRange(min=1), default=21, show_default=True)
@click.option("-s", "--sketch-size", type=click.IntRange(min=1), default=1000, show_default=True)
@click.option("--seed", type=int, default=42, show_default=True)
@click.option("-t", "--threads", type=click.IntRange(min=0), default=0, show_default=True)
@click.option("-o", "--output", type=click.Path(path_type=Path), required=True, help="Sketch file (.npz).")
def sketch(inputs, k, sketch_size, seed, threads, output):
    """MinHash sketches of every sequence in INPUTS (files, and directories standing for
    their sequence files), saved for `bioaccel distance -m mash SKETCHES.npz`."""
    from .io import read_many
    from .kmers import sketch as make_sketch
    from .outputs import SKETCHES, output_format

    output_format(output, SKETCHES, "sketch file", default="npz")
    s = make_sketch(read_many(inputs), k=k, size=sketch_size, seed=seed, threads=threads)
    s.save(output)
    click.echo(f"wrote {len(s.ids)} sketches (k={k}, size={sketch_size}) to {output}", err=True)


@main.command()
@click.argument("queries", type=click.Path(path_type=Path))
@click.argument("targets", type=click.Path(path_type=Path), required=False)
@click.option("--mode", type=click.Choice(["global", "local", "semiglobal"]), default="global",
              show_default=True)
@_scoring_options
@click.option("--traceback", is_flag=True,
              help="Write alignments (TSV: coordinates, CIGAR, identity, aligned strings) "
                   "instead of a score matrix.")
@click.option("-b", "--backend", type=_BACKENDS, default="auto", show_default=True)
@click.option("-t", "--threads", type=click.IntRange(min=0), default=0, show_default=True)
@click.option("-o", "--output", type=click.Path(path_type=Path), required=True,
              help="Scores: .npy (matrix) or .tsv (labelled matrix). --traceback: TSV.")
@click.option("--ungap", is_flag=True, help="Remove alignment gaps ('-', '.') from the input first.")
def align(queries, targets, mode, matrix, gap_open, gap_extend, traceback, backend, threads, output,
          ungap):
    """Align every sequence of QUERIES to every one of TARGETS (or all pairs of QUERIES)."""
    import numpy as np

    from .align import align as align_pairs
    from .align import align_scores
    from .io import atomic_output, read_sequences

    from .outputs import ALIGNMENTS, SCORES, output_format
    from .scoring import scoring_defaults

    fmt = (output_format(output, ALIGNMENTS, "alignment table (--traceback)", default="tsv") if traceback
           else output_format(output, SCORES, "score matrix", default="npy"))
    q = read_sequences(queries)
    t = read_sequences(targets, alphabet=q.alphabet) if targets is not None else None
    if ungap:
        q, t = q.ungapped(), (t.ungapped() if t is not None else None)
    spec, gap_open, gap_extend = scoring_defaults(q.alphabet, _parse_matrix(matrix), gap_open, gap_extend)
    kw = dict(mode=mode, matrix=spec, gap_open=gap_open, gap_extend=gap_extend)
    if traceback:
        alns = align_pairs(q, t, threads=threads, **kw)
        with atomic_output(output) as f:
            f.write("query\ttarget\tscore\tquery_start\tquery_end\ttarget_start\ttarget_end\t"
                    "cigar\tidentity\taligned_length\tquery_aligned\ttarget_aligned\n")
            for a in alns:
                f.write(f"{a.query_id}\t{a.target_id}\t{a.score}\t{a.query_start}\t{a.query_end}\t"
                        f"{a.target_start}\t{a.target_end}\t{a.cigar}\t{a.identity:.6f}\t"
                        f"{a.aligned_length}\t{a.query_aligned}\t{a.target_aligned}\n")
        click.echo(f"wrote {len(alns)} {mode} alignments to {output}", err=True)
        return
    scores = align_scores(q, t, backend=backend, threads=threads, **kw)
    tids = (t or q).ids
    if fmt == "tsv":
        with atomic_output(output) as f:
            f.write("\t" + "\t".join(tids) + "\n")
            for name, row in zip(q.ids, scores):
                f.write(name + "\t" + "\t".join(str(int(v)) for v in row) + "\n")
    else:
        with atomic_output(output, "wb") as f:
            np.save(f, scores)
    click.echo(f"wrote {scores.shape[0]} x {scores.shape[1]} {mode} scores to {output}", err=True)


@main.command()
@click.option("--require", default="", help="Comma-separated: cpu, openmp, cupy, numba-cuda, gpu, r, nvcc. "
              "Exit non-zero when one of them is broken.")
@click.option("--no-r", is_flag=True, help="Skip the R/rpy2 probe.")
def doctor(require: str, no_r: bool):
    """Show what this installation can use and how to fix what is broken."""
    from .config import REQUIREMENTS, collect

    wanted = [w.strip().lower() for w in require.split(",") if w.strip()]
    unknown = [w for w in wanted if w not in REQUIREMENTS]
    if unknown:
        _fail(f"unknown requirement {unknown[0]!r}; expected some of {sorted(REQUIREMENTS)}")
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


def _register_scheduling_commands() -> None:
    from .cli_sched import COMMANDS
    for command in COMMANDS:
        main.add_command(command)


_register_scheduling_commands()

if __name__ == "__main__":
    main()
