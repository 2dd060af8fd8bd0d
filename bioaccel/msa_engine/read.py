"""Reading sequences and alignments for the MSA engine: ``read_alignment(path)`` ->
:class:`MultipleAlignment`, and the records of a file with their whole header lines.

Header lines: a FASTA header ``>Candida albicans 1`` is the id ``Candida`` (its first word)
and the description ``albicans 1``; the engine keeps the header line as written (every space
and tab, ``>Homo  sapiens`` too) and writes it back byte for byte, as MAFFT, MUSCLE and Clustal
Omega do. Rows are told apart by their whole header line: two
records ``>Homo sapiens`` and ``>Homo neanderthalensis`` are two rows (their ids are both
``Homo``), and only a header line that repeats is refused as a duplicate. Formats that hold
only an id (Clustal, PHYLIP, Stockholm) need the ids to be distinct when written.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

from ..errors import DuplicateIdError, SequenceFormatError
from ..sequences import get_alphabet, guess_alphabet
from .alignment import MultipleAlignment


def split_header(header: str) -> tuple[str, str]:
    """(id, description) of a header line: the first word, and the rest ("" when none)."""
    parts = header.strip().split(None, 1)
    if not parts:
        return "", ""
    return parts[0], (parts[1].strip() if len(parts) > 1 else "")


class SequenceText(NamedTuple):
    """Sequence text already read (what stdin held), and the name messages give it
    (``<stdin>``): read as a file is, header lines whole."""

    text: str
    source: str


def parse_records(path: str | os.PathLike | SequenceText, format: str | None = None):
    """(ids, raw residue strings, descriptions, format, header lines) of a sequence or
    alignment file (or of :class:`SequenceText`), read by the readers' one parser
    (:func:`bioaccel.read_sequences`'s); FASTA descriptions and header lines (as written,
    without the ``>``) from the file's header lines; the ids stand for the header lines of
    the formats that hold only ids."""
    from ..sequences import SEQUENCE_FORMATS, read_text_file, sniff_format
    from ..sequences import parse_records as parse_text

    if format is not None and str(format).lower() not in SEQUENCE_FORMATS:
        raise SequenceFormatError(
            f"unknown sequence format {format!r}; expected one of {sorted(SEQUENCE_FORMATS)}"
        )
    if isinstance(path, SequenceText):
        text, path = path.text, Path(path.source)
        if not text.strip():
            raise SequenceFormatError(f"{path}: file is empty; expected sequence records")
    else:
        path = Path(path)
        text = read_text_file(path)
    fmt = str(format).lower() if format is not None else sniff_format(text, path)
    records = parse_text(text, fmt, path)
    ids = [r[0] for r in records]
    descriptions = [""] * len(records)
    headers = list(ids)
    if fmt == "fasta":
        titles = [line[1:] for line in text.splitlines() if line.startswith(">")]
        if len(titles) == len(records):
            own = [split_header(t)[0] == i for t, i in zip(titles, ids)]
            descriptions = [split_header(t)[1] if o else "" for t, o in zip(titles, own)]
            headers = [t if o else i for t, i, o in zip(titles, ids, own)]
    return ids, [r[1] for r in records], descriptions, fmt, headers


def check_unique_headers(ids, headers, source: str | None) -> None:
    """Refuse a header line that repeats (naming both records); ids alone may repeat."""
    from ..errors import DuplicateIdError

    where = f"{source}: " if source else ""
    seen: dict[str, int] = {}
    for k, (i, h) in enumerate(zip(ids, headers)):
        if i == "":
            raise SequenceFormatError(f"{where}record {k + 1} has an empty id")
        if h in seen:
            raise DuplicateIdError(
                f"{where}duplicate header {h!r}: record {seen[h] + 1} and record {k + 1}; "
                "header lines must be unique"
            )
        seen[h] = k


def read_alignment(path: str | os.PathLike, alphabet: str = "auto") -> MultipleAlignment:
    """The alignment in ``path`` (aligned FASTA, Clustal, Stockholm, PHYLIP, NEXUS; gzip
    too; the format is sniffed), rows in file order, FASTA header lines kept whole (id and
    description). ``.`` reads as a gap, as in A2M/Stockholm insert columns. ``alphabet``:
    protein, dna, rna or auto (the readers' rule: :func:`bioaccel.guess_alphabet`).

    Raises
    ------
    SequenceFormatError
        No rows, a repeated header line, or rows of different lengths (naming the row and
        both widths).
    """
    path = Path(path)
    ids, raw, descriptions, _, headers = parse_records(path)
    if not ids:
        raise SequenceFormatError(f"{path}: no aligned sequences found")
    rows = [r.replace(".", "-") for r in raw]
    seen: dict[str, int] = {}
    for k, h in enumerate(headers):
        if h in seen:
            raise DuplicateIdError(f"{path}: row {k + 1}: id {h!r} repeats row {seen[h] + 1}")
        seen[h] = k
    width = len(rows[0])
    for k, row in enumerate(rows):
        if len(row) != width:
            raise SequenceFormatError(
                f"{path}: row {k + 1} ({ids[k]!r}) has {len(row)} columns, "
                f"row 1 ({ids[0]!r}) has {width}: not an alignment"
            )
    if str(alphabet).lower() == "auto":
        alpha = guess_alphabet("".join(rows).upper().replace("-", "").encode("ascii", "replace"))
    else:
        alpha = get_alphabet(alphabet)
    return MultipleAlignment(ids, rows, alpha, descriptions=descriptions, header_lines=headers)
