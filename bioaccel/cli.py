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


_MATRIX_SUFFIXES = {".npy", ".npz", ".tsv", ".dist", ".mat"}


def _looks_like_matrix(path: Path) -> bool:
    """A distance-matrix file (npy/npz/TSV/PHYLIP matrix) rather than sequences."""
    if path.suffix.lower() in _MATRIX_SUFFIXES:
        return True
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    if head.startswith(b"\x93NUMPY") or head.startswith(b"PK") or head.startswith(b"\t"):
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
@click.option("--format", "fmt", type=click.Choice(["phylip", "phylip-lower", "tsv", "npy", "npz"]),
              default=None, help="Output format; from the extension by default (else phylip).")
@click.option("--input-format", default=None, help="fasta, fastq, clustal, phylip, stockholm, nexus.")
def distance(input, model, pairwise_deletion, backend, threads, output, fmt, input_format):
    """All-vs-all distance matrix of the sequences in INPUT."""
    from .distance import distance_matrix
    from .io import read_sequences
    from .progress import progress_bar

    batch = read_sequences(input, format=input_format)
    if len(batch) < 2:
        _fail(f"{input}: found {len(batch)} sequence; a distance matrix needs at least 2")
    with progress_bar(f"distances ({model})") as update:
        dm = distance_matrix(batch, model, pairwise_deletion=pairwise_deletion, backend=backend,
                             threads=threads, progress=update)
    dm.write(output, fmt)
    click.echo(f"wrote {len(dm)} x {len(dm)} {model} matrix to {output}", err=True)


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
def tree(input, method, model, pairwise_deletion, backend, threads, clamp_negative, output,
         matrix_output):
    """Guide tree (Newick) from an alignment or a distance matrix in INPUT."""
    from .distance import distance_matrix
    from .distmatrix import DistanceMatrix
    from .io import read_sequences
    from .progress import progress_bar
    from .tree import nj, upgma

    if not input.exists():
        _fail(f"{input}: no such file")
    if _looks_like_matrix(input):
        dm = DistanceMatrix.read(input)
    else:
        batch = read_sequences(input)
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


if __name__ == "__main__":
    main()
