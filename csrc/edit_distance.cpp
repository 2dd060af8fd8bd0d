#include "bioaccel/edit_distance.hpp"

#include "bioaccel/common.hpp"

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
        for (std::int64_t i = 0; i < len; ++i)
            peq[a[i] * words + i / 64] |= Word(1) << (i % 64);
        last_bit = Word(1) << ((len - 1) % 64);
    }
};

// One 64-row block of one column (Hyyro 2003). hin/hout: horizontal delta entering at the
// top row / leaving at the bottom row (-1, 0, +1). Updates pv/mv in place.
inline int block_step(Word& pv, Word& mv, Word eq, int hin, Word out_bit) {
    const Word xv = eq | mv;
    if (hin < 0) eq |= 1;
    const Word xh = (((eq & pv) + pv) ^ pv) | eq;
    Word ph = mv | ~(xh | pv);
    Word mh = pv & xh;
    const int hout = (ph & out_bit) ? 1 : ((mh & out_bit) ? -1 : 0);
    ph <<= 1;
    mh <<= 1;
    if (hin < 0) mh |= 1;
    else if (hin > 0) ph |= 1;
    pv = mh | ~(xv | ph);
    mv = ph & xv;
    return hout;
}

std::int64_t run(const Pattern& p, const std::uint8_t* b, std::int64_t n, EditMode mode,
                 std::int64_t k, std::vector<Word>& pv, std::vector<Word>& mv) {
    const std::int64_t W = p.words;
    pv.assign(static_cast<std::size_t>(W), ~Word(0));  // column 0: D[i][0] = i
    mv.assign(static_cast<std::size_t>(W), 0);
    const int top = mode == EditMode::Infix ? 0 : 1;     // row 0: D[0][j] = j, or 0 (infix)
    std::int64_t score = p.m;                            // D[m][0]
    std::int64_t best = mode == EditMode::Global ? -1 : score;
    for (std::int64_t j = 0; j < n; ++j) {
        const Word* eq = p.peq.data() + static_cast<std::size_t>(b[j]) * W;
        int h = top;
        for (std::int64_t w = 0; w < W; ++w)
            h = block_step(pv[w], mv[w], eq[w], h, w == W - 1 ? p.last_bit : kHigh);
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

}  // namespace

std::int64_t edit_distance_pair(const std::uint8_t* a, std::int64_t m, const std::uint8_t* b,
                                std::int64_t n, EditMode mode, std::int64_t max_distance,
                                int alphabet) {
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

void edit_distances(const SeqView& queries, const SeqView& targets, EditMode mode,
                    std::int64_t max_distance, int alphabet, bool symmetric, std::int32_t* out,
                    int threads) {
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
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 1)
#endif
        for (std::int64_t qi = 0; qi < nq; ++qi) {
            const std::int64_t m = queries.length(qi);
            const std::uint8_t* a = queries.seq(qi);
            const std::int64_t first = symmetric ? qi : 0;
            if (m == 0) {
                for (std::int64_t t = first; t < nt; ++t)
                    out[qi * nt + t] = static_cast<std::int32_t>(
                        edit_distance_pair(a, 0, targets.seq(t), targets.length(t), mode, max_distance, alphabet));
                continue;
            }
            const Pattern p(a, m, alphabet);
            for (std::int64_t t = first; t < nt; ++t) {
                const std::int64_t n = targets.length(t);
                std::int64_t d;
                if (n == 0) {
                    d = (max_distance >= 0 && m > max_distance) ? max_distance + 1 : m;
                } else {
                    d = run(p, targets.seq(t), n, mode, max_distance, pv, mv);
                }
                out[qi * nt + t] = static_cast<std::int32_t>(d);
            }
        }
    }
    if (symmetric)
        for (std::int64_t i = 0; i < nq; ++i)
            for (std::int64_t j = 0; j < i; ++j) out[i * nt + j] = out[j * nt + i];
}

}  // namespace bioaccel
