// The consistency transformation of sparse posteriors, the UPGMA guide tree of expected
// accuracies, progressive alignment maximising summed posteriors, and refinement by random
// bipartitions that keeps that objective. See bioaccel/msa_accurate.hpp.
//
// Determinism: every transformed pair depends only on the inputs (each element's sum runs
// over z increasing and, within z, over the middle residue increasing, whichever thread and
// kernel compute the pair); the progressive and refinement stages are serial with a seeded
// generator.
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>

#include "bioaccel/stop.hpp"
#include "bioaccel/common.hpp"
#include "bioaccel/cpu.hpp"
#include "bioaccel/msa_accurate.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace bioaccel {
namespace msa {

namespace {

#if defined(__GNUC__)
#define BIOACCEL_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define BIOACCEL_ALWAYS_INLINE inline
#endif

// Eight columns of a dense row, 32-byte aligned: the unit of the band rows and of the
// accumulator rows below.
constexpr std::int32_t TILE = 8;
struct alignas(32) Tile {
    float v[TILE];
};
#if defined(__GNUC__)
typedef float Lanes4 __attribute__((vector_size(16), may_alias));
typedef float Lanes8 __attribute__((vector_size(32), may_alias));
#endif

// t = the transpose of a (rows <-> columns, columns increasing within each row), in t's
// buffers as they are (fill: scratch).
void transpose_into(const SparsePost& a, SparsePost& t, std::vector<std::uint32_t>& fill) {
    t.rows = a.cols;
    t.cols = a.rows;
    t.row_start.assign(std::size_t(a.cols) + 1, 0);
    for (std::int32_t c : a.col) ++t.row_start[c + 1];
    for (std::int32_t r = 0; r < a.cols; ++r) t.row_start[r + 1] += t.row_start[r];
    t.col.resize(a.col.size());
    t.p.resize(a.p.size());
    fill.assign(t.row_start.begin(), t.row_start.end() - 1);
    for (std::int32_t r = 0; r < a.rows; ++r)
        for (std::uint32_t k = a.row_start[r]; k < a.row_start[r + 1]; ++k) {
            const std::uint32_t at = fill[a.col[k]]++;
            t.col[at] = r;
            t.p[at] = a.p[k];
        }
}

// A pair's posteriors as dense rows: each row over the tiles from its first entry's to its
// last entry's, zeros around and between the entries (entries are >= the cut-off > 0, so
// a row's entries are exactly its non-zero values).
struct BandPost {
    struct Row {
        std::uint32_t at;  // first tile in `tiles`
        std::int32_t t0;   // the tile of columns it starts at
        std::int32_t n;    // tiles
    };
    std::vector<Row> rows;
    std::vector<Tile> tiles;
};

// b = p as bands, by its rows (by_rows) or by its columns (p's transpose). lo, hi: scratch.
void make_band(const SparsePost& p, bool by_rows, BandPost& b, std::vector<std::int32_t>& lo,
               std::vector<std::int32_t>& hi) {
    const std::int32_t nr = by_rows ? p.rows : p.cols;
    lo.assign(nr, -1);
    hi.assign(nr, -1);
    for (std::int32_t r = 0; r < p.rows; ++r)
        for (std::uint32_t k = p.row_start[r]; k < p.row_start[r + 1]; ++k) {
            const std::int32_t row = by_rows ? r : p.col[k], col = by_rows ? p.col[k] : r;
            if (lo[row] < 0) lo[row] = col;  // entries come in increasing column
            hi[row] = col;
        }
    b.rows.resize(nr);
    std::uint32_t at = 0;
    for (std::int32_t r = 0; r < nr; ++r) {
        BandPost::Row& br = b.rows[r];
        br.at = at;
        br.t0 = lo[r] < 0 ? 0 : lo[r] / TILE;
        br.n = lo[r] < 0 ? 0 : hi[r] / TILE + 1 - br.t0;
        at += static_cast<std::uint32_t>(br.n);
    }
    b.tiles.assign(at, Tile{});
    for (std::int32_t r = 0; r < p.rows; ++r)
        for (std::uint32_t k = p.row_start[r]; k < p.row_start[r + 1]; ++k) {
            const std::int32_t row = by_rows ? r : p.col[k], col = by_rows ? p.col[k] : r;
            const BandPost::Row& br = b.rows[row];
            b.tiles[br.at + col / TILE - br.t0].v[col % TILE] = p.p[k];
        }
}

// A pair's dense sums: rows of w tiles, and for every block of ROWS rows the tiles its
// rows have touched, lo .. hi - 1 (when tracked: only those are read out and cleared).
constexpr std::int32_t ROWS = 16;
struct Acc {
    Tile* tiles;
    std::int64_t w;
    std::int32_t* lo;
    std::int32_t* hi;
    BIOACCEL_ALWAYS_INLINE void touch(std::int32_t a0, std::int32_t a1, std::int32_t t0,
                                      std::int32_t t1) const {
        for (std::int32_t blk = a0 / ROWS; blk <= a1 / ROWS; ++blk) {
            lo[blk] = std::min(lo[blk], t0);
            hi[blk] = std::max(hi[blk], t1);
        }
    }
};

// For each entry (row idx[k], value p[k]), k0 <= k < k1, of one middle residue m: that acc
// row's tiles t0 .. t0 + N - 1 += p[k] * (row m of the band: r). Every column of the tiles
// gets its product: the band's zeros give +0 (p[k] finite), which leaves any sum >= +0 as
// it was, so each element gets exactly the terms of the sparse product. V: the vector of
// the build (Lanes8 for AVX2, Lanes4 for the baseline), the same per-lane arithmetic.
// Finite = false (an input holding +inf, which no posterior is): lanes whose band value is
// 0 are left alone, as the sparse product leaves them (inf * 0 would be NaN).
template <typename V, int N, bool Finite>
BIOACCEL_ALWAYS_INLINE void add_rows(Tile* acc, std::int64_t w, const Tile* r, std::int32_t t0,
                                     const std::int32_t* idx, const float* p, std::uint32_t k0,
                                     std::uint32_t k1) {
#if defined(__GNUC__)
    if (Finite) {
        constexpr int P = N * int(sizeof(Tile) / sizeof(V));
        V rr[P];
        for (int i = 0; i < P; ++i) rr[i] = reinterpret_cast<const V*>(r)[i];
        for (std::uint32_t k = k0; k < k1; ++k) {
            V* d = reinterpret_cast<V*>(acc + idx[k] * w + t0);
            const V v = V{} + p[k];
            for (int i = 0; i < P; ++i) d[i] += v * rr[i];
        }
        return;
    }
#endif
    for (std::uint32_t k = k0; k < k1; ++k) {
        Tile* d = acc + idx[k] * w + t0;
        const float v = p[k];
        for (int t = 0; t < N; ++t)
            for (std::int32_t l = 0; l < TILE; ++l)
                if (Finite || r[t].v[l] != 0.0f) d[t].v[l] += v * r[t].v[l];
    }
}

// acc += L R for one z: L by rows of its middle residue (CSR start/idx/p, idx the acc row,
// increasing within a middle residue; middle residues in increasing order), R = band b.
// Each element of acc gets its terms in increasing middle residue.
template <typename V, bool Finite, bool Track>
BIOACCEL_ALWAYS_INLINE void add_product(const Acc& acc, const SparsePost& l, const BandPost& b) {
    const std::uint32_t* start = l.row_start.data();
    const std::int32_t* idx = l.col.data();
    const float* p = l.p.data();
    const BandPost::Row* rows = b.rows.data();
    const Tile* tiles = b.tiles.data();
    Tile* const sums = acc.tiles;  // in registers: the vector stores below may alias anything
    const std::int64_t w = acc.w;
    const Acc touched = acc;
    for (std::int32_t m = 0; m < l.rows; ++m) {
        const std::uint32_t k0 = start[m], k1 = start[m + 1];
        const BandPost::Row br = rows[m];
        if (k0 == k1 || br.n == 0) continue;
        if (Track) touched.touch(idx[k0], idx[k1 - 1], br.t0, br.t0 + br.n);
        const Tile* r = tiles + br.at;
        std::int32_t t0 = br.t0, n = br.n;
        for (; n > 4; n -= 4, r += 4, t0 += 4) add_rows<V, 4, Finite>(sums, w, r, t0, idx, p, k0, k1);
        switch (n) {
            case 1:
                add_rows<V, 1, Finite>(sums, w, r, t0, idx, p, k0, k1);
                break;
            case 2:
                add_rows<V, 2, Finite>(sums, w, r, t0, idx, p, k0, k1);
                break;
            case 3:
                add_rows<V, 3, Finite>(sums, w, r, t0, idx, p, k0, k1);
                break;
            default:
                add_rows<V, 4, Finite>(sums, w, r, t0, idx, p, k0, k1);
                break;
        }
    }
}

// The sum of pair (x, y) before the division by n, in acc (zero): for z = 0 .. n - 1
// (z != x) in order, Pxz Pzy, or 2 Pxy at z = y. band[z]: Pzy by rows of z; Pxz by rows of
// z: Pzx as stored (z < x) or tr[z], Pxz transposed (z > x).
template <typename V, bool Finite, bool Track>
BIOACCEL_ALWAYS_INLINE void pair_sum_body(const std::vector<SparsePost>& post, std::int64_t n, std::int64_t x,
                                          std::int64_t y, const BandPost* band,
                                          const std::vector<SparsePost>& tr, const Acc& acc) {
    for (std::int64_t z = 0; z < n; ++z) {
        if (z == x) continue;
        if (z == y) {  // z = x and z = y each give Pxy once
            const SparsePost& pxy = post[pair_index(x, y, n)];
            for (std::int32_t a = 0; a < pxy.rows; ++a) {
                const std::uint32_t k0 = pxy.row_start[a], k1 = pxy.row_start[a + 1];
                if (k0 == k1) continue;
                if (Track) acc.touch(a, a, pxy.col[k0] / TILE, pxy.col[k1 - 1] / TILE + 1);
                Tile* row = acc.tiles + a * acc.w;
                for (std::uint32_t k = k0; k < k1; ++k)
                    row[pxy.col[k] / TILE].v[pxy.col[k] % TILE] += 2.0f * pxy.p[k];
            }
            continue;
        }
        add_product<V, Finite, Track>(acc, z < x ? post[pair_index(z, x, n)] : tr[z], band[z]);
    }
}

// The same body built for AVX2 and for the baseline, picked by the one CPU probe
// (active_isa(), so BIOACCEL_NO_AVX2=1 reaches it): the same expressions lane by lane (no
// FMA contraction: -ffp-contract=off), so the same results.
#if defined(__x86_64__) && defined(__GNUC__)
#define BIOACCEL_CONSISTENCY_X86 1
__attribute__((target("avx2"))) void pair_sum_avx2(const std::vector<SparsePost>& post, std::int64_t n,
                                                   std::int64_t x, std::int64_t y, const BandPost* band,
                                                   const std::vector<SparsePost>& tr, const Acc& acc,
                                                   bool finite, bool track) {
    if (finite && track)
        pair_sum_body<Lanes8, true, true>(post, n, x, y, band, tr, acc);
    else if (finite)
        pair_sum_body<Lanes8, true, false>(post, n, x, y, band, tr, acc);
    else
        pair_sum_body<Lanes8, false, true>(post, n, x, y, band, tr, acc);
}
#endif

void pair_sum(const std::vector<SparsePost>& post, std::int64_t n, std::int64_t x, std::int64_t y,
              const BandPost* band, const std::vector<SparsePost>& tr, const Acc& acc, bool finite,
              bool track) {
#ifdef BIOACCEL_CONSISTENCY_X86
    if (active_isa() >= Isa::Avx2) return pair_sum_avx2(post, n, x, y, band, tr, acc, finite, track);
#endif
#if defined(__GNUC__)
    using V = Lanes4;
#else
    using V = float;  // unused: add_rows takes its scalar loop
#endif
    if (finite && track)
        pair_sum_body<V, true, true>(post, n, x, y, band, tr, acc);
    else if (finite)
        pair_sum_body<V, true, false>(post, n, x, y, band, tr, acc);
    else
        pair_sum_body<V, false, true>(post, n, x, y, band, tr, acc);
}

// Row a's sums read out into (column, min(sum / n, 1)) for every column of tiles t0 .. t1 - 1
// below ly whose sum / n is >= the cut-off, in increasing column. Most of a row's sums fall
// below it: the vector kernels test a tile at once (the same products lane by lane as the
// scalar loop, IEEE single multiplications, so the same entries), and only its passing lanes
// are written.
[[maybe_unused]] void read_out_row_scalar(const Tile* row, std::int64_t t0, std::int64_t t1, std::int64_t ly,
                                          float inv_n, float cutoff, std::vector<std::int32_t>& cols,
                                          std::vector<float>& ps) {
    for (std::int64_t b = t0 * TILE; b < std::min(ly, t1 * TILE); ++b) {
        const float v = row[b / TILE].v[b % TILE] * inv_n;
        if (v >= cutoff) {
            cols.push_back(static_cast<std::int32_t>(b));
            ps.push_back(std::min(v, 1.0f));
        }
    }
}

#ifdef BIOACCEL_CONSISTENCY_X86
// the lanes of a tile (already divided by n, in v) whose bits are set in mask, below ly
BIOACCEL_ALWAYS_INLINE void keep_lanes(unsigned mask, const float* v, std::int64_t t, std::int64_t ly,
                                       std::vector<std::int32_t>& cols, std::vector<float>& ps) {
    while (mask) {
        const int l = __builtin_ctz(mask);
        mask &= mask - 1;
        const std::int64_t b = t * TILE + l;
        if (b >= ly) break;
        cols.push_back(static_cast<std::int32_t>(b));
        ps.push_back(std::min(v[l], 1.0f));
    }
}

__attribute__((target("avx2"))) void read_out_row_avx2(const Tile* row, std::int64_t t0, std::int64_t t1,
                                                       std::int64_t ly, float inv_n, float cutoff,
                                                       std::vector<std::int32_t>& cols,
                                                       std::vector<float>& ps) {
    const __m256 inv = _mm256_set1_ps(inv_n), cut = _mm256_set1_ps(cutoff);
    alignas(32) float v[TILE];
    for (std::int64_t t = t0; t < t1; ++t) {
        const __m256 s = _mm256_mul_ps(_mm256_load_ps(row[t].v), inv);
        const unsigned mask = static_cast<unsigned>(_mm256_movemask_ps(_mm256_cmp_ps(s, cut, _CMP_GE_OQ)));
        if (!mask) continue;
        _mm256_store_ps(v, s);
        keep_lanes(mask, v, t, ly, cols, ps);
    }
}

void read_out_row_sse2(const Tile* row, std::int64_t t0, std::int64_t t1, std::int64_t ly, float inv_n,
                       float cutoff, std::vector<std::int32_t>& cols, std::vector<float>& ps) {
    const __m128 inv = _mm_set1_ps(inv_n), cut = _mm_set1_ps(cutoff);
    alignas(16) float v[TILE];
    for (std::int64_t t = t0; t < t1; ++t) {
        const __m128 lo = _mm_mul_ps(_mm_load_ps(row[t].v), inv),
                     hi = _mm_mul_ps(_mm_load_ps(row[t].v + 4), inv);
        const unsigned mask = static_cast<unsigned>(_mm_movemask_ps(_mm_cmpge_ps(lo, cut))) |
                              static_cast<unsigned>(_mm_movemask_ps(_mm_cmpge_ps(hi, cut))) << 4;
        if (!mask) continue;
        _mm_store_ps(v, lo);
        _mm_store_ps(v + 4, hi);
        keep_lanes(mask, v, t, ly, cols, ps);
    }
}
#endif

void read_out_row(const Tile* row, std::int64_t t0, std::int64_t t1, std::int64_t ly, float inv_n,
                  float cutoff, std::vector<std::int32_t>& cols, std::vector<float>& ps) {
#ifdef BIOACCEL_CONSISTENCY_X86
    if (active_isa() >= Isa::Avx2) return read_out_row_avx2(row, t0, t1, ly, inv_n, cutoff, cols, ps);
    return read_out_row_sse2(row, t0, t1, ly, inv_n, cutoff, cols, ps);
#else
    read_out_row_scalar(row, t0, t1, ly, inv_n, cutoff, cols, ps);
#endif
}

// About the bytes of the bands of every z for one y, the unit of the y blocks below: half a
// tile per entry (rows of posteriors hold two to four entries per tile) and a row header
// per residue.
std::int64_t band_bytes_per_y(const std::vector<SparsePost>& post, std::int64_t n) {
    std::int64_t entries = 0, rows = 0;
    for (const SparsePost& p : post) {
        entries += std::int64_t(p.p.size());
        rows += p.rows + p.cols;
    }
    const std::int64_t pairs = std::max<std::int64_t>(1, std::int64_t(post.size()));
    return (n - 1) *
           ((entries / 2 * std::int64_t(sizeof(Tile)) + rows / 2 * std::int64_t(sizeof(BandPost::Row))) /
                pairs +
            std::int64_t(sizeof(BandPost)));
}

}  // namespace

// Each pair (x, y), x < y, sums its terms in a dense accumulator (rows of x, whole tiles),
// every element in the order the sums have always had: z increasing (z = y giving 2 Pxy),
// within z the middle residue increasing; the results therefore do not depend on the
// threads or on the kernel. ProbCons's and MSAProbs' sparse-times-sparse with a dense
// accumulator, arranged for SIMD: the right factors Pzy (all z, one y) are made dense rows
// of tiles (bands) once per y, the left factors Pxz are read by their z residues (as stored
// for z < x, transposed once per x and y block for z > x), and each left entry adds a whole
// band row to its accumulator row. The ys go in blocks sharing the transposes (up to 16, as
// many as fit in about 64 MiB of bands), the xs of a block over the threads. Entries no
// term reached stay 0 and fall below the cut-off; with few long sequences, only the tiles
// the sums touched are read out and cleared.
std::vector<SparsePost> consistency_round(const std::vector<SparsePost>& post, std::int64_t n, float cutoff,
                                          int threads) {
    const std::int64_t pairs = n * (n - 1) / 2;
    if (std::int64_t(post.size()) != pairs)
        throw std::invalid_argument("consistency: expected " + std::to_string(pairs) +
                                    " pair matrices, got " + std::to_string(post.size()));
    if (!(cutoff > 0 && cutoff <= 1)) throw std::invalid_argument("posterior cut-off must be in (0, 1]");
    std::vector<SparsePost> out(pairs);
    const float inv_n = 1.0f / static_cast<float>(n);
    bool finite = true;  // no +inf among the entries (entries are >= the cut-off: never NaN)
    for (const SparsePost& p : post)
        for (float v : p.p) finite = finite && v <= std::numeric_limits<float>::max();
    const std::int64_t yb = std::max<std::int64_t>(
        1, std::min<std::int64_t>(
               16, (std::int64_t(64) << 20) / std::max<std::int64_t>(1, band_bytes_per_y(post, n))));
    std::vector<BandPost> band(yb * n);  // the block's Pzy by rows of z: band[(y - y0) * n + z]
#ifdef _OPENMP
#pragma omp parallel num_threads(resolve_threads(threads))
#endif
    {
        std::vector<SparsePost> tr(n);  // this x's Pxz by rows of z, z > x
        std::vector<std::uint32_t> fill;
        std::vector<std::int32_t> lo, hi;              // make_band's scratch
        std::vector<std::int32_t> touch_lo, touch_hi;  // Acc::lo, Acc::hi
        std::vector<Tile> acc;                         // kept zero between pairs
        std::vector<std::int32_t> keep_col;
        std::vector<float> keep_p;
        for (std::int64_t y1 = n - 1; y1 >= 1; y1 -= yb) {  // every thread, every block
            const std::int64_t y0 = std::max<std::int64_t>(1, y1 - yb + 1);
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 1)
#endif
            for (std::int64_t k = 0; k < (y1 - y0 + 1) * n; ++k) {
                const std::int64_t y = y0 + k / n, z = k % n;
                if (z == y || stop_requested()) continue;
                if (z < y)
                    make_band(post[pair_index(z, y, n)], true, band[k], lo, hi);
                else
                    make_band(post[pair_index(y, z, n)], false, band[k], lo, hi);
            }
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 1)
#endif
            for (std::int64_t x = 0; x < y1; ++x) {
                if (stop_requested()) continue;  // the rest skipped; thrown below
                for (std::int64_t z = x + 1; z < n; ++z)
                    transpose_into(post[pair_index(x, z, n)], tr[z], fill);
                for (std::int64_t y = std::max(y0, x + 1); y <= y1; ++y) {
                    const SparsePost& pxy = post[pair_index(x, y, n)];
                    const std::int64_t lx = pxy.rows, ly = pxy.cols;
                    const std::int64_t w = (ly + TILE - 1) / TILE;
                    if (acc.size() < std::size_t(lx * w)) acc.assign(std::size_t(lx * w), Tile{});
                    // the touched tiles tracked where reading out whole rows would cost more
                    // than a small part of the sums (few sequences, long ones)
                    const bool track = !finite || (n - 2) * std::int64_t(pxy.p.size()) < 4 * lx * w;
                    const std::int64_t blocks = (lx + ROWS - 1) / ROWS;
                    touch_lo.assign(blocks, track ? std::numeric_limits<std::int32_t>::max() : 0);
                    touch_hi.assign(blocks, track ? 0 : static_cast<std::int32_t>(w));
                    pair_sum(post, n, x, y, band.data() + (y - y0) * n, tr,
                             Acc{acc.data(), w, touch_lo.data(), touch_hi.data()}, finite, track);
                    SparsePost res;
                    res.rows = static_cast<std::int32_t>(lx);
                    res.cols = static_cast<std::int32_t>(ly);
                    res.row_start.assign(lx + 1, 0);
                    keep_col.clear();
                    keep_p.clear();
                    for (std::int64_t a = 0; a < lx; ++a) {
                        Tile* row = acc.data() + a * w;
                        const std::int64_t t0 = touch_lo[a / ROWS],
                                           t1 = touch_hi[a / ROWS];  // t0 >= t1: none
                        read_out_row(row, t0, t1, ly, inv_n, cutoff, keep_col, keep_p);
                        if (t0 < t1) std::fill(row + t0, row + t1, Tile{});
                        res.row_start[a + 1] = static_cast<std::uint32_t>(keep_col.size());
                    }
                    res.col.assign(keep_col.begin(), keep_col.end());
                    res.p.assign(keep_p.begin(), keep_p.end());
                    out[pair_index(x, y, n)] = std::move(res);
                }
            }
        }
    }
    throw_if_stopped();
    return out;
}

