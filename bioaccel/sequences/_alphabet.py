"""Alphabets and the encoding every backend shares: one uint8 code per residue.

Nucleotides (``"dna"``; RNA reads the same, U is coded as T):

====  ======================================================
code  letters
====  ======================================================
0-3   A C G T (U)
4-14  IUPAC ambiguity codes R Y S W K M B D H V N
15    gap (``-`` or ``.``)
16    unknown (``?``)
====  ======================================================

Proteins (``"protein"``): the 20 standard amino acids in ``ARNDCQEGHILKMFPSTWYV``
order, then B Z J U O X ``*``, gap (``-``/``.``) and ``?``.

Letters are case-folded. Any other byte is an :class:`~bioaccel.errors.AlphabetError`
naming the record, the 1-based position and the letter.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np

from ..errors import AlphabetError

INVALID = 255


@dataclass(frozen=True)
class Alphabet:
    """An ordered set of symbols and the byte -> code table that reads them."""

    name: str
    symbols: str
    aliases: dict[str, str] = field(default_factory=dict)

    @property
    def size(self) -> int:
        return len(self.symbols)

    @property
    def table(self) -> np.ndarray:
        return _tables[self.name]

    def code(self, letter: str) -> int:
        return int(self.table[ord(letter)])

    def decode(self, codes: np.ndarray) -> str:
        return "".join(self.symbols[c] for c in np.asarray(codes))


def _build_table(alpha: Alphabet) -> np.ndarray:
    table = np.full(256, INVALID, dtype=np.uint8)
    for code, ch in enumerate(alpha.symbols):
        table[ord(ch)] = code
        table[ord(ch.lower())] = code
    for alias, target in alpha.aliases.items():
        for ch in (alias, alias.lower()):
            table[ord(ch)] = alpha.symbols.index(target)
    return table


DNA = Alphabet("dna", "ACGTRYSWKMBDHVN-?", aliases={"U": "T", ".": "-"})
PROTEIN = Alphabet("protein", "ARNDCQEGHILKMFPSTWYVBZJUOX*-?", aliases={".": "-"})
ALPHABETS = {"dna": DNA, "rna": DNA, "nucleotide": DNA, "protein": PROTEIN}
_tables = {a.name: _build_table(a) for a in (DNA, PROTEIN)}

#: DNA codes below this are the four unambiguous bases A, C, G, T.
DNA_KNOWN = 4
DNA_GAP = DNA.symbols.index("-")


def get_alphabet(name: str | Alphabet) -> Alphabet:
    """Return the :class:`Alphabet` called ``name`` (``dna``, ``rna``, ``protein``)."""
    if isinstance(name, Alphabet):
        return name
    try:
        return ALPHABETS[str(name).lower()]
    except KeyError:
        raise AlphabetError(
            f"unknown alphabet {name!r}; expected one of {sorted(ALPHABETS)} or 'auto'"
        ) from None


#: ``auto`` reads nucleotides when at least this share of the residues (letters, not gaps,
#: ``?`` or ``*``) are A, C, G, T, U or N (the 90 % rule of lastz and other sequence
#: tools); the other IUPAC codes (R Y S W K M B D H V) are amino acids as often as bases,
#: so they count for neither.
NUCLEOTIDE_SHARE = 0.9
#: Fewer residues than this, all of them A/C/G/T/U/N, are ambiguous (a peptide such as
#: ``GAGA`` reads the same): ``auto`` takes DNA and says so in the log (``-v``).
AMBIGUOUS_BELOW = 20
#: Records with at least this many residues count as evidence in the mixed-file check.
EVIDENCE_RESIDUES = 20

_log = logging.getLogger("bioaccel")
_NUC = np.zeros(256, dtype=bool)
_LETTER = np.zeros(256, dtype=bool)
for _ch in "ACGTUN":
    _NUC[ord(_ch)] = _NUC[ord(_ch.lower())] = True
for _b in range(256):
    _LETTER[_b] = chr(_b).isascii() and chr(_b).isalpha()


def _shares(raw: bytes, offsets=None) -> tuple[np.ndarray, np.ndarray]:
    """(residues, nucleotide letters) per record (one record when ``offsets`` is None);
    two bytes of temporaries per residue, whatever the file's size."""
    b = np.frombuffer(raw, dtype=np.uint8)
    letter, nuc = _LETTER[b], _NUC[b]
    if offsets is None:
        return np.array([np.count_nonzero(letter)]), np.array([np.count_nonzero(nuc)])
    off = np.asarray(offsets, dtype=np.int64)
    filled = np.diff(off) > 0
    per_letter = np.zeros(len(off) - 1, dtype=np.int64)
    per_nuc = np.zeros(len(off) - 1, dtype=np.int64)
    if filled.any():  # reduceat over the non-empty records' starts (empty ones hold 0)
        starts = off[:-1][filled]
        per_letter[filled] = np.add.reduceat(letter.view(np.uint8), starts, dtype=np.int64)
        per_nuc[filled] = np.add.reduceat(nuc.view(np.uint8), starts, dtype=np.int64)
    return per_letter, per_nuc


