// Every pair of sequences within an edit-distance threshold, without comparing all pairs.
//
// Global Levenshtein distance (unit costs, letters compared by code identity: an N or an
// IUPAC code is one more letter, equal only to itself), the same values as
// edit_distance.hpp's kernels.
//
// Filters (both complete for the threshold d: every pair within d becomes a candidate):
// - d <= 1: microvariants (as swarm does for d = 1). Every sequence's hash goes into an
//   open-addressing table behind a Bloom filter; each sequence then looks up itself (d = 0),
//   its substitution variants (every position, every letter the input uses) and its deletion
//   variants (one per homopolymer run), each hash updated in O(1) from prefix hashes.
// - d >= 2: a segment-masking partition filter that generalises Pass-Join's. A sequence of
//   length l is cut into q >= d + 1 segments (as even as can be); d edits touch at most d of
//   them, so for some set M of d segments the other q - d appear unchanged in the other
//   sequence, each shifted by the net length change of the masked segments before it. The
//   index holds, for every sequence and every M (C(q, d) keys), a hash of its unmasked
//   segments in order; a probe (the later sequence of each pair, in (length, index) order)
//   computes the same hash at every shift pattern that d edits allow (per-segment length
//   changes delta_k with sum |delta_k| <= d and sum delta_k = the length difference). With
//   q = d + 1 this is Pass-Join's position-aware filter; larger q keys on more letters, so
//   members of one amplicon family (which all share any one long segment) stop being each
//   other's candidates unless their differences fall in the same few segments.
// Candidates are verified by Landau-Vishkin diagonal extension (O(d^2) diagonals) over the
// sequences packed 2 bits a letter (A/C/G/T only) or a byte a letter (anything else), 32 or 8
// letters compared per word.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bioaccel/align.hpp"  // SeqView

namespace bioaccel {

struct NeighborEdges {
    std::vector<std::int64_t> i, j;  // i < j, sorted by (i, j)
    std::vector<std::int32_t> d;     // distance; -1 for unverified candidates
    std::int64_t candidates = 0;     // pairs the filter proposed (verified or not)
};

struct NeighborOptions {
    std::int64_t max_distance = 1;
    // false: each pair is found by its later member in (length, index) order, which looks
    // only at lengths l - d .. l; true: by its smaller index, looking at l - d .. l + d (and,
    // for d <= 1, at insertion variants too): slower, but the pairs of probes [first, last)
    // are then exactly those with i in [first, last), so shards are blocks of i
    bool symmetric = false;
    std::int64_t first = 0, last = -1;  // probes r in [first, last) (last < 0: all)
    bool verify = true;                 // false: the candidate pairs, d = -1
    int method = 0;                     // 0 auto, 1 microvariants (d <= 1), 2 segments
    int segments = 0;                   // q for the segment filter (0: chosen)
};

// Pairs (i < j) with edit distance <= max_distance among `seqs` (codes < alphabet).
NeighborEdges edit_neighbors(const SeqView& seqs, int alphabet, const NeighborOptions& opt, int threads);

// Distances of the listed pairs, anything above max_distance reported as max_distance + 1.
void edit_verify_pairs(const SeqView& seqs, int alphabet, const std::int64_t* pi, const std::int64_t* pj,
                       std::int64_t k, std::int64_t max_distance, std::int32_t* out, int threads);

// TSV lines "id1<TAB>id2<TAB>distance\n" of the pairs; ids[offsets[k], offsets[k + 1]) is id
// k; distances as integers (`integer`) or as Python's repr of a float.
std::string format_neighbor_lines(const char* ids, const std::int64_t* id_offsets, std::int64_t n_ids,
                                  const std::int64_t* i, const std::int64_t* j, const double* d,
                                  std::int64_t k, bool integer, int threads);

// The number of segments the filter uses for threshold d and these lengths (q >= d + 1).
int neighbor_segments(std::int64_t max_distance, std::int64_t median_length);

}  // namespace bioaccel
