"""Matrix text: the writer of PHYLIP (square, lower) and TSV (chunks formatted by the compiled
core), and their readers (layout detection, rows, streamed reading into a triangle)."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import numpy as np

from .._core import load_native, magic_of
from ..errors import MatrixFormatError
from ..sequences import check_unique_ids
from ._checks import (
    _NUMBER,
    _first_asymmetry,
    _trailing_number_words,
    asymmetry_error,
    diagonal_error,
    negative_error,
    past_float32_error,
)
from ._condensed import CondensedMatrix, _square_rows, _TriangleMemory

#: values formatted per native call (about 5 MB of text; two chunks are in flight): bounds
#: the memory of a write
_TEXT_CHUNK_VALUES = 1 << 18


def _made_ahead(chunks):
    """The items of the iterator ``chunks``, the next one made on another thread while the
    caller uses this one: the compiled formatter and the file's write both release the GIL,
    so text is formatted while the previous chunk is written."""
    from concurrent.futures import ThreadPoolExecutor

    chunks = iter(chunks)
    with ThreadPoolExecutor(1, thread_name_prefix="bioaccel-text") as pool:
        pending = pool.submit(next, chunks, None)
        while (chunk := pending.result()) is not None:
            pending = pool.submit(next, chunks, None)
            yield chunk


def _compiled():
    """The compiled core that formats and parses matrix text (NativeCoreError when it is
    missing: no silent fallback). The Python paths beside each call are the reference the
    compiled ones are tested against: tests replace this function with one returning None."""
    return load_native()


def matrix_text(
    ids: list[str],
    data: np.ndarray,
    fmt: str,
    threads: int = 0,
    utf8: bool = False,
    condensed: bool = False,
):
    """The text of a ``phylip``, ``phylip-lower`` or ``tsv`` matrix file, in chunks of whole
    rows: the one place that lays out a text matrix. Each value is ``repr`` of the Python float
    (the shortest text that reads back to the same double), written by the compiled core
    (``format_matrix_rows``, byte for byte ``repr``) when it is built, else by Python.

    PHYLIP: the count of taxa, then per row the name padded to 10 columns and two spaces
    (strict and relaxed readers read the same names), then the values separated by spaces
    (``phylip-lower``: the k values left of the diagonal on row k; a row without values is
    the bare name). TSV: an empty corner cell and the names, then per row the name and the
    values, separated by tabs. ``data`` holds no -0.0 (see :func:`without_negative_zero`);
    with ``condensed`` it is the matrix's condensed upper triangle (no square is made).
    """
    n = len(ids)
    data = np.ascontiguousarray(data, dtype=np.float64)
    if condensed and data.shape != (n * (n - 1) // 2,):
        raise ValueError(f"{data.size} condensed values do not fit {n} ids")
    lower = fmt == "phylip-lower"
    if fmt == "tsv":
        head = "\t" + "\t".join(ids) + "\n"
        prefixes, sep = [name + "\t" for name in ids], "\t"
    else:
        head = f"{n}\n"
        prefixes = [f"{name:<10}  " if k or not lower else name for k, name in enumerate(ids)]
        sep = " "
    yield head.encode() if utf8 else head
    native = _compiled()
    step = max(1, _TEXT_CHUNK_VALUES // max(1, n))
    for i0 in range(0, n, step):
        i1 = min(n, i0 + step)
        if native is not None:
            errors = "strict" if utf8 else "surrogatepass"
            chunk = native.format_matrix_rows(
                data,
                i0,
                [p.encode("utf-8", errors) for p in prefixes[i0:i1]],
                lower,
                sep,
                threads,
                n if condensed else -1,
            )
            yield chunk if utf8 else chunk.decode("utf-8", errors)
        else:
            rows = _square_rows(data, n, i0, i1) if condensed else data[i0:i1]
            text = "".join(
                prefixes[k] + sep.join(map(repr, rows[k - i0, : k if lower else n].tolist())) + "\n"
                for k in range(i0, i1)
            )
            yield text.encode() if utf8 else text


#: bytes that mark a binary file, and all the others
_CONTROL = re.compile(rb"[\x00-\x08\x0e-\x1a\x1c-\x1f]")


_NOT_CONTROL = bytes(b for b in range(256) if not _CONTROL.fullmatch(bytes([b])))


def _matrix_text(path: Path) -> str:
    """A text matrix file's text (UTF-8, a byte-order mark dropped; CR and CR LF line ends
    as LF); a binary file is refused naming what it looks like."""
    raw = path.read_bytes()
    if magic_of(raw) == "gzip":
        raise MatrixFormatError(f"{path}: a gzip file; decompress it first (gunzip)")
    # the bytes left when all others are deleted: a C loop, far faster than a regex search
    control = re.search(_CONTROL, raw) if raw.translate(None, _NOT_CONTROL) else None
    if control is not None:
        raise MatrixFormatError(
            f"{path}: byte {control.start()} is not text "
            f"(0x{raw[control.start()]:02x}): a binary file, not a PHYLIP or "
            "TSV distance matrix"
        )
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")  # names from old tools; the numbers are ASCII anyway
    return text.replace("\r\n", "\n").replace("\r", "\n")


#: fields that are all numbers, one space apart (a whole row checked in one match)
_NUMBERS = re.compile(rf"(?:{_NUMBER.pattern})(?: (?:{_NUMBER.pattern}))*", re.IGNORECASE)


def _parse_float(path: Path, lineno: int, field: str, column: int | None = None) -> float:
    if _NUMBER.fullmatch(field):
        return float(field)
    where = f"line {lineno}" + (f", column {column}" if column is not None else "")
    hint = (
        " (a decimal comma? write 1.5, not 1,5)"
        if re.fullmatch(r"[-+]?\d+,\d+", field)
        else " (missing values are not allowed in a distance matrix)"
        if field.upper() in ("NA", "N/A", "-", "?", "NAN?")
        else ""
    )
    raise MatrixFormatError(f"{path}, {where}: {field!r} is not a number{hint}")


def _parse_floats(path: Path, lineno: int, fields: list[str]) -> np.ndarray:
    """A row of fields as float64, each checked as :func:`_parse_float` checks it (the error
    names the first field that is not a number); NumPy converts the row at once."""
    if all(_NUMBER.fullmatch(f) for f in fields):
        return np.array(fields, dtype=np.float64)
    return np.array([_parse_float(path, lineno, v) for v in fields], dtype=np.float64)


def _fields(text: str) -> list[tuple[str, int]]:
    """Whitespace-separated fields of a line with their 1-based character columns."""
    return [(m.group(), m.start() + 1) for m in re.finditer(r"\S+", text)]


def _read_phylip(
    path: Path, lines: list[tuple[int, str]], threads: int = 0
) -> tuple[np.ndarray, list[str]]:
    """A PHYLIP matrix: square or lower-triangular, relaxed (a name, whitespace, the values;
    a name may hold spaces) or strict (a name of exactly 10 characters, which may touch the
    first value, as PHYLIP and scikit-bio write). The layout is the one that every row fits
    (relaxed square, strict square, relaxed lower, strict lower, in that order); rows that
    PHYLIP wraps onto indented continuation lines are joined first."""
    lineno, first = lines[0]
    head = first.split()
    if len(head) != 1 or not head[0].isdigit():
        raise MatrixFormatError(
            f"{path}, line {lineno}: expected the number of taxa, got {first[:40]!r}"
        )
    n = int(head[0])
    rows = lines[1:]
    if len(rows) > n:  # PHYLIP wraps long rows: indented lines of numbers continue a row
        joined: list[tuple[int, str, list[tuple[int, str, int]]]] = []
        for ln, text in rows:
            fields = _fields(text)
            if joined and text[:1].isspace() and all(_NUMBER.fullmatch(f) for f, _ in fields):
                joined[-1][2].extend((ln, f, c) for f, c in fields)
            else:
                joined.append((ln, text, [(ln, f, c) for f, c in fields]))
        if len(joined) == n:
            return _phylip_rows(path, n, joined, wrapped=True, threads=threads)
    if len(rows) != n:
        raise MatrixFormatError(f"{path}: header says {n} taxa, found {len(rows)} rows")
    return _phylip_rows(
        path, n, [(ln, text, None) for ln, text in rows], wrapped=False, threads=threads
    )


def _phylip_layout(path: Path, n: int, rows, counts, strict_counts, wrapped: bool) -> str:
    """The layout of a PHYLIP matrix's rows (relaxed square, strict square, relaxed lower,
    strict lower), and the one place that says where a row went wrong, for every layout and
    both readers (:func:`_read_phylip`, the streamed :func:`_read_phylip_condensed`):
    ``counts`` are the fields of each row (a wrapped row's joined), ``strict_counts`` the
    fields after its first 10 characters (0 when it has no more; None when every row fits a
    relaxed square); ``rows`` give (line, field count) for the error. Square or lower is
    what most rows say (a square row holds n values; a tie goes to a lower triangle that
    every row fits, else by the first row, which holds values only in a square), so one
    short row is named, not read as another layout."""
    if all(c >= n + 1 for c in counts):
        return "square"
    stricts = strict_counts if not wrapped else [-1] * n

    def fits_square(k: int) -> bool:
        return counts[k] >= n + 1 or stricts[k] == n

    votes = sum(map(fits_square, range(n)))
    lower_fits = all(c >= k + 1 for k, c in enumerate(counts)) or all(
        c == k for k, c in enumerate(stricts)
    )
    square = 2 * votes > n or (2 * votes == n and not lower_fits and counts[0] > 1)
    if square:
        if all(c == n for c in stricts):
            return "strict square"
        fits, why = fits_square, f"{votes} of the {n} rows hold {n} values"
    else:
        if all(c >= k + 1 for k, c in enumerate(counts)):
            return "lower"
        if all(c == k for k, c in enumerate(stricts)):
            return "strict lower"

        def fits(k: int) -> bool:
            return counts[k] >= k + 1 or stricts[k] == k

        why = "row k of a lower triangle holds k values, the first a name only"
    for k, (ln, count) in enumerate(rows):
        if not fits(k):
            want = n if square else k
            got = max(count, stricts[k] + 1) - 1
            raise MatrixFormatError(
                f"{path}, line {ln}: a name and {got} value(s); a "
                f"{'square' if square else 'lower-triangular'} matrix of {n} taxa needs a "
                f"name and {want} here ({why})"
            )
    raise MatrixFormatError(
        f"{path}: rows fit neither a square nor a lower-triangular matrix of {n} taxa (some "
        "rows strict PHYLIP, names of 10 characters touching the values, others not)"
    )


def _strict_split(text: str):
    """A strict PHYLIP row: (name, fields after the first 10 characters with their columns)."""
    return (text[:10].strip(), _fields(text[10:])) if len(text) > 10 else (text.strip(), [])


def _phylip_row(path: Path, n: int, layout: str, k: int, ln: int, text: str, fields, glued_counts):
    """Row ``k`` of a PHYLIP matrix of ``layout``: (name, values as float64). ``fields``:
    the row's (line, field, column) triples, or None for a one-line row whose columns are
    worked out only when a value is not a number (the streamed reader's fast path)."""
    want = n if layout.endswith("square") else k
    if fields is None:
        words = text.split()
        if not layout.startswith("strict") and (
            want == 0 or _NUMBERS.fullmatch(" ".join(words[len(words) - want :]))
        ):
            name = _row_name(
                path, n, layout, want, ln, len(words), words[: len(words) - want], glued_counts
            )
            return name, np.array(words[len(words) - want :], dtype=np.float64)
        fields = [(ln, f, c) for f, c in _fields(text)]
    if layout.startswith("strict"):
        name, strict = _strict_split(text)
        cells = [(ln, f, c + 10) for f, c in strict]
    else:
        words, cells = fields[: len(fields) - want], fields[len(fields) - want :]
        name = _row_name(
            path, n, layout, want, ln, len(fields), [f for _, f, _ in words], glued_counts
        )
    if all(_NUMBER.fullmatch(f) for _, f, _ in cells):
        return name, np.array([f for _, f, _ in cells], dtype=np.float64)
    return name, np.array([_parse_float(path, cl, f, c) for cl, f, c in cells], dtype=np.float64)


def _row_name(path, n, layout, want, ln, count, words, glued_counts) -> str:
    """The name of a relaxed row (its words before the ``want`` values)."""
    glued = _trailing_number_words(words)
    glued_counts.add(len(glued))
    # names may end in numbers ("strain 12", the same on every row), but a value
    # (a decimal) or a varying count of numbers there is a row with too many or too
    # few values: a ragged matrix, or a lower triangle with its diagonal
    if any(not w.isdigit() for w in glued) or len(glued_counts) > 1:
        raise MatrixFormatError(
            f"{path}, line {ln}: {count - 1} value(s) after the first word, but a "
            f"{layout} matrix of {n} taxa has {want} on this row (a ragged matrix? "
            f"{(glued or ['the numbers'])[0]!r} would be read as part of the name); "
            "PHYLIP's square rows hold n values, its lower triangle none on the first "
            "row and no diagonal"
        )
    return " ".join(words)


def _field_counts(texts: list[str], start: int, native) -> list[int]:
    """Whitespace-separated fields of each text from character ``start`` on (``len(
    text[start:].split())``), counted by the compiled core where it is built."""
    counts = native.count_matrix_fields(texts, start).tolist() if native is not None else None
    return [
        c if counts is not None and c >= 0 else len(t[start:].split())
        for c, t in zip(counts or [-1] * len(texts), texts)
    ]


def _phylip_rows(
    path: Path, n: int, rows, wrapped: bool, threads: int = 0
) -> tuple[np.ndarray, list[str]]:
    """The matrix of PHYLIP rows ``(line, text, fields)``: ``fields`` the ``(line, field,
    column)`` of a row joined from wrapped lines, or None for a row that is its one line
    (its fields are then found only where needed). The numbers of rows of one line are read
    by the compiled core (``parse_matrix_rows``) when it is built; a row it does not take (a
    field that is not a number, non-ASCII text) is read by :func:`_phylip_row`, and errors
    are named there."""
    native = _compiled()
    texts = [text for _, text, _ in rows]
    counts = [len(f) for _, _, f in rows] if wrapped else _field_counts(texts, 0, native)
    strict_counts = None  # consulted only when the rows are not a relaxed square
    if not all(c >= n + 1 for c in counts):
        counted = _field_counts(texts, 10, native)
        strict_counts = [c if len(t) > 10 else 0 for c, t in zip(counted, texts)]
    layout = _phylip_layout(
        path, n, [(ln, c) for (ln, _, _), c in zip(rows, counts)], counts, strict_counts, wrapped
    )
    square = layout.endswith("square")
    strict = layout.startswith("strict")
    data = np.zeros((n, n))
    wants = np.arange(n, dtype=np.int64) if not square else np.full(n, n, dtype=np.int64)
    if native is not None and not wrapped:
        starts = np.full(n, 10 if strict else 0, dtype=np.int64)
        ends = native.parse_matrix_rows(
            texts, starts, wants, data, False, not square, threads
        ).tolist()
    else:
        ends = [-1] * n
    ids = []
    glued_counts: set[int] = set()
    for k, (ln, text, fields) in enumerate(rows):
        if ends[k] < 0:  # not taken by the compiled core: read (and errors named) here
            name, values = _phylip_row(path, n, layout, k, ln, text, fields, glued_counts)
            if square:
                data[k] = values
            else:
                data[k, :k] = values
                data[:k, k] = values
        elif strict:
            name = text[:10].strip() if len(text) > 10 else text.strip()
        else:
            words = text[: ends[k]].split()
            want = n if square else k
            name = _row_name(path, n, layout, want, ln, counts[k], words, glued_counts)
        ids.append(name)
    return data, ids


def _text_lines(path: Path):
    """(line number, text) of each line of a text matrix file, streamed: the checks and
    decoding of :func:`_matrix_text` line by line (CR LF, CR and LF line ends)."""
    with open(path, "rb") as f:
        if magic_of(f.read(2)) == "gzip":
            raise MatrixFormatError(f"{path}: a gzip file; decompress it first (gunzip)")
        f.seek(0)
        offset, lineno = 0, 0
        for raw in f:
            control = re.search(rb"[\x00-\x08\x0e-\x1a\x1c-\x1f]", raw)
            if control is not None:
                at = offset + control.start()
                raise MatrixFormatError(
                    f"{path}: byte {at} is not text (0x{raw[control.start()]:02x}): a binary "
                    "file, not a PHYLIP or TSV distance matrix"
                )
            if offset == 0:
                raw = raw.removeprefix(b"\xef\xbb\xbf")
            offset += len(raw)
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                text = raw.decode("latin-1")
            parts = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
            for part in parts[:-1] if parts[-1] == "" else parts:
                lineno += 1
                yield lineno, part


def _streamed_rows(path: Path, n: int, layout: str, groups, lines, glued_counts):
    """(k, name, values) of each row of a streamed PHYLIP matrix (``groups``: line, fields,
    strict fields, lines of each row; ``lines`` the non-blank lines after the header). Blocks
    of one-line rows (about 2^17 values) have their numbers read by the compiled core
    (``parse_matrix_rows``, as :func:`_phylip_rows`) when it is built; wrapped rows, rows it
    does not take and every error go through :func:`_phylip_row`."""
    native = _compiled()
    square, strict = layout.endswith("square"), layout.startswith("strict")
    block = max(1, (1 << 17) // max(n, 1))
    buf = np.empty((block, n)) if native is not None else None
    k = 0
    while k < len(groups):
        batch = []
        while (
            k + len(batch) < len(groups) and len(batch) < block and groups[k + len(batch)][3] == 1
        ):
            batch.append(next(lines))
        if not batch:  # a row wrapped onto continuation lines
            ln, t = next(lines)
            fields = [(ln, f, c) for f, c in _fields(t)]
            for _ in range(groups[k][3] - 1):
                cl, ct = next(lines)
                fields.extend((cl, f, c) for f, c in _fields(ct))
            yield k, *_phylip_row(path, n, layout, k, ln, t, fields, glued_counts)
            k += 1
            continue
        ends = [-1] * len(batch)
        if native is not None:
            wants = np.array([n if square else k + r for r in range(len(batch))], dtype=np.int64)
            first = np.full(len(batch), 10 if strict else 0, dtype=np.int64)
            texts = [t for _, t in batch]
            ends = native.parse_matrix_rows(texts, first, wants, buf, False, False, 0).tolist()
        for r, (ln, t) in enumerate(batch):
            row_k, want = k + r, (n if square else k + r)
            if ends[r] < 0:  # not taken by the compiled core: read (and errors named) here
                yield row_k, *_phylip_row(path, n, layout, row_k, ln, t, None, glued_counts)
            elif strict:
                yield row_k, (t[:10].strip() if len(t) > 10 else t.strip()), buf[r, :want]
            else:
                words = t[: ends[r]].split()
                name = _row_name(path, n, layout, want, ln, groups[row_k][1], words, glued_counts)
                yield row_k, name, buf[r, :want]
        k += len(batch)


def _read_phylip_condensed(path: Path, make=None):
    """A PHYLIP matrix streamed into a float32 upper triangle: one pass for each row's field
    counts (the layout, by :func:`_phylip_layout`), one for the values (each row by
    :func:`_phylip_row`), so neither the text nor a float64 square is ever held. The
    checks and words of :func:`_read_phylip` and :class:`DistanceMatrix`; symmetry of a
    square layout at float32 precision (as :func:`_read_npy_condensed`)."""
    lines = ((ln, t) for ln, t in _text_lines(path) if t.strip())
    first = next(lines, None)
    if first is None:
        raise MatrixFormatError(f"{path}: file is empty; expected a distance matrix")
    lineno, text = first
    head = text.split()
    if len(head) != 1 or not head[0].isdigit():
        raise MatrixFormatError(
            f"{path}, line {lineno}: expected the number of taxa, got {text[:40]!r}"
        )
    n = int(head[0])
    # pass 1: field counts only; a wrapped row (indented lines of numbers) joins its row
    rows: list[tuple[int, int, int, bool]] = []  # line, fields, strict fields, continues
    native = _compiled()
    block = max(1, (1 << 17) // max(n, 1))  # lines counted at once (the compiled core's)
    while chunk := list(itertools.islice(lines, block)):
        texts = [t for _, t in chunk]
        counts = _field_counts(texts, 0, native)
        stricts = _field_counts(texts, 10, native)
        for (ln, t), c, sc in zip(chunk, counts, stricts):
            cont = t[:1].isspace() and all(_NUMBER.fullmatch(w) for w in t.split())
            rows.append((ln, c, sc if len(t) > 10 else 0, cont))
    wrapped = False
    if len(rows) > n:
        groups: list[list] = []
        for r in rows:
            if groups and r[3]:
                groups[-1][1] += r[1]
                groups[-1][3] += 1
            else:
                groups.append([r[0], r[1], r[2], 1])
        if len(groups) == n:
            wrapped = True
    if not wrapped:
        if len(rows) != n:
            raise MatrixFormatError(f"{path}: header says {n} taxa, found {len(rows)} rows")
        groups = [[ln, c, sc, 1] for ln, c, sc, _ in rows]
    del rows
    counts = [g[1] for g in groups]
    layout = _phylip_layout(
        path, n, [(g[0], g[1]) for g in groups], counts, [g[2] for g in groups], wrapped
    )
    del counts
    square = layout.endswith("square")
    # pass 2: the values, row by row, into the triangle
    triangle = (make or _TriangleMemory)(n)
    ids: list[str] = []
    glued_counts: set[int] = set()
    diagonal = negative = asymmetric = None
    lines = ((ln, t) for ln, t in _text_lines(path) if t.strip())
    next(lines)
    for k, name, row in _streamed_rows(path, n, layout, groups, lines, glued_counts):
        ids.append(name)
        if square:
            if diagonal is None and row[k] != 0:
                diagonal = (k, row[k])
            if negative is None and np.fmin.reduce(row) < 0:
                j = int(np.flatnonzero(row < 0)[0])
                negative = (k, j, row[j])
            triangle.put_upper(k, row[k + 1 :])
            if k:
                asymmetric = _first_asymmetry(triangle.mirror(k), k, row, asymmetric)
        elif k:
            triangle.put_lower(k, row)  # d(j, k), j < k
            if np.fmin.reduce(row) < 0:
                j = int(np.flatnonzero(row < 0)[0])
                if negative is None or (j, k) < negative[:2]:
                    negative = (j, k, row[j])
    check_unique_ids(ids)
    if diagonal is not None:
        raise diagonal_error(ids, *diagonal)
    if negative is not None:
        raise negative_error(ids, *negative)
    if asymmetric is not None:  # d(j, k) as the file gives it, not as float32 stores it
        j, k, _, lower = asymmetric
        raise asymmetry_error(ids, j, k, _streamed_value(path, n, layout, groups, j, k), lower)
    if triangle.first_past_float32 is not None:
        raise past_float32_error(ids, *triangle.first_past_float32)
    return CondensedMatrix(triangle.values, ids) if make is None else (ids, triangle)


def _streamed_value(path: Path, n: int, layout: str, groups, j: int, k: int) -> float:
    """d(j, k) of a square PHYLIP matrix as read from the file (float64), for a message:
    the file streamed again up to row j."""
    lines = ((ln, t) for ln, t in _text_lines(path) if t.strip())
    next(lines)
    rows = _streamed_rows(path, n, layout, groups[: j + 1], lines, set())
    return next(float(values[k]) for row, _, values in rows if row == j)


def _unquoted(names: list[str]) -> list[str]:
    """R's ``write.table`` quotes every name (``"a b"``; an inner quote as ``\\"``, or
    ``""`` with ``qmethod = "double"``): when all the names are quoted so, the quotes are
    not part of them."""
    if names and all(len(x) >= 2 and x[0] == x[-1] == '"' for x in names):
        return [x[1:-1].replace('\\"', '"').replace('""', '"') for x in names]
    return names


def _read_tsv(path: Path, lines: list[str], threads: int = 0) -> tuple[np.ndarray, list[str]]:
    head = lines[0].split("\t")
    # an empty corner cell, then the names (bioaccel); R's write.table(m, sep = "\t")
    # writes no corner cell, and with col.names = NA a quoted empty one: only R's files have
    # their quotes taken off (bioaccel's own ids may hold quotes)
    r_default = len(head) == len(lines) - 1 and len(head) > 1
    ids = head if r_default else head[1:]
    names = [line.split("\t", 1)[0] for line in lines[1:]]
    quoted = _unquoted(ids + names) if r_default or head[0] == '""' else ids + names
    if quoted != ids + names:
        ids, lines = (
            quoted[: len(ids)],
            [lines[0]]
            + [
                q + "\t" + line.split("\t", 1)[1] if "\t" in line else q
                for q, line in zip(quoted[len(ids) :], lines[1:])
            ],
        )
    n = len(ids)
    if len(lines) - 1 != n:
        raise MatrixFormatError(f"{path}: header names {n} taxa, found {len(lines) - 1} rows")
    data = np.zeros((n, n))
    rows = lines[1:]
    native = _compiled()
    ends = [-1] * n
    if native is not None:  # the numbers after each row's first tab, where all are numbers
        starts = np.array([line.find("\t") + 1 or len(line) + 1 for line in rows])
        ends = native.parse_matrix_rows(
            rows, starts.astype(np.int64), np.full(n, n, dtype=np.int64), data, True, False, threads
        ).tolist()
    for k, line in enumerate(rows):
        count = line.count("\t") + 1
        if count != n + 1:
            raise MatrixFormatError(
                f"{path}, line {k + 2}: expected a name and {n} values, got {count} fields"
            )
        name = line.split("\t", 1)[0]
        if name != ids[k]:
            raise MatrixFormatError(
                f"{path}, line {k + 2}: row name {name!r} differs from column {ids[k]!r}"
            )
        if ends[k] < 0:
            data[k] = _parse_floats(path, k + 2, line.split("\t")[1:])
    return data, ids
