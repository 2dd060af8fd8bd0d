"""Sequences in: alphabets, the :class:`SeqBatch` layout every backend reads, the readers.

- ``_alphabet``: DNA/RNA (IUPAC, gaps) and protein alphabets, encoding to ``uint8`` codes;
- ``_batch``: :class:`SeqBatch`, ids + one contiguous code buffer + int64 offsets;
- ``_read``: FASTA/FASTQ/Clustal/PHYLIP/Stockholm/NEXUS readers (Biopython), gzip;
- ``_sites``: site-level views of a DNA alignment (frequencies, kept sites, bit planes).
"""

from ._alphabet import ALPHABETS, DNA, DNA_KNOWN, PROTEIN, Alphabet, get_alphabet, guess_alphabet
from ._batch import SeqBatch, check_unique_ids, input_fingerprint, refuse_aligned
from ._read import (
    SEQUENCE_FORMATS,
    as_batch,
    as_batch_pair,
    decode_text,
    is_sketch_file,
    parse_records,
    parse_sequences,
    read_many,
    read_sequences,
    read_text_file,
    same_alphabet,
    sniff_format,
)
from ._sites import base_frequencies, kept_sites, pack_planes

#: the earlier name of :data:`SEQUENCE_FORMATS`, still importable (not in ``__all__``: a
#: second public ``FORMATS``, the MSA engine's, meant alignment output formats)
FORMATS = SEQUENCE_FORMATS

__all__ = [
    "ALPHABETS",
    "Alphabet",
    "DNA",
    "DNA_KNOWN",
    "PROTEIN",
    "SEQUENCE_FORMATS",
    "SeqBatch",
    "as_batch",
    "as_batch_pair",
    "base_frequencies",
    "check_unique_ids",
    "decode_text",
    "get_alphabet",
    "guess_alphabet",
    "input_fingerprint",
    "is_sketch_file",
    "kept_sites",
    "pack_planes",
    "parse_records",
    "parse_sequences",
    "read_many",
    "read_sequences",
    "read_text_file",
    "refuse_aligned",
    "same_alphabet",
    "sniff_format",
]
