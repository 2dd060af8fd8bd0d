rule report:
    """Heatmap ordered by the tree, tree plot, PCoA coloured by sample, cluster table (PNG
    and PDF), drawn in R by the bioaccel R package (R/ of this repository)."""
    input:
        matrix="results/merge/distances.cdist",
        tree=f"results/tree/{config['tree']['method']}.nwk",
        samples="results/pool/samples.tsv",
        clusters="results/clusters/clusters.tsv",
    output:
        heatmap_png=report("results/report/heatmap.png", caption="../report/heatmap.rst",
                           category="Report"),
        heatmap_pdf="results/report/heatmap.pdf",
        tree_png=report("results/report/tree.png", caption="../report/tree_plot.rst",
                        category="Report"),
        tree_pdf="results/report/tree.pdf",
        pcoa_png=report("results/report/pcoa.png", caption="../report/pcoa.rst",
                        category="Report"),
        pcoa_pdf="results/report/pcoa.pdf",
        table=report("results/report/cluster_table.tsv", caption="../report/clusters.rst",
                     category="Report"),
    conda:
        "../envs/r.yaml"
    log:
        "logs/report/report.log",
    script:
        "../scripts/report.R"
