"""``MultipleAlignment``: the rows of a multiple alignment, in input order, with writers and
distances."""

from __future__ import annotations

import os

import numpy as np

from ..sequences._alphabet import DNA, PROTEIN, Alphabet
from ..distances._matrix import DistanceMatrix

#: formats of :meth:`MultipleAlignment.write` -> Biopython ``Bio.Align`` writer names
FORMATS = {"fasta": "fasta", "clustal": "clustal", "stockholm": "stockholm", "a2m": "a2m",
           "phylip": "phylip"}
#: extensions :meth:`MultipleAlignment.write` reads a format from when none is given
EXTENSIONS = {".fa": "fasta", ".fasta": "fasta", ".fas": "fasta", ".afa": "fasta",
              ".aln": "clustal", ".clustal": "clustal", ".sto": "stockholm",
              ".stockholm": "stockholm", ".a2m": "a2m", ".phy": "phylip", ".phylip": "phylip"}
#: protein distance models of :meth:`MultipleAlignment.distance_matrix`


class MultipleAlignment:
    """A multiple alignment: ``ids`` and gapped ``sequences`` (``-`` for gaps, all of one
    length), rows in input order.

    Attributes
    ----------
    ids : list of str
    sequences : list of str
        Each row holds its input sequence's letters (case and IUPAC codes as given) and
        ``-``; removing the gaps gives the input back.
    alphabet : Alphabet
    guide_tree : Tree or None
        The guide tree the engine followed (tips labelled with ``ids``, every one: empty
        sequences, which take no part, joined at the root), None for one sequence.
    dropped : list of (id, start, end, after_column)
        Residues left out of added rows (``msa(add=..., keep_length=True)``): residues
        start..end (1-based) of sequence ``id``, which fell between columns ``after_column``
        and ``after_column + 1`` (1-based; 0: before the first); empty otherwise.
    mode : str or None
        The mode :func:`bioaccel.msa` aligned in (``"accurate"`` or ``"fast"``), None for
        an alignment read from a file.
    """

    def __init__(self, ids, sequences, alphabet: Alphabet = PROTEIN, guide_tree=None,
                 mode: str | None = None):
        self.mode = mode
        self.ids = list(ids)
        self.sequences = list(sequences)
        self.alphabet = alphabet
        self.guide_tree = guide_tree
        self.dropped: list[tuple[str, int, int, int]] = []
        if len(self.ids) != len(self.sequences):
            raise ValueError(f"{len(self.ids)} ids for {len(self.sequences)} rows")
        widths = {len(s) for s in self.sequences}
        if len(widths) > 1:
            raise ValueError(f"rows of different lengths: {sorted(widths)}")

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def width(self) -> int:
        """Number of columns."""
        return len(self.sequences[0]) if self.sequences else 0

    def __repr__(self) -> str:
        return f"<MultipleAlignment {len(self)} rows x {self.width} columns ({self.alphabet.name})>"

    def __getitem__(self, key):
        if isinstance(key, str):
            return self.sequences[self.ids.index(key)]
        return self.sequences[key]

    def to_biopython(self):
        """A ``Bio.Align.Alignment`` of SeqRecords named by ``ids``."""
        from Bio.Align import Alignment
        from Bio.Seq import Seq
        from Bio.SeqRecord import SeqRecord

        gapped = self.sequences
        records = [SeqRecord(Seq(s.replace("-", "")), id=i, description="")
                   for i, s in zip(self.ids, gapped)]
        coords = np.zeros((len(gapped), self.width + 1), dtype=np.int64)
        for r, s in enumerate(gapped):
            res = np.frombuffer(s.encode("ascii", "replace"), dtype=np.uint8) != ord("-")
            np.cumsum(res, out=coords[r, 1:])
        # keep only the column boundaries where some row changes between gap and residue
        if self.width:
            step = np.diff(coords, axis=1) > 0
            keep = np.ones(self.width + 1, dtype=bool)
            keep[1:-1] = np.any(step[:, 1:] != step[:, :-1], axis=0)
            coords = coords[:, keep]
        return Alignment(records, coords)

    def write(self, path: str | os.PathLike, format: str | None = None) -> None:
        """Write atomically in ``format`` (fasta, clustal, stockholm, a2m, phylip; None: from
        the extension, FASTA for others) through Biopython's writers (A2M: columns with residues in at least half of the rows
        are match states). PHYLIP is the relaxed
        (sequential) kind: ids are written whole and must not hold spaces.

        Raises
        ------
        ValueError
            An unknown format, or ids PHYLIP cannot hold.
        """
        from ..sequences._read import atomic_output

        fmt = _format_for(path, format)
        if fmt == "phylip":
            bad = next((i for i in self.ids if any(ch.isspace() for ch in i)), None)
            if bad is not None:
                raise ValueError(f"PHYLIP ids cannot hold spaces: {bad!r}; write FASTA, "
                                 "Clustal or Stockholm instead")
        if fmt == "fasta":
            text = "".join(f">{i}\n{s}\n" for i, s in zip(self.ids, self.sequences))
        else:
            text = format_alignment(self.to_biopython(), FORMATS[fmt])
        with atomic_output(path) as fh:
            fh.write(text)

    def distance_matrix(self, model: str = "auto", *, pairwise_deletion: bool = True,
                        threads: int = 0) -> DistanceMatrix:
        """Pairwise distances from the aligned columns.

        Proteins: ``p`` (proportion of differing sites), ``poisson`` (-ln(1 - p)), ``kimura``
        (Kimura 1983: -ln(1 - p - 0.2 p^2)); sites where either row has a gap (or X, ``*``,
        ``?``) are left out of that pair (pairwise deletion; ``ape::dist.aa(pairwise.deletion =
        TRUE, scaled = TRUE)`` deletes only ``X``, so it gives the same ``p`` once gaps and
        other unknown letters are coded ``X``, and counts a gap as a difference otherwise); a pair with no
        site left, or past the model's saturation, gets NaN/Inf, never a clamped value.
        Nucleotides: any model of :func:`bioaccel.distance_matrix` (``raw``, ``jc69``, ``k80``,
        ``f81``, ``tn93``, ``logdet``...). ``auto``: ``kimura`` for proteins, ``k80`` for DNA.
        """
        from ..distances._compute import distance_matrix
        from ..sequences._batch import SeqBatch
        key = str(model).lower()
        if key == "auto":
            key = "k80" if self.alphabet is DNA else "kimura"
        batch = SeqBatch.from_strings(self.sequences, ids=self.ids, alphabet=self.alphabet)
        return distance_matrix(batch, key, pairwise_deletion=pairwise_deletion, threads=threads)


def format_alignment(alignment, fmt: str) -> str:
    """Biopython's text of ``alignment`` in ``fmt``; Clustal gets its header line
    (``CLUSTAL (bioaccel) multiple sequence alignment``), which Clustal readers need."""
    if fmt == "stockholm" and not hasattr(alignment, "column_annotations"):
        alignment.column_annotations = {}
    if fmt == "a2m":  # match states: columns with residues in at least half of the rows
        occupied = np.array([[c != "-" for c in row] for row in alignment], dtype=bool)
        match = occupied.mean(axis=0) >= 0.5 if occupied.size else np.zeros(0, bool)
        alignment.column_annotations = {"state": "".join("D" if m else "I" for m in match)}
    text = format(alignment, fmt)
    if fmt == "clustal":
        text = "CLUSTAL (bioaccel) multiple sequence alignment\n\n\n" + text
    return text


def _format_for(path, format: str | None) -> str:
    if format is not None:
        key = str(format).lower()
        if key not in FORMATS:
            raise ValueError(f"unknown alignment format {format!r}; expected one of {list(FORMATS)}")
        return key
    suffix = os.path.splitext(str(path))[1].lower()
    return EXTENSIONS.get(suffix, "fasta")


