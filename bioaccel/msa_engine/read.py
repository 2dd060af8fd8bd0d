"""Reading a multiple alignment back: ``read_alignment(path)`` -> :class:`MultipleAlignment`."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import DuplicateIdError, SequenceFormatError
from ..sequences import get_alphabet, guess_alphabet
from .alignment import MultipleAlignment


def read_alignment(path: str | os.PathLike, alphabet: str = "auto") -> MultipleAlignment:
    """The alignment in ``path`` (aligned FASTA, Clustal, Stockholm, PHYLIP, NEXUS; gzip
    too; the format is sniffed), rows in file order. ``.`` reads as a gap, as in A2M/Stockholm
    insert columns. ``alphabet``: protein, dna, rna or auto (DNA when every letter is a
    nucleotide code).

    Raises
    ------
    SequenceFormatError
        No rows, repeated ids, or rows of different lengths (naming the row and both widths).
    """
    from ..sequences import parse_records, read_text_file, sniff_format

    path = Path(path)
    text = read_text_file(path)
    records = parse_records(text, sniff_format(text, path), path)
    if not records:
        raise SequenceFormatError(f"{path}: no aligned sequences found")
    ids = [r[0] for r in records]
    rows = [r[1].replace(".", "-") for r in records]
    seen: dict[str, int] = {}
    for k, i in enumerate(ids):
        if i in seen:
            raise DuplicateIdError(f"{path}: row {k + 1}: id {i!r} repeats row {seen[i] + 1}")
        seen[i] = k
    width = len(rows[0])
    for k, row in enumerate(rows):
        if len(row) != width:
            raise SequenceFormatError(
                f"{path}: row {k + 1} ({ids[k]!r}) has {len(row)} columns, "
                f"row 1 ({ids[0]!r}) has {width}: not an alignment"
            )
    if str(alphabet).lower() == "auto":
        alpha = guess_alphabet("".join(rows).upper().encode("ascii", "replace"))
    else:
        alpha = get_alphabet(alphabet)
    return MultipleAlignment(ids, rows, alpha)
