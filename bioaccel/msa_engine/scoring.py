"""MsaScoring for multiple alignment: a substitution matrix over score letters, the map from
bioaccel's alphabet codes to those letters, and the four gap penalties.

Defaults follow FAMSA 2 (Deorowicz et al. 2016; PFASUM43 since FAMSA 2.4): proteins are
scored with PFASUM43 (Keul et al. 2017, from the ``scoring-matrices`` package), gap open
14.85, extend 1.25, and 0.66 for each column of a leading or trailing gap; nucleotides with
NUC.4.4 (EDNAFULL, partial scores for IUPAC codes) mapped linearly from its +5/-4 to +5/-1, and
the same gaps. The gaps were tuned against PFASUM43, whose mismatches average -1.2: with
NUC.4.4's -4 a gap is cheaper than a few mismatches, and divergent DNA families came out
over-gapped (simulated families, 200-1,000 sequences at 0.3-1.5 substitutions per site: SP
0.15-0.99 with +5/-4, 0.48-0.995 with +5/-1, FAMSA2 0.27-0.995). For 45 sequences
or more every penalty is scaled by ``1 + log2(N / 45) / 7`` (FAMSA's rule: deep profiles
need costlier gaps). Penalties are positive numbers that are subtracted.

Ambiguous letters score as the expected score of what they may stand for (uniform over
their possibilities), in every matrix: B (D/N), Z (E/Q), J (I/L) and X (any of the 20 amino
acids), and the IUPAC nucleotide codes (R = A/G, ..., N = any), so an unknown residue costs
an average pair, never the gap-forcing penalty some matrices give X (PFASUM43 scores X
-13.4 against everything, and masking residues as X blew alignments up to four times their
width). A stop codon ``*`` that the matrix lacks scores the mean identity of the 20 amino
acids against another ``*`` and their mean mismatch against anything else, so stops line up.
Other letters outside a matrix's alphabet are mapped to its nearest letter: U
(selenocysteine) to C, O (pyrrolysine) to K, ``?`` to X for proteins; ``?`` to N for
nucleotides.
"""

from __future__ import annotations

import math
import numbers
import re
from dataclasses import dataclass

import numpy as np

from ..pairwise import ScoringError, check_matrix_kind, load_matrix
from ..sequences import DNA, PROTEIN, Alphabet

PROTEIN_DEFAULT = "PFASUM43"
DNA_DEFAULT = "NUC.4.4"
#: the default nucleotide scores: NUC.4.4's match / mismatch (+5 / -4) mapped to these
DNA_MATCH, DNA_MISMATCH = 5.0, -1.0
DEFAULT_GAPS = (14.85, 1.25, 0.66, 0.66)
GAP_SCALE_FROM = 45

_PROTEIN_FALLBACK = {"U": "C", "O": "K", "?": "X"}
_DNA_FALLBACK = {"?": "N", "U": "T"}
#: what each ambiguous letter may stand for (its score: the mean over these)
AMINO_ACIDS = "ARNDCQEGHILKMFPSTWYV"
PROTEIN_AMBIGUITY = {"B": "DN", "Z": "EQ", "J": "IL", "X": AMINO_ACIDS}
NUCLEOTIDE_AMBIGUITY = {
    "R": "AG",
    "Y": "CT",
    "S": "CG",
    "W": "AT",
    "K": "GT",
    "M": "AC",
    "B": "CGT",
    "D": "AGT",
    "H": "ACT",
    "V": "ACG",
    "N": "ACGT",
}


@dataclass(frozen=True)
class MsaScoring:
    """A matrix over ``letters`` score letters and gap penalties, ready for the engine."""

    name: str
    alphabet: Alphabet
    sub: np.ndarray  # float32 (K, K)
    letter_of: np.ndarray  # int16 (256,): bioaccel code -> score letter, -1 for gaps
    gap_open: float
    gap_extend: float
    term_open: float
    term_extend: float

    @property
    def gaps(self) -> tuple[float, float, float, float]:
        return (self.gap_open, self.gap_extend, self.term_open, self.term_extend)

    def scaled(self, factor: float) -> MsaScoring:
        """The same scoring with every gap penalty multiplied by ``factor``."""
        return MsaScoring(
            self.name, self.alphabet, self.sub, self.letter_of, *(g * factor for g in self.gaps)
        )


