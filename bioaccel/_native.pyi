from typing import Any, overload

import numpy as np
import numpy.typing as npt

def dna_pair_counts(
    planes: npt.NDArray[np.uint64],
    i0: int,
    i1: int,
    j0: int,
    j1: int,
    table: bool,
    upper_only: bool,
    threads: int,
) -> npt.NDArray[np.int32]: ...
def dna_distances_from_counts(
    model: int, counts: npt.NDArray[np.int32], freqs: npt.NDArray[np.float64], threads: int
) -> npt.NDArray[np.float64]: ...
def dna_distance_rows(
    planes: npt.NDArray[np.uint64],
    model: int,
    freqs: npt.NDArray[np.float64],
    i0: int,
    i1: int,
    out: npt.NDArray[np.float64],
    threads: int,
) -> None: ...
def neighbor_joining(
    d: npt.NDArray[np.float64], threads: int, in_place: bool = False
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.float64], int]: ...
def neighbor_joining_condensed(
    d: npt.NDArray[np.float32], n: int, threads: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.float64], int]: ...
def upgma(
    d: npt.NDArray[np.float64],
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.float64], int]: ...
def format_matrix_rows(
    data: npt.NDArray[np.float64],
    i0: int,
    prefixes: list[bytes],
    lower: bool,
    sep: str,
    threads: int,
    n: int = -1,
) -> bytes: ...
def parse_matrix_rows(
    lines: list[str],
    starts: npt.NDArray[np.int64],
    want: npt.NDArray[np.int64],
    out: npt.NDArray[np.float64],
    tab: bool,
    lower: bool,
    threads: int,
) -> npt.NDArray[np.int64]: ...
def count_matrix_fields(lines: list[str], start: int) -> npt.NDArray[np.int64]: ...
def openmp_enabled() -> bool: ...
def max_threads() -> int: ...
def set_all_cores_threads(team: int) -> None: ...
def align_scores(
    q_codes: npt.NDArray[np.uint8],
    q_offsets: npt.NDArray[np.int64],
    t_codes: npt.NDArray[np.uint8],
    t_offsets: npt.NDArray[np.int64],
    table: npt.NDArray[np.int32],
    mode: int,
    gap_open: int,
    gap_extend: int,
    symmetric: bool,
    threads: int,
) -> tuple[npt.NDArray[np.int32], dict[str, int]]: ...
def align_score_scalar(
    a: npt.NDArray[np.uint8],
    b: npt.NDArray[np.uint8],
    table: npt.NDArray[np.int32],
    mode: int,
    gap_open: int,
    gap_extend: int,
) -> int: ...
def align_pairs(
    q_codes: npt.NDArray[np.uint8],
    q_offsets: npt.NDArray[np.int64],
    t_codes: npt.NDArray[np.uint8],
    t_offsets: npt.NDArray[np.int64],
    pairs: npt.NDArray[np.int64],
    table: npt.NDArray[np.int32],
    mode: int,
    gap_open: int,
    gap_extend: int,
    threads: int,
) -> list[tuple[int, int, int, int, int, str]]: ...
def align_isa() -> str: ...
def cpu_features() -> dict[str, object]: ...
def edit_distances(
    q_codes: npt.NDArray[np.uint8],
    q_offsets: npt.NDArray[np.int64],
    t_codes: npt.NDArray[np.uint8],
    t_offsets: npt.NDArray[np.int64],
    mode: int,
    max_distance: int,
    alphabet: int,
    symmetric: bool,
    threads: int,
) -> npt.NDArray[np.int32]: ...
def edit_neighbors(
    codes: npt.NDArray[np.uint8],
    offsets: npt.NDArray[np.int64],
    alphabet: int,
    max_distance: int,
    symmetric: bool = False,
    first: int = 0,
    last: int = -1,
    verify: bool = True,
    method: int = 0,
    segments: int = 0,
    threads: int = 0,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int32], int]: ...