def guess_alphabet(
    raw: bytes, offsets=None, ids=None, source: str | None = None, shares=None
) -> Alphabet:
    """The alphabet ``auto`` reads ``raw`` (all records' bytes, concatenated) in.

    DNA when at least :data:`NUCLEOTIDE_SHARE` of the residues are A, C, G, T, U or N,
    else protein: ``MKWVTGHRSACDNK`` (every letter also an IUPAC nucleotide code) is a
    protein, and DNA with a stray letter (``X``, ``E``) stays DNA, so that the letter is
    then refused by name (give ``alphabet="protein"`` if it really is a protein) instead of
    the whole file silently turning into protein. Fewer than :data:`AMBIGUOUS_BELOW`
    residues, all A/C/G/T/U/N, read as DNA and the choice is logged (``-v``).

    With ``offsets`` (records ``offsets[i]:offsets[i + 1]``), a file holding both a record
    that is plainly DNA and one that is plainly protein (each at least
    :data:`EVIDENCE_RESIDUES` residues; >= 90 % and < 60 % A/C/G/T/U/N) is refused.
    ``shares``: the (letters, A/C/G/T/U/N letters) counts per record when the caller's
    reader has them already (the C++ FASTA reader of :mod:`bioaccel.neighbors`).

    Raises
    ------
    AlphabetError
        A mixed file (names a record of each kind).

    >>> guess_alphabet(b"MKWVTGHRSACDNK").name, guess_alphabet(b"ACGTTGCAXACGTTGCAACGT").name
    ('protein', 'dna')
    """
    many = offsets is not None and len(offsets) > 2
    if shares is not None:  # (letters, A/C/G/T/U/N) per record, counted by the caller's reader
        per_l, per_n = (np.asarray(x, dtype=np.int64) for x in shares)
        if not many:
            per_l, per_n = np.array([per_l.sum()]), np.array([per_n.sum()])
    else:
        per_l, per_n = _shares(raw, offsets if many else None)  # one pass over the bytes
    n, k = int(per_l.sum()), int(per_n.sum())
    if many:
        big = per_l >= EVIDENCE_RESIDUES
        dna_like = np.flatnonzero(big & (per_n >= NUCLEOTIDE_SHARE * per_l))
        prot_like = np.flatnonzero(big & (per_n < 0.6 * per_l))
        if dna_like.size and prot_like.size:

            def name(i):
                return repr(ids[i]) if ids is not None else f"record {i + 1}"

            d, p = int(dna_like[0]), int(prot_like[0])
            where = f"{source}: " if source else ""
            raise AlphabetError(
                f"{where}mixed alphabets: {name(d)} reads as DNA ({per_n[d] / per_l[d]:.0%} "
                f"A/C/G/T/U/N) but {name(p)} as protein ({per_n[p] / per_l[p]:.0%}); split the "
                "file, or name the alphabet (alphabet= / --alphabet dna|rna|protein)"
            )
    if n == 0 or k >= NUCLEOTIDE_SHARE * n:
        if 0 < n < AMBIGUOUS_BELOW and k == n:
            _log.info(
                "%s%d residues, all A/C/G/T/U/N: ambiguous, read as DNA (give "
                "alphabet='protein' / --alphabet protein for peptides)",
                f"{source}: " if source else "",
                n,
            )
        return DNA
    return PROTEIN


def ambiguous(raw: bytes) -> bool:
    """True when ``raw`` is too short to tell DNA from protein: fewer than
    :data:`AMBIGUOUS_BELOW` residues, all of them A/C/G/T/U/N (at least one)."""
    letters, nuc = _shares(raw)
    return 0 < int(letters[0]) < AMBIGUOUS_BELOW and int(nuc[0]) == int(letters[0])


def encode(raw: bytes, alphabet: Alphabet) -> tuple[np.ndarray, int]:
    """Codes for ``raw`` and the index of the first invalid byte (-1 if none)."""
    codes = alphabet.table[np.frombuffer(raw, dtype=np.uint8)]
    bad = np.flatnonzero(codes == INVALID)
    return codes, int(bad[0]) if bad.size else -1


def describe_invalid(alphabet: Alphabet) -> str:
    return f"a {alphabet.name} letter ({alphabet.symbols}, case-insensitive)"


def raise_invalid(
    seq_id: str,
    position: int,
    letter: str,
    alphabet: Alphabet,
    source: str | None = None,
    guessed: bool = False,
) -> None:
    where = f"{source}: " if source else ""
    why = ""
    if guessed:
        why = (
            f" (the file reads as {alphabet.name} by its letters; name the alphabet with "
            "alphabet= / --alphabet if it is not"
            + ("; masked bases are N, not X" if alphabet is DNA and letter in "xX" else "")
            + ")"
        )
    raise AlphabetError(
        f"{where}record {seq_id!r}, position {position}: invalid letter {letter!r}; "
        f"expected {describe_invalid(alphabet)}{why}"
    )
