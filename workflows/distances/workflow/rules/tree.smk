rule tree:
    input:
        "results/merge/distances.cdist",
    output:
        report(
            "results/tree/{method}.nwk",
            caption="../report/tree.rst",
            category="Tree",
        ),
    params:
        clamp="--clamp-negative" if config["tree"]["clamp_negative"] else "",
    conda:
        "../envs/bioaccel.yaml"
    log:
        "logs/tree/{method}.log",
    shell:
        "bioaccel tree {input} --method {wildcards.method} {params.clamp} -o {output} 2> {log}"


rule clusters:
    """Hierarchical clusters (SciPy linkage) cut at each configured distance threshold."""
    input:
        matrix="results/merge/distances.cdist",
        samples="results/pool/samples.tsv",
    output:
        "results/clusters/clusters.tsv",
    params:
        thresholds=config["clusters"]["thresholds"],
        linkage=config["clusters"]["linkage"],
    conda:
        "../envs/bioaccel.yaml"
    log:
        "logs/clusters/clusters.log",
    script:
        "../scripts/clusters.py"