std::vector<std::int64_t> upgma_merges(const std::vector<double>& condensed, std::int64_t n) {
    if (n < 1) return {};
    if (std::int64_t(condensed.size()) != n * (n - 1) / 2)
        throw std::invalid_argument("UPGMA: condensed matrix of the wrong size");
    std::vector<double> d(std::size_t(n) * n, 0.0);
    for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t j = i + 1; j < n; ++j) d[i * n + j] = d[j * n + i] = condensed[pair_index(i, j, n)];
    std::vector<std::int64_t> node(n), size(n, 1);
    std::vector<char> alive(n, 1);
    for (std::int64_t i = 0; i < n; ++i) node[i] = i;
    std::vector<std::int64_t> merges;
    merges.reserve(2 * (n - 1));
    for (std::int64_t step = 0; step < n - 1; ++step) {
        double best = std::numeric_limits<double>::infinity();
        std::int64_t bi = -1, bj = -1;
        for (std::int64_t i = 0; i < n; ++i) {
            if (!alive[i]) continue;
            for (std::int64_t j = i + 1; j < n; ++j)
                if (alive[j] && (d[i * n + j] < best || bi < 0)) {
                    best = d[i * n + j];
                    bi = i;
                    bj = j;
                }
        }
        merges.push_back(std::min(node[bi], node[bj]));
        merges.push_back(std::max(node[bi], node[bj]));
        const double si = double(size[bi]), sj = double(size[bj]);
        for (std::int64_t k = 0; k < n; ++k)
            if (alive[k] && k != bi && k != bj) {
                const double v = (si * d[bi * n + k] + sj * d[bj * n + k]) / (si + sj);
                d[bi * n + k] = d[k * n + bi] = v;
            }
        alive[bj] = 0;
        size[bi] += size[bj];
        node[bi] = n + step;
    }
    return merges;
}

