// k-mer sets, counts and MinHash sketches of sequences, and pairwise distances from them.
#pragma once

#include <cstdint>
#include <vector>

#include "bioaccel/align.hpp"  // SeqView

namespace bioaccel {

// A ragged array of sorted uint64 values per sequence (k-mer codes or hashes), with
// optional counts (for the k-mer-count distance).
struct KmerTable {
    std::vector<std::uint64_t> values;
    std::vector<std::uint32_t> counts;  // empty unless requested
    std::vector<std::int64_t> offsets;  // size n + 1
};

// Letters -> k-mer digits: digit[code] in [0, radix) or -1 (the k-mer is skipped).
// canonical: DNA only (radix 4, digits A=0 C=1 G=2 T=3): the smaller of the k-mer and its
// reverse complement. hashed: values are 64-bit mixes of the codes (seeded) instead of codes.
// sketch_size > 0 keeps only the smallest sketch_size distinct values (bottom-k MinHash).
KmerTable kmer_table(const SeqView& seqs, const std::int8_t* digit, int radix, int k, bool canonical,
                     bool hashed, std::uint64_t seed, std::int64_t sketch_size, bool with_counts,
                     int threads);

// Each of the m values' rank among the distinct values (0 for the smallest), written to
// rank; returns the number of distinct values. Throws past 2^32 - 1 values.
std::size_t value_ranks(const std::uint64_t* values, std::size_t m, std::uint32_t* rank);

enum class KmerMetric : int { Jaccard = 0, MinHash = 1, CountFraction = 2 };

// A read-only view of a table (arrays owned by the caller). `rank` (MinHash only): each
// value's rank among the distinct values of all rows (`universe` of them), so a row is a
// bitmap over ranks.
struct KmerView {
    const std::uint64_t* values = nullptr;
    const std::uint32_t* counts = nullptr;  // CountFraction only
    const std::int64_t* offsets = nullptr;  // n + 1
    std::int64_t n = 0;
    const std::uint32_t* rank = nullptr;  // MinHash only
    std::size_t universe = 0;
};

// Distances of rows [i0, i1) against every later row, condensed (pair (i, j > i) of
// row i at out[first(i) - first(i0) + j - i - 1], first(i) = pairs before row i), from a
// similarity computed in double: 1 - the Jaccard index of full sets; Mash's distance
// min(1, -ln(2J / (1 + J)) / k) (1 when J = 0) of the MinHash Jaccard estimate J of bottom-k
// sketches (Mash's estimator: shared among the smallest `sketch_size` of the union); or
// 1 - Edgar's fraction of shared k-mer counts sum(min) / (min(Lx, Ly) - k + 1). The float
// output is the double value rounded. Rows are independent, so a matrix computed in row
// tiles equals one computed at once.
void kmer_rows(const KmerView& t, KmerMetric metric, std::int64_t sketch_size, const std::int64_t* lengths,
               int k, std::int64_t i0, std::int64_t i1, double* out, int threads);
void kmer_rows(const KmerView& t, KmerMetric metric, std::int64_t sketch_size, const std::int64_t* lengths,
               int k, std::int64_t i0, std::int64_t i1, float* out, int threads);

}  // namespace bioaccel
