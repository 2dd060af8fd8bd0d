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


def guess_alphabet(raw: bytes) -> Alphabet:
    """DNA when every letter of ``raw`` is a nucleotide/IUPAC/gap symbol, else protein.

    Sequences made only of ``N``, gaps and ``ACGT`` read as DNA; anything with a letter
    outside the nucleotide table (E, F, I, L, P, Q, ...) reads as protein.
    """
    codes = DNA.table[np.frombuffer(raw, dtype=np.uint8)]
    return DNA if not np.any(codes == INVALID) else PROTEIN


def encode(raw: bytes, alphabet: Alphabet) -> tuple[np.ndarray, int]:
    """Codes for ``raw`` and the index of the first invalid byte (-1 if none)."""
    codes = alphabet.table[np.frombuffer(raw, dtype=np.uint8)]
    bad = np.flatnonzero(codes == INVALID)
    return codes, int(bad[0]) if bad.size else -1


def describe_invalid(alphabet: Alphabet) -> str:
    return f"a {alphabet.name} letter ({alphabet.symbols}, case-insensitive)"


def raise_invalid(seq_id: str, position: int, letter: str, alphabet: Alphabet,
                  source: str | None = None) -> None:
    where = f"{source}: " if source else ""
    raise AlphabetError(
        f"{where}record {seq_id!r}, position {position}: invalid letter {letter!r}; "
        f"expected {describe_invalid(alphabet)}"
    )
