if TAXONOMY["method"] == "dada2":

    rule taxonomy:
        """Taxonomy of each OTU representative with DADA2's naive Bayesian classifier
        (assignTaxonomy; ranks below taxonomy.min_boot bootstrap support left empty)."""
        input:
            fasta="results/otus.fasta",
            reference=resolve(TAXONOMY["reference"]),
        output:
            "results/taxonomy.tsv",
        params:
            min_boot=TAXONOMY["min_boot"],
        threads: config["threads"]
        conda:
            "../envs/r.yaml"
        log:
            "logs/taxonomy/taxonomy.log",
        benchmark:
            "benchmarks/taxonomy/taxonomy.tsv"
        script:
            "../scripts/taxonomy.R"

elif TAXONOMY["method"] == "sintax":

    rule sintax:
        """Taxonomy of each OTU representative with vsearch --sintax (ranks below the
        cutoff taxonomy.min_boot / 100 left out)."""
        input:
            fasta="results/otus.fasta",
            reference=resolve(TAXONOMY["reference"]),
        output:
            "results/taxonomy/sintax.tsv",
        params:
            cutoff=TAXONOMY["min_boot"] / 100,
        threads: config["threads"]
        conda:
            "../envs/vsearch.yaml"
        log:
            "logs/taxonomy/sintax.log",
        benchmark:
            "benchmarks/taxonomy/sintax.tsv"
        shell:
            "vsearch --sintax {input.fasta} --db {input.reference} --sintax_cutoff "
            "{params.cutoff} --randseed 1 --tabbedout {output} "
            "--threads 1 2> {log}"

    rule taxonomy:
        """SINTAX's tabbed output as the taxonomy table: one column per rank."""
        input:
            sintax="results/taxonomy/sintax.tsv",
            fasta="results/otus.fasta",
        output:
            "results/taxonomy.tsv",
        conda:
            "../envs/bioaccel.yaml"
        log:
            "logs/taxonomy/taxonomy.log",
        script:
            "../scripts/sintax_table.py"
