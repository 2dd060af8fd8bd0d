"""``MultipleAlignment``: the rows of a multiple alignment, in input order, with writers and
distances."""

from __future__ import annotations

import os

import numpy as np

from ..distances import DistanceMatrix
from ..errors import DuplicateIdError
from ..sequences import DNA, PROTEIN, Alphabet

#: formats of :meth:`MultipleAlignment.write`; which name holds which is the one rule of
#: :data:`bioaccel._core.outputs.ALIGNMENT`
ALIGNMENT_FORMATS = ("fasta", "clustal", "stockholm", "a2m", "phylip")
#: the side outputs of ``bioaccel msa`` (option -> (names and formats, what it is, default)):
#: their names follow the one output-name rule of :mod:`bioaccel._core.outputs`
DROPPED_TABLE = {".tsv": ("tsv",)}


def side_output_format(option: str, path) -> str:
    """The format of a side output (``tree_out``: the guide tree; ``dropped_out``: the
    residues ``keep_length`` dropped) named ``path``, or a ValueError naming the accepted
    extensions (``--tree-out g.fa``, ``--dropped-out d.csv``)."""
    from .._core import NEWICK, output_format

    if option == "tree_out":
        return output_format(path, NEWICK, "Newick tree", default="newick")
    if option == "dropped_out":
        return output_format(path, DROPPED_TABLE, "table of dropped residues", default="tsv")
    raise ValueError(f"unknown side output {option!r}")


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
    mode_reason : str
        Why (``"asked for"``, or what ``auto`` saw: ``"chosen by auto: 7 sequences, but the
        largest pair, 5,825 x 5,553 cells, is over the 1.6e7-cell limit"``); "" when not
        aligned by :func:`bioaccel.msa`.
    descriptions : list of str
        The rest of each row's header line after its id ("" when none): FASTA and A2M write
        ``>id description``, so a header such as ``>Candida albicans 1`` stays whole. Rows
        are told apart by their whole header line (:attr:`headers`).
    header_lines : list of str, optional
        Each row's header line exactly as read (every space and tab kept; without the
        ``>``); by default ``id description``.
    """

    def __init__(
        self,
        ids,
        sequences,
        alphabet: Alphabet = PROTEIN,
        guide_tree=None,
        mode: str | None = None,
        descriptions=None,
        mode_reason: str = "",
        header_lines=None,
    ):
        self.mode = mode
        self.mode_reason = mode_reason
        self.ids = list(ids)
        self.descriptions = [""] * len(self.ids) if descriptions is None else list(descriptions)
        if len(self.descriptions) != len(self.ids):
            raise ValueError(f"{len(self.descriptions)} descriptions for {len(self.ids)} rows")
        self._header_lines = None if header_lines is None else [str(h) for h in header_lines]
        if self._header_lines is not None and len(self._header_lines) != len(self.ids):
            raise ValueError(f"{len(self._header_lines)} header lines for {len(self.ids)} rows")
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

    @property
    def headers(self) -> list[str]:
        """Each row's whole header line, as read (``id description``, the id alone without
        one, where the rows were not read from header lines)."""
        if self._header_lines is not None:
            return list(self._header_lines)
        return [f"{i} {d}" if d else i for i, d in zip(self.ids, self.descriptions)]

    def __repr__(self) -> str:
        return f"<MultipleAlignment {len(self)} rows x {self.width} columns ({self.alphabet.name})>"

    def __getitem__(self, key):
        if isinstance(key, str):
            headers = self.headers
            return self.sequences[headers.index(key) if key in headers else self.ids.index(key)]
        return self.sequences[key]

    def to_biopython(self):
        """A ``Bio.Align.Alignment`` of SeqRecords named by ``ids``."""
        from Bio.Align import Alignment
        from Bio.Seq import Seq
        from Bio.SeqRecord import SeqRecord

        gapped = self.sequences
        records = [
            SeqRecord(Seq(s.replace("-", "")), id=i, description=d)
            for i, d, s in zip(self.ids, self.descriptions, gapped)
        ]
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
        """Write atomically in ``format`` (fasta, clustal, stockholm, a2m, phylip); without
        one, the name's extension decides by the one rule of :data:`bioaccel._core.outputs.ALIGNMENT`
        (a name without an extension: FASTA; an extension that is not an alignment format's,
        such as ``.msf`` or ``.nex``, is refused). ``NAME.EXT.gz`` is written gzip-compressed.
        See :meth:`to_text` for each format.

        Raises
        ------
        ValueError
            An unknown format or extension, or ids the format cannot hold (before anything
            is written).
        """
        import gzip

        from .._core import ALIGNMENT, atomic_output, output_spec

        fmt, compressed = output_spec(
            path, ALIGNMENT, "alignment", format, default="fasta", compressible=True
        )
        data = self.to_text(fmt).encode("utf-8")
        if compressed:
            data = gzip.compress(data, mtime=0)
        with atomic_output(path, "wb") as fh:
            fh.write(data)

    def to_text(self, format: str = "fasta") -> str:
        """The alignment as text in ``format``; every id is written whole.

        ``fasta`` (60 columns a line is not used: one line per row), ``a2m`` (columns with
        residues in at least half of the rows are match states), ``stockholm`` (descriptions
        as ``#=GS id DE description`` lines), ``clustal``
        (ids padded to the longest, 60 columns a block, each block followed by the Clustal
        conservation line: ``*`` identical column, ``:`` / ``.`` strong / weak group of
        Clustal W for proteins, blank otherwise, as ``ape::read.dna(format = "clustal")``
        and Clustal readers expect) and ``phylip`` (relaxed sequential PHYLIP: ``n width``,
        then one ``id  row`` line per row; ids whole, two spaces before the row).

        Raises
        ------
        ValueError
            An unknown format; an id that is empty or holds whitespace (no format here can
            hold it: a reader would cut it), or an id a format would read as something else
            (Stockholm ``#...`` or ``//``).
        """
        fmt = str(format).lower()
        if fmt not in ALIGNMENT_FORMATS:
            raise ValueError(
                f"unknown alignment format {format!r}; expected one of {list(ALIGNMENT_FORMATS)}"
            )
        _check_ids(self.ids, fmt, self.headers)
        _check_rows(self.ids, self.sequences)
        if fmt == "fasta":
            return "".join(f">{h}\n{s}\n" for h, s in zip(self.headers, self.sequences))
        if fmt == "phylip":
            return f"{len(self)} {self.width}\n" + "".join(
                f"{i}  {s}\n" for i, s in zip(self.ids, self.sequences)
            )
        if fmt == "clustal":
            return clustal_text(self.ids, self.sequences, protein=self.alphabet is PROTEIN)
        if fmt == "stockholm":
            pad = max(len(i) for i in self.ids) + 4 if self.ids else 0
            described = "".join(
                f"#=GS {i.ljust(pad)}DE {' '.join(d.split())}\n"
                for i, d in zip(self.ids, self.descriptions)
                if d
            )
            return (
                f"# STOCKHOLM 1.0\n#=GF SQ {len(self)}\n"
                + described
                + "".join(f"{i.ljust(pad)}{s}\n" for i, s in zip(self.ids, self.sequences))
                + "//\n"
            )
        return a2m_text(self.headers, self.sequences)

    def write_guide_tree(self, path: str | os.PathLike) -> None:
        """Write the guide tree (Newick, tips named by :attr:`headers`) atomically; the name
        follows the one output-name rule (:data:`bioaccel._core.outputs.NEWICK`: ``.nwk``,
        ``.tree``...; ``g.fa`` is refused before anything is written). One row: the tree of
        one tip, ``id;``, so that it can be given back as a guide tree.

        Raises
        ------
        ValueError
            A name of another kind of file; an alignment with no guide tree (one made by
            adding sequences or aligning two alignments: they follow no tree).
        """
        from .._core import atomic_output

        side_output_format("tree_out", path)
        text = self.guide_tree_text()
        with atomic_output(path) as f:
            f.write(text)

    def guide_tree_text(self) -> str:
        """The guide tree as one Newick line (see :meth:`write_guide_tree`)."""
        from ..trees import quote_label

        if self.guide_tree is None:
            if len(self) == 1 and self.mode is not None:
                return quote_label(self.headers[0]) + ";\n"
            raise ValueError(
                "this alignment has no guide tree (adding sequences and aligning two "
                "alignments follow none)"
            )
        return self.guide_tree.to_newick() + "\n"

    def write_dropped(self, path: str | os.PathLike) -> None:
        """Write :attr:`dropped` as TSV (``id``, ``start``, ``end``, ``after_column``;
        1-based) atomically; the name follows the one output-name rule (``.tsv`` or no
        extension; ``d.csv`` is refused before anything is written)."""
        from .._core import atomic_output

        side_output_format("dropped_out", path)
        text = self.dropped_text()
        with atomic_output(path) as f:
            f.write(text)

    def dropped_text(self) -> str:
        """:attr:`dropped` as TSV text (see :meth:`write_dropped`)."""
        return "id\tstart\tend\tafter_column\n" + "".join(
            f"{i}\t{a}\t{b}\t{c}\n" for i, a, b, c in self.dropped
        )

    def distance_matrix(
        self, model: str = "auto", *, pairwise_deletion: bool = True, threads: int = 0
    ) -> DistanceMatrix:
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
        from ..distances import distance_matrix
        from ..sequences import SeqBatch

        key = str(model).lower()
        if key == "auto":
            key = "k80" if self.alphabet is DNA else "kimura"
        batch = SeqBatch.from_strings(self.sequences, ids=self.ids, alphabet=self.alphabet)
        return distance_matrix(batch, key, pairwise_deletion=pairwise_deletion, threads=threads)


def a2m_text(ids: list[str], rows: list[str]) -> str:
    """A2M: columns with residues in at least half of the rows are match states (upper
    case, gaps ``-``), the others insert states (lower case, gaps ``.``)."""
    if not rows:
        return ""
    occupied = np.array([[c != "-" for c in r] for r in rows], dtype=bool)
    match = occupied.mean(axis=0) >= 0.5
    out = []
    for i, r in zip(ids, rows):
        row = "".join(
            c.upper() if m else ("." if c == "-" else c.lower()) for c, m in zip(r, match)
        )
        out.append(f">{i}\n{row}\n")
    return "".join(out)


#: Clustal W's conservation groups: ':' when a column's residues all fall in one strong
#: group, '.' in one weak group
_STRONG = ("STA", "NEQK", "NHQK", "NDEQ", "QHRK", "MILV", "MILF", "HY", "FYW")
_WEAK = ("CSA", "ATV", "SAG", "STNK", "STPA", "SGND", "SNDEQK", "NDEQHK", "NEQHRK", "FVLIM", "HFY")
CLUSTAL_HEADER = "CLUSTAL W multiple sequence alignment (written by bioaccel)"


def conservation_line(rows: list[str], protein: bool) -> str:
    """Clustal's conservation mark of each column: ``*`` all rows the same residue, for
    proteins ``:`` (one strong group) or ``.`` (one weak group), else a space; a column
    with a gap gets a space.

    >>> conservation_line(["MKVL-", "MRIL-", "MKVLA"], protein=True)
    '*::* '
    """
    marks = []
    for column in zip(*rows):
        letters = {c.upper() for c in column}
        if not letters or letters & set("-.~"):
            marks.append(" ")
        elif len(letters) == 1:
            marks.append("*")
        elif protein and any(letters <= set(g) for g in _STRONG):
            marks.append(":")
        elif protein and any(letters <= set(g) for g in _WEAK):
            marks.append(".")
        else:
            marks.append(" ")
    return "".join(marks)


def clustal_text(ids: list[str], rows: list[str], protein: bool, block: int = 60) -> str:
    """Clustal text with ids whole (padded to the longest) and a conservation line under
    every block (see :meth:`MultipleAlignment.to_text`)."""
    pad = max((len(i) for i in ids), default=0) + 4
    width = len(rows[0]) if rows else 0
    out = [CLUSTAL_HEADER, "", ""]
    for start in range(0, max(width, 1), block):
        chunk = [r[start : start + block] for r in rows]
        out.extend(i.ljust(pad) + c for i, c in zip(ids, chunk))
        out.append(" " * pad + conservation_line(chunk, protein))
        out.append("")
    return "\n".join(out) + "\n"


def _check_ids(ids: list[str], fmt: str, headers=None) -> None:
    """Refuse ids that ``fmt`` cannot hold whole (a reader would cut or misread them), and
    rows it could not tell apart: FASTA and A2M hold whole header lines (``headers``), the
    other formats only ids."""
    for k, i in enumerate(ids):
        if i == "":
            raise ValueError(f"row {k + 1} has an empty id; {fmt} needs one per row")
        if any(ch.isspace() or not ch.isprintable() for ch in i):
            raise ValueError(
                f"{fmt} ids cannot hold whitespace or control characters: {i!r} "
                f"(row {k + 1}) would be read back cut at the first space; rename "
                "it (e.g. spaces as '_') before writing"
            )
        if fmt == "stockholm" and i.startswith(("#", "//")):
            raise ValueError(
                f"Stockholm ids cannot start with '#' or '//': {i!r} (row {k + 1}) "
                "would be read as a comment or the end of the alignment"
            )
    headers = list(ids) if headers is None else headers
    for k, h in enumerate(headers):
        if any(not (ch.isprintable() or ch == "\t") for ch in h):
            raise ValueError(f"row {k + 1} ({ids[k]!r}) has a header with control characters")
    whole = fmt in ("fasta", "a2m")
    seen: set[str] = set()
    for i, line in zip(ids, headers):
        h = line if whole else i
        if h in seen:
            if not whole and any(line != i for line, i in zip(headers, ids)):
                raise ValueError(
                    f"id {i!r} names two rows (their descriptions differ); {fmt} keeps only "
                    "ids: write FASTA (which keeps whole header lines) or rename them"
                )
            raise DuplicateIdError(f"id {h!r} appears twice; an alignment file names each row once")
        seen.add(h)


def _check_rows(ids: list[str], rows: list[str]) -> None:
    for i, r in zip(ids, rows):
        bad = next((ch for ch in r if ch.isspace() or not ch.isprintable()), None)
        if bad is not None:
            raise ValueError(f"row {i!r} holds {bad!r}, not a residue or a gap")