namespace {

// An alignment of some of the sequences: each member's residue columns, and the width.
struct Block {
    std::vector<std::int64_t> members;
    std::int64_t width = 0;
};

class Aligner {
public:
    Aligner(const LetterSeqs& s, const std::vector<SparsePost>& post)
        : s_(s), post_(post), n_(s.count()), col_(s.letters.size(), 0) {}

    std::vector<std::int32_t>& cols() { return col_; }
    std::int32_t* col_of(std::int64_t x) { return col_.data() + s_.offsets[x]; }

    // Column-pair scores S[i * wb + j] of A's columns i and B's columns j: the summed
    // posteriors of the residue pairs they would align. cmapA/cmapB: each residue's column
    // within its side (indexed by global residue offset).
    void scores(const std::vector<std::int64_t>& A, const std::vector<std::int64_t>& B,
                const std::vector<std::int32_t>& cmap, std::int64_t wb, std::vector<float>& S) {
        for (std::int64_t x : A)
            for (std::int64_t y : B) {
                const std::int32_t* cx = cmap.data() + s_.offsets[x];
                const std::int32_t* cy = cmap.data() + s_.offsets[y];
                if (x < y) {
                    const SparsePost& p = post_[pair_index(x, y, n_)];
                    for (std::int32_t a = 0; a < p.rows; ++a) {
                        float* row = S.data() + std::size_t(cx[a]) * wb;
                        for (std::uint32_t k = p.row_start[a]; k < p.row_start[a + 1]; ++k)
                            row[cy[p.col[k]]] += p.p[k];
                    }
                } else {
                    const SparsePost& p = post_[pair_index(y, x, n_)];
                    for (std::int32_t b = 0; b < p.rows; ++b) {
                        const std::int32_t j = cy[b];
                        for (std::uint32_t k = p.row_start[b]; k < p.row_start[b + 1]; ++k)
                            S[std::size_t(cx[p.col[k]]) * wb + j] += p.p[k];
                    }
                }
            }
    }

