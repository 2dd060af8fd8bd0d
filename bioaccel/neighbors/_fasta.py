"""A fast path for plain (or gzip) FASTA files, as sequencing runs give them: one pass in
C++ (``_native.parse_fasta``) instead of Biopython's parser, the same SeqBatch as
:func:`bioaccel.read_sequences`. Anything but the simple case (text before the first
record, an empty id, control bytes, non-ASCII text, letters outside the alphabet, another
format) goes to :func:`bioaccel.read_sequences`, which reads it or names the fault."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import numpy as np


def read_fasta(path: str | os.PathLike, alphabet="auto"):
    from .._core.native import load_native
    from ..sequences import SeqBatch, get_alphabet, guess_alphabet, read_sequences

    path = Path(path)
    general = lambda: read_sequences(path, alphabet=alphabet)  # noqa: E731
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError:
        return general()
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError):
            return general()
    if not raw.lstrip()[:1] == b">":
        return general()
    parsed = load_native().parse_fasta(raw)
    del raw
    if parsed is None:
        return general()
    letters, offsets, id_blob, per_letter, per_nuc = parsed
    ids = id_blob.decode("ascii").split("\n")
    source = str(path)
    alpha = (
        guess_alphabet(letters, offsets, ids, source, shares=(per_letter, per_nuc))
        if str(alphabet).lower() == "auto"
        else get_alphabet(alphabet)
    )
    codes = alpha.table[np.frombuffer(letters, dtype=np.uint8)]
    del letters
    if codes.size and int(codes.max()) >= alpha.size:
        return general()  # a letter outside the alphabet: the general reader names it
    return SeqBatch(ids, codes, offsets, alpha, source)
