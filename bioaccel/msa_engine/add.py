"""Aligning to alignments that exist: new sequences added to an alignment whose columns stay
as they are (``msa(add=..., to=...)``), and two alignments aligned to each other as profiles
(``msa(profile=(a, b))``).

Adding: each new sequence is aligned on its own to the fixed profile of all existing rows
(sum-of-pairs columns and gap kinds, as the progressive stage scores a merge), so it does
not depend on the other new sequences, their order or the thread count. The existing rows
keep their residues in their columns and their order. A new sequence's residues that face no
existing column (insertions) go into new columns at their boundary, left-justified (right-
justified before the first column, so an overhang abuts the sequence); with ``keep_length``
they are dropped from the new rows and listed in :attr:`MultipleAlignment.dropped`, and the
width stays the existing one (MAFFT's ``--add --keeplength``). ``fragments``: the new
sequences' leading and trailing gaps are free (semiglobal), and each is aligned to its nearest
row (the fewest edits among the rows sharing the most k-mers) alone, then carried through
that row's columns, so a read or
contig lands where it matches (MAFFT's ``--addfragments`` also aligns fragments to their
closest sequences) instead of where the column mix of a divergent, gappy alignment happens to
score best.

Long pairs (a DP of 2^24 cells or more, e.g. 4 kb x 4 kb) are aligned within a band around
the longest chain of exact k-mer anchors (12-mers for nucleotides, 5-mers for proteins, those
unique in the profile's consensus) shared with the new sequence, widened by 100 columns plus
the length difference of the two sides between consecutive anchors (the indels the band must
hold); a sequence whose anchors cover less than a tenth of it gets the full DP.
"""

from __future__ import annotations

import os

import numpy as np

from ..errors import SequenceFormatError
from ..sequences import DNA, Alphabet, SeqBatch, get_alphabet, guess_alphabet
from .alignment import MultipleAlignment
from .options import MsaOptions
from .scoring import gap_scale, msa_scoring

#: DPs of at least this many cells run in an anchor band (see the module docstring)
BAND_FROM_CELLS = 1 << 24
BAND_RADIUS = 100

_GAP = ord("-")


#: rows whose shared k-mers come near the most (at least this share of it; the top ones
#: always) are told apart by their edit distance to the fragment (see :func:`_nearest_rows`)
NEAR_SHARE = 0.9
NEAR_TOP, NEAR_MOST = 16, 64


