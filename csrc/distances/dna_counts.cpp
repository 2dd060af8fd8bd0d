#include "bioaccel/dna_counts.hpp"
#include "bioaccel/common.hpp"
#include "bioaccel/cpu.hpp"
#include "bioaccel/dna_models.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace bioaccel {
namespace {

constexpr std::int64_t kBlock = 128;  // pairs are visited in kBlock x kBlock tiles (cache reuse)

// The pair-count bodies, compiled for AVX2 (+POPCNT) and the baseline below.
__attribute__((always_inline)) inline void summary_counts_body(const std::uint64_t* a, const std::uint64_t* b,
                                                               std::int64_t W, std::int64_t* acc) {
    const std::uint64_t *ka = a, *pa = a + W, *ga = a + 2 * W;
    const std::uint64_t *kb = b, *pb = b + W, *gb = b + 2 * W;
    std::int64_t sites = 0, ts_r = 0, ts_y = 0, tv = 0;
    for (std::int64_t w = 0; w < W; ++w) {
        const std::uint64_t k = ka[w] & kb[w];
        const std::uint64_t dp = pa[w] ^ pb[w];              // purine vs pyrimidine: transversion
        const std::uint64_t ts = k & ~dp & (ga[w] ^ gb[w]);  // same class, other base: transition
        sites += __builtin_popcountll(k);
        tv += __builtin_popcountll(k & dp);
        ts_y += __builtin_popcountll(ts & pa[w]);
        ts_r += __builtin_popcountll(ts & ~pa[w]);
    }
    acc[kSites] = sites;
    acc[kPurineTransitions] = ts_r;
    acc[kPyrimidineTransitions] = ts_y;
    acc[kTransversions] = tv;
}

__attribute__((always_inline)) inline void table_counts_body(const std::uint64_t* a, const std::uint64_t* b,
                                                             std::int64_t W, std::int64_t* acc) {
    for (int t = 0; t < 16; ++t) acc[t] = 0;
    for (std::int64_t w = 0; w < W; ++w) {
        const std::uint64_t ka = a[w], pa = a[W + w], ga = a[2 * W + w];
        const std::uint64_t kb = b[w], pb = b[W + w], gb = b[2 * W + w];
        // one-hot planes in A, C, G, T order
        const std::uint64_t x[4] = {ka & ~pa & ~ga, ka & pa & ~ga, ka & ~pa & ga, ka & pa & ga};
        const std::uint64_t y[4] = {kb & ~pb & ~gb, kb & pb & ~gb, kb & ~pb & gb, kb & pb & gb};
        for (int r = 0; r < 4; ++r)
            for (int c = 0; c < 4; ++c) acc[4 * r + c] += __builtin_popcountll(x[r] & y[c]);
    }
}

using CountFn = void (*)(const std::uint64_t*, const std::uint64_t*, std::int64_t, std::int64_t*);

void summary_counts_base(const std::uint64_t* a, const std::uint64_t* b, std::int64_t W, std::int64_t* acc) {
    summary_counts_body(a, b, W, acc);
}
void table_counts_base(const std::uint64_t* a, const std::uint64_t* b, std::int64_t W, std::int64_t* acc) {
    table_counts_body(a, b, W, acc);
}
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2,popcnt"))) void summary_counts_avx2(const std::uint64_t* a,
                                                                const std::uint64_t* b, std::int64_t W,
                                                                std::int64_t* acc) {
    summary_counts_body(a, b, W, acc);
}
__attribute__((target("avx2,popcnt"))) void table_counts_avx2(const std::uint64_t* a, const std::uint64_t* b,
                                                              std::int64_t W, std::int64_t* acc) {
    table_counts_body(a, b, W, acc);
}
#endif

// The kernel the CPU probe (cpu.hpp) picks: 16-entry table or 4 summary counts.
CountFn pick_counts(bool table) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (active_isa() >= Isa::Avx2) return table ? table_counts_avx2 : summary_counts_avx2;
#endif
    return table ? table_counts_base : summary_counts_base;
}

