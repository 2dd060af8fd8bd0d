"""Foundation shared by every layer: nothing here imports another part of bioaccel except
:mod:`bioaccel.errors`. Other packages import these names from ``bioaccel._core`` itself
(they load on first use, so that importing a package stays cheap).

- ``threads``: the one ``threads=`` rule (0 = all cores, else 1 to 4 x the logical CPUs) and
  the one meaning of 0 (the CPUs of this process's affinity, handed to the C++ core too);
- ``progress``: the progress bar every long command shows (rich);
- ``outputs``: the one rule that decides an output's format from its name;
- ``sniff``: the one file-format sniffer (magic bytes, a matrix file's format from its name
  or first bytes);
- ``atomic``: outputs written safely (temporary file + rename, devices and FIFOs written
  through, never over an input);
- ``native``: the one loader of the compiled core ``bioaccel._native``;
- ``memory``: how much memory this process may still take;
- ``tiling``: the one tiler (sequences or pairs cut into parts of equal work) and the one
  offset helper of the condensed triangle;
- ``lazy``: names re-exported by a package but loaded on first use.
"""

from .lazy import lazy_getattr

#: Names other packages use, from the module that defines them, loaded on first use (PEP 562)
#: so that importing this package stays cheap.
_LAZY = {
    "ALIGNMENT": (".outputs", "ALIGNMENT"),
    "ALIGNMENT_TABLE": (".outputs", "ALIGNMENT_TABLE"),
    "CONDENSED": (".outputs", "CONDENSED"),
    "MAGIC": (".sniff", "MAGIC"),
    "MATRIX": (".outputs", "MATRIX"),
    "MATRIX_FORMATS": (".outputs", "MATRIX_FORMATS"),
    "MAX_THREADS_PER_CPU": (".threads", "MAX_THREADS_PER_CPU"),
    "NEIGHBOR_TABLE": (".outputs", "NEIGHBOR_TABLE"),
    "NEWICK": (".outputs", "NEWICK"),
    "NPY_COLUMN_IDS": (".outputs", "NPY_COLUMN_IDS"),
    "NPY_ROW_IDS": (".outputs", "NPY_ROW_IDS"),
    "SCORES": (".outputs", "SCORES"),
    "SKETCHES": (".outputs", "SKETCHES"),
    "TILE": (".outputs", "TILE"),
    "atomic_output": (".atomic", "atomic_output"),
    "all_cores": (".threads", "all_cores"),
    "available_bytes": (".memory", "available_bytes"),
    "balanced_cuts": (".tiling", "balanced_cuts"),
    "check_threads": (".threads", "check_threads"),
    "condensed_pair": (".tiling", "condensed_pair"),
    "gib": (".memory", "gib"),
    "load_native": (".native", "load_native"),
    "looks_like_matrix": (".sniff", "looks_like_matrix"),
    "magic_of": (".sniff", "magic_of"),
    "matrix_format_of": (".sniff", "matrix_format_of"),
    "output_format": (".outputs", "output_format"),
    "output_spec": (".outputs", "output_spec"),
    "output_target": (".atomic", "output_target"),
    "pairs_before": (".tiling", "pairs_before"),
    "progress_bar": (".progress", "progress_bar"),
    "resolve_threads": (".threads", "resolve_threads"),
    "refuse_overwriting_inputs": (".atomic", "refuse_overwriting_inputs"),
    "threads_range": (".threads", "threads_range"),
    "triangle_row_ranges": (".tiling", "triangle_row_ranges"),
    "without_negative_zero": (".outputs", "without_negative_zero"),
}

__getattr__ = lazy_getattr(__name__, _LAZY)


__all__ = [
    "ALIGNMENT",
    "ALIGNMENT_TABLE",
    "CONDENSED",
    "MAGIC",
    "MATRIX",
    "MATRIX_FORMATS",
    "MAX_THREADS_PER_CPU",
    "NEIGHBOR_TABLE",
    "NEWICK",
    "NPY_COLUMN_IDS",
    "NPY_ROW_IDS",
    "SCORES",
    "SKETCHES",
    "TILE",
    "atomic_output",
    "all_cores",
    "available_bytes",
    "balanced_cuts",
    "check_threads",
    "condensed_pair",
    "gib",
    "load_native",
    "looks_like_matrix",
    "magic_of",
    "matrix_format_of",
    "output_format",
    "output_spec",
    "output_target",
    "pairs_before",
    "progress_bar",
    "resolve_threads",
    "refuse_overwriting_inputs",
    "threads_range",
    "triangle_row_ranges",
    "without_negative_zero",
]