def edit_verify_pairs(
    codes: npt.NDArray[np.uint8],
    offsets: npt.NDArray[np.int64],
    alphabet: int,
    i: npt.NDArray[np.int64],
    j: npt.NDArray[np.int64],
    max_distance: int,
    threads: int = 0,
) -> npt.NDArray[np.int32]: ...
def format_neighbor_lines(
    ids: npt.NDArray[np.uint8],
    id_offsets: npt.NDArray[np.int64],
    i: npt.NDArray[np.int64],
    j: npt.NDArray[np.int64],
    distance: npt.NDArray[np.float64],
    integer: bool,
    threads: int = 0,
) -> bytes: ...
def parse_fasta(
    raw: bytes,
) -> (
    tuple[
        npt.NDArray[np.uint8],
        npt.NDArray[np.int64],
        bytes,
        npt.NDArray[np.int64],
        npt.NDArray[np.int64],
    ]
    | None
): ...
def parse_fasta_file(
    path: str, size: int
) -> (
    tuple[
        npt.NDArray[np.uint8],
        npt.NDArray[np.int64],
        bytes,
        npt.NDArray[np.int64],
        npt.NDArray[np.int64],
    ]
    | None
): ...
def encode_in_place(
    codes: npt.NDArray[np.uint8], table: npt.NDArray[np.uint8], limit: int
) -> int: ...
def strip_size_lines(blob: bytes) -> bytes: ...
def neighbor_segments(max_distance: int, median_length: int) -> int: ...
def kmer_sketch(
    codes: npt.NDArray[np.uint8],
    offsets: npt.NDArray[np.int64],
    digit: npt.NDArray[np.int8],
    radix: int,
    k: int,
    canonical: bool,
    hashed: bool,
    seed: int,
    sketch_size: int,
    with_counts: bool,
    threads: int,
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64], npt.NDArray[np.uint32]]: ...
def kmer_rows(
    values: npt.NDArray[np.uint64],
    offsets: npt.NDArray[np.int64],
    counts: npt.NDArray[np.uint32],
    rank: npt.NDArray[np.uint32],
    universe: int,
    metric: int,
    sketch_size: int,
    lengths: npt.NDArray[np.int64],
    k: int,
    i0: int,
    i1: int,
    single: bool,
    threads: int,
) -> npt.NDArray[np.float32] | npt.NDArray[np.float64]: ...
def kmer_ranks(values: npt.NDArray[np.uint64]) -> tuple[npt.NDArray[np.uint32], int]: ...

# multiple alignment (csrc/msa, bound in csrc/bindings/msa.cpp)
def msa_progressive(
    codes: npt.NDArray[np.uint8],
    offsets: npt.NDArray[np.int64],
    letter_of: npt.NDArray[np.int16],
    sub: npt.NDArray[np.float32],
    gaps: tuple[float, float, float, float],
    merges: npt.NDArray[np.int64],
    weights: npt.NDArray[np.float64],
    threads: int,
    progress: object = None,
) -> tuple[npt.NDArray[np.int32], int]: ...
def msa_refine_gaps(
    codes: npt.NDArray[np.uint8],
    offsets: npt.NDArray[np.int64],
    letter_of: npt.NDArray[np.int16],
    sub: npt.NDArray[np.float32],
    gaps: tuple[float, float, float, float],
    weights: npt.NDArray[np.float64],
    iterations: int,
    seed: int,
    radius: int,
    column_of: npt.NDArray[np.int32],
    n_columns: int,
    threads: int = 1,
) -> tuple[npt.NDArray[np.int32], int, int]: ...
def msa_cross_sum_of_pairs(
    codes: npt.NDArray[np.uint8],
    offsets: npt.NDArray[np.int64],
    letter_of: npt.NDArray[np.int16],
    sub: npt.NDArray[np.float32],
    gaps: tuple[float, float, float, float],
    column_of: npt.NDArray[np.int32],
    n_columns: int,
    rows_a: npt.NDArray[np.int64],
    rows_b: npt.NDArray[np.int64],
) -> float: ...
def msa_lcs_distances(
    codes: npt.NDArray[np.uint8],
    offsets: npt.NDArray[np.int64],
    letters: int,
    rows_a: npt.NDArray[np.int64],
    rows_b: npt.NDArray[np.int64] | None = None,
    threads: int = 0,
) -> npt.NDArray[np.float32]: ...
def msa_single_linkage(
    condensed: npt.NDArray[np.float32], n: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]: ...
def msa_single_linkage_lcs(
    codes: npt.NDArray[np.uint8],
    offsets: npt.NDArray[np.int64],
    letters: int,
    rows: npt.NDArray[np.int64],
    threads: int = 0,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]: ...
def msa_lcs_lengths(
    codes: npt.NDArray[np.uint8],
    offsets: npt.NDArray[np.int64],
    letters: int,
    rows_a: npt.NDArray[np.int64],
    rows_b: npt.NDArray[np.int64],
    threads: int = 0,
) -> npt.NDArray[np.int32]: ...
def msa_lcs_distance_of_lengths(
    la: npt.NDArray[np.int64], lb: npt.NDArray[np.int64], lcs: npt.NDArray[np.int64]
) -> npt.NDArray[np.float32]: ...

class MsaSlink:
    """Single linkage fed a block of distance rows at a time."""
    def __init__(self, n: int) -> None: ...
    def add_rows(self, rows: npt.NDArray[np.float32]) -> None: ...
    @property
    def added(self) -> int: ...
    def merges(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]: ...

