"""``bioaccel neighbors``: every pair within a threshold, as a TSV or .npz edge table."""

from __future__ import annotations

from pathlib import Path

import click

from ._io import check_outputs, is_stdio, read_sequences_arg, shown
from ._options import (
    abundance_annotation_option,
    alphabet_option,
    backend_option,
    devices_option,
    threads_option,
    ungap_option,
)


def _parse_shard(text: str | None) -> tuple[int, int] | None:
    """``i/N`` (1-based, as the user counts) -> (i - 1, N)."""
    if text is None:
        return None
    parts = text.split("/")
    try:
        k, count = (int(p) for p in parts) if len(parts) == 2 else (None, None)
    except ValueError:
        k = count = None
    if k is None or count is None or count < 1 or not 1 <= k <= count:
        raise ValueError(
            f"--shard {text!r}: expected I/N with 1 <= I <= N (shard I of N), such as 1/4"
        )
    return k - 1, count


def _parse_threshold(text: str | None, model: str):
    if text is None:
        if model == "edit":
            return 1
        raise ValueError(f"-m {model}: give the threshold with --max-distance (such as 0.05)")
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"-d/--max-distance {text!r}: expected a number") from None
    if model == "edit":
        try:
            as_int = int(text)
        except ValueError:
            if not (value == value and abs(value) != float("inf") and value == int(value)):
                raise ValueError(
                    f"-d/--max-distance {text!r}: edit distances are whole numbers of edits "
                    "(0, 1, 2, ...)"
                ) from None
            as_int = int(value)  # "2.0", as Python's max_distance=2.0
        if as_int < 0:
            raise ValueError(f"-d/--max-distance {text!r}: expected a number of edits >= 0")
        return as_int
    if value < 0 or value != value:
        raise ValueError(f"--max-distance {text!r}: expected a distance >= 0")
    return value


@click.command("neighbors")
@click.argument("inputs", nargs=-1, required=True, type=click.Path(path_type=Path, allow_dash=True))
@click.option(
    "-d",
    "--max-distance",
    "max_distance",
    default=None,
    help="The threshold: edits for -m edit (default 1; 0 finds identical sequences), a "
    "distance in [0, 1] for mash and jaccard (required there).",
)
@click.option(
    "-m",
    "--model",
    type=click.Choice(["edit", "mash", "jaccard"]),
    default="edit",
    show_default=True,
    help="edit: global Levenshtein distance (unit costs; N and IUPAC codes are letters "
    "equal only to themselves); mash: MinHash distance of k-mer sketches; jaccard: 1 - "
    "exact k-mer Jaccard.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path, allow_dash=True),
    required=True,
    help="Edge table: .tsv (id1<TAB>id2<TAB>distance, one line per pair, id1 before id2 in "
    "input order, ids without ';size=N') or .npz (COO arrays and the ids); - for TSV on stdout.",
)
@threads_option()
@backend_option()
@devices_option(
    "Verify the candidate pairs on these GPUs: 'all' or ids such as 0,2 (with failover)."
)
@click.option(
    "--shard",
    default=None,
    metavar="I/N",
    help="Only shard I of N (from 1): the pairs whose first sequence lies in block I of N "
    "equal blocks of the input; --merge joins the shards' files into the one-process file.",
)
@click.option(
    "--merge",
    is_flag=True,
    help="INPUTS are shard files (.tsv or .npz, in shard order 1/N .. N/N): join them into -o.",
)
@click.option("-k", "--kmer", "k", type=int, default=None, help="mash/jaccard: k-mer length.")
@click.option("-s", "--sketch-size", type=int, default=None, help="mash: sketch size.")
@click.option("--seed", type=int, default=None, help="mash: hash seed.")
@abundance_annotation_option(
    "What the ids of the table lose: ;size=N (vsearch, swarm -z) or swarm's default _N "
    "suffix (every header must end in one)."
)
@ungap_option("Remove alignment gaps ('-', '.') from the input first.")
@alphabet_option
def neighbors_cmd(
    inputs,
    max_distance,
    model,
    output,
    threads,
    backend,
    devices,
    shard,
    merge,
    k,
    sketch_size,
    seed,
    abundance_annotation,
    ungap,
    alphabet,
):
    """Every pair of sequences of INPUT within the threshold (-d), never all pairs.

    \b
    bioaccel neighbors reads.fa -d 3 -o pairs.tsv
    bioaccel neighbors genomes.fa -m mash --max-distance 0.05 -o pairs.npz
    bioaccel neighbors reads.fa -d 2 --shard 1/4 -o part1.tsv   (... 4/4, then)
    bioaccel neighbors --merge part1.tsv part2.tsv part3.tsv part4.tsv -o pairs.tsv
    """
    from .._core import NEIGHBOR_TABLE, output_format
    from ..neighbors import merge_neighbors, neighbors

    fmt = "tsv" if is_stdio(output) else output_format(output, NEIGHBOR_TABLE, "neighbour table")
    if merge:
        given = [
            name
            for name, value in (
                ("-d", max_distance),
                ("--shard", shard),
                ("--devices", devices),
                ("-k", k),
                ("-s", sketch_size),
                ("--seed", seed),
            )
            if value is not None
        ] + (["--ungap"] if ungap else [])
        given += ["--abundance-annotation"] if abundance_annotation != "size" else []
        if given:
            verb = "does" if len(given) == 1 else "do"
            raise ValueError(f"--merge joins shard files; {', '.join(given)} {verb} not apply")
        if is_stdio(output):
            raise ValueError("--merge writes a file; give -o a .tsv or .npz name")
        check_outputs(list(inputs), output=output)
        merge_neighbors(inputs, output)
        click.echo(f"merged {len(inputs)} shard files into {shown(output)}", err=True)
        return
    if len(inputs) != 1:
        raise ValueError(
            f"give one sequence file (got {len(inputs)}); --merge joins several shard files"
        )
    source = inputs[0]
    d = _parse_threshold(max_distance, model)
    part = _parse_shard(shard)
    if model == "edit":
        for name, value in (("-k", k), ("-s/--sketch-size", sketch_size), ("--seed", seed)):
            if value is not None:
                raise ValueError(f"{name} applies to -m mash and -m jaccard, not to -m edit")
    check_outputs([source], output=output)
    if is_stdio(source):
        batch = read_sequences_arg(source, alphabet=alphabet)
    else:
        from ..neighbors import read_fasta

        batch = read_fasta(source, alphabet=alphabet)
    if ungap:
        batch = batch.ungapped()
    nb = neighbors(
        batch,
        max_distance=d,
        model=model,
        threads=threads,
        backend=backend,
        devices=devices,
        shard=part,
        k=k,
        sketch_size=sketch_size,
        seed=seed,
        abundance_annotation=abundance_annotation,
    )
    if is_stdio(output):
        import sys

        from ..neighbors import write_tsv

        write_tsv(nb, sys.stdout.buffer, threads)
        sys.stdout.buffer.flush()
    else:
        nb.write(output, threads=threads)
    what = f" (shard {part[0] + 1}/{part[1]})" if part else ""
    click.echo(
        f"wrote {len(nb)} pairs of {nb.n} sequences within {d}{what} to {shown(output)} ({fmt})",
        err=True,
    )
