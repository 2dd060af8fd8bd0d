"""Check one sample's FASTQ before any tool reads it: readable FASTQ records, qualities
(Phred+33) no higher than quality.qmax, nucleotide letters, and for paired samples the same
number of reads with the same names in both files. One line names the sample, the file and
the record at fault; nothing is written then. Streams the reads (dnaio, cutadapt's reader)."""

import os
import re
import sys
import tempfile

import dnaio

sm = snakemake  # noqa: F821  (injected by Snakemake's script: directive)
sample = sm.wildcards.sample
files = list(sm.params.given)
qmax = int(sm.params.qmax)
log = open(sm.log[0], "w")  # the log, closed by fail() or at the end
bad_qual = re.compile(f"[^!-{re.escape(chr(33 + qmax))}]")
bad_base = re.compile(r"[^ACGTURYSWKMBDHVNacgturyswkmbdhvn]")


def fail(message):
    line = f"sample {sample!r}: {message}"
    print(line, file=log)
    log.close()
    print(line, file=sys.stderr)
    sys.exit(1)


def check(record, n, path):
    """One read: letters and qualities."""
    m = bad_base.search(record.sequence)
    if m:
        fail(
            f"{path}: read {n} ({record.name.split()[0]!r}): letter {m.group()!r} at position "
            f"{m.start() + 1} is not a nucleotide"
        )
    if record.qualities is None:
        fail(f"{path}: read {n} ({record.name.split()[0]!r}) has no qualities: FASTQ expected")
    m = bad_qual.search(record.qualities)
    if m:
        fail(
            f"{path}: read {n} ({record.name.split()[0]!r}): quality character {m.group()!r} "
            f"at position {m.start() + 1} is outside Phred+33 0..{qmax} (quality.qmax)"
        )


def pair_name(name):
    """The read name without its mate suffix (/1, /2) and comment."""
    head = name.split()[0] if name else ""
    return head[:-2] if head.endswith(("/1", "/2")) else head


def records(path, given):
    """The reads of one file; a format or read error names the file."""
    try:
        with dnaio.open(path, fileformat="fastq") as reader:
            yield from reader
    except dnaio.exceptions.FileFormatError as exc:
        fail(f"{given}: broken FASTQ: {exc}".replace("\n", " "))
    except (OSError, EOFError, UnicodeDecodeError) as exc:  # gzip errors, truncated files
        fail(f"{given}: cannot be read: {exc}".replace("\n", " "))


reads = 0
if len(files) == 1:
    for reads, record in enumerate(records(sm.input.reads[0], files[0]), start=1):
        check(record, reads, files[0])
else:
    it1 = records(sm.input.reads[0], files[0])
    it2 = records(sm.input.reads[1], files[1])
    while True:
        a, b = next(it1, None), next(it2, None)
        if a is None and b is None:
            break
        reads += 1
        if a is None or b is None:
            short, other = (files[0], files[1]) if a is None else (files[1], files[0])
            fail(
                f"mismatched pairs: {short} ends after {reads - 1} reads, {other} has more "
                "(fq1 and fq2 must hold the same reads in the same order)"
            )
        check(a, reads, files[0])
        check(b, reads, files[1])
        if pair_name(a.name) != pair_name(b.name):
            fail(
                f"mismatched pairs: read {reads} is {pair_name(a.name)!r} in {files[0]} "
                f"but {pair_name(b.name)!r} in {files[1]}"
            )
if reads == 0:
    fail(f"{files[0]} holds no reads")
out = sm.output[0]
fd, tmp = tempfile.mkstemp(dir=os.path.dirname(out) or ".", prefix=".validate-")
with os.fdopen(fd, "w") as f:
    f.write("sample\tfq1\tfq2\tlayout\treads\n")
    f.write(
        f"{sample}\t{files[0]}\t{files[1] if len(files) > 1 else ''}\t"
        f"{'paired' if len(files) > 1 else 'single'}\t{reads}\n"
    )
umask = os.umask(0)  # mkstemp makes 0600: the permissions a new file gets, as the others
os.umask(umask)
os.chmod(tmp, 0o666 & ~umask)
os.replace(tmp, out)
print(
    f"sample {sample}: {reads} reads ({'paired' if len(files) > 1 else 'single'}-end) OK", file=log
)
log.close()