void check_ranges(std::int64_t n, std::int64_t words, std::int64_t i0, std::int64_t i1, std::int64_t j0,
                  std::int64_t j1) {
    if (n < 0 || words < 0 || i0 < 0 || j0 < 0 || i0 > i1 || j0 > j1 || i1 > n || j1 > n)
        throw std::invalid_argument("dna pair counts: row range [" + std::to_string(i0) + ", " +
                                    std::to_string(i1) + ") or column range [" + std::to_string(j0) + ", " +
                                    std::to_string(j1) + ") is outside 0.." + std::to_string(n));
    if (words > (std::int64_t(1) << 31) / 64)
        throw std::overflow_error("dna pair counts: more than 2^31 sites would overflow int32 counts");
}

// Visit the pairs (i, j) of rows [i0, i1) x cols [j0, j1) in cache-sized tiles, in
// parallel; with `upper_only`, only j > i. fn(i, j) must be thread-safe.
template <class Fn>
void for_each_pair(std::int64_t i0, std::int64_t i1, std::int64_t j0, std::int64_t j1, bool upper_only,
                   int threads, Fn fn) {
    const std::int64_t bi = (i1 - i0 + kBlock - 1) / kBlock, bj = (j1 - j0 + kBlock - 1) / kBlock;
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
            for (std::int64_t i = ia; i < ib; ++i)
                for (std::int64_t j = upper_only ? std::max(ja, i + 1) : ja; j < jb; ++j) fn(i, j);
        }
    }
}

}  // namespace

void dna_pair_counts(const std::uint64_t* planes, std::int64_t n, std::int64_t words, std::int64_t i0,
                     std::int64_t i1, std::int64_t j0, std::int64_t j1, bool table, bool upper_only,
                     std::int32_t* out, int threads) {
    check_ranges(n, words, i0, i1, j0, j1);
    const std::int64_t cols = j1 - j0, plane = (i1 - i0) * cols;
    const int k = table ? kNumTableCounts : kNumPairCounts;
    std::fill(out, out + plane * k, 0);
    const std::int64_t stride = 3 * words;
    const CountFn counts = pick_counts(table);
    for_each_pair(i0, i1, j0, j1, upper_only, threads, [&](std::int64_t i, std::int64_t j) {
        std::int64_t acc[kNumTableCounts];
        counts(planes + i * stride, planes + j * stride, words, acc);
        const std::int64_t cell = (i - i0) * cols + (j - j0);
        for (int t = 0; t < k; ++t) out[t * plane + cell] = static_cast<std::int32_t>(acc[t]);
    });
}

void dna_distances_from_counts(DnaModel model, const std::int32_t* counts, std::int64_t rows,
                               std::int64_t cols, const double* freqs, double* out, int threads) {
    const ModelConstants k(freqs);
    const std::int64_t plane = rows * cols;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(resolve_threads(threads))
#else
    (void)threads;
#endif
    for (std::int64_t c = 0; c < plane; ++c) {
        if (model == DnaModel::LogDet) {
            double cell[16];
            for (int t = 0; t < 16; ++t) cell[t] = counts[t * plane + c];
            out[c] = logdet_from_table(cell);
        } else {
            out[c] = distance_from_summary(model, counts[c], counts[plane + c], counts[2 * plane + c],
                                           counts[3 * plane + c], k);
        }
    }
}

void dna_distance_rows(const std::uint64_t* planes, std::int64_t n, std::int64_t words, DnaModel model,
                       const double* freqs, std::int64_t i0, std::int64_t i1, double* out, int threads) {
    check_ranges(n, words, i0, i1, i0, n);
    const ModelConstants k(freqs);
    const std::int64_t stride = 3 * words;
    const CountFn table_counts = pick_counts(true), summary_counts = pick_counts(false);
    for_each_pair(i0, i1, i0, n, true, threads, [&](std::int64_t i, std::int64_t j) {
        std::int64_t acc[kNumTableCounts];
        double d;
        if (model == DnaModel::LogDet) {
            table_counts(planes + i * stride, planes + j * stride, words, acc);
            double cell[16];
            for (int t = 0; t < 16; ++t) cell[t] = static_cast<double>(acc[t]);
            d = logdet_from_table(cell);
        } else {
            summary_counts(planes + i * stride, planes + j * stride, words, acc);
            d = distance_from_summary(model, static_cast<double>(acc[0]), static_cast<double>(acc[1]),
                                      static_cast<double>(acc[2]), static_cast<double>(acc[3]), k);
        }
        out[i * n + j] = d;
        out[j * n + i] = d;
    });
}

}  // namespace bioaccel
