"""``bioaccel msa``: multiple sequence alignment from the command line."""

from __future__ import annotations

import errno
from pathlib import Path

import click

from ..msa_engine import ALIGNMENT_FORMATS, GUIDE_TREES
from ._io import check_outputs, is_stdio, read_stdin_text, text_output
from ._options import THREADS_HELP, threads_option


def _refine_arg(refine, iterations):
    if iterations is not None:
        if refine is False:
            raise click.UsageError("--refine-iterations contradicts --no-refine")
        return iterations
    return "auto" if refine is None else refine


def _two_alignments(value):
    """``--profile A B``: two paths; an option name in their place means one was left out
    (``--profile a.fa -o out.fa`` would read ``-o`` as B and then miss ``-o``)."""
    for v in value or ():
        if str(v).startswith("-") and str(v) != "-" and not v.exists():
            raise click.BadParameter(
                f"expected two alignments, A and B, got {str(value[0])!r} and {str(value[1])!r}: "
                f"{str(v)!r} is an option, not a file",
                param_hint="'--profile'",
            )
    return value


@click.command("msa")
@click.argument("input", type=click.Path(path_type=Path, allow_dash=True), required=False)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path, allow_dash=True),
    required=True,
    help="Alignment file (- for stdout); the extension decides the format "
    "(.fa/.fasta/.afa, .aln, .sto, .a2m, .phy; .gz after it for gzip); a "
    "name without one is FASTA; other extensions are refused.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(list(ALIGNMENT_FORMATS)),
    default=None,
    help="Output format (default: from the extension, else FASTA); must agree with the extension.",
)
@click.option(
    "--guide-tree",
    default="auto",
    show_default=True,
    help=f"{', '.join(GUIDE_TREES)}, or a Newick file naming every sequence once.",
)
@click.option(
    "--tree-out",
    type=click.Path(path_type=Path, allow_dash=True),
    default=None,
    help="Write the guide tree (Newick: .nwk, .newick, .tre, .tree, .treefile, .nw or no "
    "extension) here; tips are named by whole header lines. Aligning sequences only (not "
    "with --add or --profile, which follow no guide tree).",
)
@click.option(
    "--alphabet",
    type=click.Choice(["auto", "protein", "dna", "rna"]),
    default="auto",
    show_default=True,
)
@click.option(
    "--matrix",
    default="auto",
    show_default=True,
    help="Substitution matrix (auto: PFASUM43 for proteins, NUC.4.4 rescaled to +5/-1 "
    "for nucleotides), or MATCH,MISMATCH scores such as 2,-3.",
)
@click.option("--gap-open", type=float, default=None, help="Internal gap open penalty (14.85).")
@click.option("--gap-extend", type=float, default=None, help="Internal gap extension (1.25).")
@click.option(
    "--term-gap",
    type=float,
    default=None,
    help="Penalty per column of a leading or trailing gap (0.66).",
)
@click.option(
    "--refine/--no-refine",
    default=None,
    help="Refinement by gap-pattern splits (default: up to 1,000 sequences).",
)
@click.option(
    "--refine-iterations",
    type=click.IntRange(min=0, max=1_000_000),
    default=None,
    help="Refinement iterations (100); implies --refine.",
)
@threads_option(THREADS_HELP + " The alignment does not depend on it.")
@click.option(
    "-b",
    "--backend",
    type=click.Choice(["auto", "cpu", "cupy", "numba-cuda"]),
    default="auto",
    show_default=True,
    help="cupy or numba-cuda: the guide tree's LCS distances and each guide-tree "
    "level's profile DPs on the GPU (the same alignment as cpu); auto: cpu.",
)
@click.option(
    "--devices",
    default=None,
    help="Spread the guide tree's distances over these GPUs: 'all' or ids such as "
    "0,2 (with failover); with a GPU backend the alignment runs on the first.",
)
@click.option(
    "--mode",
    type=click.Choice(["auto", "accurate", "fast"]),
    default="auto",
    show_default=True,
    help="accurate: consistency-based (pair-HMM posteriors, ProbCons-style; families "
    "up to a few hundred sequences); fast: the progressive engine; auto: accurate "
    "for small inputs. -v logs the choice.",
)
@click.option(
    "--input-format",
    default=None,
    help="The format of INPUT or of --add's sequences: fasta, fastq, clustal, phylip, "
    "stockholm, nexus (default: sniffed from the content, then the extension).",
)
@click.option(
    "--add",
    "add",
    type=click.Path(path_type=Path, allow_dash=True),
    default=None,
    help="Sequences to add to the alignment given by --to (its columns stay; rows: "
    "the alignment's, then these).",
)
@click.option(
    "--to",
    "to",
    type=click.Path(path_type=Path),
    default=None,
    help="The existing alignment --add adds to.",
)
@click.option(
    "--keep-length",
    is_flag=True,
    help="With --add: keep the alignment's width; residues facing none of its "
    "columns are dropped and reported (as mafft --add --keeplength).",
)
@click.option(
    "--fragments",
    is_flag=True,
    help="With --add: the new sequences are reads or contigs of part of the aligned "
    "sequences, placed where they match (free end gaps).",
)
@click.option(
    "--dropped-out",
    type=click.Path(path_type=Path, allow_dash=True),
    default=None,
    help="With --keep-length: write the dropped residues here (TSV, named .tsv or without "
    "an extension: id, start, end, after_column; 1-based).",
)
@click.option(
    "--profile",
    "profile",
    type=click.Path(path_type=Path),
    nargs=2,
    default=None,
    callback=lambda ctx, param, value: _two_alignments(value),
    help="Align two alignments A B to each other (each keeps its columns).",
)
def msa_cmd(
    input,
    output,
    fmt,
    guide_tree,
    tree_out,
    alphabet,
    matrix,
    gap_open,
    gap_extend,
    term_gap,
    refine,
    refine_iterations,
    threads,
    backend,
    devices,
    mode,
    input_format,
    add,
    to,
    keep_length,
    fragments,
    dropped_out,
    profile,
):
    """Align the sequences of INPUT (FASTA, gzip too; - for stdin) into a multiple alignment;
    or add sequences to an alignment (--add NEW --to ALN), or align two alignments
    (--profile A B).

    Rows come out in input order; gaps in the input are removed first. The alignment is the
    same for any thread count and any input order.
    """
    from .._core import ALIGNMENT, output_spec
    from ..msa_engine import MsaOptions, MsaScoring, run_msa, side_output_format

    out_fmt, _ = output_spec(
        "" if is_stdio(output) else output,
        ALIGNMENT,
        "alignment",
        fmt,
        default="fasta",
        compressible=True,
    )
    # the side outputs' names by the same rule, before any work
    for option, path in (("tree_out", tree_out), ("dropped_out", dropped_out)):
        if path is not None and not is_stdio(path):
            side_output_format(option, path)
    check_outputs(
        [input, guide_tree, add, to, *(profile or ())],
        output=output,
        tree_out=tree_out,
        dropped_out=dropped_out,
    )
    adding = add is not None or to is not None
    if sum((input is not None, adding, bool(profile))) != 1:
        raise click.UsageError(
            "give INPUT, or --add NEW --to ALIGNMENT, or --profile A B (one of them)"
        )
    if adding and (add is None or to is None):
        raise click.UsageError("--add and --to go together")
    if dropped_out is not None and not keep_length:
        raise click.UsageError("--dropped-out reports what --keep-length drops")
    if tree_out is not None and (adding or profile):
        raise ValueError(
            "--tree-out writes the guide tree of aligning sequences; --add and --profile "
            "align to fixed alignments and follow no guide tree"
        )
    for path in [p for p in (input, add, to, *(profile or ())) if p is not None]:
        if not is_stdio(path) and not Path(path).exists():
            raise FileNotFoundError(errno.ENOENT, f"input {str(path)!r} does not exist")
    options = MsaOptions(
        operation="add" if adding else "profile" if profile else "align",
        mode=mode,
        alphabet=alphabet,
        scoring=MsaScoring(matrix, gap_open, gap_extend, term_gap),
        guide_tree=guide_tree,
        refine=_refine_arg(refine, refine_iterations),
        threads=threads,
        backend=backend,
        devices=devices,
        keep_length=keep_length,
        fragments=fragments,
        format=input_format,
        spelling="cli",
    )
    if adding:
        aln = run_msa(options, add=read_stdin_text() if is_stdio(add) else add, to=to)
    elif profile:
        aln = run_msa(options, profile=tuple(profile))
    else:
        aln = run_msa(options, read_stdin_text() if is_stdio(input) else input)
    if is_stdio(output):
        text = aln.to_text(out_fmt)
        with text_output(output) as f:
            f.write(text)
    else:
        aln.write(output, out_fmt)
    for path, write, text in (
        (tree_out, aln.write_guide_tree, aln.guide_tree_text),
        (dropped_out, aln.write_dropped, aln.dropped_text),
    ):
        if path is not None and is_stdio(path):
            with text_output(path) as f:
                f.write(text())
        elif path is not None:
            write(path)
    if keep_length:
        n_res = sum(b - a + 1 for _, a, b, _ in aln.dropped)
        n_seq = len({i for i, *_ in aln.dropped})
        click.echo(
            f"--keep-length dropped {n_res} inserted residues ({len(aln.dropped)} "
            f"insertions) from {n_seq} added sequences",
            err=True,
        )
    click.echo(
        f"aligned {len(aln)} sequences into {aln.width} columns -> "
        f"{'stdout' if is_stdio(output) else output}",
        err=True,
    )