def msa_profile_pair(
    codes: npt.NDArray[np.uint8],
    offsets: npt.NDArray[np.int64],
    letter_of: npt.NDArray[np.int16],
    sub: npt.NDArray[np.float32],
    gaps: tuple[float, float, float, float],
    weights: npt.NDArray[np.float64],
    column_of: npt.NDArray[np.int32],
    rows_a: npt.NDArray[np.int64],
    rows_b: npt.NDArray[np.int64],
    full_limit: int = 67108864,
    as_sequences: bool = False,
    threads: int = 1,
) -> tuple[npt.NDArray[np.uint8], float, float]: ...
def msa_add_to_alignment(
    codes: npt.NDArray[np.uint8],
    offsets: npt.NDArray[np.int64],
    column_of: npt.NDArray[np.int32],
    n_columns: int,
    new_codes: npt.NDArray[np.uint8],
    new_offsets: npt.NDArray[np.int64],
    letter_of: npt.NDArray[np.int16],
    sub: npt.NDArray[np.float32],
    gaps: tuple[float, float, float, float],
    weights: npt.NDArray[np.float64],
    fragments: bool = False,
    band_radius: int = 100,
    band_from_cells: int = 16777216,
    threads: int = 0,
) -> tuple[
    npt.NDArray[np.int32],
    list[npt.NDArray[np.uint8]],
    npt.NDArray[np.float64],
    npt.NDArray[np.uint8],
]: ...
def msa_dp_inputs(
    codes: npt.NDArray[np.uint8],
    offsets: npt.NDArray[np.int64],
    letter_of: npt.NDArray[np.int16],
    sub: npt.NDArray[np.float32],
    gaps: tuple[float, float, float, float],
    weights: npt.NDArray[np.float64],
    column_of: npt.NDArray[np.int32],
    rows_a: npt.NDArray[np.int64],
    rows_b: npt.NDArray[np.int64],
    as_sequences: bool = False,
) -> dict[str, Any]: ...

class MsaProgressiveRun:
    """The progressive stage one merge at a time (the GPU stage batches each level)."""
    def __init__(
        self,
        codes: npt.NDArray[np.uint8],
        offsets: npt.NDArray[np.int64],
        letter_of: npt.NDArray[np.int16],
        sub: npt.NDArray[np.float32],
        gaps: tuple[float, float, float, float],
        merges: npt.NDArray[np.int64],
        weights: npt.NDArray[np.float64],
    ) -> None: ...
    def dp_inputs(self, k: int) -> dict[str, object]: ...
    def banded_path(self, k: int) -> npt.NDArray[np.uint8] | None: ...
    def merge(self, k: int, path: npt.NDArray[np.uint8]) -> None: ...
    def finish(self) -> tuple[npt.NDArray[np.int32], int]: ...

def msa_pair_posteriors(
    x: npt.NDArray[np.int16],
    y: npt.NDArray[np.int16],
    odds: npt.NDArray[np.float64],
    start: npt.NDArray[np.float64],
    open: npt.NDArray[np.float64],
    extend: npt.NDArray[np.float64],
) -> tuple[npt.NDArray[np.float64], float]: ...
def msa_upgma(condensed: npt.NDArray[np.float64], n: int) -> npt.NDArray[np.int64]: ...

class MsaPosteriorSet:
    """Sparse posteriors of every pair, consistency, and alignment."""
    def __init__(
        self,
        codes: npt.NDArray[np.uint8],
        offsets: npt.NDArray[np.int64],
        letter_of: npt.NDArray[np.int16],
        letters: int,
    ) -> None: ...
    @property
    def n(self) -> int: ...
    def compute(
        self,
        odds: npt.NDArray[np.float64],
        start: npt.NDArray[np.float64],
        open: npt.NDArray[np.float64],
        extend: npt.NDArray[np.float64],
        cutoff: float,
        threads: int,
    ) -> None: ...
    def set_pairs(
        self,
        pairs: npt.NDArray[np.int64],
        flat: npt.NDArray[np.float32],
        starts: npt.NDArray[np.int64],
        cutoff: float,
    ) -> None: ...
    def pair(
        self, x: int, y: int
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int32], npt.NDArray[np.float32], int, int]: ...
    def accuracy(self) -> npt.NDArray[np.float64]: ...
    def consistency(self, rounds: int, cutoff: float, threads: int) -> None: ...
    def align(
        self, merges: npt.NDArray[np.int64], iterations: int, seed: int, threads: int
    ) -> tuple[npt.NDArray[np.int32], int, int]: ...
    def objective(self, cols: npt.NDArray[np.int32]) -> float: ...
    @property
    def nbytes(self) -> int: ...
    @property
    def entries(self) -> int: ...

