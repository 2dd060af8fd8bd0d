rule summary:
    """One row per family: sequences, columns, gap fraction, alignment seconds, GPU used,
    and its tree (or why it has none)."""
    input:
        alignments=expand("results/msa/{family}.fa", family=families),
        stats=expand("results/msa/{family}.json", family=families),
        trees=expand("results/tree/{family}.nwk", family=TREED),
    output:
        report("results/summary/summary.tsv", caption="../report/summary.rst",
               category="Summary"),
    params:
        families=list(families),
        n_seqs=[families[f].n_seqs for f in families],
    conda:
        "../envs/bioaccel.yaml"
    log:
        "logs/summary/summary.log",
    script:
        "../scripts/summary.py"


rule report:
    """Each family's tree (one PNG per family, all in trees.pdf), the summary table as an
    image (with phangorn's parsimony score of each tree), and a heatmap of one family's
    distances ordered by its tree, drawn in R (ape, phangorn, the bioaccel R package)."""
    input:
        summary="results/summary/summary.tsv",
        alignments=expand("results/msa/{family}.fa", family=families),
        trees=expand("results/tree/{family}.nwk", family=TREED),
        distances=expand("results/distances/{family}.cdist", family=TREED),
    output:
        trees=[report(f"results/report/trees/{f}.png", caption="../report/tree.rst",
                      category="Trees", labels={"family": f}) for f in families],
        pdf="results/report/trees.pdf",
        table=report("results/report/summary.png", caption="../report/table.rst",
                     category="Summary"),
        tsv="results/report/summary.tsv",
        heatmap=[report("results/report/heatmap.png", caption="../report/heatmap.rst",
                        category="Distances")] if TREED else [],
    params:
        results=lambda wildcards, input: str(Path(input.summary).parent.parent),
        heatmap_family=heatmap_family(),
    conda:
        "../envs/r.yaml"
    log:
        "logs/report/report.log",
    script:
        "../scripts/report.R"
