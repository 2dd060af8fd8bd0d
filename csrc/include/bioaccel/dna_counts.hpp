// Pairwise site counts between aligned nucleotide sequences, on bit-packed planes.
//
// Each sequence is three bit planes of W 64-bit words (sites packed LSB first):
//   known : site is A, C, G or T (anything else is missing data, as in ape)
//   pyr   : site is a pyrimidine (C or T)        -- only meaningful where known
//   gt    : site is G or T                       -- only meaningful where known
// so A = 00, G = 01, C = 10, T = 11 in (pyr, gt). Planes are stored (n, 3, W).
#pragma once

#include <cstdint>

namespace bioaccel {

// Per-pair counts needed by every model except LogDet, in this order.
enum PairCount : int { kSites = 0, kPurineTransitions = 1, kPyrimidineTransitions = 2, kTransversions = 3 };
constexpr int kNumPairCounts = 4;
// LogDet needs the full 4x4 contingency table (A, C, G, T) x (A, C, G, T), row-major.
constexpr int kNumTableCounts = 16;

// Fills `out` (counts, rows, cols) as int32 for rows [i0, i1) x cols [j0, j1).
// `table` selects the 16-entry contingency table instead of the 4 summary counts.
// When `upper_only`, pairs with j <= i are left at zero (the caller mirrors them).
// Throws std::invalid_argument on inconsistent ranges.
void dna_pair_counts(const std::uint64_t* planes, std::int64_t n, std::int64_t words, std::int64_t i0,
                     std::int64_t i1, std::int64_t j0, std::int64_t j1, bool table, bool upper_only,
                     std::int32_t* out, int threads);

}  // namespace bioaccel
