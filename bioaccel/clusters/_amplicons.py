"""Amplicons in: a dereplicated FASTA file with abundance annotations, read as swarm reads it.

- The header is the text after ``>`` up to the first space (tab, CR or end of line), as in
  swarm; the abundance is the first ``size=N`` annotation at the header's start or after a
  ``;`` and followed by ``;`` or the end (``a;size=12``, ``a;size=12;``, ``size=12;a``), as
  ``swarm -z`` and vsearch write it. Its ``id`` is the header without the annotation
  (``a;size=3;b=1`` -> ``a;b=1``), as swarm prints it in its statistics. With
  ``abundance_annotation="underscore"`` the abundance is instead a ``_N`` suffix, swarm's
  default annotation (``a_12``: id ``a``, abundance 12; swarm without ``-z``), and seeds are
  written ``a_MASS``.
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
import io
import os
import re
import stat
import sys
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._core import magic_of
from ..errors import AlphabetError, DuplicateIdError, SequenceFormatError
from ..sequences import DNA, SeqBatch

DEREPLICATE_HINT = "dereplicate first, e.g. `vsearch --derep_fulllength in.fa --sizein --sizeout --output derep.fa`"

#: codes of the DNA alphabet (0-3 A C G T, 4-14 IUPAC) for every byte; 255 elsewhere
_TABLE = np.full(256, 255, dtype=np.uint8)
for _code, _letter in enumerate("ACGTRYSWKMBDHVN"):
    _TABLE[ord(_letter)] = _TABLE[ord(_letter.lower())] = _code
_TABLE[ord("U")] = _TABLE[ord("u")] = 3
#: the letter of each code (what Amplicons.batch.codes stand for)
CODE_LETTERS = "ACGTRYSWKMBDHVN"
_LETTERS = np.frombuffer(CODE_LETTERS.encode(), dtype=np.uint8)
_TABLE_SWARM = np.where(_TABLE <= 3, _TABLE, 255).astype(np.uint8)

_SIZE = re.compile(rb"(?:^|;)size=([0-9]+)(?:;|$)")
_UNDERSCORE = re.compile(rb"_([0-9]+)$")
#: how headers carry abundances: ``;size=N`` (vsearch, swarm -z) or a ``_N`` suffix (swarm)
ABUNDANCE_ANNOTATIONS = ("size", "underscore")
_MAX_ABUNDANCE = 2**63 - 1


#: how header bytes that are not UTF-8 are held (as lone surrogates) and written back: byte
#: for byte, as swarm writes its headers (a Latin-1 '\xe9' stays one byte '\xe9')
SURROGATES = "surrogateescape"


class TextLines(Sequence[str]):
    """Lines of one UTF-8 text, decoded when asked for: a million headers held as one bytes
    object (about 16 MB) instead of a million Python strings (about 80 MB). ``list(lines)``
    decodes them all at once (fast); ``lines[k]`` decodes one."""

    __slots__ = ("_text_", "_starts_", "_make")

    def __init__(self, text: bytes | None = None, make=None):
        """``text``: the lines, each followed by a newline; or ``make``: a function that
        returns that text, called when the lines are first read (ids nobody reads are never
        made)."""
        self._text_: bytes | None = None
        self._starts_: np.ndarray | None = None
        self._make = make
        if text is not None:
            self._set(text)

    def _set(self, text: bytes) -> None:
        if text and not text.endswith(b"\n"):
            raise ValueError("TextLines: each line must end with a newline")
        ends = np.flatnonzero(np.frombuffer(text, dtype=np.uint8) == 10)
        # 4 bytes a line while the text is under 4 GiB
        kind = np.uint32 if len(text) < 2**32 else np.int64
        self._starts_ = np.concatenate(([0], ends + 1)).astype(kind)
        self._text_ = text

    @property
    def _text(self) -> bytes:
        if self._text_ is None:
            self._set(self._make())
        assert self._text_ is not None
        return self._text_

    @property
    def _starts(self) -> np.ndarray:
        if self._starts_ is None:
            self._set(self._make())
        assert self._starts_ is not None
        return self._starts_

    def __len__(self) -> int:
        return len(self._starts) - 1

    def __reduce__(self):
        return (TextLines, (self._text,))  # made, if not yet, to be pickled

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(len(self)))]
        n = len(self)
        k = int(k)
        if not -n <= k < n:
            raise IndexError(f"line {k} of {n}")
        k %= n
        a, b = int(self._starts[k]), int(self._starts[k + 1])
        return self._text[a : b - 1].decode("utf-8", SURROGATES)

    def __iter__(self):
        return iter(self._text.decode("utf-8", SURROGATES).split("\n")[:-1])

    def gather(self, indices) -> tuple[np.ndarray, np.ndarray]:
        """The bytes of lines ``indices`` (in that order), each followed by its newline, as
        one uint8 array, and where each line's newline lies in it: for writers that stream a
        million lines without a Python string each."""
        idx = np.asarray(indices, dtype=np.int64)
        st = self._starts[idx].astype(np.int64)
        lens = self._starts[idx + 1].astype(np.int64) - st
        ends = np.cumsum(lens)
        pos = np.repeat(st - (ends - lens), lens) + np.arange(int(ends[-1]) if len(ends) else 0)
        return np.frombuffer(self._text, dtype=np.uint8)[pos], ends - 1

    def __eq__(self, other) -> bool:
        if isinstance(other, TextLines):
            return self._text == other._text
        if isinstance(other, (list, tuple)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"TextLines({len(self)} lines)"


@dataclass(frozen=True, eq=False)
class Amplicons:
    """Dereplicated amplicons in swarm's order (abundance decreasing, header ascending).

    Attributes
    ----------
    raw_headers : sequence of str (:class:`TextLines`)
        The headers as read (swarm sorts and breaks ties on these).
    headers : sequence of str
        As written in outputs: the header as read, or ``header;size=N;`` (``header_N`` with
        the underscore annotation) where the abundance came from ``default_abundance``.
    ids : sequence of str (:class:`TextLines`)
        Headers without their abundance annotation.
    abundance : numpy.ndarray of uint64
    batch : SeqBatch
        The sequences (DNA codes), in this order; ``batch.ids`` are ``ids``. When every
        letter is A, C, G, T or U the codes are decoded from ``letters`` when first read.
    record : numpy.ndarray of int64
        The 0-based record number in the input of each amplicon.
    annotation : str
        How the headers carry abundances (:data:`ABUNDANCE_ANNOTATIONS`).
    letters : PackedLetters or None
        The sequences 2 bits a letter (the native reader's), or None when some letter is an
        IUPAC code (then only ``batch`` holds them).
    """

    raw_headers: Sequence[str]
    headers: Sequence[str]
    ids: Sequence[str]
    abundance: np.ndarray
    batch: SeqBatch
    record: np.ndarray
    source: str
    annotation: str = "size"
    letters: object = None

    def __len__(self) -> int:
        return len(self.abundance)

    @property
    def lengths(self) -> np.ndarray:
        return self.batch.lengths

    def sequence(self, k: int) -> str:
        """Amplicon ``k`` in upper case (U written T), as swarm writes seeds."""
        return _LETTERS[self.batch[k]].tobytes().decode()


def with_abundance(raw_header: str, abundance: int, annotation: str = "size") -> str:
    """The header with its annotation set to ``abundance``, as swarm writes seeds
    (``a;size=3`` -> ``a;size=N;``; a header without one gets ``;size=N;`` appended; with
    the underscore annotation ``a_3`` -> ``a_N``, and ``_N`` appended)."""
    h = raw_header.encode("utf-8", SURROGATES)
    if annotation == "underscore":
        u = _UNDERSCORE.search(h)
        return (h[: u.start()] if u else h).decode("utf-8", SURROGATES) + f"_{abundance}"
    m = _SIZE.search(h)
    if m is None:
        start = end = len(h)
    else:
        start = m.start() if h[m.start() : m.start() + 1] == b";" else 0
        end = m.end()
    sep = b";" if start > 0 else b""
    return (h[:start] + sep + b"size=%d;" % abundance + h[end:]).decode("utf-8", SURROGATES)


#: bytes read (or decompressed) at a time: the parse never holds the whole text
_PIECE = 1 << 23


def _refuse_cr_only(piece: bytes, name: str) -> None:
    """Refuse a text whose lines end in CR alone (classic Mac OS): read as one line it would
    be refused as an empty sequence, naming nothing useful."""
    if b"\r" in piece and b"\n" not in piece:
        raise SequenceFormatError(
            f"{name}: lines end in CR only (classic Mac OS line endings); expected LF or CRLF, "
            "e.g. convert with `tr '\\r' '\\n' < in.fa > out.fa`"
        )


class _FirstPiece:
    """Passes pieces to the reader, checking the line endings of the text's start (up to its
    first LF, at most 64 KiB, however the pieces are cut); :meth:`done` at the end."""

    HEAD = 1 << 16

    def __init__(self, reader, name: str):
        self.reader, self.name, self.head, self.decided = reader, name, b"", False

    def feed(self, piece) -> None:
        if not self.decided and len(piece):
            self.head += bytes(piece[: self.HEAD - len(self.head)])
            if b"\n" in self.head:
                self.decided = True
            elif len(self.head) >= self.HEAD:
                self.done()
        self.reader.feed(piece)

    def done(self) -> None:
        if not self.decided:
            self.decided = True
            _refuse_cr_only(self.head, self.name)

    def reserve(self, size) -> None:
        self.reader.reserve(size)


def _feed(reader, source) -> str:
    """Feed ``source`` to the parse piece by piece (a gzip file decompressed as it is read);
    returns its name for messages."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        name = "<bytes>"
        checked = _FirstPiece(reader, name)
        checked.reserve(len(source))
        checked.feed(source)
    elif str(source) == "-":
        name = "<stdin>"
        checked = _FirstPiece(reader, name)
        _feed_stream(checked, sys.stdin.buffer, name)
    else:
        path = Path(source)
        if path.is_dir():
            raise SequenceFormatError(f"{path}: is a directory; expected a FASTA file of amplicons")
        name = str(path)
        checked = _FirstPiece(reader, name)
        with open(path, "rb") as f:  # OSError names the path (missing file, permission)
            _feed_stream(checked, f, name)
    checked.done()
    return name


