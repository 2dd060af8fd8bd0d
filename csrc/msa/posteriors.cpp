// Pair-HMM posterior match probabilities (forward-backward, scaled per row), their sparse
// form, expected accuracies, and all pairs on all threads. See bioaccel/msa_accurate.hpp.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "bioaccel/stop.hpp"
#include "bioaccel/common.hpp"
#include "bioaccel/cpu.hpp"
#include "bioaccel/msa_accurate.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace bioaccel {
namespace msa {

namespace {

// (K + 1) x (K + 1) odds with the unknown letter K emitting 1 against anything.
std::vector<double> padded_odds(const PairHmm& hmm) {
    const int k = hmm.letters;
    if (k < 1 || hmm.odds.size() != std::size_t(k) * k)
        throw std::invalid_argument("pair-HMM odds must be a letters x letters matrix");
    std::vector<double> out(std::size_t(k + 1) * (k + 1), 1.0);
    for (int a = 0; a < k; ++a)
        for (int b = 0; b < k; ++b) {
            const double v = hmm.odds[std::size_t(a) * k + b];
            if (!(v > 0) || !std::isfinite(v))
                throw std::invalid_argument("pair-HMM odds must be positive and finite");
            out[std::size_t(a) * (k + 1) + b] = v;
        }
    return out;
}

void check_hmm(const PairHmm& h) {
    double total = 0;
    for (double s : h.start) {
        if (!(s >= 0)) throw std::invalid_argument("pair-HMM start probabilities must be >= 0");
        total += s;
    }
    if (std::fabs(total - 1.0) > 1e-6)
        throw std::invalid_argument("pair-HMM start probabilities must sum to 1, got " +
                                    std::to_string(total));
    if (!(h.open[0] >= 0 && h.open[1] >= 0 && 2 * (h.open[0] + h.open[1]) < 1))
        throw std::invalid_argument("pair-HMM gap opens must be >= 0 with 2 (open0 + open1) < 1");
    for (double e : h.extend)
        if (!(e >= 0 && e < 1)) throw std::invalid_argument("pair-HMM gap extends must be in [0, 1)");
}

template <typename T>
SparsePost sparsify_impl(const T* post, std::int64_t lx, std::int64_t ly, float cutoff) {
    SparsePost s;
    s.rows = static_cast<std::int32_t>(lx);
    s.cols = static_cast<std::int32_t>(ly);
    s.row_start.resize(lx + 1);
    s.row_start[0] = 0;
    for (std::int64_t i = 0; i < lx; ++i) {
        const T* row = post + i * ly;
        for (std::int64_t j = 0; j < ly; ++j)
            if (row[j] >= cutoff) {
                s.col.push_back(static_cast<std::int32_t>(j));
                s.p.push_back(static_cast<float>(row[j]));
            }
        s.row_start[i + 1] = static_cast<std::uint32_t>(s.col.size());
    }
    s.col.shrink_to_fit();
    s.p.shrink_to_fit();
    return s;
}

}  // namespace

SparsePost sparsify(const double* post, std::int64_t lx, std::int64_t ly, float cutoff) {
    return sparsify_impl(post, lx, ly, cutoff);
}
SparsePost sparsify(const float* post, std::int64_t lx, std::int64_t ly, float cutoff) {
    return sparsify_impl(post, lx, ly, cutoff);
}

// The hot loop built twice from this one body: an AVX2 build and the baseline, picked at run
// time by the one CPU probe (active_isa(), so BIOACCEL_NO_AVX2=1 reaches it, as every other
// dispatcher). The arithmetic is the same expressions in both (no FMA contraction:
// -ffp-contract=off), so the results are identical.
namespace {

#if defined(__GNUC__)
#define BIOACCEL_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define BIOACCEL_ALWAYS_INLINE inline
#endif

// The backward's transition probabilities (see dense_body).
struct BackTrans {
    double tmm, o0, o1, e0, e1, tim0, tim1;
};

// A backward row's last column (ly) from its next row's insert states there (nx0, nx1).
BIOACCEL_ALWAYS_INLINE void backward_start(const BackTrans& t, double nx0, double nx1, double inv, double* cM,
                                           double* cx0, double* cx1, std::int64_t ly) {
    const double xa = nx0 * inv, xb = nx1 * inv;
    cM[ly] = t.o0 * xa + t.o1 * xb;
    cx0[ly] = t.e0 * xa;
    cx1[ly] = t.e1 * xb;
}

// A backward row's column j from its next row (nm: match state at j + 1; nx0, nx1: insert
// states at j; all times inv = 1 / that row's scale), with the y inserts (ya, yb: bIy at
// column j + 1) carried along.
BIOACCEL_ALWAYS_INLINE void backward_cell(const BackTrans& t, double em, double nm, double nx0, double nx1,
                                          double inv, double* cM, double* cx0, double* cx1, std::int64_t j,
                                          double& ya, double& yb) {
    const double m = em * nm * inv;
    const double xa = nx0 * inv, xb = nx1 * inv;
    cM[j] = t.tmm * m + t.o0 * (xa + ya) + t.o1 * (xb + yb);
    cx0[j] = t.tim0 * m + t.e0 * xa;
    cx1[j] = t.tim1 * m + t.e1 * xb;
    ya = t.tim0 * m + t.e0 * ya;
    yb = t.tim1 * m + t.e1 * yb;
}

BIOACCEL_ALWAYS_INLINE double dense_body(const std::int16_t* x, std::int64_t lx, const std::int16_t* y,
                                         std::int64_t ly, const PairHmm& hmm, double* post,
                                         std::vector<double>& work) {
    check_hmm(hmm);
    if (lx == 0 || ly == 0) return 0.0;
    const std::vector<double> odds = padded_odds(hmm);
    const int K1 = hmm.letters + 1;
    const double o0 = hmm.open[0], o1 = hmm.open[1], e0 = hmm.extend[0], e1 = hmm.extend[1];
    const double tmm = 1 - 2 * (o0 + o1), tim0 = 1 - e0, tim1 = 1 - e1;
    const double* st = hmm.start;
    const std::int64_t W = ly + 1;
    // work: fM (lx + 1) x W, then rolling rows: 4 insert states x 2 rows, 3 backward
    // states x 3 rows (in 10 W), scales (lx + 1), per-row odds gathers (2 W)
    // every entry read below is written first, so no clearing (only growth)
    const std::size_t need = std::size_t(lx + 1) * W + 8 * W + 10 * W + (lx + 1) + 2 * W;
    if (work.size() < need) work.resize(need);
    double* fM = work.data();
    double* rows = fM + std::size_t(lx + 1) * W;
    double* fx0[2] = {rows, rows + W};
    double* fx1[2] = {rows + 2 * W, rows + 3 * W};
    double* fy0[2] = {rows + 4 * W, rows + 5 * W};
    double* fy1[2] = {rows + 6 * W, rows + 7 * W};
    double* bb = rows + 8 * W;  // the backward's rolling rows (9 W, below)
    double* scale = bb + 10 * W;
    double* em = scale + (lx + 1);
    auto letter = [&](std::int16_t c) { return (c < 0 || c >= hmm.letters) ? hmm.letters : c; };

    // ---- forward; row 0: only the y-insert states (x not yet started)
    scale[0] = 1.0;
    for (std::int64_t j = 0; j <= ly; ++j) fM[j] = 0;
    fy0[0][0] = fy1[0][0] = fx0[0][0] = fx1[0][0] = 0;
    for (std::int64_t j = 1; j <= ly; ++j) {
        fx0[0][j] = fx1[0][j] = 0;
        fy0[0][j] = (j == 1 ? st[2] : 0.0) + fy0[0][j - 1] * e0;
        fy1[0][j] = (j == 1 ? st[4] : 0.0) + fy1[0][j - 1] * e1;
    }
    // Row i is computed from row i - 1 times 1 / s_{i-1} (the forward values scaled by
    // prod_{k<i} s_k); s_i is then row i's sum, and the stored row is f_i s_i.
    double log_scale = 0;
    double inv_prev = 1.0;
    for (std::int64_t i = 1; i <= lx; ++i) {
        const int c = i & 1, p = c ^ 1;
        const double* pm = fM + (i - 1) * W;
        double* cm = fM + i * W;
        const double* orow = odds.data() + std::size_t(letter(x[i - 1])) * K1;
        for (std::int64_t j = 1; j <= ly; ++j) em[j] = orow[letter(y[j - 1])];
        const double beginM = (i == 1) ? st[0] : 0.0;
        const double beginX0 = (i == 1) ? st[1] : 0.0, beginX1 = (i == 1) ? st[3] : 0.0;
        const double* px0 = fx0[p];
        const double* px1 = fx1[p];
        const double* py0 = fy0[p];
        const double* py1 = fy1[p];
        double* cx0 = fx0[c];
        double* cx1 = fx1[c];
        double* cy0 = fy0[c];
        double* cy1 = fy1[c];
        // column 0: x inserts only
        cm[0] = 0;
        cx0[0] = beginX0 + (pm[0] * o0 + px0[0] * e0) * inv_prev;
        cx1[0] = beginX1 + (pm[0] * o1 + px1[0] * e1) * inv_prev;
        for (std::int64_t j = 1; j <= ly; ++j) {
            const double from =
                (pm[j - 1] * tmm + (px0[j - 1] + py0[j - 1]) * tim0 + (px1[j - 1] + py1[j - 1]) * tim1) *
                inv_prev;
            cm[j] = em[j] * from;
            cx0[j] = (pm[j] * o0 + px0[j] * e0) * inv_prev;
            cx1[j] = (pm[j] * o1 + px1[j] * e1) * inv_prev;
        }
        cm[1] += em[1] * beginM;
        cy0[0] = cy1[0] = 0;
        double y0 = 0, y1 = 0, s0 = cx0[0] + cx1[0], s1 = 0;
        for (std::int64_t j = 1; j <= ly; ++j) {
            y0 = cm[j - 1] * o0 + y0 * e0;
            y1 = cm[j - 1] * o1 + y1 * e1;
            cy0[j] = y0;
            cy1[j] = y1;
            s0 += (cm[j] + cx0[j]) + y0;
            s1 += cx1[j] + y1;
        }
        const double sum = s0 + s1;
        if (!(sum > 0) || !std::isfinite(sum))
            throw std::runtime_error("pair-HMM forward: row " + std::to_string(i) +
                                     " has no probability (odds underflow)");
        scale[i] = sum;
        inv_prev = 1.0 / sum;
        log_scale += std::log(sum);
    }
    const int cl = lx & 1;
    const double zend = (fM[lx * W + ly] * st[0] + fx0[cl][ly] * st[1] + fy0[cl][ly] * st[2] +
                         fx1[cl][ly] * st[3] + fy1[cl][ly] * st[4]) /
                        scale[lx];
    if (!(zend > 0) || !std::isfinite(zend))
        throw std::runtime_error("pair-HMM forward: zero total probability");

    // ---- backward, row by row from lx, posteriors of row i as soon as it is known. One
    // right-to-left pass per row: mnext(j) = odds(x_{i+1}, y_{j+1}) bM(i+1, j+1) / s_{i+1},
    // xnext_k(j) = bIxk(i+1, j) / s_{i+1}, and the y inserts bIyk(i, j + 1) carried along.
    // The y inserts chain each row's columns one after another (a multiplication and an
    // addition apart); row i - 1 needs only columns j and j + 1 of row i, so two rows go
    // side by side, row i - 1 one column behind: two chains at once, each cell the same
    // expressions as alone (the same posteriors, bit for bit).
    const double inv_z = 1.0 / zend;
    double* bMr[3] = {bb, bb + W, bb + 2 * W};  // row r in slot r % 3
    double* bx0r[3] = {bb + 3 * W, bb + 4 * W, bb + 5 * W};
    double* bx1r[3] = {bb + 6 * W, bb + 7 * W, bb + 8 * W};
    double* em2 = em + W;
    auto posterior_row = [&](std::int64_t i) {
        const double* fm = fM + i * W;
        const double* cM = bMr[i % 3];
        double* out = post + (i - 1) * ly;
        const double norm = inv_z / scale[i];  // the stored row is f_i s_i
        for (std::int64_t j = 1; j <= ly; ++j) out[j - 1] = fm[j] * cM[j] * norm;
    };
    auto gather = [&](std::int64_t i, double* e) {  // odds(x_{i+1}, y_{j+1}) for row i's step
        const double* orow = odds.data() + std::size_t(letter(x[i])) * K1;
        for (std::int64_t j = 0; j < ly; ++j) e[j] = orow[letter(y[j])];
    };
    {  // row lx, the end: every state ends with its start probability
        double* cM = bMr[lx % 3];
        double* cx0 = bx0r[lx % 3];
        double* cx1 = bx1r[lx % 3];
        double ya = st[2], yb = st[4];
        cM[ly] = st[0];
        cx0[ly] = st[1];
        cx1[ly] = st[3];
        for (std::int64_t j = ly - 1; j >= 0; --j) {
            cM[j] = o0 * ya + o1 * yb;
            cx0[j] = 0;
            cx1[j] = 0;
            ya = e0 * ya;
            yb = e1 * yb;
        }
        posterior_row(lx);
    }
    const BackTrans tr{tmm, o0, o1, e0, e1, tim0, tim1};
    struct BackRow {
        double *M, *x0, *x1;
    };
    auto row_of = [&](std::int64_t r) { return BackRow{bMr[r % 3], bx0r[r % 3], bx1r[r % 3]}; };
    std::int64_t i = lx - 1;
    for (; i >= 2; i -= 2) {  // rows i and i - 1 side by side
        const double inv_a = 1.0 / scale[i + 1], inv_b = 1.0 / scale[i];
        gather(i, em);
        gather(i - 1, em2);
        const BackRow n = row_of(i + 1), a = row_of(i), b = row_of(i - 1);
        double yaa = 0, yba = 0, yab = 0, ybb = 0;  // bIy(., j + 1) of rows i and i - 1
        backward_start(tr, n.x0[ly], n.x1[ly], inv_a, a.M, a.x0, a.x1, ly);
        for (std::int64_t j = ly - 1; j >= 0; --j) {
            backward_cell(tr, em[j], n.M[j + 1], n.x0[j], n.x1[j], inv_a, a.M, a.x0, a.x1, j, yaa, yba);
            const std::int64_t k = j + 1;  // row i - 1, one column behind
            if (k == ly)
                backward_start(tr, a.x0[ly], a.x1[ly], inv_b, b.M, b.x0, b.x1, ly);
            else
                backward_cell(tr, em2[k], a.M[k + 1], a.x0[k], a.x1[k], inv_b, b.M, b.x0, b.x1, k, yab, ybb);
        }
        backward_cell(tr, em2[0], a.M[1], a.x0[0], a.x1[0], inv_b, b.M, b.x0, b.x1, 0, yab, ybb);
        posterior_row(i);
        posterior_row(i - 1);
    }
    for (; i >= 1; --i) {  // a row left alone
        const double inv_next = 1.0 / scale[i + 1];
        gather(i, em);
        const BackRow n = row_of(i + 1), c = row_of(i);
        double ya = 0, yb = 0;  // bIy(i, j + 1)
        backward_start(tr, n.x0[ly], n.x1[ly], inv_next, c.M, c.x0, c.x1, ly);
        for (std::int64_t j = ly - 1; j >= 0; --j)
            backward_cell(tr, em[j], n.M[j + 1], n.x0[j], n.x1[j], inv_next, c.M, c.x0, c.x1, j, ya, yb);
        posterior_row(i);
    }
    return std::log(zend) + log_scale;
}

#if defined(__x86_64__) && defined(__GNUC__)
#define BIOACCEL_POSTERIORS_X86 1
__attribute__((target("avx2"))) double dense_avx2(const std::int16_t* x, std::int64_t lx,
                                                  const std::int16_t* y, std::int64_t ly, const PairHmm& hmm,
                                                  double* post, std::vector<double>& work) {
    return dense_body(x, lx, y, ly, hmm, post, work);
}
#endif

double dense_base(const std::int16_t* x, std::int64_t lx, const std::int16_t* y, std::int64_t ly,
                  const PairHmm& hmm, double* post, std::vector<double>& work) {
    return dense_body(x, lx, y, ly, hmm, post, work);
}

}  // namespace

double pair_posteriors_dense(const std::int16_t* x, std::int64_t lx, const std::int16_t* y, std::int64_t ly,
                             const PairHmm& hmm, double* post, std::vector<double>& work) {
#ifdef BIOACCEL_POSTERIORS_X86
    if (active_isa() >= Isa::Avx2) return dense_avx2(x, lx, y, ly, hmm, post, work);
#endif
    return dense_base(x, lx, y, ly, hmm, post, work);
}

double expected_accuracy(const SparsePost& p) {
    // The best alignment's summed posteriors is the heaviest chain of entries increasing in
    // both coordinates (every entry > 0). Rows in order; an entry's best chain is its value
    // plus the best chain ending in an earlier row at a smaller column: a prefix maximum over
    // columns (a Fenwick tree), updated after the whole row is read. O(entries log cols)
    // instead of the lx x ly table; the same sums as that table's recursion, so the same value.
    const std::int64_t lx = p.rows, ly = p.cols;
    if (lx == 0 || ly == 0) return 0.0;
    std::vector<double> tree(ly + 1, 0.0), row;
    double best = 0;
    for (std::int64_t i = 0; i < lx; ++i) {
        const std::uint32_t b = p.row_start[i], e = p.row_start[i + 1];
        row.resize(e - b);
        for (std::uint32_t k = b; k < e; ++k) {
            double m = 0;  // max over columns < col[k]: Fenwick positions 1..col[k]
            for (std::int64_t q = p.col[k]; q > 0; q -= q & -q) m = std::max(m, tree[q]);
            row[k - b] = m + double(p.p[k]);
        }
        for (std::uint32_t k = b; k < e; ++k) {
            const double v = row[k - b];
            best = std::max(best, v);
            for (std::int64_t q = std::int64_t(p.col[k]) + 1; q <= ly; q += q & -q)
                tree[q] = std::max(tree[q], v);
        }
    }
    return best / double(std::min(lx, ly));
}

LetterSeqs letter_seqs(const SeqView& v, const std::int16_t* letter_of, int letters) {
    LetterSeqs s;
    s.offsets.assign(v.offsets, v.offsets + v.count + 1);
    s.letters.resize(v.offsets[v.count]);
    for (std::int64_t k = 0; k < v.offsets[v.count]; ++k) {
        const std::int16_t c = letter_of[v.codes[k]];
        s.letters[k] = (c < 0 || c >= letters) ? static_cast<std::int16_t>(letters) : c;
    }
    return s;
}

std::vector<SparsePost> all_pair_posteriors(const LetterSeqs& s, const PairHmm& hmm, float cutoff,
                                            int threads, std::vector<double>& accuracy) {
    check_hmm(hmm);
    padded_odds(hmm);  // checks the odds once, before the parallel region
    if (!(cutoff > 0 && cutoff <= 1)) throw std::invalid_argument("posterior cut-off must be in (0, 1]");
    const std::int64_t n = s.count();
    const std::int64_t pairs = n * (n - 1) / 2;
    std::vector<SparsePost> out(pairs);
    accuracy.assign(pairs, 0.0);
    std::vector<std::pair<std::int64_t, std::int64_t>> todo;
    todo.reserve(pairs);
    for (std::int64_t x = 0; x < n; ++x)
        for (std::int64_t y = x + 1; y < n; ++y) todo.emplace_back(x, y);
    std::string error;
#ifdef _OPENMP
#pragma omp parallel num_threads(resolve_threads(threads))
#endif
    {
        std::vector<double> work, post;
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 1)
#endif
        for (std::int64_t k = 0; k < pairs; ++k) {
            if (stop_requested()) continue;  // the rest skipped; thrown below
            const auto [x, y] = todo[k];
            try {
                const std::int64_t lx = s.len(x), ly = s.len(y);
                post.resize(std::size_t(lx) * ly);
                pair_posteriors_dense(s.seq(x), lx, s.seq(y), ly, hmm, post.data(), work);
                out[k] = sparsify(post.data(), lx, ly, cutoff);
                accuracy[k] = expected_accuracy(out[k]);
            } catch (const std::exception& e) {
#ifdef _OPENMP
#pragma omp critical
#endif
                if (error.empty()) error = e.what();
            }
        }
    }
    throw_if_stopped();
    if (!error.empty()) throw std::runtime_error(error);
    return out;
}

}  // namespace msa
}  // namespace bioaccel
