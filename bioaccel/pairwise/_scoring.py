"""Substitution matrices and gap penalties for alignment.

Gap convention: a gap of length L costs ``gap_open + (L - 1) * gap_extend`` (parasail,
Biopython's ``PairwiseAligner`` with ``open_gap_score=-gap_open``,
``extend_gap_score=-gap_extend``), with ``gap_open >= gap_extend``: a scheme with
``gap_open < gap_extend`` is refused (:func:`make_scoring`), because the Gotoh recurrences
of every backend would then score two adjacent gaps (2 * open) where the reported alignment
shows one gap (open + extend), and score and alignment would disagree. Other tools count differently; convert with
:func:`gaps_from_blast` (BLAST: ``existence + L * extension``) or :func:`gaps_from_skbio`
(scikit-bio's ``pair_align(gap_cost=(open, extend))``: ``open + L * extend``).

Matrices come from Biopython (``Bio.Align.substitution_matrices``), then the
``scoring-matrices`` package (PFASUM43 ...), through :func:`load_matrix`, the one loader of
pairwise alignment and of the MSA engine: a name such as ``"BLOSUM62"``, a loaded ``Array``,
or ``(match, mismatch)`` for nucleotides. Scores must
be integers (all the standard matrices are).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from ..errors import AlphabetError, BioaccelError
from ..sequences import DNA, Alphabet, refuse_aligned

MODES = {"global": 0, "local": 1, "semiglobal": 2}


class ScoringError(BioaccelError, ValueError):
    """A substitution matrix or gap penalty that bioaccel cannot use."""


def gaps_from_blast(existence: int, extension: int) -> tuple[int, int]:
    """BLAST's (existence, extension), gap of length L = existence + L * extension.

    >>> gaps_from_blast(11, 1)
    (12, 1)
    """
    return existence + extension, extension


def gaps_from_skbio(open_: int, extend: int) -> tuple[int, int]:
    """scikit-bio ``pair_align(gap_cost=(open, extend))``: a gap of length L costs
    open + L * extend.

    >>> gaps_from_skbio(5, 2)
    (7, 2)
    """
    return open_ + extend, extend


def scoring_defaults(alphabet: Alphabet, matrix=None, gap_open=None, gap_extend=None) -> tuple:
    """(matrix, gap_open, gap_extend) with bioaccel's defaults for what is None: BLOSUM62
    with 11/1 for proteins, +2/-3 with 5/2 for nucleotides."""
    protein = alphabet is not DNA
    return (
        matrix if matrix is not None else ("BLOSUM62" if protein else (2, -3)),
        gap_open if gap_open is not None else (11 if protein else 5),
        gap_extend if gap_extend is not None else (1 if protein else 2),
    )


def default_scoring(alphabet: Alphabet, matrix=None, gap_open=None, gap_extend=None) -> Scoring:
    """``make_scoring`` with :func:`scoring_defaults` for what is not given."""
    return make_scoring(*scoring_defaults(alphabet, matrix, gap_open, gap_extend), alphabet)


def check_penalty(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ScoringError(f"{name} must be a non-negative integer, got {value!r}")
    if isinstance(value, numbers.Integral):
        v = int(value)
    elif float(value).is_integer():
        v = int(value)
    else:
        raise ScoringError(f"{name} must be a non-negative integer, got {value!r}")
    if v < 0:
        raise ScoringError(f"{name} must be >= 0 (a penalty, subtracted), got {value!r}")
    return v


def parse_mode(mode, modes: dict[str, int], what: str) -> int:
    """The id of ``mode`` in ``modes`` (case, ``-`` and ``_`` ignored); the one check of a
    mode name for every operation: :class:`ScoringError` (a ``ValueError``) naming the
    mode and the choices otherwise."""
    key = str(mode).lower().replace("-", "").replace("_", "")
    if isinstance(mode, str) and key in modes:
        return modes[key]
    raise ScoringError(f"unknown {what} mode {mode!r}; expected one of {list(modes)}")


def check_alignment_mode(mode: str) -> int:
    """The id of an alignment mode (:data:`MODES`)."""
    return parse_mode(mode, MODES, "alignment")


@dataclass(frozen=True, eq=False)
class Scoring:
    """A substitution table over bioaccel's codes of one alphabet, plus gap penalties.

    ``table[x, y]`` scores code x against code y; ``covered[x]`` says whether the matrix
    defines letter x at all (sequences with an uncovered letter are rejected).
    """

    name: str
    alphabet: Alphabet
    table: np.ndarray
    covered: np.ndarray
    gap_open: int
    gap_extend: int

    def check_batch(self, batch) -> None:
        """Raise :class:`AlphabetError` naming the letter, sequence id and position that
        the matrix does not cover, or a batch of another alphabet."""
        if batch.alphabet is not self.alphabet:
            raise AlphabetError(
                f"{batch.source or 'sequences'} read as {batch.alphabet.name}, but the scoring "
                f"uses the {self.alphabet.name} alphabet of {self.name}; mismatched alphabets"
            )
        if batch.codes.size == 0:
            return
        if not self.covered[self.alphabet.symbols.index("-")]:
            refuse_aligned(batch, f"is not in the matrix {self.name}")
        bad = ~self.covered[batch.codes]
        if bad.any():
            pos = int(np.flatnonzero(bad)[0])
            rec = int(np.searchsorted(batch.offsets, pos, side="right")) - 1
            letter = self.alphabet.symbols[int(batch.codes[pos])]
            raise AlphabetError(
                f"{batch.source + ': ' if batch.source else ''}letter {letter!r} of sequence "
                f"{batch.ids[rec]!r} at position {pos - int(batch.offsets[rec]) + 1} is not in "
                f"the matrix {self.name}"
            )


def load_matrix(name: str) -> tuple[str, str, np.ndarray]:
    """(canonical name, letters, float64 values) of a substitution matrix by name, any case:
    the one matrix loader of pairwise alignment and of the MSA engine. Biopython's matrices
    (``Bio.Align.substitution_matrices``) first, then the ``scoring-matrices`` package's
    (PFASUM43 and friends); names resolve against each package's own list, so only their
    spellings are ever loaded.

    >>> load_matrix("blosum62")[:2]
    ('BLOSUM62', 'ARNDCQEGHILKMFPSTWYVBZX*')
    >>> load_matrix("pfasum43")[0]
    'PFASUM43'
    """
    import scoring_matrices
    from Bio.Align import substitution_matrices

    key = str(name).strip().lower()
    bio = {k.lower(): k for k in substitution_matrices.load()}
    if key in bio:
        m = substitution_matrices.load(bio[key])
        return bio[key], "".join(m.alphabet), np.asarray(m, dtype=np.float64)
    more = {k.lower(): k for k in scoring_matrices.ScoringMatrix.BUILTIN_MATRICES}
    if key in more:
        m = scoring_matrices.ScoringMatrix.from_name(more[key])
        return more[key], str(m.alphabet), np.asarray(m, dtype=np.float64)
    known = sorted(set(bio.values()) | set(more.values()))
    raise ScoringError(
        f"unknown substitution matrix {name!r}; known: {', '.join(known)} (any case)"
    )


#: Letters that only amino acids use (no nucleotide or IUPAC code): a matrix holding one
#: of them is a protein matrix.
_PROTEIN_ONLY = frozenset("EFILPQ")
_NUCLEOTIDE_LETTERS = frozenset("ACGTURYSWKMBDHVNX*-")


def matrix_kind(letters) -> str | None:
    """``"protein"``, ``"nucleotide"`` or None (neither, e.g. a codon matrix) for a
    substitution matrix's letters.

    >>> matrix_kind("ARNDCQEGHILKMFPSTWYVBZX*"), matrix_kind("ATGCSWRYKMBVHDN")
    ('protein', 'nucleotide')
    """
    single = {str(c).upper() for c in letters if len(str(c)) == 1}
    if single & _PROTEIN_ONLY:
        return "protein"
    if single and single <= _NUCLEOTIDE_LETTERS:
        return "nucleotide"
    return None


def check_matrix_kind(name: str, letters, alphabet: Alphabet) -> None:
    """Refuse a protein matrix for nucleotides and a nucleotide matrix for proteins
    (:class:`ScoringError`): BLOSUM62 covers A, C, G and T as amino acids and would
    otherwise score DNA silently."""
    kind = matrix_kind(letters)
    want = "nucleotide" if alphabet is DNA else "protein"
    if kind is not None and kind != want:
        other = (
            "a nucleotide matrix (NUC.4.4) or MATCH,MISMATCH such as 2,-3"
            if alphabet is DNA
            else "a protein matrix (BLOSUM62, PAM250, ...)"
        )
        raise ScoringError(
            f"{name} is a {kind} matrix, but the sequences are {alphabet.name}; mismatched "
            f"alphabets: give {other}, or name the alphabet (--alphabet) if the sequences are "
            f"{'proteins' if kind == 'protein' else 'nucleotides'}"
        )


def make_scoring(matrix, gap_open, gap_extend, alphabet: Alphabet) -> Scoring:
    """Resolve ``matrix`` (name, Biopython Array, or (match, mismatch)) for ``alphabet``.

    The one check of a pairwise scoring scheme: penalties are non-negative integers with
    ``gap_open >= gap_extend`` (see the module docstring for why), and a named matrix must
    be of ``alphabet``'s kind.
    """
    gap_open = check_penalty("gap_open", gap_open)
    gap_extend = check_penalty("gap_extend", gap_extend)
    if gap_open < gap_extend:
        raise ScoringError(
            f"gap_open ({gap_open}) < gap_extend ({gap_extend}) is not supported: a gap of length L "
            "costs gap_open + (L - 1) * gap_extend, so gap_open must be >= gap_extend (for BLAST's "
            "existence/extension use gaps_from_blast)"
        )
    size = alphabet.size
    symbols = alphabet.symbols
    if isinstance(matrix, tuple) and len(matrix) == 2:
        match, mismatch = (check_score("match", matrix[0]), check_score("mismatch", matrix[1]))
        table = np.full((size, size), mismatch, dtype=np.int32)
        np.fill_diagonal(table, match)
        covered = np.array([ch not in "-?" for ch in symbols])
        return Scoring(
            f"match={match}/mismatch={mismatch}", alphabet, table, covered, gap_open, gap_extend
        )
    if isinstance(matrix, str):
        name, letters, values = load_matrix(matrix)
    else:
        name, letters = "the given matrix", getattr(matrix, "alphabet", None)
        if letters is None or np.asarray(matrix).ndim != 2:
            raise ScoringError(
                f"matrix must be a name, a Biopython substitution matrix or (match, mismatch), got {type(matrix).__name__}"
            )
        values = np.asarray(matrix, dtype=np.float64)
    check_matrix_kind(name, letters, alphabet)
    index = {str(ch).upper(): k for k, ch in enumerate(letters)}
    table = np.zeros((size, size), dtype=np.int32)
    covered = np.zeros(size, dtype=bool)
    rows = []
    for code, ch in enumerate(symbols):
        k = index.get(ch)
        if k is None and alphabet is DNA and ch == "T":
            k = index.get("U")
        rows.append(k)
        covered[code] = k is not None
    for x, kx in enumerate(rows):
        for y, ky in enumerate(rows):
            if kx is None or ky is None:
                continue
            v = values[kx, ky]
            if not np.isfinite(v) or v != round(v):
                raise ScoringError(
                    f"{name} scores ({symbols[x]}, {symbols[y]}) as {float(v)!r}; pairwise "
                    "alignment needs integer scores (a matrix of real scores is for the MSA "
                    "engine; give an integer matrix such as BLOSUM62)"
                )
            table[x, y] = int(v)
    if not covered.any():
        raise ScoringError(
            f"{name} covers no letter of the {alphabet.name} alphabet; mismatched alphabets"
        )
    return Scoring(name, alphabet, table, covered, gap_open, gap_extend)


def check_score(name: str, value) -> int:
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not float(value).is_integer()
    ):
        raise ScoringError(f"{name} score must be an integer, got {value!r}")
    return int(value)
