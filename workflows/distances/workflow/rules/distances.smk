rule distance_tile:
    """One tile (a, b) of the all-vs-all matrix, as a GPU job: `bioaccel gpu-run` leases
    a GPU of its own (CUDA_VISIBLE_DEVICES), or runs on the CPU when there is none."""
    input:
        "results/pool/sequences.fasta",
    output:
        "results/distance_tile/{a}_{b}.npz",
    params:
        options=distance_options(),
        blocks=BLOCKS,
        backend=config["distance"]["backend"],
    threads: config["distance"]["threads_per_tile"]
    resources:
        gpu=1,
    conda:
        "../envs/bioaccel.yaml"
    log:
        "logs/distance_tile/{a}_{b}.log",
    shell:
        "bioaccel gpu-run --kind distance -- "
        "bioaccel distance {input} {params.options} -b {params.backend} -t {threads} "
        "--tile {wildcards.a},{wildcards.b} --tiles {params.blocks} -o {output} 2> {log}"


rule merge:
    """Assemble the tiles; fails, naming a pair, if one is missing or covered twice."""
    input:
        [f"results/distance_tile/{a}_{b}.npz" for a, b in TILES],
    output:
        cdist="results/merge/distances.cdist",
        tsv=report(
            "results/merge/distances.tsv",
            caption="../report/matrix.rst",
            category="Distances",
        ),
    conda:
        "../envs/bioaccel.yaml"
    log:
        "logs/merge/merge.log",
    shell:
        "(bioaccel merge-tiles {input} -o {output.cdist} && "
        "bioaccel merge-tiles {input} -o {output.tsv}) 2> {log}"
