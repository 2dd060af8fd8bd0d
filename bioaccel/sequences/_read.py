"""Reading sequence files (through Biopython)."""

from __future__ import annotations

import contextlib
import gzip
import io
import logging
import os
import re
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from .._core import magic_of
from ..errors import DuplicateIdError, SequenceFormatError
from ._alphabet import Alphabet
from ._batch import SeqBatch

logger = logging.getLogger(__name__)

#: Formats read_sequences accepts, mapped to Biopython's SeqIO/AlignIO names.
SEQUENCE_FORMATS = {
    "fasta": "fasta",
    "fastq": "fastq",
    "clustal": "clustal",
    "phylip": "phylip-relaxed",
    "stockholm": "stockholm",
    "nexus": "nexus",
}

_EXTENSIONS = {
    ".fa": "fasta",
    ".fasta": "fasta",
    ".fna": "fasta",
    ".faa": "fasta",
    ".ffn": "fasta",
    ".fas": "fasta",
    ".mfa": "fasta",
    ".afa": "fasta",
    ".aln.fa": "fasta",
    ".fq": "fastq",
    ".fastq": "fastq",
    ".aln": "clustal",
    ".clustal": "clustal",
    ".clw": "clustal",
    ".phy": "phylip",
    ".phylip": "phylip",
    ".sto": "stockholm",
    ".stockholm": "stockholm",
    ".stk": "stockholm",
    ".nex": "nexus",
    ".nexus": "nexus",
    ".nxs": "nexus",
}


_SKETCH_MEMBERS = {"params.npy", "values.npy", "offsets.npy", "ids.npy"}


