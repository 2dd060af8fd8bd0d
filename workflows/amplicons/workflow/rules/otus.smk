rule pool:
    """All samples' unique sequences dereplicated once more across the study (vsearch
    --derep_fulllength --sizein --sizeout: abundances add up, the SHA-1 ids stay)."""
    input:
        expand("results/derep/{sample}.fasta", sample=samples),
    output:
        "results/pool/amplicons.fasta",
    conda:
        "../envs/vsearch.yaml"
    log:
        "logs/pool/pool.log",
    benchmark:
        "benchmarks/pool/pool.tsv"
    shell:
        "cat {input} | vsearch --derep_fulllength - --sizein --sizeout --fasta_width 0 "
        "--output {output} 2> {log}"


rule neighbours_shard:
    """With cluster.shards: N > 1, shard k of the pairs within d of the pooled amplicons
    (bioaccel neighbors --shard k/N: the pairs whose first amplicon lies in block k of the
    input; the N shards together hold every pair once)."""
    input:
        "results/pool/amplicons.fasta",
    output:
        temp("results/cluster/edges/part{k}of{shards}.npz"),
    wildcard_constraints:
        k=r"\d+",
        shards=r"\d+",
    params:
        d=config["cluster"]["d"],
    threads: config["threads"]
    conda:
        "../envs/bioaccel.yaml"
    log:
        "logs/cluster/neighbours_{k}of{shards}.log",
    benchmark:
        "benchmarks/cluster/neighbours_{k}of{shards}.tsv"
    shell:
        "bioaccel neighbors {input} -d {params.d} --shard {wildcards.k}/{wildcards.shards} "
        "-t {threads} -o {output} 2> {log}"


rule cluster:
    """OTUs from the pooled amplicons with bioaccel cluster (swarm d = 1 --fastidious by
    default): members per OTU as swarm -o writes them, the seeds with the OTU's abundance.
    With cluster.shards > 1 the OTUs grow on the shards' pairs (--edges): the same OTUs."""
    input:
        amplicons="results/pool/amplicons.fasta",
        edges=cluster_edges(),
    output:
        otus="results/cluster/otus.txt",
        seeds="results/cluster/seeds.fasta",
        statistics="results/cluster/statistics.tsv",
    params:
        options=cluster_options(),
        edges=lambda wildcards, input: " ".join(f"--edges {p}" for p in input.edges),
    threads: config["threads"]
    conda:
        "../envs/bioaccel.yaml"
    log:
        "logs/cluster/cluster.log",
    benchmark:
        "benchmarks/cluster/cluster.tsv"
    shell:
        "bioaccel cluster {input.amplicons} {params.options} {params.edges} -t {threads} "
        "-o {output.otus} --seeds {output.seeds} --statistics-file {output.statistics} "
        "2> {log}"


rule chimeras:
    """De novo chimera detection on the OTU seeds, most abundant first (vsearch
    --sortbysize, then --uchime_denovo or --uchime3_denovo); with method none every OTU
    is kept (status N)."""
    input:
        "results/cluster/seeds.fasta",
    output:
        sorted=temp("results/chimeras/seeds.sorted.fasta"),
        uchime="results/chimeras/uchime.tsv",
    params:
        method=config["chimeras"]["method"],
    conda:
        "../envs/vsearch.yaml"
    log:
        "logs/chimeras/chimeras.log",
    benchmark:
        "benchmarks/chimeras/chimeras.tsv"
    shell:
        "(vsearch --sortbysize {input} --fasta_width 0 --output {output.sorted} && "
        "if [ {params.method} = none ]; then "
        "awk 'index($0, \">\") == 1 {{ print \"0\\t\" substr($0, 2) \"\\tN\" }}' "
        "{output.sorted} "
        "> {output.uchime}; "
        "else vsearch --{params.method} {output.sorted} --uchimeout {output.uchime}; fi"
        ") 2> {log}"


rule otu_table:
    """Samples x OTUs read counts of the non-chimeric OTUs, their representatives, and the
    per-sample read tracking (scripts/otu_table.py, streaming)."""
    input:
        unpack(tracking_inputs),
        validate="results/validate/samples.tsv",
        derep=expand("results/derep/{sample}.fasta", sample=samples),
        otus="results/cluster/otus.txt",
        seeds="results/cluster/seeds.fasta",
        uchime="results/chimeras/uchime.tsv",
    output:
        table="results/otu_table.tsv",
        fasta="results/otus.fasta",
        tracking="results/read_tracking.tsv",
        biom="results/otu_table.biom" if config["biom"] else [],
    params:
        samples=list(samples),
        paired=PAIRED,
    conda:
        "../envs/bioaccel.yaml"
    log:
        "logs/otu_table/otu_table.log",
    benchmark:
        "benchmarks/otu_table/otu_table.tsv"
    script:
        "../scripts/otu_table.py"


rule report:
    """The phyloseq object (OTU table, samples with their read tracking, taxonomy and
    sequences when there), rarefaction curves, alpha diversity, a Bray-Curtis PCoA and the
    read tracking, drawn in R (phyloseq, vegan) as PNG and PDF."""
    input:
        table="results/otu_table.tsv",
        fasta="results/otus.fasta",
        tracking="results/read_tracking.tsv",
        taxonomy="results/taxonomy.tsv" if TAXONOMY["method"] != "none" else [],
    output:
        rds="results/phyloseq.rds",
        rarefaction_png=report(
            "results/report/rarefaction.png", caption="../report/rarefaction.rst", category="Report"
        ),
        rarefaction_pdf="results/report/rarefaction.pdf",
        alpha_png=report(
            "results/report/alpha_diversity.png", caption="../report/alpha.rst", category="Report"
        ),
        alpha_pdf="results/report/alpha_diversity.pdf",
        alpha_tsv="results/report/alpha_diversity.tsv",
        ordination_png=report(
            "results/report/ordination.png", caption="../report/ordination.rst", category="Report"
        ),
        ordination_pdf="results/report/ordination.pdf",
        tracking_png=report(
            "results/report/read_tracking.png", caption="../report/tracking.rst", category="Report"
        ),
        tracking_pdf="results/report/read_tracking.pdf",
    conda:
        "../envs/r.yaml"
    log:
        "logs/report/report.log",
    benchmark:
        "benchmarks/report/report.tsv"
    script:
        "../scripts/report.R"
