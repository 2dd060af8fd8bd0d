#include "bioaccel/edit_distance.hpp"

#include "bioaccel/common.hpp"
#include "bioaccel/cpu.hpp"

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

typedef Word V4 __attribute__((vector_size(32)));
typedef std::int64_t S4 __attribute__((vector_size(32)));
constexpr int kLanes = 4;
// Vector types lose their attributes as template arguments: wrap them for std::vector.
struct alignas(32) Lane4 {
    V4 v;
};

// block_step for four lanes: one 64-row block of one column. pos / neg: 1 in the lanes where
// the horizontal delta entering at the top is +1 / -1; on return, those of the delta leaving
// at the bottom (out_bit's row), which also goes to hout. (References only: vector values
// passed by value would change the ABI between the AVX2 and baseline builds.)
__attribute__((always_inline)) inline void block_step4(V4& pv, V4& mv, const V4& eq_in, V4& pos, V4& neg,
                                                       Word out_bit, S4& hout) {
    const V4 pvw = pv, mvw = mv;
    const V4 xv = eq_in | mvw;
    const V4 eq = eq_in | neg;
    const V4 xh = (((eq & pvw) + pvw) ^ pvw) | eq;
    V4 ph = mvw | ~(xh | pvw);
    V4 mh = pvw & xh;
    hout = (S4)((mh & out_bit) != 0) - (S4)((ph & out_bit) != 0);  // comparisons give -1
    ph = (ph << 1) | pos;
    mh = (mh << 1) | neg;
    pv = mh | ~(xv | ph);
    mv = ph & xv;
    pos = (V4)(hout > 0) & 1;
    neg = (V4)(hout < 0) & 1;
}

// Four targets against one query at once, one per 64-bit lane: the column-to-column and
// block-to-block dependency chains of Myers' algorithm are long, so independent pairs in
// the lanes of one vector fill the pipeline. Lanes finish at their own target lengths.
__attribute__((always_inline)) inline void run4_body(const Pattern& p, const std::uint8_t* const* t,
                                                     const std::int64_t* n, EditMode mode, std::int64_t k,
                                                     std::int64_t* result, Lane4* pv, Lane4* mv) {
    const std::int64_t W = p.words;
    V4 ones;
    for (int l = 0; l < kLanes; ++l) ones[l] = ~Word(0);
    for (std::int64_t w = 0; w < W; ++w) {
        pv[w].v = ones;
        mv[w].v = V4{};
    }
    const Word top_pos = mode == EditMode::Infix ? 0 : 1;
    std::int64_t nmax = 0;
    S4 len;
    for (int l = 0; l < kLanes; ++l) {
        nmax = n[l] > nmax ? n[l] : nmax;
        len[l] = n[l];
    }
    S4 score, best;
    for (int l = 0; l < kLanes; ++l) score[l] = best[l] = p.m;
    const Word* peq = p.peq.data();
    for (std::int64_t j = 0; j < nmax; ++j) {
        V4 pos, neg{};
        for (int l = 0; l < kLanes; ++l) pos[l] = top_pos;
        S4 hout{};
        std::size_t code[kLanes];
        for (int l = 0; l < kLanes; ++l) code[l] = j < n[l] ? t[l][j] : 0;
        for (std::int64_t w = 0; w < W; ++w) {
            V4 eq;
            for (int l = 0; l < kLanes; ++l) eq[l] = peq[code[l] * W + w];
            block_step4(pv[w].v, mv[w].v, eq, pos, neg, w == W - 1 ? p.last_bit : kHigh, hout);
        }
        const S4 live = (S4)(len > j);  // -1 for lanes still inside their target
        score += hout & live;
        best = live ? (score < best ? score : best) : best;
        if (k >= 0 && (j & 63) == 63) {
            bool all_out = true;
            for (int l = 0; l < kLanes; ++l) {
                const std::int64_t floor_left = score[l] - (n[l] - 1 - j);
                const bool out = mode == EditMode::Global ? floor_left > k : (best[l] > k && floor_left > k);
                all_out = all_out && (out || j >= n[l]);
            }
            if (all_out) break;
        }
    }
    for (int l = 0; l < kLanes; ++l) {
        const std::int64_t d = mode == EditMode::Global ? score[l] : best[l];
        result[l] = (k >= 0 && d > k) ? k + 1 : d;
    }
}

