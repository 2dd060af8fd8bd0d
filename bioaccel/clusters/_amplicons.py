"""Amplicons in: a dereplicated FASTA file with abundance annotations, read as swarm reads it.

- The header is the text after ``>`` up to the first space (tab, CR or end of line), as in
  swarm; the abundance is the first ``size=N`` annotation at the header's start or after a
  ``;`` and followed by ``;`` or the end (``a;size=12``, ``a;size=12;``, ``size=12;a``), as
  ``swarm -z`` and vsearch write it. Its ``id`` is the header without the annotation
  (``a;size=3;b=1`` -> ``a;b=1``), as swarm prints it in its statistics.
- A missing annotation is refused, as swarm refuses it without ``-a``; with
  ``default_abundance=N`` (swarm's ``-a N``) such a record has abundance N and is written
  ``header;size=N;``. A header holding ``size=`` that is not a valid annotation, or an
  abundance of 0, is refused either way (never taken as missing).
- Sequences: A, C, G, T and U (U as T), any case. With ``differences="edit"`` the IUPAC
  codes (``RYSWKMBDHVN``) are letters of their own: N aligned to N is a match, N aligned
  to A (or to R) a difference. With ``differences="swarm"`` they are refused, as swarm
  refuses them. Gaps, protein letters and other bytes are refused, naming the record, the
  1-based position and the letter. Empty sequences and empty ids are refused.
- Amplicons must be dereplicated (swarm refuses identical sequences): the two records of
  a repeated sequence are named, with the command that dereplicates.

Amplicons are kept in swarm's order: abundance decreasing, then header in byte order
(swarm's ``strcmp``), so node ``k`` of every graph is the ``k``-th amplicon in that order.
"""

from __future__ import annotations

import gzip
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import AlphabetError, DuplicateIdError, SequenceFormatError
from ..sequences import DNA, SeqBatch

DEREPLICATE_HINT = "dereplicate first, e.g. `vsearch --derep_fulllength in.fa --sizein --sizeout --output derep.fa`"

#: codes of the DNA alphabet (0-3 A C G T, 4-14 IUPAC) for every byte; 255 elsewhere
_TABLE = np.full(256, 255, dtype=np.uint8)
for _code, _letter in enumerate("ACGTRYSWKMBDHVN"):
    _TABLE[ord(_letter)] = _TABLE[ord(_letter.lower())] = _code
_TABLE[ord("U")] = _TABLE[ord("u")] = 3
_LETTERS = np.frombuffer(b"ACGTRYSWKMBDHVN", dtype=np.uint8)
_TABLE_BYTES = _TABLE.tobytes()
_TABLE_BYTES_SWARM = np.where(_TABLE <= 3, _TABLE, 255).astype(np.uint8).tobytes()

_SIZE = re.compile(rb"(?:^|;)size=([0-9]+)(?:;|$)")
_MAX_ABUNDANCE = 2**63 - 1


@dataclass(frozen=True, eq=False)
class Amplicons:
    """Dereplicated amplicons in swarm's order (abundance decreasing, header ascending).

    Attributes
    ----------
    raw_headers : list of str
        The headers as read (swarm sorts and breaks ties on these).
    headers : list of str
        As written in outputs: the header as read, or ``header;size=N;`` where the
        abundance came from ``default_abundance``.
    ids : list of str
        Headers without their abundance annotation.
    abundance : numpy.ndarray of uint64
    batch : SeqBatch
        The sequences (DNA codes), in this order; ``batch.ids`` are ``ids``.
    record : numpy.ndarray of int64
        The 0-based record number in the input of each amplicon.
    """

    raw_headers: list[str]
    headers: list[str]
    ids: list[str]
    abundance: np.ndarray
    batch: SeqBatch
    record: np.ndarray
    source: str

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.batch.offsets)

    def sequence(self, k: int) -> str:
        """Amplicon ``k`` in upper case (U written T), as swarm writes seeds."""
        b = self.batch
        return _LETTERS[b.codes[b.offsets[k] : b.offsets[k + 1]]].tobytes().decode()


def with_abundance(raw_header: str, abundance: int) -> str:
    """The header with its annotation set to ``abundance``, as swarm writes seeds
    (``a;size=3`` -> ``a;size=N;``; a header without one gets ``;size=N;`` appended)."""
    h = raw_header.encode()
    m = _SIZE.search(h)
    if m is None:
        start = end = len(h)
    else:
        start = m.start() if h[m.start() : m.start() + 1] == b";" else 0
        end = m.end()
    sep = b";" if start > 0 else b""
    return (h[:start] + sep + b"size=%d;" % abundance + h[end:]).decode()


