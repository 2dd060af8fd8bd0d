#!/usr/bin/env bash
# The main job: the Snakemake workflows on the bundled real data sets.
# 1. workflows/amplicons on two paired MiSeq 16S V4 samples (bioaccel/data/dada2): input
#    checks -> merging, expected-error filtering, dereplication (vsearch) -> OTUs
#    (bioaccel cluster, swarm d = 1 --fastidious) -> chimera removal (vsearch uchime) ->
#    OTU table, representatives, read tracking -> DADA2 taxonomy -> phyloseq object and
#    R report (phyloseq, vegan).
# 2. workflows/distances on two MiSeq 16S amplicon samples (bioaccel/data/dada2): QC ->
#    dereplication -> all-vs-all edit distances in GPU tiles -> tree -> clusters -> R report.
# 3. workflows/phylogeny on five HMMER tutorial gene families (bioaccel/data/hmmer): one
#    multiple alignment per family as a GPU job, largest families first (the bioaccel
#    scheduler plugin) -> distances -> NJ tree per family -> R report (ape, phangorn).
# Each with Snakemake's HTML report. Installs what it needs first (R, ape, phangorn,
# phyloseq, vegan, dada2 and vsearch from Debian when missing; cutadapt from PyPI with the
# workflows extra). Run from anywhere.
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive
if ! command -v R >/dev/null || ! Rscript -e 'library(ape); library(phangorn)' >/dev/null 2>&1; then
  apt-get update -qq
  apt-get install -y -qq r-base-core r-cran-ape r-cran-phangorn >/dev/null
fi
if ! command -v vsearch >/dev/null || ! Rscript -e 'library(phyloseq); library(vegan); library(dada2)' >/dev/null 2>&1; then
  apt-get update -qq
  apt-get install -y -qq vsearch r-bioc-phyloseq r-cran-vegan r-bioc-dada2 >/dev/null
fi
python3 -m pip install -q -e '.[workflows]' --config-settings editable_mode=compat
# the bioaccel R package (R/) draws the report; installed into a private library
mkdir -p .rlib
R CMD INSTALL --no-test-load --library=.rlib R >/dev/null
export R_LIBS="$PWD/.rlib${R_LIBS:+:$R_LIBS}"
# run_workflow DIR SUMMARY HOW [ARGS...]: one workflow (snakemake HOW ARGS), its HTML report,
# and what it wrote
run_workflow() {
  local dir=$1 summary=$2 how=$3
  shift 3
  (
    cd "workflows/$dir"
    # shellcheck disable=SC2086  # HOW is two words
    snakemake $how "$@"
    snakemake --cores all --report results/report.html "$@"
    echo
    echo "results (workflows/$dir/results):"
    find results -type f | sort
    echo
    cat "$summary"
  )
}
run_workflow amplicons results/read_tracking.tsv "--cores all" "$@"
run_workflow distances results/qc_summary/qc.tsv "--cores all" "$@"
run_workflow phylogeny results/report/summary.tsv "--profile profiles/local" "$@"
