"""Real data sets, fetched at test time (they are GPL, so not committed) and cached
under tests/.data/. Each fetcher skips the test with the reason when it cannot fetch."""

from __future__ import annotations

import gzip
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest

#: The environment as the test session started, for child processes. rpy2 prepends R's
#: library folders to LD_LIBRARY_PATH when it starts R, and a Python child inheriting that
#: loads the system's libpython (and finds no site-packages); bioaccel.rinterop._ro undoes
#: it, and children started from this copy stay safe whatever else imports rpy2.
BASE_ENV = dict(os.environ)


def child_env(**overrides: str) -> dict[str, str]:
    env = dict(BASE_ENV)
    env.update(overrides)
    return env


#: In CI (BIOACCEL_STRICT_TESTS=1) a missing R, R package or data set fails the test
#: instead of skipping it: the R-marked tests must really run there.
STRICT = os.environ.get("BIOACCEL_STRICT_TESTS") == "1"


def unavailable(reason: str):
    """Skip, or fail in strict mode: something the test needs is missing here (a tool, a
    package, a data set, the compiled core). Every skip of the suite goes through this or
    :func:`not_applicable` (tests/core/test_code_hygiene.py holds it so). Works inside a test
    and at a module's top level alike."""
    if STRICT:
        pytest.fail(f"{reason} (BIOACCEL_STRICT_TESTS=1: required here)")
    pytest.skip(reason, allow_module_level=True)


def not_applicable(reason: str):
    """Skip a test that does not apply on this machine for a reason no installation changes
    (this CPU's instruction set, running as root, a GPU backend that is available after all,
    a case the command does not have). Skipped in strict mode too: nothing is missing."""
    pytest.skip(f"does not apply here: {reason}", allow_module_level=True)


def require(module: str, why: str = ""):
    """Import ``module``, or :func:`unavailable` naming it (a failure in strict CI, where the
    test extra installs every oracle)."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        unavailable(f"{module} is not installed ({exc}){': ' + why if why else ''}")


CACHE = Path(os.environ.get("BIOACCEL_TEST_DATA", Path(__file__).parent / ".data"))

#: data sets too large or not free to commit, shared by the checkouts beside this one (the MSA
#: oracle set: BAliBASE reference sets 1-2)
SHARED = Path(__file__).resolve().parents[2] / "shared" / "msa"
BALIBASE = SHARED / "balibase-rv11-rv12"


def bundled(*parts: str) -> Path:
    """A data file shipped inside the package (``bioaccel/data``): real MiSeq 16S reads,
    HMMER seed families, the MSX2 mRNA alignment."""
    import bioaccel

    return Path(bioaccel.__file__).resolve().parent.joinpath("data", *parts)


def _cached(name: str) -> Path:
    CACHE.mkdir(parents=True, exist_ok=True)
    return CACHE / name


def require_r_package(pkg: str):
    try:
        from bioaccel.rinterop import _ro

        ro = _ro()
    except Exception as exc:  # ImportError, or R failing to load
        unavailable(f"rpy2 is needed to read R data sets ({exc})")
    if not bool(ro.r(f'c(requireNamespace("{pkg}", quietly=TRUE))')[0]):
        unavailable(f"R package {pkg} is not installed (apt-get install r-cran-{pkg})")
    return ro


def woodmouse() -> Path:
    """ape's woodmouse: 15 cytochrome b sequences, 965 sites, with N's."""
    out = _cached("woodmouse.fasta")
    if not out.exists():
        ro = require_r_package("ape")
        tmp = str(out) + ".tmp"
        ro.r(
            f'library(ape); data(woodmouse); write.dna(woodmouse, "{tmp}", format="fasta", colsep="", nbcol=-1)'
        )
        os.replace(tmp, out)
    return out


def laurasiatherian() -> Path:
    """phangorn's Laurasiatherian: 47 mammals, 3179 sites (phyDat, written as FASTA)."""
    out = _cached("laurasiatherian.fasta")
    if not out.exists():
        ro = require_r_package("phangorn")
        tmp = str(out) + ".tmp"
        ro.r(
            f"library(phangorn); data(Laurasiatherian); "
            f'write.phyDat(Laurasiatherian, "{tmp}", format="fasta", colsep="", nbcol=-1)'
        )
        os.replace(tmp, out)
    return out


def flu_ha() -> Path:
    """mothur's influenza HA alignment (599 x 1701), from Debian's mothur package."""
    out = _debian_file("mothur", "usr/share/doc/mothur/HA.fasta.gz", "HA.fasta.gz")
    with gzip.open(out) as f:
        f.read()  # a damaged download fails here, not later
    return out


