rule validate:
    """Read one sample (FASTA/FASTQ, plain or gzip), check it, prefix its ids with the
    sample name, and summarise it (counts, lengths, N content, duplicates)."""
    input:
        sample_file,
    output:
        fasta="results/validate/{sample}.fasta",
        qc="results/validate/{sample}.qc.tsv",
    params:
        alphabet=config["alphabet"],
    conda:
        "../envs/bioaccel.yaml"
    log:
        "logs/validate/{sample}.log",
    script:
        "../scripts/validate.py"


rule dereplicate:
    """Collapse identical sequences of a sample; keep those seen at least min_abundance
    times, ids <sample>:u<rank>;size=<count>."""
    input:
        "results/validate/{sample}.fasta",
    output:
        "results/dereplicate/{sample}.fasta",
    params:
        min_abundance=config["dereplicate"]["min_abundance"],
    conda:
        "../envs/bioaccel.yaml"
    log:
        "logs/dereplicate/{sample}.log",
    script:
        "../scripts/dereplicate.py"


rule pool:
    """All samples in one FASTA, plus the sample (and abundance) of every sequence."""
    input:
        prepared,
    output:
        fasta="results/pool/sequences.fasta",
        samples="results/pool/samples.tsv",
    params:
        samples=list(samples),
    conda:
        "../envs/bioaccel.yaml"
    log:
        "logs/pool/pool.log",
    script:
        "../scripts/pool.py"


rule qc_summary:
    input:
        expand("results/validate/{sample}.qc.tsv", sample=samples),
    output:
        report(
            "results/qc_summary/qc.tsv",
            caption="../report/qc.rst",
            category="Quality control",
        ),
    conda:
        "../envs/bioaccel.yaml"
    log:
        "logs/qc_summary/qc_summary.log",
    script:
        "../scripts/qc_summary.py"