def _feed_pieces(reader, stream) -> None:
    """The stream's bytes to the reader through one buffer of :data:`_PIECE` bytes."""
    buffer = bytearray(_PIECE)
    view = memoryview(buffer)
    while size := stream.readinto(buffer):
        reader.feed(view[:size])


def _feed_stream(reader, stream, name: str) -> None:
    if not hasattr(stream, "peek"):  # e.g. a BytesIO standing in for stdin
        stream = io.BufferedReader(stream)
    gzipped = magic_of(stream.peek(2)[:2]) == "gzip"
    if not gzipped:
        try:  # a plain file's size: the letters' buffer sized once (see AmpliconReader)
            info = os.fstat(stream.fileno())
        except (OSError, AttributeError, io.UnsupportedOperation):
            info = None
        if info is not None and stat.S_ISREG(info.st_mode):
            reader.reserve(info.st_size)
        _feed_pieces(reader, stream)
        return
    try:
        with gzip.GzipFile(fileobj=stream, mode="rb") as z:
            _feed_pieces(reader, z)
    except (OSError, EOFError, zlib.error) as exc:
        raise SequenceFormatError(f"{name}: damaged gzip file: {exc}") from None


def read_amplicons(
    source,
    *,
    default_abundance: int | None = None,
    differences: str = "edit",
    abundance_annotation: str = "size",
) -> Amplicons:
    """Read amplicons (a FASTA path, plain or gzip; ``-`` for stdin; bytes), check them and
    put them in swarm's order (the parse runs in C++ as the text is read, a piece at a time:
    csrc/clusters/amplicons.cpp). See the module docstring for the rules.

    Raises
    ------
    SequenceFormatError, AlphabetError, DuplicateIdError (ValueError)
        One line naming the file, the record (number, line and header) and what was expected.
    """
    from .._core import load_native

    if default_abundance is not None and not (1 <= int(default_abundance) <= _MAX_ABUNDANCE):
        raise ValueError(f"default abundance {default_abundance!r}: expected a positive integer")
    if abundance_annotation not in ABUNDANCE_ANNOTATIONS:
        raise ValueError(
            f"abundance annotation {abundance_annotation!r}: expected one of "
            f"{', '.join(ABUNDANCE_ANNOTATIONS)}"
        )
    underscore = abundance_annotation == "underscore"
    table = _TABLE if differences != "swarm" else _TABLE_SWARM
    reader = load_native().AmpliconReader(table, int(default_abundance or 0), underscore)
    name = _feed(reader, source)
    (
        (err, a, b, c),
        hs,
        he,
        lines,
        ast,
        aen,
        abundance,
        order,
        codes,
        offsets,
        packed,
        hl,
        il,
        text,
        bad_line,
    ) = reader.finish()
    if not err and len(abundance) == 0:
        raise SequenceFormatError(f"{name}: file is empty; expected FASTA records of amplicons")

    def header(k: int):
        return text[hs[k] : he[k]].decode("utf-8", "replace")

    def where(k: int) -> str:
        return f"{name}: record {k + 1} (line {lines[k]}, {header(k)!r})"

    def ident(k: int) -> str:
        h, x, y = header(k), int(ast[k]), int(aen[k])
        return h if x < 0 else (h[:x] + ";" + h[y:] if 0 < x and y < len(h) else h[:x] + h[y:])

    if err:
        _raise(err, a, b, c, name, bad_line, where, header, ident, lines, differences, underscore)
    # the headers and ids in swarm's order, one newline-separated text each from the parse,
    # decoded when read ('\n' is never part of a UTF-8 sequence: each line decodes alone)
    raw_headers = TextLines(hl)
    native = load_native()
    ids = TextLines(make=lambda: native.amplicon_ids(hl, underscore))
    if default_abundance is not None and (ast < 0).any():
        shown = TextLines(
            "".join(
                f"{h}\n"
                if s >= 0
                else f"{h}_{int(default_abundance)}\n"
                if underscore
                else f"{h};size={int(default_abundance)};\n"
                for h, s in zip(raw_headers, ast.tolist())  # in swarm's order when parsed
            ).encode("utf-8", SURROGATES)
        )
    else:
        shown = raw_headers
    batch = _batch(ids, codes, offsets, name) if packed is None else _PackedBatch(ids, packed, name)
    return Amplicons(
        raw_headers=raw_headers,
        headers=shown,
        ids=ids,
        abundance=abundance[order],
        batch=batch,
        record=order,  # int64 from the parse: no copy
        source=name,
        annotation=abundance_annotation,
        letters=packed,
    )