def _id_without_size(header: bytes, m: re.Match) -> bytes:
    start = m.start() if header[m.start() : m.start() + 1] == b";" else 0
    end = m.end()
    head, tail = header[:start], header[end:]
    if start > 0 and end < len(header):
        return head + b";" + tail
    return head + tail


def _read_raw(source) -> tuple[bytes, str]:
    if isinstance(source, (bytes, bytearray)):
        return bytes(source), "<bytes>"
    if str(source) == "-":
        return sys.stdin.buffer.read(), "<stdin>"
    path = Path(source)
    if path.is_dir():
        raise SequenceFormatError(f"{path}: is a directory; expected a FASTA file of amplicons")
    with open(path, "rb") as f:  # OSError names the path (missing file, permission)
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise SequenceFormatError(f"{path}: damaged gzip file: {exc}") from None
    return raw, str(path)


def read_amplicons(
    source, *, default_abundance: int | None = None, differences: str = "edit"
) -> Amplicons:
    """Read amplicons (a FASTA path, plain or gzip; ``-`` for stdin; bytes), check them and
    put them in swarm's order. See the module docstring for the rules.

    Raises
    ------
    SequenceFormatError, AlphabetError, DuplicateIdError (ValueError)
        One line naming the file, the record (number, line and header) and what was expected.
    """
    if default_abundance is not None and not (1 <= int(default_abundance) <= _MAX_ABUNDANCE):
        raise ValueError(f"default abundance {default_abundance!r}: expected a positive integer")
    raw, name = _read_raw(source)
    if b"\r" in raw:
        raw = raw.replace(b"\r", b"")
    if not raw.strip():
        raise SequenceFormatError(f"{name}: file is empty; expected FASTA records of amplicons")
    body = raw.lstrip(b"\n")
    skipped = len(raw) - len(body)  # leading blank lines
    if not body.startswith(b">"):
        lineno = skipped + 1
        shown = body.split(b"\n", 1)[0][:40].decode("utf-8", "replace")
        raise SequenceFormatError(
            f"{name}: line {lineno}: expected a FASTA header ('>'), got {shown!r}; "
            "amplicons are read from FASTA"
        )
    records = body[1:].split(b"\n>")
    del body
    n = len(records)
    heads = [r.partition(b"\n") for r in records]
    headers = [h[0].split(None, 1)[0] if h[0][:1] not in (b"", b" ", b"\t") else b"" for h in heads]
    seqs = [h[2].replace(b"\n", b"") for h in heads]
    del heads

    def line_of(k: int) -> int:
        return skipped + 1 + sum(r.count(b"\n") + 1 for r in records[:k])

    def where(k: int) -> str:
        shown = headers[k].decode("utf-8", "replace")
        return f"{name}: record {k + 1} (line {line_of(k)}, {shown!r})"

    # abundance annotations
    abundance = np.empty(n, dtype=np.uint64)
    ids: list[bytes] = []
    shown_headers: list[bytes] = []
    missing: list[int] = []
    search = _SIZE.search
    for k, h in enumerate(headers):
        m = search(h) if h else None
        if m is None:
            if not h:
                raise SequenceFormatError(
                    f"{name}: record {k + 1} (line {line_of(k)}) has an empty header; expected an id"
                )
            if b"size=" in h:
                raise SequenceFormatError(
                    f"{where(k)}: malformed abundance annotation; expected ';size=N' with N a "
                    "positive integer, at the header's end or followed by ';'"
                )
            if default_abundance is None:
                missing.append(k)
                ids.append(h)
                shown_headers.append(h)
                continue
            abundance[k] = int(default_abundance)
            ids.append(h)
            shown_headers.append(h + b";size=%d;" % int(default_abundance))
            continue
        value = int(m.group(1))
        if value <= 0 or value > _MAX_ABUNDANCE:
            raise SequenceFormatError(
                f"{where(k)}: abundance {m.group(1).decode()} is out of range; expected a "
                f"positive integer up to {_MAX_ABUNDANCE}"
            )
        abundance[k] = value
        ident = _id_without_size(h, m)
        if not ident:
            raise SequenceFormatError(
                f"{where(k)}: the header holds only an abundance; expected an id before or after it"
            )
        ids.append(ident)
        shown_headers.append(h)
    if missing:
        k = missing[0]
        raise SequenceFormatError(
            f"{where(k)}: no abundance annotation ({len(missing)} of {n} records lack one); "
            "expected ';size=N' in the header (as `vsearch --derep_fulllength --sizeout` "
            "writes it), or give a default abundance (--default-abundance 1, as swarm's -a)"
        )
    # duplicate ids
    if len(set(ids)) != n:
        first: dict[bytes, int] = {}
        for k, ident in enumerate(ids):
            j = first.setdefault(ident, k)
            if j != k:
                raise DuplicateIdError(
                    f"{name}: records {j + 1} (line {line_of(j)}) and {k + 1} (line "
                    f"{line_of(k)}) share the id {ident.decode('utf-8', 'replace')!r}; "
                    "expected unique ids"
                )
    # sequences: empty, alphabet, dereplicated
    for k, sq in enumerate(seqs):
        if not sq:
            raise SequenceFormatError(f"{where(k)}: empty sequence; expected nucleotides")
    table = _TABLE_BYTES if differences != "swarm" else _TABLE_BYTES_SWARM
    coded = [sq.translate(table) for sq in seqs]
    joined = b"".join(coded)
    bad = joined.find(b"\xff")
    if bad >= 0:
        lengths = np.fromiter((len(c) for c in coded), dtype=np.int64, count=n)
        offsets = np.r_[0, np.cumsum(lengths)]
        k = int(np.searchsorted(offsets, bad, side="right") - 1)
        p = bad - int(offsets[k])
        letter = chr(seqs[k][p])
        is_iupac = _TABLE[seqs[k][p]] != 255
        expected = (
            "A, C, G, T or U (swarm's alphabet: --differences swarm refuses IUPAC codes; "
            "--differences edit counts them as letters of their own)"
            if differences == "swarm"
            else "nucleotides A, C, G, T, U or IUPAC codes (RYSWKMBDHVN)"
        )
        what = "IUPAC code" if is_iupac else "gap" if letter in "-." else "protein or other letter"
        raise AlphabetError(f"{where(k)}: position {p + 1}: {what} {letter!r}; expected {expected}")
    del joined
    if len(set(coded)) != n:
        seen: dict[bytes, int] = {}
        for k, c in enumerate(coded):
            j = seen.setdefault(c, k)
            if j != k:
                hj, hk = (headers[x].decode("utf-8", "replace") for x in (j, k))
                raise SequenceFormatError(
                    f"{name}: records {j + 1} ({hj!r}, line {line_of(j)}) and {k + 1} ({hk!r}, "
                    f"line {line_of(k)}) hold the same sequence; amplicons must be "
                    "dereplicated: " + DEREPLICATE_HINT
                )
    # swarm's order: abundance decreasing, then the header as read (before any appended
    # default abundance) in byte order (strcmp)
    hdr = np.array(headers, dtype=np.bytes_)
    order = np.argsort(hdr, kind="stable")
    neg = -abundance.astype(np.int64)
    order = order[np.argsort(neg[order], kind="stable")]
    del hdr
    order_l = order.tolist()
    codes = np.frombuffer(b"".join([coded[k] for k in order_l]), dtype=np.uint8)
    lengths = np.fromiter((len(coded[k]) for k in order_l), dtype=np.int64, count=n)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    decoded_ids = [ids[k].decode("utf-8", "replace") for k in order_l]
    batch = SeqBatch(ids=decoded_ids, codes=codes, offsets=offsets, alphabet=DNA, source=name)
    return Amplicons(
        raw_headers=[headers[k].decode("utf-8", "replace") for k in order_l],
        headers=[shown_headers[k].decode("utf-8", "replace") for k in order_l],
        ids=decoded_ids,
        abundance=abundance[order],
        batch=batch,
        record=order.astype(np.int64),
        source=name,
    )


def amplicons_from_records(records, **kw) -> Amplicons:
    """:func:`read_amplicons` of ``(header, sequence)`` pairs (or a dict header -> sequence)."""
    items = records.items() if isinstance(records, dict) else records
    text = "".join(f">{h}\n{s}\n" for h, s in items)
    return read_amplicons(text.encode(), **kw)


def is_path(x) -> bool:
    return isinstance(x, (str, os.PathLike))
