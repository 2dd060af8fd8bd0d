"""Public seed families with reference alignments, for ``bench_msa.py --seed-families``.

    python benchmarks/seed_families.py [--max-rows 200] [--out DIR]   lists them (and writes them)

Where they come from (Debian bookworm and PyPI packages; nothing is downloaded here):

* Pfam seeds: HMMER's tutorial (``apt-get install hmmer-doc``: /usr/share/doc/hmmer/tutorial,
  fn3.sto PF00041.20 and Pkinase.sto PF00069.24) and pyhmmer's test data (``pip install pyhmmer``:
  pyhmmer/tests/data/msa/LuxC.sto, PF05893.5). The same tutorial's MADE1.sto is a Dfam seed
  (DF0000629.2, DNA transposon) and is taken as well.
* Rfam seeds: Infernal's test suite (``apt-get install infernal``:
  /usr/share/doc/infernal/examples/testsuite), every Stockholm block with an ``#=GF AC RF...``
  accession (tRNA, Vault, snR75, Plant_SRP, PK-HAV, U1, U2, U3); a block that repeats another
  file's (4.sto holds tRNA, Vault, snR75 and Plant_SRP again) is taken once.
* bali-phy's Miklos-2008 families (``apt-get install bali-phy``:
  /usr/share/doc/bali-phy/examples/sequences/Miklos-2008/*.fasta): aligned FASTA, rows named
  after PDB chains (P1_1lkka ...), family names as HOMSTRAD's.

Each family's rows without gaps are the input (upper case); the seed alignment is the
reference. Reference letters (the shared ``msa_score.py`` scores upper-case residues, "core",
and ignores lower-case ones): ``.``, ``-``, ``_`` and ``~`` are gaps; a lower-case residue
(an HMM insert state in Stockholm) stays lower case; where a ``#=GC RF`` line marks insert
columns (``.``/``-`` in RF: Rfam and Dfam seeds), their residues are written lower case, since
the family's model leaves them unaligned; every other residue is upper case. Pfam seeds and
the Miklos families carry no RF line and no lower case: all their columns are core. A second
reference with every residue upper case (``allcols/``) gives Q over all residues. RNA seeds
are written with T for U, input and reference alike (pyfamsa rejects U, and
``bioaccel.read_sequences`` reads U as T).

Skipped, each with its reason: a block without a Pfam/Rfam/Dfam accession (test inputs such
as se.sto, and HMMER's 4-globin example globins4.sto, not a seed), fewer than 3 rows,
duplicate ids, rows of unequal length, and more than ``max_rows`` rows (the consistency
aligners' time grows with n^3).
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass, field
from pathlib import Path

GAPS = "-._~"
HMMER_TUTORIAL = Path("/usr/share/doc/hmmer/tutorial")
INFERNAL_TESTSUITE = Path("/usr/share/doc/infernal/examples/testsuite")
INFERNAL_TUTORIAL = Path("/usr/share/doc/infernal/tutorial")
MIKLOS = Path("/usr/share/doc/bali-phy/examples/sequences/Miklos-2008")
#: the accession prefixes of seed alignments, and what they are
SEED_KINDS = {"PF": "Pfam seed", "RF": "Rfam seed", "DF": "Dfam seed"}


@dataclass
class Family:
    name: str  # file-safe case name, e.g. Pfam-PF00041-fn3
    kind: str  # "Pfam seed", "Rfam seed", "Dfam seed", "Miklos-2008"
    source: str  # file (and block) it came from
    ids: list[str]
    ref: list[str]  # reference rows: '-' gaps, core residues upper, others lower
    notes: list[str] = field(default_factory=list)

    @property
    def seqs(self) -> list[str]:
        return [r.replace("-", "").upper() for r in self.ref]

    @property
    def core_fraction(self) -> float:
        letters = "".join(self.ref).replace("-", "")
        return sum(c.isupper() for c in letters) / max(1, len(letters))


def _stockholm_blocks(path: Path):
    """Biopython's alignments of a Stockholm file with each block's #=GF ID and AC."""
    from Bio import AlignIO

    text = path.read_text(errors="replace")
    heads = []
    for block in text.split("\n//")[:-1] if "\n//" in text else [text]:
        gf = dict(re.findall(r"^#=GF\s+(ID|AC)\s+(\S+)", block, re.M))
        heads.append((gf.get("ID"), gf.get("AC")))
    alignments = list(AlignIO.parse(str(path), "stockholm"))
    heads += [(None, None)] * (len(alignments) - len(heads))
    return list(zip(alignments, heads))