def is_sketch_file(path: str | os.PathLike) -> bool:
    """True when ``path`` is a zip holding the arrays of a bioaccel sketch file."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as z:
            return _SKETCH_MEMBERS <= set(z.namelist())
    except (OSError, zipfile.BadZipFile):
        return False


def _binary_kind(path: Path, raw: bytes) -> str | None:
    """What a binary file given as sequences is, with what to do instead, or None."""
    kind = magic_of(raw)
    if kind == "zip":
        if is_sketch_file(path):
            return (
                "a bioaccel sketch file (from `bioaccel sketch`), not sequences: compare the "
                f"sketches with the mash model (`bioaccel distance {path} -m mash`, or "
                "distance_matrix(Sketches.load(path), 'mash'))"
            )
        return "a zip/NumPy .npz archive (a tile or a matrix?), not sequences"
    if kind == "npy":
        return "a NumPy .npy array (a matrix?), not sequences"
    if kind == "cdist":
        return "a bioaccel .cdist distance matrix, not sequences (`bioaccel tree` reads it)"
    return None


def read_text_file(path: Path) -> str:
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        raise SequenceFormatError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise SequenceFormatError(f"{path}: is a directory, expected a sequence file") from None
    return decode_text(raw, path)


def decode_text(raw: bytes, path: Path | str) -> str:
    """Text of a plain or gzip file's bytes (or stdin's, named ``path`` in messages), line
    ends as LF; a binary file is refused naming it."""
    if magic_of(raw) == "gzip":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise SequenceFormatError(f"{path}: damaged gzip file ({exc})") from None
    kind = _binary_kind(path, raw)
    if kind is not None:
        raise SequenceFormatError(f"{path}: {kind}")
    control = _BINARY_BYTES.search(raw)
    if control is not None:
        raise SequenceFormatError(
            f"{path}: byte {control.start()} is not text (0x{raw[control.start()]:02x}): a binary "
            "file; expected a FASTA/FASTQ/Clustal/PHYLIP/Stockholm/NEXUS file, plain or gzip"
        )
    try:
        text = raw.decode("utf-8-sig")  # a byte-order mark is dropped
    except UnicodeDecodeError:
        # headers from old Windows/Mac tools in Latin-1 (every byte is a Latin-1 letter);
        # residues are ASCII in every encoding
        text = raw.decode("latin-1")
        logger.info("%s: not UTF-8; read as Latin-1", path)
    return normalize_line_ends(text)


#: bytes no text file holds (NUL and the C0 controls but tab, LF, VT, FF, CR, and ESC)
_BINARY_BYTES = re.compile(rb"[\x00-\x08\x0e-\x1a\x1c-\x1f]")


def normalize_line_ends(text: str) -> str:
    """Windows (CR LF) and classic Mac (CR only) line ends as LF: Biopython's parsers split
    lines on LF alone and would read a CR-only file as one line (one record).

    >>> normalize_line_ends(">a\\rACGT\\r>b\\r\\nACGA\\r")
    '>a\\nACGT\\n>b\\nACGA\\n'
    """
    if "\r" not in text:
        return text
    return text.replace("\r\n", "\n").replace("\r", "\n")


def sniff_format(text: str, path: Path | None = None) -> str:
    """Guess the format from the first non-blank line, else from the file extension."""
    first = next(
        (line.strip() for line in text.splitlines() if line.strip() and not line.startswith(";")),
        "",
    )
    if first.startswith(">"):
        return "fasta"
    if first.startswith("@"):
        return "fastq"
    if first.upper().startswith(("CLUSTAL", "MUSCLE", "PROBCONS")):
        return "clustal"
    if first.upper().startswith("# STOCKHOLM"):
        return "stockholm"
    if first.upper().startswith("#NEXUS"):
        return "nexus"
    if re.fullmatch(r"\d+\s+\d+(\s+.*)?", first):
        return "phylip"
    if path is not None:
        suffixes = "".join(path.suffixes[-2:]).lower().removesuffix(".gz")
        for ext, fmt in _EXTENSIONS.items():
            # a FASTA/FASTQ file always starts with '>'/'@', whatever its name says
            if suffixes.endswith(ext) and fmt not in ("fasta", "fastq"):
                return fmt
    where = f"{path}: " if path else ""
    if not first:
        raise SequenceFormatError(
            f"{where}the file is empty (or blank): no sequences to read; "
            "expected FASTA ('>'), FASTQ ('@'), Clustal, PHYLIP, "
            "Stockholm or NEXUS"
        )
    shown = first[:40] + ("..." if len(first) > 40 else "")
    raise SequenceFormatError(
        f"{where}not a sequence file: first line {shown!r}; expected FASTA ('>'), FASTQ ('@'), "
        "Clustal, PHYLIP, Stockholm or NEXUS"
    )


def _strip_leading_blank_lines(text: str) -> str:
    """``text`` from its first line that holds something (Biopython's FASTA/FASTQ parsers
    refuse blank lines before the first record; scikit-bio reads them)."""
    start = 0
    for line in text.split("\n"):
        if line.strip():
            break
        start += len(line) + 1
    return text[start:]


def _paml_layout(text: str) -> bool:
    """Whether a PHYLIP file Biopython could not read is in PAML's layout: options after the
    header's two numbers (PAML's ``I``, ``S``, ``G``...), or a first record whose name stands
    alone on its line or is followed by two spaces (PAML's separator) rather than one."""
    lines = [ln for ln in text.split("\n") if ln.strip()]
    if len(lines) < 2:
        return False
    head = lines[0].split()
    return len(head) > 2 or len(lines[1].split()) == 1 or "  " in lines[1].strip()


def _paml_records(text: str, path: Path) -> list[tuple[str, str]]:
    """PAML's sequential PHYLIP (its manual's layout): the header ``n L``, then each record's
    name (alone on its line, or followed by two spaces and the sequence's start) and its L
    sites over as many lines as it takes (spaces ignored). The header's L decides where a
    record ends, so the layout is read unambiguously; anything else is refused naming the
    line and what was expected: PAML's interleaved layout (``I``) and its ``.`` (the first
    sequence's letter, where every other reader reads a gap)."""
    numbered = [(k + 1, ln) for k, ln in enumerate(text.split("\n")) if ln.strip()]
    (hl, header), rows = numbered[0], iter(numbered[1:])
    head = header.split()
    n, length = int(head[0]), int(head[1])
    if any("I" in option.upper() for option in head[2:]):
        raise SequenceFormatError(
            f"{path}, line {hl}: PAML's interleaved layout ({header.strip()!r}) is not read; "
            "write the alignment sequential (PAML's default) or as FASTA"
        )
    records: list[tuple[str, str]] = []
    last = numbered[-1][0]
    for _ in range(n):
        ln, line = next(rows, (None, None))
        if ln is None:
            raise SequenceFormatError(
                f"{path}, line {last}: the file ends after {len(records)} of the {n} records "
                "the header gives"
            )
        name, _, rest = line.strip().partition("  ")
        parts, got = [], 0
        at, chunk = ln, "".join(rest.split())
        while True:
            if "." in chunk:
                raise SequenceFormatError(
                    f"{path}, line {at}: record {name.strip()!r} holds '.' (in PAML: the first "
                    "sequence's letter at that site; elsewhere a gap): write the letters out"
                )
            if got + len(chunk) > length:
                raise SequenceFormatError(
                    f"{path}, line {at}: record {name.strip()!r} has {got} of the {length} "
                    f"sites the header gives, and line {at}'s {len(chunk)} letters would make "
                    f"{got + len(chunk)} (PAML: a name alone on its line or before two spaces, "
                    "then the sites)"
                )
            parts.append(chunk)
            got += len(chunk)
            if got == length:
                break
            at, line = next(rows, (None, None))
            if at is None:
                raise SequenceFormatError(
                    f"{path}, line {last}: the file ends in record {name.strip()!r} after "
                    f"{got} of the {length} sites the header gives"
                )
            chunk = "".join(line.split())
        records.append((name.strip(), "".join(parts)))
    extra = next(rows, None)
    if extra is not None:
        raise SequenceFormatError(
            f"{path}, line {extra[0]}: text after the {n} records the header gives"
        )
    return records


def parse_records(text: str, fmt: str, path: Path) -> list[tuple[str, str]]:
    from Bio import SeqIO

    records: list[tuple[str, str]] = []
    try:
        for rec in SeqIO.parse(io.StringIO(text), SEQUENCE_FORMATS[fmt]):
            records.append((rec.id, str(rec.seq)))
    except Exception as exc:  # any parser failure is bad input (Bio.Nexus
        # raises NexusError, Stockholm a TypeError on a #=GR line of the wrong length)
        if fmt == "phylip":  # names of exactly 10 characters with no space: strict PHYLIP
            with contextlib.suppress(Exception):
                return [(r.id, str(r.seq)) for r in SeqIO.parse(io.StringIO(text), "phylip")]
            if _paml_layout(text):  # PAML's dialect: read, or its error names the line
                return _paml_records(text, path)
        detail = " ".join(str(exc).split()) or type(exc).__name__
        if len(detail) > 160:  # Bio.Nexus quotes whole blocks
            detail = detail[:157] + "..."
        if "fasta-pearson" in detail or "fasta-blast" in detail:  # Biopython's advice names
            detail = "text before the first '>' record"  # its own format names
        after = f" after record {records[-1][0]!r} (record {len(records)})" if records else ""
        raise SequenceFormatError(f"{path}: not valid {fmt.upper()}{after}: {detail}") from None
    return records


def read_sequences(
    path: str | os.PathLike, format: str | None = None, alphabet: str | Alphabet = "auto"
) -> SeqBatch:
    """Read a FASTA, FASTQ, Clustal, PHYLIP, Stockholm or NEXUS file, plain or gzip.

    Parameters
    ----------
    path : path-like
        The file. Gzip is recognised by its magic bytes, whatever the name.
    format : str, optional
        One of :data:`SEQUENCE_FORMATS`; sniffed from the content (then the extension) when omitted.
    alphabet : {"auto", "dna", "rna", "protein"}
        ``"auto"`` reads DNA when >= 90 % of the residues are A/C/G/T/U/N, else protein;
        a file mixing DNA and protein records is refused (see
        :func:`bioaccel.sequences.guess_alphabet`). RNA reads as DNA (U as T).

    Returns
    -------
    SeqBatch
        Full ids as the file gives them (the first word of a FASTA header; PHYLIP names
        are not cut to 10 characters). The codes fold case and read U as T; the file's own
        letters are kept beside them when they differ (:attr:`SeqBatch.given`), and
        :func:`bioaccel.msa` and :func:`bioaccel.align` write those back.

    Raises
    ------
    SequenceFormatError
        Missing, empty or unparsable file, unknown format, empty id.
    DuplicateIdError, AlphabetError
        Name the records, position and letter at fault.

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "x.fa")
    >>> _ = open(p, "w").write(">A/Sao_Paulo/1/2009 HA\\nACGT\\n>b\\nAGGT\\n")
    >>> read_sequences(p).ids
    ['A/Sao_Paulo/1/2009', 'b']
    """
    path = Path(path)
    return _read_text(read_text_file(path), path, format, alphabet)


def parse_sequences(
    raw: bytes, source: str, format: str | None = None, alphabet: str | Alphabet = "auto"
) -> SeqBatch:
    """:func:`read_sequences` for bytes already read (e.g. from stdin); messages name
    ``source`` where they would name the file."""
    return _read_text(decode_text(raw, source), Path(source), format, alphabet)


def _read_text(text: str, path: Path, format: str | None, alphabet) -> SeqBatch:
    if not text.strip():
        raise SequenceFormatError(f"{path}: file is empty; expected sequence records")
    if format is None:
        fmt = sniff_format(text, path)
    else:
        fmt = format.lower()
        if fmt not in SEQUENCE_FORMATS:
            raise SequenceFormatError(
                f"unknown sequence format {format!r}; expected one of {sorted(SEQUENCE_FORMATS)}"
            )
    text = _strip_leading_blank_lines(text)
    if fmt == "fasta":  # old FASTA: ';' lines are comments (the NCBI and EMBOSS readers skip them)
        text = "\n".join(ln for ln in text.split("\n") if not ln.startswith(";"))
    records = parse_records(text, fmt, path)
    if not records:
        raise SequenceFormatError(f"{path}: no {fmt.upper()} records found")
    ids = [r[0] for r in records]
    return SeqBatch.from_strings(
        [r[1] for r in records], ids=ids, alphabet=alphabet, source=str(path)
    )


def sequence_files(paths) -> list[Path]:
    """``paths`` with each directory replaced by its sequence files (names ending in one of
    the sequence extensions, plain or ``.gz``; sorted; not descending into subdirectories).

    Raises
    ------
    SequenceFormatError
        A path that does not exist, or a directory holding no sequence file.
    """
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            found = sorted(
                f
                for f in p.iterdir()
                if f.is_file() and not f.name.startswith(".") and _sequence_extension(f.name)
            )
            if not found:
                raise SequenceFormatError(
                    f"{p}: directory holds no sequence file (names ending in "
                    f"{', '.join(sorted(_EXTENSIONS))}, plain or .gz)"
                )
            out.extend(found)
        elif not p.exists():
            raise SequenceFormatError(f"{p}: no such file or directory")
        else:
            out.append(p)
    return out


def _sequence_extension(name: str) -> bool:
    name = name.lower()
    name = name[:-3] if name.endswith(".gz") else name
    return any(name.endswith(ext) for ext in _EXTENSIONS)


def read_many(paths, format: str | None = None, alphabet: str | Alphabet = "auto") -> SeqBatch:
    """The records of several files and directories (see :func:`sequence_files`) as one
    batch, in order. With ``alphabet="auto"`` each file is guessed and all must agree (a
    file too short to tell takes the others'; DNA and protein files together are refused).
    Ids must be unique across files (a repeat names both files)."""
    files = sequence_files(paths)
    if not files:
        raise SequenceFormatError("no input files given")
    batches = []
    seen: dict[str, Path] = {}
    for f in files:
        b = read_sequences(f, format=format, alphabet=alphabet)
        if batches and b.alphabet is not batches[0].alphabet:
            auto = str(alphabet).lower() == "auto"
            first, b = same_alphabet(batches[0], b, auto, auto, ("the first file", "a later file"))
            if first is not batches[0]:  # the earlier files were too short to tell
                batches = [same_alphabet(x, b, True, False)[0] for x in batches]
        for i in b.ids:
            if i in seen:
                raise DuplicateIdError(
                    f"duplicate id {i!r}: in {seen[i]} and in {f}; ids must be "
                    "unique across the inputs"
                )
            seen[i] = f
        batches.append(b)
    if len(batches) == 1:
        return batches[0]
    lengths = np.concatenate([b.lengths for b in batches])
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    given = None
    if any(b.given is not None for b in batches):  # the letters as given, if any file's differ
        own = np.frombuffer(batches[0].alphabet.symbols.encode("ascii"), dtype=np.uint8)
        given = np.concatenate([b.given if b.given is not None else own[b.codes] for b in batches])
    return SeqBatch(
        [i for b in batches for i in b.ids],
        np.concatenate([b.codes for b in batches]),
        offsets,
        batches[0].alphabet,
        f"{files[0]} and {len(files) - 1} more file(s)",
        given,
    )


def as_batch(seqs, alphabet: str | Alphabet = "auto") -> SeqBatch:
    """Accept a SeqBatch (returned as is), a path (read), or a sequence of strings.

    A SeqBatch of another alphabet than a named ``alphabet`` is an :class:`AlphabetError`."""
    if isinstance(seqs, SeqBatch):
        if str(alphabet).lower() != "auto":
            from ..errors import AlphabetError
            from ._alphabet import get_alphabet

            if get_alphabet(alphabet) is not seqs.alphabet:
                raise AlphabetError(
                    f"{seqs.source or 'the batch'} is {seqs.alphabet.name}, not "
                    f"{get_alphabet(alphabet).name} as alphabet={alphabet!r} says"
                )
        return seqs
    if isinstance(seqs, (str, os.PathLike)):
        return read_sequences(seqs, alphabet=alphabet)
    if isinstance(seqs, Mapping):  # id -> sequence (a dict's keys are not sequences)
        return SeqBatch.from_strings(
            [str(v) for v in seqs.values()], ids=[str(k) for k in seqs], alphabet=alphabet
        )
    items = list(seqs)
    if items and all(isinstance(x, tuple) and len(x) == 2 for x in items):  # (id, sequence)
        return SeqBatch.from_strings(
            [str(x[1]) for x in items], ids=[str(x[0]) for x in items], alphabet=alphabet
        )
    for k, x in enumerate(items):
        if isinstance(x, (bytes, bytearray)):
            items[k] = x.decode("ascii", "replace")
        elif not isinstance(x, str):
            raise TypeError(
                f"sequence {k + 1}: expected a string, got {type(x).__name__} {x!r:.60}; give "
                "sequences as strings, (id, sequence) pairs, a dict id -> sequence, a "
                "SeqBatch or a file path"
            )
    return SeqBatch.from_strings(items, alphabet=alphabet)


def as_batch_pair(queries, targets, alphabet: str | Alphabet = "auto") -> tuple[SeqBatch, SeqBatch]:
    """Queries and targets as batches of one alphabet (``targets=None`` means the queries
    themselves). Each side is read with ``alphabet``; see :func:`same_alphabet` for
    ``"auto"``."""
    q = as_batch(queries, alphabet)
    if targets is None:
        return q, q
    t = as_batch(targets, alphabet)
    guessed = str(alphabet).lower() == "auto"
    return same_alphabet(
        q,
        t,
        guessed and not isinstance(queries, SeqBatch),
        guessed and not isinstance(targets, SeqBatch),
    )


def same_alphabet(
    q: SeqBatch,
    t: SeqBatch,
    q_guessed: bool = False,
    t_guessed: bool = False,
    what: tuple[str, str] = ("queries", "targets"),
) -> tuple[SeqBatch, SeqBatch]:
    """``(q, t)`` of one alphabet, or :class:`AlphabetError` (mismatched alphabets). A side
    whose alphabet was guessed (``*_guessed``) from too few residues to tell
    (:func:`bioaccel.sequences._alphabet.ambiguous`, e.g. a peptide ``GAGA``) takes the other side's."""
    import logging

    from ..errors import AlphabetError
    from ._alphabet import ambiguous

    if t.alphabet is q.alphabet:
        return q, t

    def recode(b: SeqBatch, alpha) -> SeqBatch:
        logging.getLogger("bioaccel").info(
            "%s: too short to tell, read as %s like the other input",
            b.source or "sequences",
            alpha.name,
        )
        return SeqBatch.from_strings(  # from the letters given: a U stays a U in a protein
            [b.given_sequence(i) for i in range(len(b))], ids=b.ids, alphabet=alpha, source=b.source
        )

    q_amb = q_guessed and ambiguous(q.alphabet.decode(q.codes).encode())
    t_amb = t_guessed and ambiguous(t.alphabet.decode(t.codes).encode())
    if t_amb and not q_amb:
        return q, recode(t, q.alphabet)
    if q_amb and not t_amb:
        return recode(q, t.alphabet), t
    raise AlphabetError(
        f"{what[0]} ({q.source or 'given'}) read as {q.alphabet.name} but {what[1]} "
        f"({t.source or 'given'}) as {t.alphabet.name}; mismatched alphabets (name one with "
        "alphabet= / --alphabet if the guess is wrong)"
    )
