// Levenshtein (unit-cost edit) distance by Myers' bit-vector algorithm (Myers 1999) in
// Hyyrö's multi-word block form (Hyyrö 2003): 64 DP cells per machine word per step.
//
// Modes, as edlib: Global (NW: whole query against whole target), Infix (HW: the query
// against any substring of the target, gaps at the target's ends free), Prefix (SHW: the
// query against a prefix of the target). Letters match when their codes are equal.
#pragma once

#include <cstdint>

#include "bioaccel/align.hpp"  // SeqView

namespace bioaccel {

enum class EditMode : int { Global = 0, Infix = 1, Prefix = 2 };

// Distance of query a (m) to target b (n); when max_distance >= 0 and the distance is
// certainly larger, stops early and returns max_distance + 1.
std::int64_t edit_distance_pair(const std::uint8_t* a, std::int64_t m, const std::uint8_t* b, std::int64_t n,
                                EditMode mode, std::int64_t max_distance, int alphabet);

// All pairs (queries x targets) into out; with `symmetric`, pairs i < j computed once.
void edit_distances(const SeqView& queries, const SeqView& targets, EditMode mode, std::int64_t max_distance,
                    int alphabet, bool symmetric, std::int32_t* out, int threads);

}  // namespace bioaccel