    // Maximal summed score over alignments of wa x wb columns (no gap costs); path ops as
    // PathOp in msa.hpp (0 both, 1 A against a gap, 2 B against a gap). Ties: both, then A.
    static double dp(const std::vector<float>& S, std::int64_t wa, std::int64_t wb,
                     std::vector<std::uint8_t>& path, std::vector<std::uint8_t>& tb,
                     std::vector<double>& rows) {
        const std::int64_t W = wb + 1;
        tb.assign(std::size_t(wa + 1) * W, 0);
        rows.assign(2 * W, 0.0);
        double* prev = rows.data();
        double* cur = rows.data() + W;
        for (std::int64_t j = 0; j <= wb; ++j) {
            prev[j] = 0;
            tb[j] = 2;
        }
        for (std::int64_t i = 1; i <= wa; ++i) {
            cur[0] = 0;
            tb[i * W] = 1;
            const float* srow = S.data() + std::size_t(i - 1) * wb;
            for (std::int64_t j = 1; j <= wb; ++j) {
                const double diag = prev[j - 1] + double(srow[j - 1]);
                const double up = prev[j], left = cur[j - 1];
                double v = diag;
                std::uint8_t op = 0;
                if (up > v) {
                    v = up;
                    op = 1;
                }
                if (left > v) {
                    v = left;
                    op = 2;
                }
                cur[j] = v;
                tb[i * W + j] = op;
            }
            std::swap(prev, cur);
        }
        const double best = prev[wb];
        path.clear();
        std::int64_t i = wa, j = wb;
        while (i > 0 || j > 0) {
            const std::uint8_t op = tb[i * W + j];
            path.push_back(op);
            if (op == 0) {
                --i;
                --j;
            } else if (op == 1)
                --i;
            else
                --j;
        }
        std::reverse(path.begin(), path.end());
        return best;
    }