def reference_rows(rows: list[str], rf: str | None) -> list[str]:
    """The scorer's reference rows (see the module's docstring); all-gap columns dropped."""
    insert = [c in GAPS for c in rf] if rf else [False] * len(rows[0])
    out = []
    for row in rows:
        cells = []
        for c, ins in zip(row, insert):
            if c in GAPS:
                cells.append("-")
            elif c.islower() or ins:
                cells.append(c.lower())
            else:
                cells.append(c.upper())
        out.append(cells)
    keep = [j for j in range(len(insert)) if any(r[j] != "-" for r in out)]
    return ["".join(r[j] for j in keep) for r in out]


def _checked(name, kind, source, ids, rows, rf, max_rows, skipped) -> Family | None:
    """A Family, or None with the reason appended to ``skipped``."""
    where = f"{name} ({kind}, {source})"
    if len(set(ids)) != len(ids):
        dup = sorted({i for i in ids if ids.count(i) > 1})
        skipped.append((where, f"duplicate ids ({', '.join(dup[:3])})"))
        return None
    widths = {len(r) for r in rows}
    if len(widths) != 1:
        skipped.append(
            (where, f"rows of unequal length ({sorted(widths)}): not an alignment as shipped")
        )
        return None
    fam = Family(name, kind, source, list(ids), reference_rows(list(rows), rf))
    empty = [i for i, s in zip(fam.ids, fam.seqs) if not s]
    if empty:
        keep = [k for k, s in enumerate(fam.seqs) if s]
        fam.ids = [fam.ids[k] for k in keep]
        fam.ref = reference_rows([fam.ref[k] for k in keep], None)
        fam.notes.append(f"{len(empty)} rows without residues dropped")
    if len(fam.ids) < 3:
        skipped.append((where, f"{len(fam.ids)} rows (< 3)"))
        return None
    if max_rows and len(fam.ids) > max_rows:
        skipped.append(
            (
                where,
                f"{len(fam.ids)} rows > {max_rows} (--seed-max-rows): the consistency aligners' "
                "time grows with n^3 (bioaccel's auto mode aligns accurately up to 200)",
            )
        )
        return None
    letters = "".join(fam.seqs)
    if "U" in letters and sum(letters.count(c) for c in "ACGTUN") >= 0.9 * len(letters):
        fam.ref = [r.replace("U", "T").replace("u", "t") for r in fam.ref]
        fam.notes.append("RNA: U written as T")
    if rf:
        fam.notes.append(f"RF line: {fam.core_fraction:.0%} of residues in consensus columns")
    return fam


def _stockholm_families(paths, max_rows, skipped, seen, need_accession=True):
    found = []
    for path in paths:
        blocks = _stockholm_blocks(path)
        for k, (aln, (ident, acc)) in enumerate(blocks):
            block = f" block {k + 1}" if len(blocks) > 1 else ""
            source = str(path) + block
            kind = SEED_KINDS.get((acc or "")[:2])
            if kind is None:
                if need_accession:
                    skipped.append(
                        (
                            f"{ident or path.stem} ({path.name}{block})",
                            "no Pfam/Rfam/Dfam accession (#=GF AC): not a seed alignment",
                        )
                    )
                continue
            ids = [r.id for r in aln]
            rows = [str(r.seq) for r in aln]
            key = (acc, tuple(ids), tuple(rows))
            if key in seen:  # the same seed shipped twice (4.sto repeats four files)
                skipped.append((f"{acc} {ident} ({path.name}{block})", f"the same as {seen[key]}"))
                continue
            seen[key] = source
            name = f"{kind.split()[0]}-{acc.split('.')[0]}-{ident or path.stem}"
            rf = aln.column_annotations.get("reference_annotation")
            fam = _checked(name, kind, source, ids, rows, rf, max_rows, skipped)
            if fam:
                fam.notes.insert(0, f"accession {acc}")
                found.append(fam)
    return found


def _pyhmmer_luxc() -> tuple[Path | None, str]:
    try:
        import importlib.resources

        path = Path(str(importlib.resources.files("pyhmmer.tests") / "data/msa/LuxC.sto"))
    except (ImportError, ModuleNotFoundError) as exc:
        return None, f"cannot import pyhmmer.tests ({exc}): pip install pyhmmer"
    if not path.is_file():
        return None, f"no {path} in this pyhmmer"
    return path, ""


