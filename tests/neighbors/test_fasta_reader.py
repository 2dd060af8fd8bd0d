"""The neighbours' one-pass FASTA reader gives read_sequences' SeqBatch (or its error) on
every kind of FASTA text, the simple case and the ones it hands over."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from bioaccel.neighbors import read_fasta
from bioaccel.sequences import read_sequences

TEXTS = {
    "plain": b">a;size=3\nACGT\n>b desc here\nACGA\n",
    "multiline": b">a\nAC\nGT\n\n>b\nAC GA \n>c\n\n",
    "lower-crlf": b">a x\r\nacgtn\r\n>b\r\nACGTR\r\n",
    "comments": b"\n\n;old comment\n>a\nACGT\n;mid\nAAAA\n>b\nTTTT\n",
    "protein": b">p1\nMKVLEAGHWQ\n>p2\nMKILDAGW\n",
    "rna": b">r\nACGUUGCA\n>s\nACGU\n",
    "bad-letter": b">a\nACGT\n>b\nAC!T\n",
    "tab-inside": b">a\nAC\tGT\n",
    "empty-id": b">\nACGT\n",
    "text-first": b"hello\n>a\nACGT\n",
    "bom": b"\xef\xbb\xbf>a\nACGT\n",
    "latin1-header": b">caf\xe9\nACGT\n",
    "duplicate": b">a\nACGT\n>a\nACGA\n",
    "fastq": b"@a\nACGT\n+\nIIII\n",
}


def outcome(fn, path, **kw):
    try:
        b = fn(path, **kw)
    except Exception as exc:  # the error itself is the outcome
        return type(exc).__name__, str(exc)
    return b.ids, b.codes.tolist(), b.offsets.tolist(), b.alphabet.name, b.source


@pytest.mark.parametrize("name", sorted(TEXTS))
@pytest.mark.parametrize("packed", ["plain", "gzip"])
def test_same_batch_or_error_as_read_sequences(tmp_path, name, packed):
    data = TEXTS[name]
    path = tmp_path / "x.fa"
    path.write_bytes(gzip.compress(data) if packed == "gzip" else data)
    assert outcome(read_fasta, path) == outcome(read_sequences, path)
    assert outcome(read_fasta, path, alphabet="protein") == outcome(
        read_sequences, path, alphabet="protein"
    )


def test_a_missing_file_is_the_readers_error(tmp_path):
    assert outcome(read_fasta, tmp_path / "no.fa") == outcome(read_sequences, tmp_path / "no.fa")


def test_simulated_amplicons(tmp_path):
    rng = np.random.default_rng(1)
    lines = []
    for k in range(500):
        s = "".join(rng.choice(list("ACGTN"), int(rng.integers(0, 300))))
        lines.append(f">u{k};size={k + 1};\n{s}\n")
    path = tmp_path / "a.fa"
    path.write_text("".join(lines))
    assert outcome(read_fasta, path) == outcome(read_sequences, path)


def test_lines_across_the_readers_blocks(tmp_path):
    """Over 4 MiB (the C++ reader's block), lines of every width, CR LF line ends."""
    rng = np.random.default_rng(2)
    parts = []
    size = 0
    k = 0
    while size < 5 << 20:
        s = "".join(rng.choice(list("ACGTN"), int(rng.integers(1, 900))))
        width = int(rng.integers(7, 200))
        body = "\r\n".join(s[x : x + width] for x in range(0, len(s), width))
        rec = f">r{k} some description\r\n{body}\r\n"
        parts.append(rec)
        size += len(rec)
        k += 1
    path = tmp_path / "big.fa"
    path.write_text("".join(parts), newline="")
    assert outcome(read_fasta, path) == outcome(read_sequences, path)
