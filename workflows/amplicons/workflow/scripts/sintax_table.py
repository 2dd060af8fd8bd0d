"""vsearch --sintax --tabbedout (query, full prediction, strand, prediction above the
cutoff) as a table with one column per rank, the OTUs in results/otus.fasta order; ranks
below the cutoff are empty."""

import os
import tempfile

sm = snakemake  # noqa: F821  (injected by Snakemake's script: directive)
RANKS = {
    "d": "Domain",
    "k": "Kingdom",
    "p": "Phylum",
    "c": "Class",
    "o": "Order",
    "f": "Family",
    "g": "Genus",
    "s": "Species",
}
calls, seen = {}, []
with open(sm.input.sintax) as f:
    for line in f:
        fields = line.rstrip("\n").split("\t")
        ranks = {}
        if len(fields) > 3 and fields[3]:
            for item in fields[3].split(","):
                key, _, name = item.partition(":")
                ranks[key] = name
                if key not in seen:
                    seen.append(key)
        calls[fields[0].split(";")[0]] = ranks
order = [k for k in RANKS if k in seen] + [k for k in seen if k not in RANKS]
with open(sm.input.fasta) as f:
    otus = [line[1:].strip() for line in f if line.startswith(">")]
fd, tmp = tempfile.mkstemp(dir=os.path.dirname(sm.output[0]) or ".", prefix=".taxonomy-")
with os.fdopen(fd, "w") as out:
    out.write("OTU\t" + "\t".join(RANKS.get(k, k) for k in order) + "\n")
    for otu in otus:
        ranks = calls.get(otu, {})
        out.write(otu + "\t" + "\t".join(ranks.get(k, "") for k in order) + "\n")
umask = os.umask(0)  # mkstemp makes 0600: the permissions a new file gets, as the others
os.umask(umask)
os.chmod(tmp, 0o666 & ~umask)
os.replace(tmp, sm.output[0])
with open(sm.log[0], "w") as log:
    print(f"{len(otus)} OTUs, {sum(1 for o in otus if calls.get(o))} classified", file=log)
