#!/usr/bin/env bash
# The main job on the bundled real data set: aligned DNA -> K80 distances -> NJ tree,
# written under results/. Run from anywhere; installs bioaccel first.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install -q -e .
mkdir -p results
bioaccel tree bioaccel/data/msx2_mRNA.aln --method nj -m k80 \
  --matrix-output results/msx2.k80.phy -o results/msx2.nj.nwk
bioaccel tree results/msx2.k80.phy --method upgma -o results/msx2.upgma.nwk
echo "results/:"; ls -l results/
cat results/msx2.nj.nwk
