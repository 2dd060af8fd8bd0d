rule msa:
    """One family's multiple alignment as a GPU job: `bioaccel gpu-run` leases a GPU of its
    own (CUDA_VISIBLE_DEVICES), or runs on the CPU when there is none; the lease and the
    alignment's wall time go to {family}.json. The `cells` resource (sequences x length)
    is what the bioaccel scheduler plugin ranks families by (largest first) and what the
    run history learns runtimes from."""
    input:
        family_file,
    output:
        aln="results/msa/{family}.fa",
        stats="results/msa/{family}.json",
    params:
        options=msa_options(),
        timed=workflow.source_path("../scripts/timed.py"),
    threads: config["msa"]["threads"]
    resources:
        gpu=1,
        cells=family_cells,
    conda:
        "../envs/bioaccel.yaml"
    log:
        "logs/msa/{family}.log",
    shell:
        "bioaccel gpu-run --kind msa --cells {resources.cells} -- "
        "python {params.timed} {output.stats} -- "
        "bioaccel msa {input} -o {output.aln} -t {threads} {params.options} 2> {log}"


rule trim:
    """Drop the columns with more than trim.max_gap_fraction gaps (a documented gap-fraction
    filter; ClipKIT does not install beside NumPy 2, see README.md). Rows left without a
    residue are kept (all gaps) and counted in the log."""
    input:
        "results/msa/{family}.fa",
    output:
        "results/trim/{family}.fa",
    params:
        max_gap_fraction=config["trim"]["max_gap_fraction"],
    conda:
        "../envs/bioaccel.yaml"
    log:
        "logs/trim/{family}.log",
    script:
        "../scripts/trim.py"