    // Align side A (members; cmap: their residues' columns 0..wa-1) with side B and write
    // the merged columns of all members into col_. Returns the DP score. With have_path,
    // path already holds the DP's result for these sides.
    double align_sides(const std::vector<std::int64_t>& A, std::int64_t wa,
                       const std::vector<std::int64_t>& B, std::int64_t wb, std::vector<std::int32_t>& cmap,
                       std::vector<std::uint8_t>& path, std::int64_t& width, bool have_path = false) {
        double best = 0;
        if (!have_path) {
            S_.assign(std::size_t(wa) * wb, 0.0f);
            scores(A, B, cmap, wb, S_);
            best = dp(S_, wa, wb, path, tb_, rows_);
        }
        std::vector<std::int32_t> newA(wa), newB(wb);
        std::int64_t i = 0, j = 0, c = 0;
        for (std::uint8_t op : path) {
            if (op == 0) {
                newA[i++] = c;
                newB[j++] = c;
            } else if (op == 1)
                newA[i++] = c;
            else
                newB[j++] = c;
            ++c;
        }
        for (std::int64_t x : A)
            for (std::int64_t r = s_.offsets[x]; r < s_.offsets[x + 1]; ++r) col_[r] = newA[cmap[r]];
        for (std::int64_t y : B)
            for (std::int64_t r = s_.offsets[y]; r < s_.offsets[y + 1]; ++r) col_[r] = newB[cmap[r]];
        width = c;
        return best;
    }