def find_families(max_rows: int | None = 200):
    """(families, skipped, missing): the seed families found here; (family, why) skipped;
    (collection, why) of each collection not found."""
    families: list[Family] = []
    skipped: list[tuple[str, str]] = []
    missing: list[tuple[str, str]] = []
    seen: dict = {}
    if HMMER_TUTORIAL.is_dir():
        families += _stockholm_families(
            sorted(HMMER_TUTORIAL.glob("*.sto")), max_rows, skipped, seen
        )
    else:
        missing.append(
            ("Pfam seeds of HMMER's tutorial", f"no {HMMER_TUTORIAL}: apt-get install hmmer-doc")
        )
    luxc, why = _pyhmmer_luxc()
    if luxc:
        fams = _stockholm_families([luxc], max_rows, skipped, seen)
        for f in fams:
            f.source = f"pyhmmer {_version('pyhmmer')}: {f.source}"
        families += fams
    else:
        missing.append(("Pfam seed LuxC of pyhmmer's test data", why))
    if INFERNAL_TESTSUITE.is_dir():
        paths = sorted(INFERNAL_TESTSUITE.glob("*.sto")) + sorted(INFERNAL_TESTSUITE.glob("*.stk"))
        # repeated blocks are taken from the single-family files first (4.sto repeats them)
        paths.sort(key=lambda p: p.name == "4.sto")
        families += _stockholm_families(paths, max_rows, skipped, seen)
    else:
        missing.append(
            (
                "Rfam seeds of Infernal's test suite",
                f"no {INFERNAL_TESTSUITE}: apt-get install infernal",
            )
        )
    if not INFERNAL_TUTORIAL.is_dir():
        missing.append(
            (
                "Infernal's tutorial (tRNA5.sto, Cobalamin.sto, ...)",
                "Debian's infernal and infernal-doc 1.1.4 do not ship the tutorial folder "
                "(infernal-doc holds the user guide PDF only)",
            )
        )
    else:
        families += _stockholm_families(
            sorted(INFERNAL_TUTORIAL.glob("*.sto")), max_rows, skipped, seen
        )
    if MIKLOS.is_dir():
        from Bio import SeqIO

        for path in sorted(MIKLOS.glob("*.fasta")):
            recs = list(SeqIO.parse(str(path), "fasta"))
            fam = _checked(
                f"Miklos-{path.stem}",
                "Miklos-2008",
                str(path),
                [r.id for r in recs],
                [str(r.seq) for r in recs],
                None,
                max_rows,
                skipped,
            )
            if fam:
                families.append(fam)
    else:
        missing.append(
            ("bali-phy's Miklos-2008 families", f"no {MIKLOS}: apt-get install bali-phy")
        )
    return families, skipped, missing


def _version(module: str) -> str:
    try:
        return __import__(module).__version__
    except Exception:  # informative only
        return "?"


def write_family(fam: Family, directory: Path) -> None:
    """CASE.fa (input), CASE.ref.fa (reference) and allcols/CASE.ref.fa (every residue core)."""
    from benchmarks.family_sim import write_fasta

    (directory / "allcols").mkdir(parents=True, exist_ok=True)
    write_fasta(directory / f"{fam.name}.fa", fam.ids, fam.seqs)
    write_fasta(directory / f"{fam.name}.ref.fa", fam.ids, fam.ref)
    write_fasta(directory / "allcols" / f"{fam.name}.ref.fa", fam.ids, [r.upper() for r in fam.ref])


def describe(families, skipped, missing) -> None:
    """Print where each family came from, and why any is skipped or missing."""
    print(f"{len(families)} seed families:")
    for f in families:
        lens = [len(s) for s in f.seqs]
        extra = "; ".join(f.notes)
        print(
            f"  {f.name:34s} {len(f.ids):4d} rows, {min(lens)}-{max(lens)} residues, "
            f"{len(f.ref[0])} columns  [{f.kind}: {f.source}{'; ' + extra if extra else ''}]"
        )
    by_reason: dict[str, list[str]] = {}
    for what, why in skipped:
        by_reason.setdefault(why, []).append(what)
    for why, whats in by_reason.items():
        print(f"  skipped ({why}): {'; '.join(whats)}")
    for what, why in missing:
        print(f"  missing {what}: {why}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--max-rows", type=int, default=200)
    ap.add_argument("--out", default=None, help="write CASE.fa / CASE.ref.fa here")
    a = ap.parse_args(argv)
    families, skipped, missing = find_families(a.max_rows)
    describe(families, skipped, missing)
    if a.out:
        for f in families:
            write_family(f, Path(a.out))


if __name__ == "__main__":
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    main()