class _PackedBatch(SeqBatch):
    """The amplicons' SeqBatch over the reader's 2-bit letters (``PackedLetters``, when every
    letter is A, C, G, T or U): ``codes`` and ``offsets`` are decoded the first time they are
    read, so what reads only the letters (swarm's growth, the fastidious search, seeds and
    lengths) never holds the codes a byte each (at 10^6 amplicons of 250 letters, 62 MB
    instead of 250 MB)."""

    def __init__(self, ids, letters, source):
        for key, value in (
            ("ids", ids),
            ("letters", letters),
            ("alphabet", DNA),
            ("source", source),
            ("given", None),
        ):
            object.__setattr__(self, key, value)

    def _decoded(self):
        if "_codes" not in self.__dict__:
            codes, offsets = self.letters.codes()
            object.__setattr__(self, "_codes", codes)
            object.__setattr__(self, "_offsets", offsets)
        return self.__dict__["_codes"], self.__dict__["_offsets"]

    @property  # type: ignore[override]
    def codes(self) -> np.ndarray:
        return self._decoded()[0]

    @property  # type: ignore[override]
    def offsets(self) -> np.ndarray:
        return self._decoded()[1]

    def __len__(self) -> int:
        return len(self.letters)

    @property
    def lengths(self) -> np.ndarray:
        return self.letters.lengths()

    def __getitem__(self, i):
        if isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_)):
            n = len(self)
            if not -n <= i < n:
                raise IndexError(f"sequence index {i} outside a batch of {n} sequences")
            return self.letters.codes(int(i))
        return super().__getitem__(i)

    def __repr__(self) -> str:
        return f"SeqBatch({len(self)} amplicons, 2 bits a letter, from {self.source!r})"