# --- amplicon clustering (csrc/clusters, csrc/bindings/clusters.cpp) ---------------------
def directed_graph(
    n: int,
    i: npt.NDArray[np.int64],
    j: npt.NDArray[np.int64],
    dij: npt.NDArray[np.int32],
    dji: npt.NDArray[np.int32],
    keep_ij: npt.NDArray[np.uint8],
    keep_ji: npt.NDArray[np.uint8],
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int32]]: ...
def swarm_grow(
    indptr: npt.NDArray[np.int64],
    nbr: npt.NDArray[np.int64],
    dist: npt.NDArray[np.int32],
    abundance: npt.NDArray[np.uint64],
    breaking: bool,
) -> tuple[
    npt.NDArray[np.uint32],
    npt.NDArray[np.uint32],
    npt.NDArray[np.int64],
    npt.NDArray[np.int32],
    npt.NDArray[np.int64],
    npt.NDArray[np.int64],
]: ...
def swarm_grow_search(
    codes: npt.NDArray[np.uint8],
    offsets: npt.NDArray[np.int64],
    abundance: npt.NDArray[np.uint64],
    d: int,
    breaking: bool,
    swarm_differences: bool,
    gram_test: int = -1,
) -> tuple[
    npt.NDArray[np.uint32],
    npt.NDArray[np.uint32],
    npt.NDArray[np.int64],
    npt.NDArray[np.int32],
    npt.NDArray[np.int64],
    npt.NDArray[np.int64],
]: ...
def amplicon_ids(header_lines: bytes, underscore: bool = False) -> bytes: ...

class PackedLetters:
    def __len__(self) -> int: ...
    def lengths(self) -> npt.NDArray[np.int64]: ...
    @overload
    def codes(self, k: int) -> npt.NDArray[np.uint8]: ...
    @overload
    def codes(self, k: None = None) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64]]: ...
    @property
    def nbytes(self) -> int: ...

def swarm_grow_search_packed(
    letters: PackedLetters,
    abundance: npt.NDArray[np.uint64],
    d: int,
    breaking: bool,
    swarm_differences: bool,
    gram_test: int = -1,
) -> tuple[
    npt.NDArray[np.uint32],
    npt.NDArray[np.uint32],
    npt.NDArray[np.int64],
    npt.NDArray[np.int32],
    npt.NDArray[np.int64],
    npt.NDArray[np.int64],
]: ...
def greedy_search_packed(
    letters: PackedLetters, num: int, den: int, threads: int, overhangs_free: bool = False
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]: ...
def nearest_in_set_packed(
    letters: PackedLetters,
    in_set: npt.NDArray[np.uint8],
    d: int,
    threads: int,
    gram_test: int = -1,
) -> npt.NDArray[np.int64]: ...
def nearest_in_set(
    codes: npt.NDArray[np.uint8],
    offsets: npt.NDArray[np.int64],
    in_set: npt.NDArray[np.uint8],
    d: int,
    threads: int,
    gram_test: int = -1,
) -> npt.NDArray[np.int64]: ...
def greedy_centroids(
    indptr: npt.NDArray[np.int64],
    nbr: npt.NDArray[np.int64],
    dist: npt.NDArray[np.int32],
    lengths: npt.NDArray[np.int64],
    num: int,
    den: int,
) -> npt.NDArray[np.int64]: ...
def greedy_search(
    codes: npt.NDArray[np.uint8],
    offsets: npt.NDArray[np.int64],
    num: int,
    den: int,
    threads: int,
    overhangs_free: bool = False,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]: ...
def infix_distance(p: npt.NDArray[np.uint8], t: npt.NDArray[np.uint8], k: int) -> int: ...
def swarm_align(
    codes: npt.NDArray[np.uint8],
    offsets: npt.NDArray[np.int64],
    queries: npt.NDArray[np.int64],
    targets: npt.NDArray[np.int64],
    max_diffs: int,
    want_cigar: bool,
    threads: int,
    edits: npt.NDArray[np.int64],
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32], list[str]]: ...

class AmpliconReader:
    def __init__(
        self, table: npt.NDArray[np.uint8], default_abundance: int, underscore: bool = False
    ) -> None: ...
    def reserve(self, bytes: int) -> None: ...
    def feed(self, piece: bytes | bytearray | memoryview) -> None: ...
    def finish(
        self,
    ) -> tuple[
        tuple[int, int, int, int],
        npt.NDArray[np.int64],
        npt.NDArray[np.int64],
        npt.NDArray[np.int64],
        npt.NDArray[np.int64],
        npt.NDArray[np.int64],
        npt.NDArray[np.uint64],
        npt.NDArray[np.int64],
        npt.NDArray[np.uint8],
        npt.NDArray[np.int64],
        PackedLetters | None,
        bytes,
        bytes,
        bytes,
        bytes,
    ]: ...
