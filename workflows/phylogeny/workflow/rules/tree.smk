rule distances:
    """Pairwise distances from one family's aligned columns (MultipleAlignment.distance_matrix:
    protein p/poisson/kimura, DNA raw/jc69/k80/f81/tn93/logdet; pairwise deletion)."""
    input:
        aligned,
    output:
        cdist="results/distances/{family}.cdist",
        tsv="results/distances/{family}.tsv",
    params:
        protein_model=config["distance"]["protein_model"],
        dna_model=config["distance"]["dna_model"],
        pairwise_deletion=config["distance"]["pairwise_deletion"],
        alphabet=config["msa"]["alphabet"],
    conda:
        "../envs/bioaccel.yaml"
    log:
        "logs/distances/{family}.log",
    script:
        "../scripts/distances.py"


rule tree:
    """Neighbour joining (bioaccel) on the family's distances."""
    input:
        "results/distances/{family}.cdist",
    output:
        "results/tree/{family}.nwk",
    params:
        clamp="--clamp-negative" if config["tree"]["clamp_negative"] else "",
    conda:
        "../envs/bioaccel.yaml"
    log:
        "logs/tree/{family}.log",
    shell:
        "bioaccel tree {input} --method nj {params.clamp} -o {output} 2> {log}"


rule ml_tree:
    """Optional maximum-likelihood tree: FastTree (Debian `fasttree`; WAG+CAT for proteins,
    GTR+CAT for DNA) or IQ-TREE (Debian `iqtree`; ModelFinder), on the same alignment."""
    input:
        aln=aligned,
    output:
        "results/ml_tree/{family}.nwk",
    params:
        program=config["ml_tree"]["program"],
        alphabet=config["msa"]["alphabet"],
    threads: config["ml_tree"]["threads"]
    conda:
        "../envs/ml_tree.yaml"
    log:
        "logs/ml_tree/{family}.log",
    script:
        "../scripts/ml_tree.py"