def _batch(ids, codes, offsets, name) -> SeqBatch:
    """A SeqBatch of ids the parse has already found unique (SeqBatch's own check is a Python
    loop: seconds at 10^6 amplicons)."""
    batch = object.__new__(SeqBatch)
    for key, value in (
        ("ids", ids),
        ("codes", codes),
        ("offsets", offsets),
        ("alphabet", DNA),
        ("source", name),
    ):
        object.__setattr__(batch, key, value)
    return batch


def _raise(err, a, b, c, name, bad_line, where, header, ident, lines, differences, underscore):
    """The one-line error of the parse's first problem (codes: bioaccel/clusters.hpp)."""
    if err == 1:
        line = bad_line.decode("utf-8", "replace")
        raise SequenceFormatError(
            f"{name}: line {a}: expected a FASTA header ('>'), got {line!r}; "
            "amplicons are read from FASTA"
        )
    if err == 2:
        if header(a):
            raise SequenceFormatError(
                f"{where(a)}: the header holds only an abundance; expected an id before or after it"
            )
        raise SequenceFormatError(
            f"{name}: record {a + 1} (line {lines[a]}) has an empty header; expected an id"
        )
    if err == 3:
        raise SequenceFormatError(
            f"{where(a)}: malformed abundance annotation; expected ';size=N' with N a "
            "positive integer, at the header's end or followed by ';'"
        )
    if err == 4:
        m = (_UNDERSCORE if underscore else _SIZE).search(header(a).encode())
        value = m.group(1).decode() if m else "?"
        raise SequenceFormatError(
            f"{where(a)}: abundance {value} is out of range; expected a positive integer up to "
            f"{_MAX_ABUNDANCE}"
        )
    if err == 5:
        n = len(lines)
        if underscore:
            raise SequenceFormatError(
                f"{where(a)}: no abundance annotation ({b} of {n} records lack one); expected "
                "the header to end in '_N' (swarm's default annotation), or give a default "
                "abundance (--default-abundance 1, as swarm's -a)"
            )
        if _UNDERSCORE.search(header(a).encode()):
            raise SequenceFormatError(
                f"{where(a)}: no ';size=N' annotation ({b} of {n} records lack one); the "
                "header ends in '_N', swarm's default annotation: give --abundance-annotation "
                "underscore to read it"
            )
        raise SequenceFormatError(
            f"{where(a)}: no abundance annotation ({b} of {n} records lack one); expected "
            "';size=N' in the header (as `vsearch --derep_fulllength --sizeout` writes it), "
            "or give a default abundance (--default-abundance 1, as swarm's -a)"
        )
    if err == 6:
        raise DuplicateIdError(
            f"{name}: records {a + 1} (line {lines[a]}, {header(a)!r}) and {b + 1} (line "
            f"{lines[b]}, {header(b)!r}) share the id {ident(b)!r}; expected unique ids"
        )
    if err == 7:
        raise SequenceFormatError(f"{where(a)}: empty sequence; expected nucleotides")
    if err == 8:
        letter = chr(c)
        expected = (
            "A, C, G, T or U (swarm's alphabet: --differences swarm refuses IUPAC codes; "
            "--differences edit counts them as letters of their own)"
            if differences == "swarm"
            else "nucleotides A, C, G, T, U or IUPAC codes (RYSWKMBDHVN)"
        )
        what = "IUPAC code" if _TABLE[c] != 255 else "gap" if letter in "-." else "invalid letter"
        raise AlphabetError(f"{where(a)}: position {b + 1}: {what} {letter!r}; expected {expected}")
    if err == 9:
        raise SequenceFormatError(
            f"{name}: records {a + 1} ({header(a)!r}, line {lines[a]}) and {b + 1} "
            f"({header(b)!r}, line {lines[b]}) hold the same sequence; amplicons must be "
            "dereplicated: " + DEREPLICATE_HINT
        )
    raise RuntimeError(f"{name}: unknown parse error {err}")


def amplicons_from_records(records, **kw) -> Amplicons:
    """:func:`read_amplicons` of ``(header, sequence)`` pairs (or a dict header -> sequence)."""
    items = list(records.items() if isinstance(records, Mapping) else records)
    for k, item in enumerate(items):
        if not (isinstance(item, (tuple, list)) and len(item) == 2):
            raise TypeError(
                f"record {k + 1}: expected a (header, sequence) pair, got {type(item).__name__} "
                f"{item!r:.60}; give amplicons as (header, sequence) pairs, a dict header -> "
                "sequence or a FASTA path"
            )
    text = "".join(f">{h}\n{s}\n" for h, s in items)
    return read_amplicons(text.encode(), **kw)


def is_path(x) -> bool:
    return isinstance(x, (str, os.PathLike))
