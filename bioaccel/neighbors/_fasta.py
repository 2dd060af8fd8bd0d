"""A fast path for plain (or gzip) FASTA files, as sequencing runs give them: one pass in
C++ (``_native.parse_fasta``) instead of Biopython's parser, the same SeqBatch as
:func:`bioaccel.read_sequences`. Anything but the simple case (text before the first
record, an empty id, control bytes, non-ASCII text, letters outside the alphabet, another
format) goes to :func:`bioaccel.read_sequences`, which reads it or names the fault."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

from .._core import magic_of


def read_fasta(path: str | os.PathLike, alphabet="auto"):
    from .._core import load_native
    from ..sequences import SeqBatch, get_alphabet, guess_alphabet, read_sequences

    path = Path(path)
    general = lambda: read_sequences(path, alphabet=alphabet)  # noqa: E731
    try:
        with open(path, "rb") as f:
            head = f.read(1 << 16)
        size = path.stat().st_size
    except OSError:
        return general()
    native = load_native()
    if magic_of(head[:2]) == "gzip":
        try:
            raw = gzip.decompress(path.read_bytes())
        except (OSError, EOFError):
            return general()
        parsed = native.parse_fasta(raw) if raw.lstrip()[:1] == b">" else None
        del raw
    elif head.lstrip()[:1] == b">" and path.is_file():
        parsed = native.parse_fasta_file(str(path), size)  # in blocks: no copy of the text
    else:
        parsed = None
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
    if native.encode_in_place(letters, alpha.table, alpha.size) >= 0:
        return general()  # a letter outside the alphabet: the general reader names it
    return SeqBatch(ids, letters, offsets, alpha, source)