    // Compact the columns of members (dropping columns none of them uses) into cmap;
    // returns the width and fills kept (compact column -> current column).
    std::int64_t compact(const std::vector<std::int64_t>& members, std::int64_t width,
                         std::vector<std::int32_t>& cmap, std::vector<std::int32_t>& kept) {
        std::vector<std::int32_t> remap(width, -1);
        for (std::int64_t x : members)
            for (std::int64_t r = s_.offsets[x]; r < s_.offsets[x + 1]; ++r) remap[col_[r]] = 1;
        kept.clear();
        for (std::int64_t c = 0; c < width; ++c)
            if (remap[c] >= 0) {
                remap[c] = static_cast<std::int32_t>(kept.size());
                kept.push_back(static_cast<std::int32_t>(c));
            }
        for (std::int64_t x : members)
            for (std::int64_t r = s_.offsets[x]; r < s_.offsets[x + 1]; ++r) cmap[r] = remap[col_[r]];
        return std::int64_t(kept.size());
    }

    std::vector<float> S_;
    std::vector<std::uint8_t> tb_;
    std::vector<double> rows_;

private:
    const LetterSeqs& s_;
    const std::vector<SparsePost>& post_;
    std::int64_t n_;
    std::vector<std::int32_t> col_;
};

}  // namespace

