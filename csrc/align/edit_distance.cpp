#include "bioaccel/edit_distance.hpp"

#include "bioaccel/common.hpp"
#include "bioaccel/cpu.hpp"
#include "bioaccel/stop.hpp"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

namespace bioaccel {
namespace {

using Word = std::uint64_t;
constexpr Word kHigh = Word(1) << 63;

// Match masks of a query: peq[c * words + w] has bit i set where query[64 w + i] == c.
struct Pattern {
    std::vector<Word> peq;
    std::int64_t words = 0, m = 0;
    Word last_bit = kHigh;  // bit of row m in the last word

    Pattern(const std::uint8_t* a, std::int64_t len, int alphabet) : m(len) {
        words = (len + 63) / 64;
        peq.assign(static_cast<std::size_t>(alphabet) * words, 0);
        for (std::int64_t i = 0; i < len; ++i) peq[a[i] * words + i / 64] |= Word(1) << (i % 64);
        last_bit = Word(1) << ((len - 1) % 64);
    }
};

// One 64-row block of one column (Hyyro 2003). hin/hout: horizontal delta entering at the
// top row / leaving at the bottom row (-1, 0, +1). Updates pv/mv in place. Branch-free:
// the deltas vary from column to column, so branches would mispredict.
inline int block_step(Word& pv, Word& mv, Word eq, int hin, Word out_bit) {
    const Word neg = static_cast<Word>(hin < 0), pos = static_cast<Word>(hin > 0);
    const Word xv = eq | mv;
    eq |= neg;
    const Word xh = (((eq & pv) + pv) ^ pv) | eq;
    Word ph = mv | ~(xh | pv);
    Word mh = pv & xh;
    const int hout = static_cast<int>((ph & out_bit) != 0) - static_cast<int>((mh & out_bit) != 0);
    ph = (ph << 1) | pos;
    mh = (mh << 1) | neg;
    pv = mh | ~(xv | ph);
    mv = ph & xv;
    return hout;
}

std::int64_t run(const Pattern& p, const std::uint8_t* b, std::int64_t n, EditMode mode, std::int64_t k,
                 std::vector<Word>& pv, std::vector<Word>& mv) {
    const std::int64_t W = p.words;
    pv.assign(static_cast<std::size_t>(W), ~Word(0));  // column 0: D[i][0] = i
    mv.assign(static_cast<std::size_t>(W), 0);
    const int top = mode == EditMode::Infix ? 0 : 1;  // row 0: D[0][j] = j, or 0 (infix)
    std::int64_t score = p.m;                         // D[m][0]
    std::int64_t best = mode == EditMode::Global ? -1 : score;
    for (std::int64_t j = 0; j < n; ++j) {
        const Word* eq = p.peq.data() + static_cast<std::size_t>(b[j]) * W;
        int h = top;
        for (std::int64_t w = 0; w + 1 < W; ++w) h = block_step(pv[w], mv[w], eq[w], h, kHigh);
        h = block_step(pv[W - 1], mv[W - 1], eq[W - 1], h, p.last_bit);
        score += h;
        if (mode != EditMode::Global && score < best) best = score;
        if (k >= 0) {
            // the last row moves by at most 1 per column, so this bounds what is left
            const std::int64_t floor_left = score - (n - 1 - j);
            if (mode == EditMode::Global ? floor_left > k : (best > k && floor_left > k)) return k + 1;
        }
    }
    const std::int64_t d = mode == EditMode::Global ? score : best;
    return (k >= 0 && d > k) ? k + 1 : d;
}

// Targets per query in one kernel call: 16. Each ISA runs them as L lanes at a time, held as
// P vectors of L / P lanes: AVX-512 all 16 as two zmm (two independent chains that hide the
// latency of the block-to-block chain: 16S all-vs-all 1.25-1.5x faster than one zmm of 8);
// AVX2 8 at a time as two ymm, and the baseline 8 at a time as one 64-byte vector (16 there
// measured the same on AVX2 and 5-8% slower on the baseline), the second 8 only when a
// group holds more than 8 targets.
constexpr int kLanes = 16;
constexpr int kHalf = kLanes / 2;

// VL lanes of 64-bit words in one GCC vector-extension value. The kernels below use only
// lane-wise +, -, &, |, ^, ~ and shifts by a scalar (no comparisons: GCC lowers compares of
// vectors wider than the target's registers one element at a time), so one generic source
// compiles to xmm, ymm or zmm code.
template <int VL>
struct Vec {
    typedef Word V __attribute__((vector_size(8 * VL)));
    typedef std::int64_t S __attribute__((vector_size(8 * VL)));
};
// Storage for one block of up to kLanes lanes; L lanes as P vectors.
struct alignas(64) LaneV {
    Word w[kLanes];
};
template <int L, int P>
struct Pack {
    static constexpr int VL = L / P;
    using V = typename Vec<VL>::V;
    using S = typename Vec<VL>::S;
    V x[P];
};

// 1 in the lanes where x < 0, else 0 (x > -2^63), without a vector comparison.
template <class V, class S>
__attribute__((always_inline)) inline V negative(const S& x) {
    return (V)x >> 63;
}

// One 64-row block of one column, for all lanes. pos / neg: 1 in the lanes where the
// horizontal delta entering at the top is +1 / -1; on return, those of the delta leaving at
// the bottom (row `shift` of the block). (References only: vector values passed by value
// would change the ABI between the builds.)
template <int L, int P>
__attribute__((always_inline)) inline void block_stepv(LaneV& pvs, LaneV& mvs, const Pack<L, P>& eqp,
                                                       Pack<L, P>& pos, Pack<L, P>& neg, int shift) {
    using V = typename Pack<L, P>::V;
    V* pvv = reinterpret_cast<V*>(pvs.w);
    V* mvv = reinterpret_cast<V*>(mvs.w);
    for (int q = 0; q < P; ++q) {
        const V pvw = pvv[q], mvw = mvv[q], eq_in = eqp.x[q];
        const V xv = eq_in | mvw;
        const V eq = eq_in | neg.x[q];
        const V xh = (((eq & pvw) + pvw) ^ pvw) | eq;
        V ph = mvw | ~(xh | pvw);
        V mh = pvw & xh;
        const V pout = (ph >> shift) & 1, nout = (mh >> shift) & 1;  // never both
        ph = (ph << 1) | pos.x[q];
        mh = (mh << 1) | neg.x[q];
        pvv[q] = mh | ~(xv | ph);
        mvv[q] = ph & xv;
        pos.x[q] = pout;
        neg.x[q] = nout;
    }
}

// The match masks of block w for the lanes' letters.
template <int L, int P>
__attribute__((always_inline)) inline void gather_eq(Pack<L, P>& eq, const Word* const* col, std::int64_t w) {
    for (int q = 0; q < P; ++q)
        for (int l = 0; l < Pack<L, P>::VL; ++l) eq.x[q][l] = col[q * Pack<L, P>::VL + l][w];
}

// kLanes targets against one query at once, one per 64-bit lane: the column-to-column and
// block-to-block dependency chains of Myers' algorithm are long, so independent pairs in
// the lanes fill the pipeline. Lanes finish at their own target lengths.
template <int L, int P>
__attribute__((always_inline)) inline void run_lanes_body(const Pattern& p, const std::uint8_t* const* t,
                                                          const std::int64_t* n, EditMode mode,
                                                          std::int64_t k, std::int64_t* result, LaneV* pv,
                                                          LaneV* mv) {
    using V = typename Pack<L, P>::V;
    using S = typename Pack<L, P>::S;
    constexpr int VL = Pack<L, P>::VL;
    const std::int64_t W = p.words;
    const int last_shift = static_cast<int>((p.m - 1) % 64);
    for (std::int64_t w = 0; w < W; ++w)
        for (int l = 0; l < L; ++l) {
            pv[w].w[l] = ~Word(0);
            mv[w].w[l] = 0;
        }
    const Word top_pos = mode == EditMode::Infix ? 0 : 1;
    std::int64_t nmax = 0;
    S len[P], score[P], best[P];
    for (int l = 0; l < L; ++l) {
        nmax = n[l] > nmax ? n[l] : nmax;
        len[l / VL][l % VL] = n[l];
        score[l / VL][l % VL] = best[l / VL][l % VL] = p.m;
    }
    const Word* peq = p.peq.data();
    for (std::int64_t j = 0; j < nmax; ++j) {
        Pack<L, P> pos, neg;
        const Word* col[L];
        for (int l = 0; l < L; ++l) col[l] = peq + (j < n[l] ? t[l][j] : 0) * W;
        for (int q = 0; q < P; ++q) {
            pos.x[q] = V{} + top_pos;
            neg.x[q] = V{};
        }
        for (std::int64_t w = 0; w < W; ++w) {
            Pack<L, P> eq;
            gather_eq(eq, col, w);
            block_stepv(pv[w], mv[w], eq, pos, neg, w == W - 1 ? last_shift : 63);
        }
        for (int q = 0; q < P; ++q) {
            const S live = -(S)negative<V>(j - len[q]);  // -1 for lanes still inside their target
            score[q] += ((S)pos.x[q] - (S)neg.x[q]) & live;
            const S lower = -(S)negative<V>(score[q] - best[q]) & live;
            best[q] += (score[q] - best[q]) & lower;
        }
        if (k >= 0 && (j & 63) == 63) {
            bool all_out = true;
            for (int l = 0; l < L; ++l) {
                const std::int64_t sc = score[l / VL][l % VL], bs = best[l / VL][l % VL];
                const std::int64_t floor_left = sc - (n[l] - 1 - j);
                const bool out = mode == EditMode::Global ? floor_left > k : (bs > k && floor_left > k);
                all_out = all_out && (out || j >= n[l]);
            }
            if (all_out) break;
        }
    }
    for (int l = 0; l < L; ++l) {
        const std::int64_t d = mode == EditMode::Global ? score[l / VL][l % VL] : best[l / VL][l % VL];
        result[l] = (k >= 0 && d > k) ? k + 1 : d;
    }
}

// Global distances of L targets to one query, exact when at most k, else k + 1
// (Ukkonen's band, computed in Myers' blocks). A global path of cost <= k through cell
// (i, j) has |d| + |(m - n) - d| <= k, d = i - j, so only the diagonals
// d in [ceil((m - n - k) / 2), floor((m - n + k) / 2)] matter; a block is computed while it
// holds one of them for some lane (the union over lanes: the range only moves down). The
// block at the top of the range gets a horizontal delta of +1 at its top edge, and a block
// entering at the bottom starts from its upper neighbour's last value + 1 per row; both stand
// in for values no smaller than the true ones (a path that can only cost more), so the cells
// computed never fall below the true distances and equal them along any path of cost <= k.
// Only the value at the last computed block's last row is tracked (row m once the band
// reaches it).
template <int L, int P>
__attribute__((always_inline)) inline void run_lanes_banded_body(const Pattern& p,
                                                                 const std::uint8_t* const* t,
                                                                 const std::int64_t* n, std::int64_t k,
                                                                 std::int64_t* result, LaneV* pv, LaneV* mv) {
    using V = typename Pack<L, P>::V;
    using S = typename Pack<L, P>::S;
    constexpr int VL = Pack<L, P>::VL;
    const std::int64_t W = p.words, m = p.m;
    const int last_shift = static_cast<int>((m - 1) % 64);
    const auto floor_div2 = [](std::int64_t x) { return x >= 0 ? x / 2 : -((-x + 1) / 2); };
    std::int64_t d_lo = 0, d_hi = 0, nmax = 0;
    bool any = false;
    S len[P];
    bool unset[L];
    for (int l = 0; l < L; ++l) {
        len[l / VL][l % VL] = n[l];
        unset[l] = true;
        result[l] = -1;
        const std::int64_t delta = m - n[l];
        if (k < (delta < 0 ? -delta : delta)) {
            result[l] = k + 1;  // the lengths alone differ by more than k
            unset[l] = false;
            continue;
        }
        const std::int64_t lo = -floor_div2(k - delta), hi = floor_div2(delta + k);
        d_lo = any ? std::min(d_lo, lo) : lo;
        d_hi = any ? std::max(d_hi, hi) : hi;
        nmax = std::max(nmax, n[l]);
        any = true;
    }
    if (!any) return;
    const auto block_of_row = [](std::int64_t row) { return (row - 1) / 64; };  // row >= 1
    const Word* peq = p.peq.data();
    std::int64_t first = 0, last = -1;
    S bottom[P], found[P];  // the value at the last computed row, column j - 1 (D[0][0] = 0 to
                            // start); the distances, for lanes past their last column
    for (int q = 0; q < P; ++q) bottom[q] = found[q] = S{};
    for (std::int64_t j = 1; j <= nmax; ++j) {
        const std::int64_t want_last = std::min(W - 1, block_of_row(std::min(m, j + d_hi)));
        for (std::int64_t b = last + 1; b <= want_last; ++b) {  // entering at the bottom
            for (int l = 0; l < L; ++l) {
                pv[b].w[l] = ~Word(0);
                mv[b].w[l] = 0;
            }
            for (int q = 0; q < P; ++q) bottom[q] += b == W - 1 ? m - 64 * (W - 1) : 64;
        }
        last = std::max(last, want_last);
        const std::int64_t row_lo = j + d_lo;
        if (row_lo > 1) first = std::max(first, std::min(last, block_of_row(std::min(row_lo, m))));
        const Word* col[L];
        for (int l = 0; l < L; ++l) col[l] = peq + (j <= n[l] ? t[l][j - 1] : 0) * W;
        Pack<L, P> pos, neg;  // D[0][j] - D[0][j-1], or the stand-in above the band
        for (int q = 0; q < P; ++q) {
            pos.x[q] = V{} + 1;
            neg.x[q] = V{};
        }
        for (std::int64_t w = first; w <= last; ++w) {
            Pack<L, P> eq;
            gather_eq(eq, col, w);
            block_stepv(pv[w], mv[w], eq, pos, neg, w == W - 1 ? last_shift : 63);
        }
        for (int q = 0; q < P; ++q) {
            bottom[q] += (S)pos.x[q] - (S)neg.x[q];
            // found = bottom in the lanes where len == j (last == W - 1 at a lane's last column)
            const S at_end = -(S)negative<V>((S)(len[q] ^ j) - 1);
            found[q] ^= (found[q] ^ bottom[q]) & at_end;
        }
    }
    for (int l = 0; l < L; ++l) {
        const std::int64_t f = found[l / VL][l % VL];
        if (unset[l]) result[l] = f > k ? k + 1 : f;
    }
}

// The kernels compiled for AVX-512 (16 lanes as two zmm), AVX2 (8 lanes as two ymm) and the
// baseline (8 lanes as one 64-byte vector, which the compiler splits) from the one generic
// source above, picked at run time by active_isa(). `lanes` (1 .. kLanes) is how many of the
// kLanes targets are real (the rest repeat one of them): the 8-lane builds skip a second half
// that holds none. (Explicit wrappers rather than target_clones: GCC's clones of this vector
// code crashed.)
#if defined(__x86_64__) && defined(__GNUC__)
#define BIOACCEL_EDIT_X86 1
__attribute__((target("avx512f,avx512bw,avx512vl"))) void run_lanes_avx512(
    const Pattern& p, const std::uint8_t* const* t, const std::int64_t* n, EditMode mode, std::int64_t k,
    std::int64_t* result, LaneV* pv, LaneV* mv, int) {
    run_lanes_body<kLanes, 2>(p, t, n, mode, k, result, pv, mv);
}
__attribute__((target("avx2"))) void run_lanes_avx2(const Pattern& p, const std::uint8_t* const* t,
                                                    const std::int64_t* n, EditMode mode, std::int64_t k,
                                                    std::int64_t* result, LaneV* pv, LaneV* mv, int lanes) {
    for (int h = 0; h < lanes; h += kHalf)
        run_lanes_body<kHalf, 2>(p, t + h, n + h, mode, k, result + h, pv, mv);
}
__attribute__((target("avx512f,avx512bw,avx512vl"))) void run_lanes_banded_avx512(
    const Pattern& p, const std::uint8_t* const* t, const std::int64_t* n, std::int64_t k,
    std::int64_t* result, LaneV* pv, LaneV* mv, int) {
    run_lanes_banded_body<kLanes, 2>(p, t, n, k, result, pv, mv);
}
__attribute__((target("avx2"))) void run_lanes_banded_avx2(const Pattern& p, const std::uint8_t* const* t,
                                                           const std::int64_t* n, std::int64_t k,
                                                           std::int64_t* result, LaneV* pv, LaneV* mv,
                                                           int lanes) {
    for (int h = 0; h < lanes; h += kHalf)
        run_lanes_banded_body<kHalf, 2>(p, t + h, n + h, k, result + h, pv, mv);
}
#endif

void run_lanes_base(const Pattern& p, const std::uint8_t* const* t, const std::int64_t* n, EditMode mode,
                    std::int64_t k, std::int64_t* result, LaneV* pv, LaneV* mv, int lanes) {
    for (int h = 0; h < lanes; h += kHalf)
        run_lanes_body<kHalf, 1>(p, t + h, n + h, mode, k, result + h, pv, mv);
}

void run_lanes_banded_base(const Pattern& p, const std::uint8_t* const* t, const std::int64_t* n,
                           std::int64_t k, std::int64_t* result, LaneV* pv, LaneV* mv, int lanes) {
    for (int h = 0; h < lanes; h += kHalf)
        run_lanes_banded_body<kHalf, 1>(p, t + h, n + h, k, result + h, pv, mv);
}

void run_lanes_banded(const Pattern& p, const std::uint8_t* const* t, const std::int64_t* n, std::int64_t k,
                      std::int64_t* result, std::vector<LaneV>& pv, std::vector<LaneV>& mv, int lanes) {
    if (pv.size() < static_cast<std::size_t>(p.words)) {
        pv.resize(static_cast<std::size_t>(p.words));
        mv.resize(static_cast<std::size_t>(p.words));
    }
#ifdef BIOACCEL_EDIT_X86
    const Isa isa = active_isa();
    if (isa >= Isa::Avx512) return run_lanes_banded_avx512(p, t, n, k, result, pv.data(), mv.data(), lanes);
    if (isa >= Isa::Avx2) return run_lanes_banded_avx2(p, t, n, k, result, pv.data(), mv.data(), lanes);
#endif
    run_lanes_banded_base(p, t, n, k, result, pv.data(), mv.data(), lanes);
}

void run_lanes(const Pattern& p, const std::uint8_t* const* t, const std::int64_t* n, EditMode mode,
               std::int64_t k, std::int64_t* result, std::vector<LaneV>& pv, std::vector<LaneV>& mv,
               int lanes) {
    if (pv.size() < static_cast<std::size_t>(p.words)) {
        pv.resize(static_cast<std::size_t>(p.words));
        mv.resize(static_cast<std::size_t>(p.words));
    }
#ifdef BIOACCEL_EDIT_X86
    const Isa isa = active_isa();
    if (isa >= Isa::Avx512) return run_lanes_avx512(p, t, n, mode, k, result, pv.data(), mv.data(), lanes);
    if (isa >= Isa::Avx2) return run_lanes_avx2(p, t, n, mode, k, result, pv.data(), mv.data(), lanes);
#endif
    run_lanes_base(p, t, n, mode, k, result, pv.data(), mv.data(), lanes);
}

// Queries of at least this many words go through the band (fewer: the band saves little).
constexpr std::int64_t kBandMinWords = 3;
// The first band's threshold for a query's first targets (as edlib: 64, doubled while a
// distance is larger).
constexpr std::int64_t kFirstBand = 64;

// Global distances of one query to the targets in todo (non-empty) into row: the band at
// threshold k for every pair, then 2k for those over k, and so on, up to max_distance when
// one is given (then over it is max_distance + 1). Lanes are refilled between rounds.
void banded_rounds(const Pattern& p, const SeqView& targets, std::vector<std::int64_t> todo, std::int64_t k,
                   std::int64_t max_distance, std::int32_t* row, std::vector<LaneV>& pv,
                   std::vector<LaneV>& mv) {
    std::vector<std::int64_t> next;
    if (max_distance >= 0) k = std::min(k, max_distance);
    while (!todo.empty()) {
        const bool final_round = max_distance >= 0 && k >= max_distance;
        next.clear();
        for (std::size_t g = 0; g < todo.size(); g += kLanes) {
            const int lanes = static_cast<int>(std::min<std::size_t>(kLanes, todo.size() - g));
            const std::uint8_t* tp[kLanes];
            std::int64_t tn[kLanes], res[kLanes];
            for (int l = 0; l < kLanes; ++l) {
                const std::int64_t t = todo[g + (l < lanes ? l : 0)];
                tp[l] = targets.seq(t);
                tn[l] = targets.length(t);
            }
            run_lanes_banded(p, tp, tn, k, res, pv, mv, lanes);
            for (int l = 0; l < lanes; ++l) {
                if (res[l] <= k || final_round) {
                    row[todo[g + l]] = static_cast<std::int32_t>(res[l]);
                } else {
                    next.push_back(todo[g + l]);
                }
            }
        }
        todo.swap(next);
        k = max_distance >= 0 ? std::min(2 * k, max_distance) : 2 * k;
    }
}

// Global distances of one query to targets [first, nt) into row. The first kLanes targets
// start at kFirstBand; the rest, grouped by length, start at the largest of their distances,
// so a set of similar distances (all-vs-all of related sequences) wastes few rounds.
void global_banded(const Pattern& p, const SeqView& targets, std::int64_t first, std::int64_t nt,
                   std::int64_t max_distance, std::int32_t* row, std::vector<LaneV>& pv,
                   std::vector<LaneV>& mv) {
    std::vector<std::int64_t> todo;
    for (std::int64_t t = first; t < nt; ++t) {
        if (targets.length(t) == 0) {
            row[t] =
                static_cast<std::int32_t>((max_distance >= 0 && p.m > max_distance) ? max_distance + 1 : p.m);
        } else {
            todo.push_back(t);
        }
    }
    const std::size_t sample = std::min<std::size_t>(todo.size(), kLanes);
    banded_rounds(p, targets, std::vector<std::int64_t>(todo.begin(), todo.begin() + sample), kFirstBand,
                  max_distance, row, pv, mv);
    if (sample == todo.size()) return;
    std::vector<std::int64_t> seen;
    for (std::size_t x = 0; x < sample; ++x) seen.push_back(row[todo[x]]);
    // the largest of the first distances: a band that holds most of the rest in one round
    // (the median's power of two left ~40% of related 1 kb sequences to a second round)
    const std::int64_t k = std::max<std::int64_t>(kFirstBand, *std::max_element(seen.begin(), seen.end()));
    std::vector<std::int64_t> rest(todo.begin() + sample, todo.end());
    // by length: the lanes of a group then share their band's diagonals and last column
    std::stable_sort(rest.begin(), rest.end(),
                     [&](std::int64_t a, std::int64_t b) { return targets.length(a) < targets.length(b); });
    banded_rounds(p, targets, std::move(rest), k, max_distance, row, pv, mv);
}

}  // namespace

std::int64_t edit_distance_pair(const std::uint8_t* a, std::int64_t m, const std::uint8_t* b, std::int64_t n,
                                EditMode mode, std::int64_t max_distance, int alphabet) {
    std::int64_t d;
    if (m == 0) {
        d = mode == EditMode::Global ? n : 0;
    } else if (n == 0) {
        d = m;
    } else {
        const Pattern p(a, m, alphabet);
        std::vector<Word> pv, mv;
        return run(p, b, n, mode, max_distance, pv, mv);
    }
    return (max_distance >= 0 && d > max_distance) ? max_distance + 1 : d;
}

void edit_distances(const SeqView& queries, const SeqView& targets, EditMode mode, std::int64_t max_distance,
                    int alphabet, bool symmetric, std::int32_t* out, int threads) {
    if (alphabet < 1 || alphabet > 256) throw std::invalid_argument("alphabet must have 1..256 letters");
    if (symmetric && (queries.count != targets.count))
        throw std::invalid_argument("symmetric edit distances need queries == targets");
    if (symmetric && mode != EditMode::Global)
        throw std::invalid_argument("only global edit distance is symmetric");
    const std::int64_t nq = queries.count, nt = targets.count;
#ifdef _OPENMP
#pragma omp parallel num_threads(resolve_threads(threads))
#else
    (void)threads;
#endif
    {
        std::vector<Word> pv, mv;
        std::vector<LaneV> pv4, mv4;
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 1)
#endif
        for (std::int64_t qi = 0; qi < nq; ++qi) {
            if (stop_requested()) continue;  // Ctrl-C: the rest skipped; thrown below
            const std::int64_t m = queries.length(qi);
            const std::uint8_t* a = queries.seq(qi);
            const std::int64_t first = symmetric ? qi : 0;
            if (m == 0) {
                for (std::int64_t t = first; t < nt; ++t)
                    out[qi * nt + t] = static_cast<std::int32_t>(edit_distance_pair(
                        a, 0, targets.seq(t), targets.length(t), mode, max_distance, alphabet));
                continue;
            }
            const Pattern p(a, m, alphabet);
            if (mode == EditMode::Global && p.words >= kBandMinWords) {
                global_banded(p, targets, first, nt, max_distance, out + qi * nt, pv4, mv4);
                continue;
            }
            std::int64_t batch[kLanes];
            int filled = 0;
            auto flush = [&]() {
                const std::uint8_t* tp[kLanes];
                std::int64_t tn[kLanes], res[kLanes];
                for (int l = 0; l < kLanes; ++l) {
                    const std::int64_t t = batch[l < filled ? l : 0];
                    tp[l] = targets.seq(t);
                    tn[l] = targets.length(t);
                }
                run_lanes(p, tp, tn, mode, max_distance, res, pv4, mv4, filled);
                for (int l = 0; l < filled; ++l) out[qi * nt + batch[l]] = static_cast<std::int32_t>(res[l]);
                filled = 0;
            };
            for (std::int64_t t = first; t < nt; ++t) {
                const std::int64_t n = targets.length(t);
                if (n == 0) {
                    out[qi * nt + t] = static_cast<std::int32_t>(
                        (max_distance >= 0 && m > max_distance) ? max_distance + 1 : m);
                    continue;
                }
                batch[filled++] = t;
                if (filled == kLanes) flush();
            }
            if (filled == 1) {
                out[qi * nt + batch[0]] = static_cast<std::int32_t>(
                    run(p, targets.seq(batch[0]), targets.length(batch[0]), mode, max_distance, pv, mv));
            } else if (filled > 1) {
                flush();
            }
        }
    }
    throw_if_stopped();  // outside the parallel region
    if (symmetric)
        for (std::int64_t i = 0; i < nq; ++i)
            for (std::int64_t j = 0; j < i; ++j) out[i * nt + j] = out[j * nt + i];
}

}  // namespace bioaccel