def _nearest_rows(native, old: SeqBatch, new: SeqBatch) -> np.ndarray:
    """For each new sequence, the existing row it matches best: the fewest edits aligning the
    shorter of the two within the longer (infix: the read as a stretch of the row), among
    the rows sharing the most distinct k-mers with it (4-mers for proteins, 8-mers for
    nucleotides; the top :data:`NEAR_TOP`, and up to :data:`NEAR_MOST` with at least
    :data:`NEAR_SHARE` of the most); ties: the most k-mers, then the first row. k-mers alone
    do not tell a row holding the read from one a residue short of it (on bali-phy's
    microbotryum, a 60-nt read shares 52 8-mers with both); a longest common subsequence
    would not do either: a 40-residue fragment is a subsequence of many long unrelated
    proteins. A read more than a quarter of its length from every shortlisted row takes the
    row with the most k-mers."""
    k = 8 if old.alphabet is DNA else 4
    index: dict[bytes, list[int]] = {}
    for r in range(len(old)):
        seq = old[r].tobytes()
        for kmer in {seq[i : i + k] for i in range(len(seq) - k + 1)}:
            index.setdefault(kmer, []).append(r)
    rows = np.arange(len(old))
    nearest = np.zeros(len(new), dtype=np.int64)
    for s in range(len(new)):
        read = new[s]
        seq = read.tobytes()
        counts = np.zeros(len(old), dtype=np.int64)
        for kmer in {seq[i : i + k] for i in range(len(seq) - k + 1)}:
            hits = index.get(kmer)
            if hits:
                counts[hits] += 1
        ranked = np.lexsort((rows, -counts))  # most k-mers first, then the first row
        nearest[s] = int(ranked[0])
        most = int(counts[ranked[0]])
        if most == 0:
            continue
        near = (counts[ranked] >= NEAR_SHARE * most) | (np.arange(len(old)) < NEAR_TOP)
        best, bound = None, len(read) // 4  # only a row within `bound` edits can win
        m = len(read)
        # five of the read's k-mers, spread along it, anchor windows in a long row
        probes = [(o, seq[o : o + k]) for o in sorted({0, m // 4, m // 2, 3 * m // 4, m - k})]
        for r in ranked[near & (counts[ranked] > 0)][:NEAR_MOST].tolist():
            e = _edits_to_row(native, read, seq, old[r], probes, bound)
            if e <= bound:
                best, bound = r, e - 1  # a later row must do strictly better
                if e == 0:
                    break
        if best is not None:
            nearest[s] = best
    return nearest


def _edits_to_row(native, read, seq: bytes, row, probes, bound: int) -> int:
    """The fewest edits placing the read within the row (infix), or ``bound + 1``. A row as
    long as the read or longer is searched in windows around the read's probe k-mers found
    in it (the read's length plus ``bound`` on either side): a genome's row costs a few
    windows, not the whole row per read. A row shorter than the read is placed within it."""
    if bound < 0:
        return bound + 1
    if len(row) < len(read):
        return int(native.infix_distance(row, read, bound))
    text = row.tobytes()
    m = len(read)
    best = bound + 1
    seen = set()
    for o, kmer in probes:
        at = text.find(kmer) if len(kmer) else -1
        if at < 0:
            continue
        lo = max(0, at - o - bound)
        if lo in seen:
            continue
        seen.add(lo)
        hi = min(len(text), at - o + m + bound)
        best = min(best, int(native.infix_distance(read, row[lo:hi], min(bound, best - 1))))
        if best == 0:
            break
    return best


def _fragment_paths(native, old: SeqBatch, cols, new: SeqBatch, align, threads: int):
    """(kept columns, paths) of fragments: each is aligned (free end gaps) to its nearest
    row alone (:func:`_nearest_rows`), and the path is carried through that row's columns
    into the whole alignment's; its residues facing a residue of the row land in that
    residue's column, those facing none become insertions after the row's residue before.
    Against the column mix of a divergent, gappy alignment a fragment lands where the mix
    happens to score best; against its nearest row it lands where it matches (MAFFT's
    --addfragments also aligns fragments to their closest sequences)."""
    nearest = _nearest_rows(native, old, new)
    kept_all = np.unique(cols).astype(np.int64)  # every column holding a residue
    paths = [None] * len(new)
    for r in np.unique(nearest).tolist():
        members = np.flatnonzero(nearest == r).tolist()
        row = old.subset([r])
        row_cols = cols[old.offsets[r] : old.offsets[r + 1]]
        kept_r, part, _, _ = align(row, row_cols, new.subset(members))
        where = np.searchsorted(kept_all, np.asarray(kept_r, dtype=np.int64))
        for k, i in enumerate(members):
            paths[i] = _widen_path(np.asarray(part[k], dtype=np.uint8), where, len(kept_all))
    return kept_all, paths


def _widen_path(path: np.ndarray, where: np.ndarray, total: int) -> np.ndarray:
    """A path over a subset of the profile's columns (``where``: their indices among the
    ``total``) as a path over all of them: the other columns face a gap (op 1), an
    insertion (op 2) stays right after the column before it."""
    out: list[int] = []
    nxt = 0  # the next column of the whole profile not yet in the path
    j = 0  # the next column of the subset
    for op in path.tolist():
        if op == 2:
            out.append(2)
            continue
        c = int(where[j])
        out.extend([1] * (c - nxt))
        out.append(op)
        nxt, j = c + 1, j + 1
    out.extend([1] * (total - nxt))
    return np.asarray(out, dtype=np.uint8)


def _alignment(source, alphabet) -> MultipleAlignment:
    from .read import read_alignment

    if isinstance(source, MultipleAlignment):
        return source
    if isinstance(source, (str, os.PathLike)):
        return read_alignment(source, "auto" if isinstance(alphabet, Alphabet) else alphabet)
    raise TypeError(
        f"an existing alignment must be a path or a MultipleAlignment, got {type(source).__name__}"
    )


def _matrix(aln: MultipleAlignment) -> np.ndarray:
    """The rows as an (n, width) uint8 array, '.' read as a gap."""
    if not len(aln):
        return np.zeros((0, 0), np.uint8)
    arr = (
        np.frombuffer("".join(aln.sequences).encode("ascii", "replace"), dtype=np.uint8)
        .reshape(len(aln), aln.width)
        .copy()
    )
    arr[arr == ord(".")] = _GAP
    return arr


def _resolve_alphabet(alphabet, *texts) -> Alphabet:
    if isinstance(alphabet, Alphabet):
        return alphabet
    if str(alphabet).lower() != "auto":
        return get_alphabet(alphabet)
    return guess_alphabet(
        "".join(texts).upper().replace("-", "").replace(".", "").encode("ascii", "replace")
    )


def _residues(arr: np.ndarray, ids, alphabet: Alphabet, source: str):
    """(SeqBatch of the ungapped rows, each residue's column) of an alignment array."""
    mask = arr != _GAP
    rows = [arr[r, mask[r]].tobytes().decode("ascii") for r in range(len(arr))]
    batch = SeqBatch.from_strings(rows, ids=list(ids), alphabet=alphabet, source=source)
    cols = np.nonzero(mask)[1].astype(np.int32)
    return batch, cols


def _check_ids(first: MultipleAlignment, second_headers, what: str) -> None:
    """Refuse a header line in both (rows are told apart by their whole header line)."""
    seen = set(first.headers)
    clash = next((i for i in second_headers if i in seen), None)
    if clash is not None:
        raise SequenceFormatError(
            f"header line {clash!r} is in both {what}; each row needs its own header line"
        )


def _name(source) -> str:
    return str(source) if isinstance(source, (str, os.PathLike)) else "given"


def _one_alphabet(alphabet, first: tuple, second: tuple) -> Alphabet:
    """The alphabet of both sides (``(what, source, raw residue text)`` each), by the
    readers' one rule: with ``alphabet="auto"`` each side is guessed on its own
    (:func:`bioaccel.guess_alphabet`), a side too short to tell takes the other's, and
    different alphabets are refused in one line naming both sides
    (:class:`~bioaccel.errors.AlphabetError`)."""
    from ..sequences import same_alphabet

    if isinstance(alphabet, Alphabet) or str(alphabet).lower() != "auto":
        return _resolve_alphabet(alphabet)
    sides = []
    for what, source, text in (first, second):
        alpha = _resolve_alphabet("auto", text)
        clean = text.upper().replace("-", "").replace(".", "")
        sides.append(SeqBatch.from_strings([clean], ids=[what], alphabet=alpha, source=source))
    a, _ = same_alphabet(sides[0], sides[1], True, True, what=(first[0], second[0]))
    return a.alphabet


def add_to_alignment(records, to, options: MsaOptions) -> MultipleAlignment:
    """The existing alignment ``to`` with the sequences ``records`` = (ids, raw residue
    strings, source, descriptions, header lines) aligned to its columns (see the module docstring;
    :func:`bioaccel.msa` documents the options)."""
    from .._core import load_native
    from .read import check_unique_headers

    alphabet, sc = options.alphabet, options.scoring
    keep_length, fragments, threads = options.keep_length, options.fragments, options.threads
    existing = _alignment(to, alphabet)
    ids, raw, source, descriptions, headers = records
    check_unique_headers(ids, headers, source)
    _check_ids(existing, headers, "the alignment and the sequences added")
    ungapped = [s.replace("-", "").replace(".", "") for s in raw]
    alpha = _one_alphabet(
        alphabet,
        ("the alignment", _name(to), "".join(existing.sequences)),
        ("the sequences added", source or "given", "".join(ungapped)),
    )
    new = SeqBatch.from_strings(
        ungapped,
        ids=list(headers),
        alphabet=alpha,
        source=source,
    )
    arr = _matrix(existing)
    old, cols = _residues(
        arr,
        existing.headers,
        alpha,
        str(to) if not isinstance(to, MultipleAlignment) else "the alignment",
    )
    if not len(old) or old.offsets[-1] == 0:
        raise SequenceFormatError(f"{to}: the alignment holds no residues to add to")
    scoring = msa_scoring(alpha, sc.matrix, sc.gap_open, sc.gap_extend, sc.term_gap, sc.term_gap)
    scoring = scoring.scaled(gap_scale(len(old) + len(new)))
    native = load_native()

    def align(rows: SeqBatch, row_cols, batch: SeqBatch):
        return native.msa_add_to_alignment(
            rows.codes,
            rows.offsets,
            row_cols,
            existing.width,
            batch.codes,
            batch.offsets,
            scoring.letter_of,
            scoring.sub,
            scoring.gaps,
            np.ones(len(rows)),
            bool(fragments),
            BAND_RADIUS,
            BAND_FROM_CELLS,
            threads,
        )

    if not fragments:
        kept, paths, _, _ = align(old, cols, new)
    else:
        kept, paths = _fragment_paths(native, old, cols, new, align, threads)
    width = existing.width
    kept = np.asarray(kept, dtype=np.int64)
    # a boundary k of the profile (0..len(kept)) is the boundary before column b of the
    # alignment: after the profile column before it (all-gap columns stay after insertions)
    boundary = np.concatenate(([0], kept + 1))
    placed = []  # per new sequence: (matched residue index, column), (inserted index, b, rank)
    ins_width = np.zeros(width + 1, dtype=np.int64)
    dropped = []
    for s, path in enumerate(paths):
        ops = np.asarray(path, dtype=np.uint8)
        in_a = ops != 2
        a_before = np.cumsum(in_a) - in_a  # profile columns consumed before each op
        res_ops = ops != 1
        res_index = np.cumsum(res_ops) - 1
        match = ops == 0
        match_res, match_col = res_index[match], kept[a_before[match]]
        ins = ops == 2
        ins_res = res_index[ins]
        ins_b = boundary[a_before[ins]]
        # runs of inserted residues (one per boundary: a run cannot span a profile column)
        starts = np.ones(len(ins_res), dtype=bool)
        if len(ins_res):
            starts[1:] = np.diff(ins_res) != 1
        run_id = np.cumsum(starts) - 1
        run_first = np.nonzero(starts)[0]
        run_len = np.diff(np.append(run_first, len(ins_res)))
        rank = np.arange(len(ins_res)) - run_first[run_id] if len(ins_res) else ins_res
        if keep_length:
            for r0, n_r in zip(run_first.tolist(), run_len.tolist()):
                dropped.append(
                    (ids[s], int(ins_res[r0]) + 1, int(ins_res[r0]) + n_r, int(ins_b[r0]))
                )
        elif len(ins_res):
            np.maximum.at(ins_width, ins_b[run_first], run_len)
        placed.append(
            (
                match_res,
                match_col,
                ins_res,
                ins_b,
                rank,
                run_len[run_id] if len(ins_res) else ins_res,
            )
        )
    # column c of the alignment moves right by the insertions at boundaries 0..c
    shift = np.cumsum(ins_width)
    new_col = np.arange(width) + shift[:width]
    block_start = np.arange(width + 1) + np.concatenate(([0], shift[:-1]))
    total = width + int(shift[-1])
    out = np.full((len(existing) + len(new), total), _GAP, dtype=np.uint8)
    out[: len(existing), new_col] = arr
    for s, (match_res, match_col, ins_res, ins_b, rank, run_len) in enumerate(placed):
        letters = np.frombuffer(ungapped[s].encode("ascii", "replace"), dtype=np.uint8)
        row = out[len(existing) + s]
        row[new_col[match_col]] = letters[match_res]
        if not keep_length and len(ins_res):
            # right-justified before the first column, left-justified elsewhere
            pad = np.where(ins_b == 0, ins_width[ins_b] - run_len, 0)
            row[block_start[ins_b] + pad + rank] = letters[ins_res]
    rows = [r.tobytes().decode("ascii") for r in out]
    result = MultipleAlignment(
        list(existing.ids) + list(ids),
        rows,
        alpha,
        descriptions=list(existing.descriptions) + list(descriptions),
        header_lines=existing.headers + list(headers),
    )
    result.dropped = dropped
    return result


def align_alignments(a, b, options: MsaOptions) -> MultipleAlignment:
    """Two alignments aligned to each other as profiles (sum-of-pairs columns, gap kinds):
    each keeps its columns (those holding a residue; all-gap columns are dropped) and its
    rows' residues; the rows of ``a`` come first."""
    from .._core import load_native

    alphabet, sc = options.alphabet, options.scoring
    aln_a, aln_b = _alignment(a, alphabet), _alignment(b, alphabet)
    _check_ids(aln_a, aln_b.headers, "alignments")
    alpha = _one_alphabet(
        alphabet,
        ("the first alignment", _name(a), "".join(aln_a.sequences)),
        ("the second alignment", _name(b), "".join(aln_b.sequences)),
    )
    arr_a, arr_b = _matrix(aln_a), _matrix(aln_b)
    kept_a = np.nonzero((arr_a != _GAP).any(axis=0))[0]
    kept_b = np.nonzero((arr_b != _GAP).any(axis=0))[0]
    for name, k in ((a, kept_a), (b, kept_b)):
        if not len(k):
            raise SequenceFormatError(f"{name}: the alignment holds no residues")
    # one batch: A's rows on columns 0..wa-1, B's on wa.. (column_of increases per row)
    wa = len(kept_a)
    comb = np.full((len(arr_a) + len(arr_b), wa + len(kept_b)), _GAP, dtype=np.uint8)
    comb[: len(arr_a), :wa] = arr_a[:, kept_a]
    comb[len(arr_a) :, wa:] = arr_b[:, kept_b]
    batch, cols = _residues(
        comb, list(aln_a.headers) + list(aln_b.headers), alpha, "the alignments"
    )
    n = len(batch)
    scoring = msa_scoring(alpha, sc.matrix, sc.gap_open, sc.gap_extend, sc.term_gap, sc.term_gap)
    scoring = scoring.scaled(gap_scale(n))
    native = load_native()
    rows_a = np.arange(len(arr_a), dtype=np.int64)
    rows_b = np.arange(len(arr_a), n, dtype=np.int64)
    path, _, _ = native.msa_profile_pair(
        batch.codes,
        batch.offsets,
        scoring.letter_of,
        scoring.sub,
        scoring.gaps,
        np.ones(n),
        cols,
        rows_a,
        rows_b,
    )
    ops = np.asarray(path, dtype=np.uint8)
    col_a = np.nonzero(ops != 2)[0]
    col_b = np.nonzero(ops != 1)[0]
    out = np.full((n, len(ops)), _GAP, dtype=np.uint8)
    out[: len(arr_a), col_a] = comb[: len(arr_a), :wa]
    out[len(arr_a) :, col_b] = comb[len(arr_a) :, wa:]
    rows = [r.tobytes().decode("ascii") for r in out]
    return MultipleAlignment(
        list(aln_a.ids) + list(aln_b.ids),
        rows,
        alpha,
        descriptions=list(aln_a.descriptions) + list(aln_b.descriptions),
        header_lines=aln_a.headers + aln_b.headers,
    )
