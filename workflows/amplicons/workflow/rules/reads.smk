rule validate:
    """Check one sample's FASTQ (records, qualities, letters, pairs) before any tool runs."""
    input:
        reads=fastq,
    output:
        "results/validate/{sample}.tsv",
    params:
        given=lambda w: [f for f in (samples[w.sample].given1, samples[w.sample].given2) if f],
        qmax=config["quality"]["qmax"],
    conda:
        "../envs/cutadapt.yaml"
    log:
        "logs/validate/{sample}.log",
    benchmark:
        "benchmarks/validate/{sample}.tsv"
    script:
        "../scripts/validate.py"


rule validated:
    """Every sample checked: the read steps start only after this, so bad input stops the
    workflow before any of them."""
    input:
        expand("results/validate/{sample}.tsv", sample=samples),
    output:
        "results/validate/samples.tsv",
    conda:
        "../envs/vsearch.yaml"
    log:
        "logs/validate/samples.log",
    shell:
        "awk 'NR == 1 || FNR > 1' {input} > {output} 2> {log}"


rule trim_pairs:
    """Primer removal on read pairs (cutadapt -g forward -G reverse); pairs lacking a
    primer are dropped when primers.discard_untrimmed."""
    input:
        reads=fastq,
        checked="results/validate/samples.tsv",
    output:
        r1="results/trim/{sample}_R1.fastq.gz",
        r2="results/trim/{sample}_R2.fastq.gz",
        json="results/trim/{sample}.json",
    wildcard_constraints:
        sample=one_of(PAIRED),
    params:
        primers=" ".join(
            ([f"-g {PRIMERS['forward']}"] if PRIMERS["forward"] else [])
            + ([f"-G {PRIMERS['reverse']}"] if PRIMERS["reverse"] else [])
        ),
        error_rate=PRIMERS["error_rate"],
        discard="--discard-untrimmed" if PRIMERS["discard_untrimmed"] else "",
    threads: config["threads"]
    conda:
        "../envs/cutadapt.yaml"
    log:
        "logs/trim/{sample}.log",
    benchmark:
        "benchmarks/trim/{sample}.tsv"
    shell:
        "cutadapt {params.primers} -e {params.error_rate} {params.discard} -j {threads} "
        "-Z --json {output.json} -o {output.r1} -p {output.r2} {input.reads} > {log} 2>&1"


rule trim_single:
    """Primer removal on single-end reads (cutadapt -g forward)."""
    input:
        reads=fastq,
        checked="results/validate/samples.tsv",
    output:
        reads="results/trim/{sample}.fastq.gz",
        json="results/trim/{sample}.json",
    wildcard_constraints:
        sample=one_of(SINGLE),
    params:
        primers=f"-g {PRIMERS['forward']}" if PRIMERS["forward"] else "",
        error_rate=PRIMERS["error_rate"],
        discard="--discard-untrimmed" if PRIMERS["discard_untrimmed"] else "",
    threads: config["threads"]
    conda:
        "../envs/cutadapt.yaml"
    log:
        "logs/trim/{sample}.log",
    benchmark:
        "benchmarks/trim/{sample}.tsv"
    shell:
        "cutadapt {params.primers} -e {params.error_rate} {params.discard} -j {threads} "
        "-Z --json {output.json} -o {output.reads} {input.reads} > {log} 2>&1"


rule merge_pairs:
    """Merge read pairs (vsearch --fastq_mergepairs); the count of merged pairs beside."""
    input:
        reads=trimmed,
        checked="results/validate/samples.tsv",
    output:
        reads=temp("results/merge/{sample}.fastq"),
        pairs="results/merge/{sample}.count",
    wildcard_constraints:
        sample=one_of(PAIRED),
    params:
        max_diffs=config["merge"]["max_diffs"],
        min_overlap=config["merge"]["min_overlap"],
        stagger="--fastq_allowmergestagger" if config["merge"]["allow_stagger"] else "",
        qmax=config["quality"]["qmax"],
    threads: config["threads"]
    conda:
        "../envs/vsearch.yaml"
    log:
        "logs/merge/{sample}.log",
    benchmark:
        "benchmarks/merge/{sample}.tsv"
    shell:
        "(vsearch --fastq_mergepairs {input.reads[0]} --reverse {input.reads[1]} "
        "--threads {threads} --fastq_maxdiffs {params.max_diffs} "
        "--fastq_minovlen {params.min_overlap} {params.stagger} "
        "--fastq_qmax {params.qmax} --fastq_qmaxout {params.qmax} "
        "--fastqout {output.reads} && "
        "awk 'END {{ print NR / 4 }}' {output.reads} > {output.pairs}) 2> {log}"


rule filter:
    """Expected-error, N and length filter (vsearch --fastq_filter); a sample left without
    reads stops the workflow before the pooled steps, naming the sample and its file."""
    input:
        reads=to_filter,
        checked="results/validate/samples.tsv",
    output:
        temp("results/filter/{sample}.fasta"),
    params:
        options=" ".join(
            f"--{k} {v}"
            for k, v in (
                ("fastq_maxee", config["filter"]["max_ee"]),
                ("fastq_maxns", config["filter"]["max_ns"]),
                ("fastq_minlen", config["filter"]["min_length"]),
                ("fastq_maxlen", config["filter"]["max_length"]),
                ("fastq_trunclen", config["filter"]["trunc_length"]),
                ("fastq_qmax", config["quality"]["qmax"]),
            )
            if v is not None
        ),
        given=lambda w: samples[w.sample].given1,
    conda:
        "../envs/vsearch.yaml"
    log:
        "logs/filter/{sample}.log",
    benchmark:
        "benchmarks/filter/{sample}.tsv"
    shell:
        "vsearch --fastq_filter {input.reads} {params.options} --fasta_width 0 "
        "--fastaout {output} 2> {log} && "
        "if [ ! -s {output} ]; then "
        "echo \"sample '{wildcards.sample}': no reads left after trimming, merging and "
        "filtering ({params.given}; see {log})\" | tee -a {log} >&2; exit 1; fi"


rule derep_sample:
    """Collapse identical reads of a sample (vsearch --derep_fulllength --sizeout), each
    labelled by the SHA-1 of its sequence, so one sequence has one id in every sample."""
    input:
        "results/filter/{sample}.fasta",
    output:
        "results/derep/{sample}.fasta",
    conda:
        "../envs/vsearch.yaml"
    log:
        "logs/derep/{sample}.log",
    benchmark:
        "benchmarks/derep/{sample}.tsv"
    shell:
        "vsearch --derep_fulllength {input} --sizeout --relabel_sha1 --fasta_width 0 "
        "--output {output} 2> {log}"