// Global distances of four targets to one query, exact when at most k, else k + 1 (Ukkonen's
// band, computed in Myers' blocks). A global path of cost <= k through cell (i, j) has
// |d| + |(m - n) - d| <= k, d = i - j, so only the diagonals
// d in [ceil((m - n - k) / 2), floor((m - n + k) / 2)] matter; a block is computed while it
// holds one of them for some lane (the union over lanes: the range only moves down). The
// block at the top of the range gets a horizontal delta of +1 at its top edge, and a block
// entering at the bottom starts from its upper neighbour's last value + 1 per row; both stand
// in for values no smaller than the true ones (a path that can only cost more), so the cells
// computed never fall below the true distances and equal them along any path of cost <= k.
// Only the value at the last computed block's last row is tracked (row m once the band
// reaches it).
__attribute__((always_inline)) inline void run4_banded_body(const Pattern& p, const std::uint8_t* const* t,
                                                            const std::int64_t* n, std::int64_t k,
                                                            std::int64_t* result, Lane4* pv, Lane4* mv) {
    const std::int64_t W = p.words, m = p.m;
    const auto floor_div2 = [](std::int64_t x) { return x >= 0 ? x / 2 : -((-x + 1) / 2); };
    std::int64_t d_lo = 0, d_hi = 0, nmax = 0;
    bool any = false;
    S4 len, unset;
    for (int l = 0; l < kLanes; ++l) {
        len[l] = n[l];
        unset[l] = -1;
        result[l] = -1;
        const std::int64_t delta = m - n[l];
        if (k < (delta < 0 ? -delta : delta)) {
            result[l] = k + 1;  // the lengths alone differ by more than k
            unset[l] = 0;
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
    V4 ones, one;
    for (int l = 0; l < kLanes; ++l) {
        ones[l] = ~Word(0);
        one[l] = 1;
    }
    std::int64_t first = 0, last = -1;
    S4 bottom{};  // the value at the last computed row, column j - 1 (D[0][0] = 0 to start)
    S4 found{};   // the distances, for lanes past their last column
    for (std::int64_t j = 1; j <= nmax; ++j) {
        const std::int64_t want_last = std::min(W - 1, block_of_row(std::min(m, j + d_hi)));
        for (std::int64_t b = last + 1; b <= want_last; ++b) {  // entering at the bottom
            pv[b].v = ones;
            mv[b].v = V4{};
            const std::int64_t rows = b == W - 1 ? m - 64 * (W - 1) : 64;
            for (int l = 0; l < kLanes; ++l) bottom[l] += rows;
        }
        last = std::max(last, want_last);
        const std::int64_t row_lo = j + d_lo;
        if (row_lo > 1) first = std::max(first, std::min(last, block_of_row(std::min(row_lo, m))));
        std::size_t code[kLanes];
        for (int l = 0; l < kLanes; ++l) code[l] = j <= n[l] ? t[l][j - 1] : 0;
        V4 pos = one, neg{};  // D[0][j] - D[0][j-1], or the stand-in above the band
        S4 hout{};
        for (std::int64_t w = first; w <= last; ++w) {
            V4 eq;
            for (int l = 0; l < kLanes; ++l) eq[l] = peq[code[l] * W + w];
            block_step4(pv[w].v, mv[w].v, eq, pos, neg, w == W - 1 ? p.last_bit : kHigh, hout);
        }
        bottom += hout;
        found = (len == j) ? bottom : found;  // last == W - 1 at a lane's last column
    }
    for (int l = 0; l < kLanes; ++l)
        if (unset[l]) result[l] = found[l] > k ? k + 1 : found[l];
}

// The 4-lane kernel compiled twice, for AVX2 and the baseline, picked at run time.
// (Explicit wrappers rather than target_clones: GCC's clones of this vector code crashed.)
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2"))) void run4_avx2(const Pattern& p, const std::uint8_t* const* t,
                                               const std::int64_t* n, EditMode mode, std::int64_t k,
                                               std::int64_t* result, Lane4* pv, Lane4* mv) {
    run4_body(p, t, n, mode, k, result, pv, mv);
}
#endif

void run4_base(const Pattern& p, const std::uint8_t* const* t, const std::int64_t* n, EditMode mode,
               std::int64_t k, std::int64_t* result, Lane4* pv, Lane4* mv) {
    run4_body(p, t, n, mode, k, result, pv, mv);
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2"))) void run4_banded_avx2(const Pattern& p, const std::uint8_t* const* t,
                                                      const std::int64_t* n, std::int64_t k,
                                                      std::int64_t* result, Lane4* pv, Lane4* mv) {
    run4_banded_body(p, t, n, k, result, pv, mv);
}
#endif

void run4_banded_base(const Pattern& p, const std::uint8_t* const* t, const std::int64_t* n, std::int64_t k,
                      std::int64_t* result, Lane4* pv, Lane4* mv) {
    run4_banded_body(p, t, n, k, result, pv, mv);
}

void run4_banded(const Pattern& p, const std::uint8_t* const* t, const std::int64_t* n, std::int64_t k,
                 std::int64_t* result, std::vector<Lane4>& pv, std::vector<Lane4>& mv) {
    if (pv.size() < static_cast<std::size_t>(p.words)) {
        pv.resize(static_cast<std::size_t>(p.words));
        mv.resize(static_cast<std::size_t>(p.words));
    }
#if defined(__x86_64__) && defined(__GNUC__)
    if (active_isa() >= Isa::Avx2) return run4_banded_avx2(p, t, n, k, result, pv.data(), mv.data());
#endif
    run4_banded_base(p, t, n, k, result, pv.data(), mv.data());
}

void run4(const Pattern& p, const std::uint8_t* const* t, const std::int64_t* n, EditMode mode,
          std::int64_t k, std::int64_t* result, std::vector<Lane4>& pv, std::vector<Lane4>& mv) {
    if (pv.size() < static_cast<std::size_t>(p.words)) {
        pv.resize(static_cast<std::size_t>(p.words));
        mv.resize(static_cast<std::size_t>(p.words));
    }
#if defined(__x86_64__) && defined(__GNUC__)
    if (active_isa() >= Isa::Avx2) return run4_avx2(p, t, n, mode, k, result, pv.data(), mv.data());
#endif
    run4_base(p, t, n, mode, k, result, pv.data(), mv.data());
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
                   std::int64_t max_distance, std::int32_t* row, std::vector<Lane4>& pv,
                   std::vector<Lane4>& mv) {
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
            run4_banded(p, tp, tn, k, res, pv, mv);
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

// Global distances of one query to targets [first, nt) into row. The first few targets
// start at kFirstBand; the rest start at the band that held their median distance, so a set
// of similar distances (all-vs-all of related sequences) wastes few rounds.
void global_banded(const Pattern& p, const SeqView& targets, std::int64_t first, std::int64_t nt,
                   std::int64_t max_distance, std::int32_t* row, std::vector<Lane4>& pv,
                   std::vector<Lane4>& mv) {
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
    std::nth_element(seen.begin(), seen.begin() + sample / 2, seen.end());
    std::int64_t k = kFirstBand;
    while (k < seen[sample / 2]) k *= 2;
    banded_rounds(p, targets, std::vector<std::int64_t>(todo.begin() + sample, todo.end()), k, max_distance,
                  row, pv, mv);
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
        std::vector<Lane4> pv4, mv4;
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 1)
#endif
        for (std::int64_t qi = 0; qi < nq; ++qi) {
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
                run4(p, tp, tn, mode, max_distance, res, pv4, mv4);
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
    if (symmetric)
        for (std::int64_t i = 0; i < nq; ++i)
            for (std::int64_t j = 0; j < i; ++j) out[i * nt + j] = out[j * nt + i];
}

}  // namespace bioaccel