std::vector<std::int32_t> consistency_align(const LetterSeqs& s, const std::vector<SparsePost>& post,
                                            const std::int64_t* merges, int iterations, std::uint64_t seed,
                                            int /*threads*/, std::int64_t& width, std::int64_t& accepted) {
    const std::int64_t n = s.count();
    if (std::int64_t(post.size()) != n * (n - 1) / 2)
        throw std::invalid_argument("consistency_align: wrong number of pair matrices");
    Aligner al(s, post);
    accepted = 0;
    if (n == 0) {
        width = 0;
        return {};
    }
    std::vector<std::int32_t>& col = al.cols();
    for (std::int64_t x = 0; x < n; ++x)
        for (std::int64_t r = s.offsets[x]; r < s.offsets[x + 1]; ++r)
            col[r] = static_cast<std::int32_t>(r - s.offsets[x]);
    std::vector<Block> blocks(2 * n - 1);
    for (std::int64_t x = 0; x < n; ++x) {
        blocks[x].members = {x};
        blocks[x].width = s.len(x);
    }
    std::vector<std::int32_t> cmap(s.letters.size(), 0);
    std::vector<std::uint8_t> path;
    for (std::int64_t k = 0; k < n - 1; ++k) {
        throw_if_stopped();
        const std::int64_t a = merges[2 * k], b = merges[2 * k + 1];
        if (a < 0 || b < 0 || a >= n + k || b >= n + k || a == b)
            throw std::invalid_argument("consistency_align: merge " + std::to_string(k) +
                                        " names a node that does not exist yet");
        Block& A = blocks[a];
        Block& B = blocks[b];
        if (A.members.empty() || B.members.empty())
            throw std::invalid_argument("consistency_align: merge " + std::to_string(k) +
                                        " names a node already merged");
        for (std::int64_t x : A.members)
            for (std::int64_t r = s.offsets[x]; r < s.offsets[x + 1]; ++r) cmap[r] = col[r];
        for (std::int64_t y : B.members)
            for (std::int64_t r = s.offsets[y]; r < s.offsets[y + 1]; ++r) cmap[r] = col[r];
        Block& C = blocks[n + k];
        al.align_sides(A.members, A.width, B.members, B.width, cmap, path, C.width);
        C.members = A.members;
        C.members.insert(C.members.end(), B.members.begin(), B.members.end());
        std::sort(C.members.begin(), C.members.end());
        A.members.clear();
        A.members.shrink_to_fit();
        B.members.clear();
        B.members.shrink_to_fit();
    }
    // the root holds everything when the merges form one tree; else align what is left
    std::int64_t root = 2 * n - 2;
    if (std::int64_t(blocks[root].members.size()) != n)
        throw std::invalid_argument("consistency_align: merges do not join all sequences");
    width = blocks[root].width;

    // refinement: random bipartitions, kept when the summed posteriors across rise
    std::mt19937_64 rng(seed);
    std::vector<std::int64_t> A, B;
    std::vector<std::int32_t> keptA, keptB;
    for (int it = 0; it < iterations && n > 2; ++it) {
        throw_if_stopped();
        A.clear();
        B.clear();
        for (std::int64_t x = 0; x < n; ++x) (rng() & 1 ? B : A).push_back(x);
        if (A.empty() || B.empty()) continue;
        const std::int64_t wa = al.compact(A, width, cmap, keptA);
        const std::int64_t wb = al.compact(B, width, cmap, keptB);
        // score of the current placement: pairs of compact columns that share a column
        al.S_.assign(std::size_t(wa) * wb, 0.0f);
        al.scores(A, B, cmap, wb, al.S_);
        double current = 0;
        {
            std::int64_t i = 0, j = 0;
            while (i < wa && j < wb) {
                if (keptA[i] == keptB[j]) {
                    current += double(al.S_[std::size_t(i) * wb + j]);
                    ++i;
                    ++j;
                } else if (keptA[i] < keptB[j])
                    ++i;
                else
                    ++j;
            }
        }
        const double best = Aligner::dp(al.S_, wa, wb, path, al.tb_, al.rows_);
        if (!(best > current + 1e-9 * (1.0 + std::fabs(current)))) continue;
        std::int64_t new_width = 0;
        al.align_sides(A, wa, B, wb, cmap, path, new_width, true);
        width = new_width;
        ++accepted;
    }
    return col;
}

double alignment_objective(const LetterSeqs& s, const std::vector<SparsePost>& post,
                           const std::int32_t* cols) {
    const std::int64_t n = s.count();
    double total = 0;
    for (std::int64_t x = 0; x < n; ++x)
        for (std::int64_t y = x + 1; y < n; ++y) {
            const SparsePost& p = post[pair_index(x, y, n)];
            const std::int32_t* cx = cols + s.offsets[x];
            const std::int32_t* cy = cols + s.offsets[y];
            for (std::int32_t a = 0; a < p.rows; ++a)
                for (std::uint32_t k = p.row_start[a]; k < p.row_start[a + 1]; ++k)
                    if (cx[a] == cy[p.col[k]]) total += p.p[k];
        }
    return total;
}

}  // namespace msa
}  // namespace bioaccel
