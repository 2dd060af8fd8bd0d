// Pairwise affine-gap alignment: global (Needleman-Wunsch/Gotoh), local (Smith-Waterman/
// Gotoh) and semi-global (end gaps free on both sequences).
//
// Gap convention: a gap of length L costs gap_open + (L - 1) * gap_extend (parasail,
// Biopython). Scores come from an alphabet x alphabet int32 table over bioaccel codes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace bioaccel {

enum class AlignMode : int { Global = 0, Local = 1, SemiGlobal = 2 };

struct ScoreScheme {
    const std::int32_t* table = nullptr;  // alphabet x alphabet, row-major
    int alphabet = 0;
    int gap_open = 0;
    int gap_extend = 0;
    AlignMode mode = AlignMode::Global;
    std::int32_t max_score = 0;  // largest table entry
    std::int32_t min_score = 0;  // smallest table entry
};

// A batch of sequences: codes concatenated, offsets[i]..offsets[i+1].
struct SeqView {
    const std::uint8_t* codes = nullptr;
    const std::int64_t* offsets = nullptr;
    std::int64_t count = 0;
    std::int64_t length(std::int64_t i) const { return offsets[i + 1] - offsets[i]; }
    const std::uint8_t* seq(std::int64_t i) const { return codes + offsets[i]; }
};

// Which integer widths the SIMD kernels used, for reporting.
struct WidthStats {
    std::int64_t cells8 = 0, cells16 = 0, cells32 = 0, reruns = 0;
};

// Scores of every (query, target) pair into out (queries x targets, row-major).
// With `symmetric` (queries == targets) only pairs i < j are computed and mirrored;
// the diagonal gets the self-alignment score.
// Inter-sequence SIMD: each lane aligns the query to a different target, targets
// bucketed by length; int8 first where the score bounds allow it, lanes that overflow
// re-run at int16 then int32. Never a clamped score: past int32, std::overflow_error.
WidthStats align_scores(const SeqView& queries, const SeqView& targets, const ScoreScheme& s, bool symmetric,
                        std::int32_t* out, int threads);

// Plain scalar Gotoh score of one pair (the reference the SIMD kernels are tested against).
std::int64_t align_score_scalar(const std::uint8_t* a, std::int64_t m, const std::uint8_t* b, std::int64_t n,
                                const ScoreScheme& s);

struct AlignmentResult {
    std::int64_t score = 0;
    std::int64_t query_start = 0, query_end = 0;  // half-open, 0-based
    std::int64_t target_start = 0, target_end = 0;
    std::string cigar;  // M (match/mismatch), I (query only), D (target only)
};

// Optimal alignment with traceback, in linear space (Myers & Miller 1988 divide and
// conquer for the affine-gap global core; local/semi-global first locate the aligned
// region by score, then align it globally).
AlignmentResult align_traceback(const std::uint8_t* a, std::int64_t m, const std::uint8_t* b, std::int64_t n,
                                const ScoreScheme& s);

// Which SIMD instruction set the kernels dispatch to on this CPU ("avx2", "sse2", ...).
std::string align_isa();

}  // namespace bioaccel
