#!/usr/bin/env bash
# Install everything the test suite needs (R from Debian, the package with its test and R
# extras) and run the whole suite. Used by the README's test command and by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive
if ! command -v R >/dev/null || ! Rscript -e 'library(ape); library(phangorn)' >/dev/null 2>&1; then
  apt-get update -qq
  apt-get install -y -qq r-base-core r-cran-ape r-cran-phangorn >/dev/null
fi
python3 -m pip install -q -e '.[test,r]'
python3 -m pytest -q "$@"
