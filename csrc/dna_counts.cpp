#include "bioaccel/dna_counts.hpp"
#include "bioaccel/common.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace bioaccel {
namespace {

constexpr std::int64_t kBlock = 128;  // pairs are visited in kBlock x kBlock tiles (cache reuse)

BIOACCEL_CLONES
void summary_counts(const std::uint64_t* a, const std::uint64_t* b, std::int64_t W,
                    std::int32_t* c0, std::int32_t* c1, std::int32_t* c2, std::int32_t* c3) {
    const std::uint64_t *ka = a, *pa = a + W, *ga = a + 2 * W;
    const std::uint64_t *kb = b, *pb = b + W, *gb = b + 2 * W;
    std::int64_t sites = 0, ts_r = 0, ts_y = 0, tv = 0;
    for (std::int64_t w = 0; w < W; ++w) {
        const std::uint64_t k = ka[w] & kb[w];
        const std::uint64_t dp = pa[w] ^ pb[w];          // purine vs pyrimidine: transversion
        const std::uint64_t ts = k & ~dp & (ga[w] ^ gb[w]);  // same class, other base: transition
        sites += __builtin_popcountll(k);
        tv += __builtin_popcountll(k & dp);
        ts_y += __builtin_popcountll(ts & pa[w]);
        ts_r += __builtin_popcountll(ts & ~pa[w]);
    }
    *c0 = static_cast<std::int32_t>(sites);
    *c1 = static_cast<std::int32_t>(ts_r);
    *c2 = static_cast<std::int32_t>(ts_y);
    *c3 = static_cast<std::int32_t>(tv);
}

BIOACCEL_CLONES
void table_counts(const std::uint64_t* a, const std::uint64_t* b, std::int64_t W,
                  std::int32_t* const* cells) {
    std::int64_t acc[16] = {0};
    for (std::int64_t w = 0; w < W; ++w) {
        const std::uint64_t ka = a[w], pa = a[W + w], ga = a[2 * W + w];
        const std::uint64_t kb = b[w], pb = b[W + w], gb = b[2 * W + w];
        // one-hot planes in A, C, G, T order
        const std::uint64_t x[4] = {ka & ~pa & ~ga, ka & pa & ~ga, ka & ~pa & ga, ka & pa & ga};
        const std::uint64_t y[4] = {kb & ~pb & ~gb, kb & pb & ~gb, kb & ~pb & gb, kb & pb & gb};
        for (int r = 0; r < 4; ++r)
            for (int c = 0; c < 4; ++c) acc[4 * r + c] += __builtin_popcountll(x[r] & y[c]);
    }
    for (int t = 0; t < 16; ++t) *cells[t] = static_cast<std::int32_t>(acc[t]);
}

}  // namespace

void dna_pair_counts(const std::uint64_t* planes, std::int64_t n, std::int64_t words,
                     std::int64_t i0, std::int64_t i1, std::int64_t j0, std::int64_t j1,
                     bool table, bool upper_only, std::int32_t* out, int threads) {
    if (n < 0 || words < 0 || i0 < 0 || j0 < 0 || i0 > i1 || j0 > j1 || i1 > n || j1 > n)
        throw std::invalid_argument("dna_pair_counts: row range [" + std::to_string(i0) + ", " +
                                    std::to_string(i1) + ") or column range [" + std::to_string(j0) +
                                    ", " + std::to_string(j1) + ") is outside 0.." + std::to_string(n));
    if (words > (std::int64_t(1) << 31) / 64)
        throw std::overflow_error("dna_pair_counts: more than 2^31 sites would overflow int32 counts");
    const std::int64_t rows = i1 - i0, cols = j1 - j0, plane = rows * cols;
    const int k = table ? kNumTableCounts : kNumPairCounts;
    std::fill(out, out + plane * k, 0);
    const std::int64_t bi = (rows + kBlock - 1) / kBlock, bj = (cols + kBlock - 1) / kBlock;
    const std::int64_t stride = 3 * words;

#ifdef _OPENMP
#pragma omp parallel for collapse(2) schedule(dynamic, 1) num_threads(resolve_threads(threads))
#else
    (void)threads;
#endif
    for (std::int64_t tb = 0; tb < bi; ++tb) {
        for (std::int64_t ub = 0; ub < bj; ++ub) {
            const std::int64_t ia = i0 + tb * kBlock, ib = std::min(i1, ia + kBlock);
            const std::int64_t ja = j0 + ub * kBlock, jb = std::min(j1, ja + kBlock);
            if (upper_only && jb - 1 <= ia) continue;  // whole tile on or below the diagonal
            for (std::int64_t i = ia; i < ib; ++i) {
                const std::uint64_t* a = planes + i * stride;
                for (std::int64_t j = upper_only ? std::max(ja, i + 1) : ja; j < jb; ++j) {
                    const std::uint64_t* b = planes + j * stride;
                    const std::int64_t cell = (i - i0) * cols + (j - j0);
                    if (table) {
                        std::int32_t* cells[16];
                        for (int t = 0; t < 16; ++t) cells[t] = out + t * plane + cell;
                        table_counts(a, b, words, cells);
                    } else {
                        summary_counts(a, b, words, out + cell, out + plane + cell,
                                       out + 2 * plane + cell, out + 3 * plane + cell);
                    }
                }
            }
        }
    }
}

}  // namespace bioaccel