def gap_scale(n: int) -> float:
    """FAMSA's gap scaling for ``n`` sequences: 1 below 45, then 1 + log2(n / 45) / 7."""
    return 1.0 if n < GAP_SCALE_FROM else 1.0 + math.log2(n / GAP_SCALE_FROM) / 7.0


def _load_matrix(name: str) -> tuple[str, np.ndarray, str]:
    """(letters, values, canonical name) of a named matrix: pairwise's one loader
    (:func:`bioaccel.pairwise.load_matrix`), in this module's order."""
    canonical, letters, values = load_matrix(name)
    return letters, values, canonical


_MATCH_MISMATCH = re.compile(r"^\s*([-+]?[0-9]+(?:\.[0-9]*)?)\s*,\s*([-+]?[0-9]+(?:\.[0-9]*)?)\s*$")


def _match_mismatch(matrix):
    """(match, mismatch) of ``(2, -3)`` or ``"2,-3"``, or None for anything else."""
    if isinstance(matrix, str):
        m = _MATCH_MISMATCH.match(matrix)
        return (float(m.group(1)), float(m.group(2))) if m else None
    if isinstance(matrix, (tuple, list)) and len(matrix) == 2:
        if not all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in matrix):
            raise ScoringError(
                f"matrix {matrix!r}: expected (match, mismatch) numbers such as (2, -3)"
            )
        return float(matrix[0]), float(matrix[1])
    return None


def _matrix_from(matrix, protein: bool) -> tuple[str, np.ndarray, str]:
    pair = _match_mismatch(matrix)
    if pair is not None:
        match, mismatch = pair
        if not (math.isfinite(match) and math.isfinite(mismatch)) or match <= mismatch:
            raise ScoringError(
                f"matrix {matrix!r}: expected MATCH,MISMATCH with the match score above the "
                "mismatch score, such as 2,-3"
            )
        letters = AMINO_ACIDS if protein else "ACGT"
        values = np.full((len(letters), len(letters)), mismatch)
        np.fill_diagonal(values, match)
        return letters, values, f"match={match:g}/mismatch={mismatch:g}"
    if isinstance(matrix, str):
        return _load_matrix(matrix)
    letters = getattr(matrix, "alphabet", None)
    values = np.asarray(matrix, dtype=np.float64)
    if letters is None or values.ndim != 2 or values.shape[0] != values.shape[1]:
        raise ScoringError(
            "matrix must be a name, MATCH,MISMATCH (such as 2,-3 or (2, -3)), or a Biopython "
            f"or scoring-matrices matrix, got {type(matrix).__name__}"
        )
    return "".join(letters), values, "the given matrix"


def _dna_default() -> tuple[str, np.ndarray, str]:
    """NUC.4.4 with its +5 / -4 mapped linearly to DNA_MATCH / DNA_MISMATCH (the IUPAC codes'
    partial scores move with them)."""
    letters, values, name = _load_matrix(DNA_DEFAULT)
    lo, hi = values.min(), values.max()
    mapped = (values - lo) / (hi - lo) * (DNA_MATCH - DNA_MISMATCH) + DNA_MISMATCH
    return letters, mapped, f"{name} (+{DNA_MATCH:g}/{DNA_MISMATCH:g})"


