"""Sequences in: alphabets, the :class:`SeqBatch` layout every backend reads, the readers.

- ``_alphabet``: DNA/RNA (IUPAC, gaps) and protein alphabets, encoding to ``uint8`` codes;
- ``_batch``: :class:`SeqBatch`, ids + one contiguous code buffer + int64 offsets;
- ``_read``: FASTA/FASTQ/Clustal/PHYLIP/Stockholm/NEXUS readers (Biopython), gzip;
- ``_sites``: site-level views of a DNA alignment (frequencies, kept sites, bit planes).
"""

from ._alphabet import ALPHABETS, DNA, PROTEIN, Alphabet, get_alphabet, guess_alphabet
from ._batch import SeqBatch, check_unique_ids
from ._read import (
    FORMATS,
    as_batch,
    as_batch_pair,
    atomic_output,
    parse_sequences,
    read_many,
    read_sequences,
)
from ._sites import base_frequencies, kept_sites, pack_planes

__all__ = [
    "ALPHABETS",
    "DNA",
    "FORMATS",
    "PROTEIN",
    "Alphabet",
    "SeqBatch",
    "as_batch",
    "as_batch_pair",
    "atomic_output",
    "base_frequencies",
    "check_unique_ids",
    "get_alphabet",
    "guess_alphabet",
    "kept_sites",
    "pack_planes",
    "parse_sequences",
    "read_many",
    "read_sequences",
]
