"""``bioaccel cluster``: amplicon clustering (swarm, linkage, greedy) with swarm's outputs.

Option letters: swarm's where they mean the same (``-d``, ``-f``, ``-o``, ``-s``, ``-u``,
``-w``, ``-a``, ``-t``, ``-z``), so a swarm command line runs with ``bioaccel cluster`` in
front of its input. ``-b`` is the backend, as in every bioaccel command; swarm's boundary
(its ``-b``) is ``--boundary`` only. swarm's ``-z`` (``;size=N`` annotations) is the default
here and accepted as a no-op.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import click

from ..clusters import OUTPUT_KINDS
from ._io import bytes_output, check_outputs, is_stdio
from ._options import abundance_annotation_option, backend_option, fail, threads_option


def _names(kind: str) -> str:
    """The extensions an output may have (:data:`bioaccel.clusters.OUTPUT_KINDS`), for --help."""
    return " Named " + ", ".join(OUTPUT_KINDS[kind][0]) + " or without an extension."


@click.command("cluster")
@click.argument("input", type=click.Path(path_type=Path, allow_dash=True))
@click.option(
    "--method",
    type=click.Choice(["swarm", "linkage", "greedy"]),
    default="swarm",
    show_default=True,
    help="swarm: growth from abundance peaks with OTU breaking (swarm 3); linkage: "
    "connected components of the pairs within d (swarm --no-otu-breaking); greedy: "
    "centroids in decreasing abundance at --identity.",
)
@click.option(
    "-d",
    "--max-distance",
    "d",
    type=int,
    default=None,
    help="d, 1 to 255: pairs within d differences link (swarm, linkage; default 1).",
)
@click.option(
    "-f",
    "--fastidious",
    is_flag=True,
    help="swarm's -f (d = 1): graft light swarms onto heavy ones.",
)
@click.option(
    "--boundary",
    type=int,
    default=None,
    help="swarm's -b with --fastidious: swarms of mass below it are light (default 3).",
)
@click.option(
    "--differences",
    type=click.Choice(["edit", "swarm"]),
    default="edit",
    show_default=True,
    help="edit: Levenshtein distance; swarm: the differences of swarm's optimal "
    "alignment (match 5, mismatch -4, gap open 12, extend 4), for swarm parity at d >= 2.",
)
@click.option(
    "--identity",
    type=float,
    default=None,
    help="greedy: join a centroid at identity (L - edits) / L >= this, L the longer "
    "length (default 0.97).",
)
@click.option(
    "--identity-definition",
    type=click.Choice(["longer", "shorter"]),
    default=None,
    help="greedy: longer: L the longer length, edits the Levenshtein distance (overhangs "
    "count); shorter: L the shorter length, edits those aligning the shorter within the "
    "longer (overhangs free, as cd-hit-est and vsearch's terminal gaps). [default: longer]",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path, allow_dash=True),
    required=True,
    help="OTU list as swarm's -o: one line per OTU, members' headers (- for stdout)."
    + _names("otus"),
)
@click.option(
    "-w",
    "--seeds",
    type=click.Path(path_type=Path, allow_dash=True),
    default=None,
    help="FASTA of the seeds with the OTU's summed abundance (swarm's -w)." + _names("seeds"),
)
@click.option(
    "-s",
    "--statistics-file",
    type=click.Path(path_type=Path, allow_dash=True),
    default=None,
    help="swarm's -s table: size, mass, seed, seed abundance, singletons, generations, radius."
    + _names("statistics"),
)
@click.option(
    "-u",
    "--uclust-file",
    type=click.Path(path_type=Path, allow_dash=True),
    default=None,
    help="swarm's -u uclust-like table (C, S and H lines; identity and CIGAR to the seed)."
    + _names("uclust"),
)
@click.option(
    "--assignments",
    type=click.Path(path_type=Path, allow_dash=True),
    default=None,
    help="TSV with a header: id (without ;size=), cluster (1-based, -o order), seed."
    + _names("assignments"),
)
@click.option(
    "-a",
    "--default-abundance",
    type=int,
    default=None,
    help="Abundance of records without ;size=N (swarm's -a); by default they are refused.",
)
@abundance_annotation_option(
    "How headers carry abundances: ;size=N (vsearch, swarm -z) or a _N suffix "
    "(swarm's default: id_N, and seeds written id_MASS)."
)
@click.option(
    "-z",
    "--usearch-abundance",
    "usearch_abundance",
    is_flag=True,
    help="swarm's -z: abundances as ;size=N (the default here; for swarm command lines).",
)
@click.option(
    "--edges",
    "edges",
    type=click.Path(path_type=Path),
    multiple=True,
    help="The pairs within d already found: bioaccel neighbors INPUT -d D -o pairs.npz "
    "(D >= d; repeat --edges for each --shard k/N file). swarm and linkage grow on them "
    "instead of searching.",
)
@threads_option()
@backend_option("Backend of the neighbour search.")
def cluster_cmd(
    input,
    method,
    d,
    fastidious,
    boundary,
    differences,
    identity,
    identity_definition,
    output,
    seeds,
    statistics_file,
    uclust_file,
    assignments,
    default_abundance,
    abundance_annotation,
    usearch_abundance,
    edges,
    threads,
    backend,
):
    """Cluster dereplicated amplicons (FASTA with ;size=N abundances) as swarm does.

    \b
    bioaccel cluster amplicons.fa -d 1 --fastidious -o otus.txt --seeds seeds.fa
    bioaccel cluster amplicons.fa --method greedy --identity 0.97 -o otus.txt
    bioaccel cluster amplicons.fa -d 2 --edges part1.npz --edges part2.npz -o otus.txt
    """
    from ..clusters import MAX_DIFFERENCES

    if method == "greedy":
        if d is not None:
            fail("-d does not apply to --method greedy (it takes --identity)")
        if identity is None:
            identity = 0.97
    else:
        if identity is not None:
            fail("--identity applies to --method greedy only")
        if identity_definition is not None:
            fail("--identity-definition applies to --method greedy only")
        d = 1 if d is None else d
        if not 1 <= d <= MAX_DIFFERENCES:
            fail("-d: " + f"{d} is out of range: expected 1 to {MAX_DIFFERENCES}")
    if fastidious and method != "swarm":
        fail("--fastidious applies to --method swarm only")
    if fastidious and d != 1:
        fail(f"--fastidious needs -d 1 (as swarm's -f), got -d {d}")
    if boundary is not None and not fastidious:
        fail("--boundary applies with --fastidious only (as swarm's -b)")
    if boundary is not None and boundary < 1:
        fail("--boundary: " + f"{boundary}: expected a positive integer")
    if usearch_abundance and abundance_annotation != "size":
        fail("-z (;size=N abundances) and --abundance-annotation underscore contradict each other")
    if default_abundance is not None and default_abundance < 1:
        fail("--default-abundance: " + f"{default_abundance}: expected a positive integer")
    if method == "greedy" and differences != "edit":
        fail("--differences swarm does not apply to --method greedy")
    if edges and method == "greedy":
        fail("--edges applies to --method swarm and linkage")
    for path in edges:
        if path.suffix.lower() != ".npz":
            fail(
                f"--edges {path}: expected an .npz neighbour table (bioaccel neighbors -o "
                "pairs.npz)"
                + (
                    "; a .tsv records neither its threshold nor the amplicons without a pair"
                    if path.suffix.lower() == ".tsv"
                    else ""
                )
            )
        if not path.is_file():
            fail(f"--edges {path}: no such file")
    outputs = {
        "output": output,
        "seeds": seeds,
        "statistics_file": statistics_file,
        "uclust_file": uclust_file,
        "assignments": assignments,
    }
    from ..clusters import check_output_name

    kinds = {"output": "otus", "statistics_file": "statistics", "uclust_file": "uclust"}
    for key, path in outputs.items():
        if path is not None and not is_stdio(path):
            check_output_name(kinds.get(key, key), path)
    check_outputs([input, *edges], **outputs)
    from ..clusters import cluster

    result = cluster(
        "-" if is_stdio(input) else input,
        method=method,
        max_distance=None if method == "greedy" else d,
        fastidious=fastidious,
        boundary=boundary,
        differences=differences,
        identity=identity if method == "greedy" else None,
        identity_definition=identity_definition,
        threads=threads,
        backend=backend.lower(),
        default_abundance=default_abundance,
        edges=list(edges) or None,
        abundance_annotation=abundance_annotation,
    )
    writers = {
        "output": result.write_otus,
        "seeds": result.write_seeds,
        "statistics_file": result.write_statistics,
        "uclust_file": result.write_uclust,
        "assignments": result.write_assignments,
    }
    # a failure leaves no output behind: files are written into their temporaries, renamed
    # only when every output is done (so never held whole in memory: at 10^6 amplicons the
    # OTU list is 15 MB); what goes to stdout is rendered first and written last
    import io

    texts = {}
    with contextlib.ExitStack() as stack:
        for key, path in outputs.items():
            if path is None:
                continue
            if is_stdio(path):
                buf = io.StringIO()
                writers[key](buf)
                texts[key] = buf.getvalue()
                continue
            # header bytes that are not UTF-8 written as read
            text = io.TextIOWrapper(
                stack.enter_context(bytes_output(path)),
                encoding="utf-8",
                errors="surrogateescape",
                newline="",
            )
            writers[key](text)
            text.flush()
            text.detach()  # the file stays open until its rename
    for text in texts.values():
        with bytes_output("-") as out:
            out.write(text.encode("utf-8", "surrogateescape"))
    click.echo(
        f"{len(result.amplicons)} amplicons, {result.n_clusters} "
        + ("OTU" if result.n_clusters == 1 else "OTUs")
        + f" ({method}"
        + (f", d = {d}" if method != "greedy" else f", identity {identity}")
        + (", over the shorter length" if identity_definition == "shorter" else "")
        + (", fastidious" if fastidious else "")
        + ")",
        err=True,
    )
