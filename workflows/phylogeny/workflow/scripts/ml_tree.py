"""An ML tree of one family by FastTree or IQ-TREE; the Newick is written atomically."""

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bioaccel._core import atomic_output
from bioaccel.msa_engine import MultipleAlignment, read_alignment

log = open(snakemake.log[0], "w")
program = snakemake.params.program
aln = read_alignment(snakemake.input.aln, snakemake.params.alphabet)
# rows without a residue are left out of the tree (as in the NJ tree; see distances.py)
keep = [k for k, row in enumerate(aln.sequences) if row.strip("-")]
aln = MultipleAlignment([aln.ids[k] for k in keep], [aln.sequences[k] for k in keep], aln.alphabet)
dna = aln.alphabet.name == "dna"
with tempfile.TemporaryDirectory() as tmp:
    # ids under placeholders: Pfam-style ids ('A/12-90') and spaces survive both programs
    names = {f"s{k}": i for k, i in enumerate(aln.ids)}
    src = Path(tmp) / "aln.fa"
    src.write_text("".join(f">s{k}\n{r}\n" for k, r in enumerate(aln.sequences)))
    if program == "fasttree":
        exe = shutil.which("fasttree") or shutil.which("FastTree")
        cmd = [exe, "-quiet", *(["-nt", "-gtr"] if dna else ["-wag"]), str(src)]
        out = Path(tmp) / "tree.nwk"
        with open(out, "w") as f:
            code = subprocess.call(cmd, stdout=f, stderr=log) if exe else 127
    else:
        exe = shutil.which("iqtree2") or shutil.which("iqtree")
        cmd = [
            exe,
            "-s",
            str(src),
            "-m",
            "MFP",
            "-T",
            str(snakemake.threads),
            "--prefix",
            str(Path(tmp) / "iq"),
            "-seed",
            "1",
            "-quiet",
        ]
        code = subprocess.call(cmd, stdout=log, stderr=log) if exe else 127
        out = Path(tmp) / "iq.treefile"
    if code == 127:
        sys.exit(f"ml_tree: {program} is not installed (apt-get install {program})")
    if code != 0:
        sys.exit(
            f"ml_tree: {program} failed on family {snakemake.wildcards.family} "
            f"(exit status {code}); see {snakemake.log[0]}"
        )
    from bioaccel import read_newick

    tree = read_newick(out.read_text())
    tree.labels = [names.get(x, x) for x in tree.labels]
    with atomic_output(snakemake.output[0]) as f:
        f.write(tree.to_newick() + "\n")
