#!/usr/bin/env bash
# Install everything the test suite needs (R, ape, phangorn, testthat, roxygen2, FastTree, IQ-TREE, swarm, vsearch from Debian; the
# package with its test, R and workflow extras) and run the whole suite. Used by the
# README's test command and by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive
if ! command -v R >/dev/null || ! command -v mash >/dev/null || ! command -v fasttree >/dev/null || ! command -v iqtree2 >/dev/null || ! command -v clang-format >/dev/null || ! command -v swarm >/dev/null || ! command -v vsearch >/dev/null || ! Rscript -e 'library(ape); library(phangorn); library(testthat); library(roxygen2); library(Biostrings)' >/dev/null 2>&1; then
  apt-get update -qq
  apt-get install -y -qq r-base-core r-cran-ape r-cran-phangorn r-cran-testthat r-cran-roxygen2 r-bioc-biostrings mash fasttree iqtree clang-format swarm vsearch >/dev/null
fi
# nvcc compiles every CUDA C source in the tests (strict CI fails without it): the CUDA
# toolkit's bin folder when it is installed but not on the PATH
if ! command -v nvcc >/dev/null; then
  for d in /usr/local/cuda/bin /usr/local/cuda-*/bin; do
    if [ -x "$d/nvcc" ]; then export PATH="$d:$PATH"; break; fi
  done
fi
# a real single-node Slurm for the scale-out tests (tests/slurm_local.py)
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
  apt-get update -qq
  apt-get install -y -qq slurm-wlm munge >/dev/null
fi
# the amplicon workflow (workflows/amplicons): vsearch, swarm (the oracle of its test), and
# R's phyloseq, vegan and dada2 for its report and taxonomy
if ! command -v vsearch >/dev/null || ! command -v swarm >/dev/null || ! Rscript -e 'library(phyloseq); library(vegan); library(dada2)' >/dev/null 2>&1; then
  apt-get update -qq
  apt-get install -y -qq vsearch swarm r-bioc-phyloseq r-cran-vegan r-bioc-dada2 >/dev/null
fi
# real influenza genes for the MSA tests (adegenet ships pdH1N1 HA/NA)
if ! Rscript -e 'library(adegenet)' >/dev/null 2>&1; then
  apt-get update -qq
  apt-get install -y -qq r-cran-adegenet >/dev/null
fi
# compat mode puts the checkout on sys.path, so Snakemake's plugin discovery (pkgutil)
# finds snakemake_scheduler_plugin_bioaccel
python3 -m pip install -q -e '.[test,r,workflows]' --config-settings editable_mode=compat
# lint gate (also .pre-commit-config.yaml): Python (ruff, configured in pyproject.toml), the
# public API's types (mypy, [tool.mypy]), C++ and CUDA C (clang-format, .clang-format)
python3 -m ruff check .
python3 -m ruff format --check .
python3 -m mypy
git ls-files -z 'csrc/*.cpp' 'csrc/*.hpp' 'csrc/*.inc' 'bioaccel/kernels/*.cu' 'tests/cuda_host/*.cu' 'tests/cuda_host/*.hpp' \
  | xargs -0 clang-format --dry-run --Werror
# two workers (CI has 2 cores; much of the suite waits on Snakemake, Slurm and R), each taking
# a whole test file at a time (a file's fixtures run once; a session fixture once per worker);
# BIOACCEL_TEST_WORKERS=0 runs it in one process
python3 -m pytest -q -n "${BIOACCEL_TEST_WORKERS:-2}" --dist loadfile "$@"