def with_expected_ambiguity(
    letters: str, values: np.ndarray, protein: bool
) -> tuple[str, np.ndarray]:
    """``letters``/``values`` with every ambiguity code (B, Z, J, X; IUPAC nucleotide codes)
    scored as the mean over its possibilities' pairs (added when the matrix lacks it), and,
    for proteins, a stop ``*`` added when missing (the 20 amino acids' mean identity against
    ``*``, their mean mismatch against anything else). Codes none of whose possibilities the
    matrix holds are left as they are."""
    values = np.asarray(values, dtype=np.float64)
    table = PROTEIN_AMBIGUITY if protein else NUCLEOTIDE_AMBIGUITY
    standard = [ch for ch in (AMINO_ACIDS if protein else "ACGT") if ch in letters]
    if not standard:
        return letters, values
    where = {ch: letters.index(ch) for ch in standard}
    options = {ch: [ch] for ch in standard}
    for code, stands in table.items():
        present = [ch for ch in stands if ch in where]
        if present:
            options[code] = present
    new_letters = letters + "".join(ch for ch in options if ch not in letters)
    stop = protein and "*" not in new_letters
    if stop:
        new_letters += "*"
    size = len(new_letters)
    out = np.zeros((size, size))
    out[: len(letters), : len(letters)] = values
    base = values[np.ix_([where[c] for c in standard], [where[c] for c in standard])]
    sub = {(a, b): base[i, j] for i, a in enumerate(standard) for j, b in enumerate(standard)}
    pos = {ch: k for k, ch in enumerate(new_letters)}
    for u, pu in options.items():
        for v, pv in options.items():
            if u in standard and v in standard:
                continue
            out[pos[u], pos[v]] = np.mean([sub[a, b] for a in pu for b in pv])
    if stop:
        identity = float(np.mean(np.diag(base)))
        mismatch = float((base.sum() - np.trace(base)) / max(base.size - len(base), 1))
        s = pos["*"]
        out[s, :] = out[:, s] = mismatch
        out[s, s] = identity
    return new_letters, out


def _check_penalty(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise ScoringError(f"{name} must be a finite number >= 0, got {value!r}")
    if value < 0:
        raise ScoringError(f"{name} must be >= 0 (a penalty, subtracted), got {value!r}")
    return float(value)


def msa_scoring(
    alphabet: Alphabet,
    matrix=None,
    gap_open=None,
    gap_extend=None,
    term_open=None,
    term_extend=None,
) -> MsaScoring:
    """Resolve the matrix and penalties for ``alphabet`` (None: the defaults above).

    Raises
    ------
    ScoringError
        An unknown matrix, a matrix that covers none of the alphabet's letters, a letter of
        the alphabet the matrix cannot score, or a negative or non-finite penalty.
    """
    protein = alphabet is PROTEIN
    if matrix is None or (isinstance(matrix, str) and matrix.lower() == "auto"):
        letters, values, name = (
            _matrix_from(PROTEIN_DEFAULT, protein) if protein else _dna_default()
        )
    else:
        letters, values, name = _matrix_from(matrix, protein)
        check_matrix_kind(name, letters, alphabet)  # match/mismatch: the alphabet's own letters
    letters = letters.upper()
    letters, values = with_expected_ambiguity(letters, values, protein)
    index = {ch: k for k, ch in enumerate(letters)}
    fallback = _PROTEIN_FALLBACK if protein else _DNA_FALLBACK
    letter_of = np.full(256, -1, dtype=np.int16)
    for code, ch in enumerate(alphabet.symbols):
        if ch in "-.":
            continue
        k = index.get(ch)
        if k is None and ch in fallback:
            k = index.get(fallback[ch])
        if k is None and "X" in index and protein:
            k = index["X"]
        if k is None and "N" in index and not protein:
            k = index["N"]
        if k is None:
            raise ScoringError(
                f"{name} cannot score the {alphabet.name} letter {ch!r} (its letters: {letters})"
            )
        letter_of[code] = k
    if not np.all(np.isfinite(values)):
        raise ScoringError(f"{name} holds non-finite scores")
    if len(letters) > 32:
        raise ScoringError(f"{name} has {len(letters)} letters; the engine takes at most 32")
    defaults = DEFAULT_GAPS
    gaps = [
        defaults[k] if v is None else _check_penalty(label, v)
        for k, (v, label) in enumerate(
            (
                (gap_open, "gap_open"),
                (gap_extend, "gap_extend"),
                (term_open, "term_open"),
                (term_extend, "term_extend"),
            )
        )
    ]
    return MsaScoring(name, alphabet, values.astype(np.float32), letter_of, *gaps)


__all__ = ["MsaScoring", "msa_scoring", "gap_scale", "DNA", "PROTEIN"]