#: where Debian's r-cran-adegenet puts its data files
ADEGENET_FILES = "usr/lib/R/site-library/adegenet/files"


def adegenet_flu(name: str) -> Path:
    """One of R adegenet's real influenza gene sets (``pdH1N1-HA.fasta``, ``pdH1N1-NA.fasta``:
    433 genes each; ``usflu.fasta``: 80 HA genes): the installed package's file, else fetched
    from Debian's r-cran-adegenet."""
    installed = Path("/") / ADEGENET_FILES / name
    if installed.is_file():
        return installed
    return _debian_file("r-cran-adegenet", f"{ADEGENET_FILES}/{name}", name)


def ha_proteins(count: int | None = None) -> list[str]:
    """Real proteins: mothur's influenza HA genes translated by Biopython (about 566 aa),
    each cut at its first stop codon."""
    from Bio import SeqIO
    from Bio.Seq import Seq

    out = []
    with gzip.open(flu_ha(), "rt") as f:
        for rec in SeqIO.parse(f, "fasta"):
            nt = str(rec.seq).replace("-", "").upper()
            out.append(str(Seq(nt[: len(nt) // 3 * 3]).translate(to_stop=True)))
            if count is not None and len(out) == count:
                break
    return out


def random_alignment(
    rng: np.random.Generator,
    n: int,
    sites: int,
    *,
    divergence: float = 0.3,
    missing: float = 0.05,
    missing_letters: str = "N-RYKM?",
    gap_runs: int = 2,
) -> list[str]:
    """Seeded random alignment: a star phylogeny around an ancestor, with IUPAC codes,
    N, '?' and gap runs sprinkled in."""
    anc = rng.choice(list("ACGT"), sites)
    seqs = []
    for _ in range(n):
        x = anc.copy()
        mut = rng.random(sites) < divergence * rng.random()
        x[mut] = rng.choice(list("ACGT"), int(mut.sum()))
        msk = rng.random(sites) < missing
        if missing_letters:
            x[msk] = rng.choice(list(missing_letters), int(msk.sum()))
        for _ in range(gap_runs if missing_letters else 0):
            start = int(rng.integers(0, sites))
            x[start : start + int(rng.integers(1, max(2, sites // 10)))] = "-"
        seqs.append("".join(x))
    return seqs


def _debian_file(package: str, member: str, name: str) -> Path:
    """A file from a Debian package, fetched with apt-get download and cached."""
    out = _cached(name)
    if out.exists():
        return out
    if shutil.which("apt-get") is None or shutil.which("dpkg-deb") is None:
        unavailable(f"apt-get/dpkg-deb needed to fetch {name} from {package}")
    with tempfile.TemporaryDirectory() as tmp:
        res = subprocess.run(
            ["apt-get", "download", package],
            cwd=tmp,
            capture_output=True,
            text=True,
            env=dict(os.environ),
        )
        debs = list(Path(tmp).glob(f"{package}_*.deb"))
        if res.returncode != 0 or not debs:
            unavailable(f"apt-get download {package} failed: {res.stderr.strip()[-300:]}")
        subprocess.run(
            ["dpkg-deb", "-x", str(debs[0]), tmp + "/x"], check=True, env=dict(os.environ)
        )
        shutil.copy(Path(tmp) / "x" / member, str(out) + ".tmp")
        os.replace(str(out) + ".tmp", out)
    return out


def dada2_16s() -> Path:
    """dada2's ten_16s.100.fa.gz: 3,994 16S rRNA sequences (Debian r-bioc-dada2)."""
    return _debian_file(
        "r-bioc-dada2",
        "usr/lib/R/site-library/dada2/extdata/ten_16s.100.fa.gz",
        "ten_16s.100.fa.gz",
    )


def dada2_pacbio_16s() -> Path:
    """dada2's samPB.fastq.gz: 500 PacBio CCS reads of full-length 16S, 1,456-1,511 nt
    (Debian r-bioc-dada2)."""
    return _debian_file(
        "r-bioc-dada2",
        "usr/lib/R/site-library/dada2/extdata/samPB.fastq.gz",
        "samPB.fastq.gz",
    )


def dm3_upstream() -> Path:
    """Biostrings' dm3_upstream2000.fa.gz: 26,454 Drosophila upstream sequences of 2 kb
    (Debian r-bioc-biostrings)."""
    return _debian_file(
        "r-bioc-biostrings",
        "usr/lib/R/site-library/Biostrings/extdata/dm3_upstream2000.fa.gz",
        "dm3_upstream2000.fa.gz",
    )
