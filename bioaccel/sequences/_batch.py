"""``SeqBatch``: the one sequence layout every backend takes.

All residues of all sequences sit in one contiguous ``uint8`` buffer of alphabet
codes (see :mod:`bioaccel.sequences._alphabet`); ``offsets[i]:offsets[i + 1]`` is sequence ``i``.
The codes fold case and read U as T and ``.`` as ``-``; when the letters given differ from
the codes' own letters, the batch keeps them too (:attr:`SeqBatch.given`), so that what
echoes sequences back (the MSA's rows, ``align``'s aligned strings) writes the user's letters.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import AlignmentLengthError, DuplicateIdError, SequenceFormatError
from ._alphabet import Alphabet, encode, get_alphabet, guess_alphabet, raise_invalid


@dataclass(frozen=True, eq=False)
class SeqBatch:
    """Many sequences in one code buffer.

    Attributes
    ----------
    ids : list of str
        Record identifiers, unique.
    codes : numpy.ndarray of uint8
        Alphabet codes of all sequences, concatenated.
    offsets : numpy.ndarray of int64, shape (n + 1,)
        Sequence ``i`` is ``codes[offsets[i]:offsets[i + 1]]``.
    alphabet : Alphabet
        The alphabet the codes index.
    source : str or None
        File the batch was read from, used in error messages.
    given : numpy.ndarray of uint8 or None
        The letters as given (ASCII, one byte per code, the same offsets): kept by
        :meth:`from_strings` (so by :func:`bioaccel.read_sequences`) only when they differ
        from the codes' letters (lower case, U, ``.``), else None. Computing uses the codes
        alone; :meth:`given_sequence` reads these back.

    Examples
    --------
    >>> b = SeqBatch.from_strings(["ACGT", "AC-T"], ids=["a", "b"])
    >>> len(b), b.alphabet.name, b.lengths.tolist()
    (2, 'dna', [4, 4])
    >>> b.sequence(1)
    'AC-T'
    >>> r = SeqBatch.from_strings(["acgu", "ACGT"])
    >>> r.sequence(0), r.given_sequence(0), r.given_sequence(1)
    ('ACGT', 'acgu', 'ACGT')
    """

    ids: list[str]
    codes: np.ndarray
    offsets: np.ndarray
    alphabet: Alphabet
    source: str | None = None
    given: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.offsets.shape != (len(self.ids) + 1,):
            raise ValueError(
                f"offsets must have {len(self.ids) + 1} entries, got {self.offsets.shape}"
            )
        if self.given is not None and self.given.shape != self.codes.shape:
            raise ValueError(
                f"given letters must match the codes: {self.given.shape} for {self.codes.shape}"
            )
        check_unique_ids(self.ids, self.source)

    @classmethod
    def from_strings(
        cls,
        seqs: Iterable[str | bytes],
        ids: Sequence[str] | None = None,
        alphabet: str | Alphabet = "auto",
        source: str | None = None,
    ) -> SeqBatch:
        """Build a batch from Python strings.

        Parameters
        ----------
        seqs : iterable of str or bytes
            The sequences.
        ids : sequence of str, optional
            Identifiers; ``seq0, seq1, ...`` when omitted.
        alphabet : {"auto", "dna", "rna", "protein"} or Alphabet
            ``"auto"``: see :func:`bioaccel.sequences.guess_alphabet` (DNA when >= 90 % of the
            residues are A/C/G/T/U/N; a file mixing DNA and protein records is refused).

        Raises
        ------
        AlphabetError
            A letter outside the alphabet (names the record, position and letter).
        DuplicateIdError
            Two sequences share an id.
        """
        raw = [s.encode("ascii", "replace") if isinstance(s, str) else bytes(s) for s in seqs]
        if ids is None:
            ids = [f"seq{i}" for i in range(len(raw))]
        ids = [str(i) for i in ids]
        if len(ids) != len(raw):
            raise ValueError(f"{len(ids)} ids for {len(raw)} sequences")
        lengths = np.fromiter((len(r) for r in raw), dtype=np.int64, count=len(raw))
        offsets = np.zeros(len(raw) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        joined = b"".join(raw)
        alpha = (
            guess_alphabet(joined, offsets, ids, source)
            if str(alphabet).lower() == "auto"
            else get_alphabet(alphabet)
        )
        codes, bad = encode(joined, alpha)
        if bad >= 0:
            rec = int(np.searchsorted(offsets, bad, side="right")) - 1
            raise_invalid(
                ids[rec],
                bad - int(offsets[rec]) + 1,
                chr(joined[bad]),
                alpha,
                source,
                guessed=str(alphabet).lower() == "auto",
            )
        letters = np.frombuffer(joined, dtype=np.uint8)
        own = np.frombuffer(alpha.symbols.encode("ascii"), dtype=np.uint8)[codes]
        given = None if np.array_equal(own, letters) else letters.copy()
        return cls(ids, codes, offsets, alpha, source, given)

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    def __getitem__(self, i):
        """``batch[i]``: the codes of sequence ``i`` (negative counts from the end);
        ``batch[a:b:s]``: a new SeqBatch (step 1 shares this batch's code buffer).

        >>> b = SeqBatch.from_strings(["AC", "GGT", "T", "CA"], ids=list("wxyz"))
        >>> b[1:3].ids, b[::-2].ids, b.alphabet.decode(b[-1])
        (['x', 'y'], ['z', 'x'], 'CA')
        """
        if isinstance(i, slice):
            start, stop, step = i.indices(len(self))
            if step == 1:
                return self.slice(start, max(start, stop))
            return self.subset(range(start, stop, step))
        if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer)):
            raise TypeError(f"SeqBatch indices are integers or slices, not {type(i).__name__}")
        n = len(self)
        if not -n <= i < n:
            raise IndexError(f"sequence index {i} outside a batch of {n} sequences")
        i = int(i) % n
        return self.codes[self.offsets[i] : self.offsets[i + 1]]

    def sequence(self, i: int) -> str:
        """Sequence ``i`` in the codes' letters: upper case, U as T, gaps as ``-``."""
        return self.alphabet.decode(self[i])

    def given_sequence(self, i: int) -> str:
        """Sequence ``i`` in the letters it was given in (case, U and ``.`` kept; see
        :attr:`given`): what outputs that echo sequences write."""
        if self.given is None:
            return self.sequence(i)
        self[i]  # the index check
        i = int(i) % len(self)
        return self.given[self.offsets[i] : self.offsets[i + 1]].tobytes().decode("ascii")

    def subset(self, indices: Sequence[int]) -> SeqBatch:
        """A new batch of the sequences at ``indices`` (in that order)."""
        idx = np.asarray(indices, dtype=np.int64)
        parts = [self[int(i)] for i in idx]
        lengths = np.array([len(p) for p in parts], dtype=np.int64)
        offsets = np.zeros(len(parts) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        codes = np.concatenate(parts) if parts else np.zeros(0, np.uint8)
        given = None
        if self.given is not None:
            spans = [self.given[self.offsets[int(i)] : self.offsets[int(i) + 1]] for i in idx]
            given = np.concatenate(spans) if spans else np.zeros(0, np.uint8)
        return SeqBatch(
            [self.ids[int(i)] for i in idx], codes, offsets, self.alphabet, self.source, given
        )

    def slice(self, start: int, stop: int) -> SeqBatch:
        """The sequences [start, stop) as a new batch sharing this batch's code buffer."""
        if not 0 <= start <= stop <= len(self):
            raise IndexError(f"slice [{start}, {stop}) outside a batch of {len(self)} sequences")
        offsets = self.offsets[start : stop + 1] - self.offsets[start]
        span = slice(self.offsets[start], self.offsets[stop])
        given = self.given[span] if self.given is not None else None
        return SeqBatch(
            list(self.ids[start:stop]),
            self.codes[span],
            offsets,
            self.alphabet,
            self.source,
            given,
        )

    def ungapped(self) -> SeqBatch:
        """The sequences with their gaps (``-``, also read from ``.``) removed, ids kept: aligned
        input made usable for alignment-based work (``align``, ``identity``, ``scoredist``),
        which refuses gaps rather than guess. ``?`` and every other letter stay.

        >>> SeqBatch.from_strings(["AC--GT", "-A.C-"], ids=["a", "b"]).ungapped().sequence(1)
        'AC'
        """
        keep = self.codes != self.alphabet.symbols.index("-")
        kept = np.zeros(len(keep) + 1, dtype=np.int64)
        np.cumsum(keep, out=kept[1:])
        return SeqBatch(
            list(self.ids),
            self.codes[keep],
            kept[self.offsets],
            self.alphabet,
            self.source,
            self.given[keep] if self.given is not None else None,
        )

    def as_alignment(self) -> np.ndarray:
        """The codes as an (n, sites) matrix; all sequences must have the same length.

        Raises
        ------
        AlignmentLengthError
            Names the first record whose length differs from the first record's.
        """
        lengths = self.lengths
        if len(self) and np.any(lengths != lengths[0]):
            bad = int(np.flatnonzero(lengths != lengths[0])[0])
            where = f"{self.source}: " if self.source else ""
            raise AlignmentLengthError(
                f"{where}sequences are not aligned: record {self.ids[bad]!r} has length "
                f"{int(lengths[bad])}, but {self.ids[0]!r} has {int(lengths[0])}; an aligned "
                "model needs equal lengths (align first, or use an alignment-free model)"
            )
        sites = int(lengths[0]) if len(self) else 0
        return self.codes.reshape(len(self), sites)


def refuse_aligned(batch: SeqBatch, what: str) -> None:
    """The one "looks aligned" rule of every model that takes unaligned sequences (alignment
    scores, identity, scoredist, edit and k-mer distances): a gap (``-``, also read from
    ``.``) in any sequence refuses the batch with :class:`~bioaccel.errors.AlphabetError`,
    naming the first gap, ``what`` the model would make of it, and the way out
    (:meth:`SeqBatch.ungapped`, ``--ungap``). Nothing is counted silently."""
    from ..errors import AlphabetError

    if "-" not in batch.alphabet.symbols or batch.codes.size == 0:
        return
    gaps = np.flatnonzero(batch.codes == batch.alphabet.symbols.index("-"))
    if not gaps.size:
        return
    pos = int(gaps[0])
    rec = int(np.searchsorted(batch.offsets, pos, side="right")) - 1
    raise AlphabetError(
        f"{batch.source + ': ' if batch.source else ''}letter '-' of sequence "
        f"{batch.ids[rec]!r} at position {pos - int(batch.offsets[rec]) + 1} {what}; the "
        "sequences look aligned: remove the gaps with SeqBatch.ungapped() (command line: "
        "--ungap)"
    )


def check_unique_ids(ids: Sequence[str], source: str | None = None) -> None:
    """Raise :class:`DuplicateIdError` naming both records when an id repeats."""
    seen: dict[str, int] = {}
    where = f"{source}: " if source else ""
    for k, i in enumerate(ids):
        if i == "":
            raise SequenceFormatError(f"{where}record {k + 1} has an empty id")
        if i in seen:
            raise DuplicateIdError(
                f"{where}duplicate id {i!r}: record {seen[i] + 1} and record {k + 1}; "
                "ids must be unique"
            )
        seen[i] = k


def input_fingerprint(batch) -> str:
    """SHA-256 of a batch's ids and residues (alphabet codes and record boundaries), or of a
    sketch set's ids and sketch values: what tiles and resumable ``.cdist`` files record so
    that results of different inputs (an edited alignment under the same ids, gapped and
    ungapped records) are never combined."""
    import hashlib

    h = hashlib.sha256()
    source = batch.values if hasattr(batch, "values") else batch.codes
    h.update(np.ascontiguousarray(source).tobytes())
    h.update(np.ascontiguousarray(batch.offsets).tobytes())
    h.update("\n".join(batch.ids).encode())
    alphabet = getattr(batch, "alphabet", None)
    if alphabet is not None:
        h.update(str(getattr(alphabet, "name", alphabet)).encode())
    return h.hexdigest()
