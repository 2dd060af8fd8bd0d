// Interface between the alignment driver (align_scores.cpp) and the SIMD kernels it
// dispatches to (align_simd_*.cpp). Internal to csrc/.
#pragma once

#include <cstdint>

namespace bioaccel {

constexpr int kMaxLanes = 64;      // int8 lanes of a 64-byte (AVX-512) vector
constexpr int kTable8Stride = 64;  // bytes per row of GroupJob::table8

// One query against up to lanes() targets, all padded to the longest (nmax).
struct GroupJob {
    const std::uint8_t* q = nullptr;
    std::int64_t m = 0;
    const std::uint8_t* t[kMaxLanes] = {};
    std::int64_t tlen[kMaxLanes] = {};  // every tlen >= 1
    int lanes = 0;                      // targets in use (<= 32 / width)
    std::int64_t nmax = 0;
    const std::int32_t* table = nullptr;
    int alphabet = 0;
    int mode = 0;
    std::int64_t gap_open = 0, gap_extend = 0;
    int width = 4;                        // bytes per score: 1, 2 or 4
    std::int64_t overflow_threshold = 0;  // local: a lane whose score passes this is re-run wider
    std::uint8_t pad_code = 0;
    // The score table as int8 rows of kTable8Stride entries (row x: scores of query letter x
    // against target letters 0..31, repeated for 32..63), when the alphabet has <= 32 letters and every score
    // fits int8: the column profile is then built with byte shuffles instead of scalar stores.
    const std::int8_t* table8 = nullptr;
    std::int64_t strip = 0;  // query rows per strip (1..m)
    // global mode in differences of adjacent scores (width 1 or 2; see align_kernel.inc)
    bool diff = false;
};

// Bytes of workspace run_group needs (the same for every width).
inline std::int64_t group_workspace_bytes(std::int64_t strip, int alphabet, std::int64_t nmax,
                                          int vector_bytes) {
    return (2 * (strip + 1) + 2 * alphabet + 4 * nmax) * vector_bytes;
}

// Each kernel level: 64-byte vectors (AVX-512 F/BW/VL/VBMI), 32-byte (AVX2), 32-byte
// vector code for the baseline (the compiler splits it into SSE2 halves).
namespace simd_avx512 {
void run_group(const GroupJob& job, void* work, std::int32_t* result, std::uint8_t* overflow);
}
namespace simd_avx2 {
void run_group(const GroupJob& job, void* work, std::int32_t* result, std::uint8_t* overflow);
}
namespace simd_base {
void run_group(const GroupJob& job, void* work, std::int32_t* result, std::uint8_t* overflow);
}

}  // namespace bioaccel
