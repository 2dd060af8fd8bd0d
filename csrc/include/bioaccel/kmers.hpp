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

enum class KmerMetric : int { Jaccard = 0, MinHash = 1, CountFraction = 2 };

// Pairwise values (n x n, symmetric): Jaccard index of full sets; MinHash Jaccard estimate
// of bottom-k sketches (Mash's estimator: shared among the smallest `sketch_size` of the
// union); or Edgar's fraction of shared k-mer counts sum(min) / (min(Lx, Ly) - k + 1).
void kmer_pairwise(const KmerTable& t, KmerMetric metric, std::int64_t sketch_size,
                   const std::int64_t* lengths, int k, double* out, int threads);

}  // namespace bioaccel
