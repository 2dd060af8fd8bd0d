// Profile-profile dynamic programming (Gotoh, three states, position-specific gap costs),
// with a full traceback for ordinary sizes and checkpointed rows for long profiles.
#include <algorithm>
#include <cmath>
#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "bioaccel/common.hpp"
#include "bioaccel/cpu.hpp"
#include "bioaccel/msa.hpp"
#include "gap_kinds.hpp"

namespace bioaccel {
namespace msa {

namespace {

constexpr float kNeg = -INFINITY;
// DPs of at least this many cells run as a wavefront when threads are offered
constexpr std::int64_t kWavefrontCells = std::int64_t(1) << 20;

// Per-profile gap terms: the cost of the first and of a later gap column inserted at each
// boundary (0..len), the penalty of each column's own gap characters facing a residue, and
// the credit when a run inserted just before a column makes its opening gaps extensions.
struct GapTerms {
    std::vector<float> start, cont;  // len + 1
    std::vector<float> own, credit;  // len
};

GapTerms gap_terms(const Profile& p, const MsaScoring& sc) {
    GapTerms g;
    g.start.resize(p.len + 1);
    g.cont.resize(p.len + 1);
    g.own.resize(p.len);
    g.credit.resize(p.len);
    for (int k = 0; k <= p.len; ++k) {
        g.start[k] = gap_cost(gaps_starting(p, k), sc);
        g.cont[k] = gap_cost(gaps_continuing(p, k), sc);
    }
    for (int c = 0; c < p.len; ++c) {
        g.own[c] = p.gopen[c] * sc.gap_open + p.gext[c] * sc.gap_extend + p.gtopen[c] * sc.term_open +
                   p.gtext[c] * sc.term_extend;
        g.credit[c] =
            p.gopen[c] * (sc.gap_open - sc.gap_extend) + p.gtopen[c] * (sc.term_open - sc.term_extend);
    }
    return g;
}

// Column-pair scores s(i, j), a row of A against all of B at a time.
class PairScores {
public:
    PairScores(const Profile& a, const Profile& b, const MsaScoring& sc, const GapTerms& ga,
               const GapTerms& gb)
        : a_(a), b_(b), ga_(ga), gb_(gb), K_(sc.letters) {
        const int K = K_;
        sa_.assign(static_cast<std::size_t>(a.len) * K, 0.0f);
        for (int i = 0; i < a.len; ++i) {
            float* out = sa_.data() + static_cast<std::size_t>(i) * K;
            if (!a.single.empty()) {
                const float* row = sc.sub.data() + static_cast<std::size_t>(a.single[i]) * K;
                std::copy(row, row + K, out);
                continue;
            }
            const float* f = a.freq.data() + static_cast<std::size_t>(i) * K;
            for (int x = 0; x < K; ++x) {
                if (f[x] == 0.0f) continue;
                const float* row = sc.sub.data() + static_cast<std::size_t>(x) * K;
                for (int y = 0; y < K; ++y) out[y] += f[x] * row[y];
            }
        }
        if (b.single.empty()) {
            fbt_.assign(static_cast<std::size_t>(K) * b.len, 0.0f);
            for (int j = 0; j < b.len; ++j)
                for (int y = 0; y < K; ++y)
                    fbt_[static_cast<std::size_t>(y) * b.len + j] =
                        b.freq[static_cast<std::size_t>(j) * K + y];
            used_.assign(K, 0);
            for (int y = 0; y < K; ++y)
                for (int j = 0; j < b.len && !used_[y]; ++j)
                    used_[y] = fbt_[static_cast<std::size_t>(y) * b.len + j] != 0.0f;
        }
    }

    // out[j - 1] = t(i, j - 1) for j in [max(lo, 1), hi] (DP columns; all when lo = 0, hi = m)
    void row(int i, float* out, int lo, int hi) const {
        const int K = K_;
        const int j0 = std::max(lo, 1) - 1, j1 = hi;  // B columns [j0, j1)
        if (j1 <= j0) return;
        const float* sa = sa_.data() + static_cast<std::size_t>(i) * K;
        const float own_a = ga_.own[i], occ_a = a_.occ[i];
        const float* occ_b = b_.occ.data();
        const float* own_b = gb_.own.data();
        if (!b_.single.empty()) {
            const std::int16_t* lb = b_.single.data();
            for (int j = j0; j < j1; ++j) out[j] = sa[lb[j]] - own_a;  // B: gap-free, occ 1
            return;
        }
        const int m = b_.len;
        std::fill(out + j0, out + j1, 0.0f);
        for (int y = 0; y < K; ++y) {
            if (!used_[y]) continue;
            const float w = sa[y];
            const float* fb = fbt_.data() + static_cast<std::size_t>(y) * m;
            for (int j = j0; j < j1; ++j) out[j] += w * fb[j];
        }
        for (int j = j0; j < j1; ++j) out[j] -= occ_b[j] * own_a + occ_a * own_b[j];
    }

    const std::vector<float>& sa() const { return sa_; }
    const std::vector<float>& fbt() const { return fbt_; }
    const std::vector<char>& used() const { return used_; }

    // t(i, j) alone (the same arithmetic as row())
    float cell(int i, int j) const {
        const int K = K_;
        const float* sa = sa_.data() + static_cast<std::size_t>(i) * K;
        if (!b_.single.empty()) return sa[b_.single[j]] - ga_.own[i];
        float v = 0.0f;
        for (int y = 0; y < K; ++y)
            if (used_[y]) v += sa[y] * fbt_[static_cast<std::size_t>(y) * b_.len + j];
        return v - (b_.occ[j] * ga_.own[i] + a_.occ[i] * gb_.own[j]);
    }

private:
    const Profile& a_;
    const Profile& b_;
    const GapTerms& ga_;
    const GapTerms& gb_;
    int K_;
    std::vector<float> sa_;   // A's columns times the matrix: n x K
    std::vector<float> fbt_;  // B's frequencies transposed: K x m
    std::vector<char> used_;  // letters present anywhere in B
};

// One DP row. Outside [lo, hi] every value is -inf (cells outside a band).
struct Rows {
    std::vector<float> M, X, Y;
    int lo = 0, hi = -1;
    explicit Rows(int m) : M(m + 1, kNeg), X(m + 1, kNeg), Y(m + 1, kNeg) {}
    void clear_outside(int lo_new, int hi_new) {
        for (int j = lo; j <= hi; ++j)
            if (j < lo_new || j > hi_new) M[j] = X[j] = Y[j] = kNeg;
        lo = lo_new;
        hi = hi_new;
    }
};

// M and X of DP columns j0..j1 of a row: both depend on the previous row only, so this loop
// vectorises (compiled for AVX2 and the baseline, picked by the CPU probe; the same IEEE
// operations either way). Ties: M before X before Y. Writes the states before M (bits 0-1)
// and X (bits 2-3) to t.
__attribute__((always_inline)) inline void diagonal_and_down_body(
    int j0, int j1, const float* __restrict pM, const float* __restrict pX, const float* __restrict pY,
    const float* __restrict s, const float* __restrict occ_b, const float* __restrict credit_b,
    const float* __restrict start_b, const float* __restrict cont_b, float occ_a, float credit_a,
    float* __restrict M, float* __restrict X, std::uint8_t* __restrict t) {
    // a 64-bit index: with int, Python's -fwrapv makes j - 1 a possibly wrapping 32-bit
    // value and GCC gives up vectorising the loop
    for (std::ptrdiff_t j = j0; j <= j1; ++j) {
        // max(a, b) keeps a on ties, as the strict comparisons of the tie rule do
        const float d0 = pM[j - 1];
        const float dx = pX[j - 1] + occ_a * credit_b[j - 1];
        const float dy = pY[j - 1] + occ_b[j - 1] * credit_a;
        const float d1 = std::max(d0, dx);
        const float d2 = std::max(d1, dy);
        const int m1 = dx > d0;
        const int sm = m1 + (dy > d1) * (2 - m1);
        M[j] = d2 + s[j - 1];
        const float sxo = occ_a * start_b[j];
        const float b0 = pM[j] - sxo;
        const float cx = pX[j] - occ_a * cont_b[j];
        const float yx = pY[j] - sxo;
        const float b1 = std::max(b0, cx);
        const int x1 = cx > b0;
        const int sx = x1 + (yx > b1) * (2 - x1);
        X[j] = std::max(b1, yx);
        t[j] = static_cast<std::uint8_t>(sm | (sx << 2));
    }
}

// Scratch rows of one thread: scores, and the Y state's candidates (gap_in_a_candidates).
struct RowScratch {
    std::vector<float> s, base, cost;
    std::vector<std::uint8_t> from_x, tb;  // tb: a row's traceback bytes when none are kept
    explicit RowScratch(int m) : s(m > 0 ? m : 1), base(m + 1), cost(m + 1), from_x(m + 1), tb(m + 1) {}
};

// For the Y state of DP columns j0..j1: base[j] = the better of opening from M or from X at
// j - 1 (M on ties; from_x[j] = 1 when X), and cost[j] = the extension cost of carrying Y.
__attribute__((always_inline)) inline void gap_in_a_candidates_body(
    int j0, int j1, const float* __restrict M, const float* __restrict X, const float* __restrict occ_b,
    float start_a, float cont_a, float* __restrict base, float* __restrict cost,
    std::uint8_t* __restrict from_x) {
    for (std::ptrdiff_t j = j0; j <= j1; ++j) {  // 64-bit: see diagonal_and_down_body
        const float ob = occ_b[j - 1];
        const float syo = ob * start_a;
        const float bm = M[j - 1] - syo, bx = X[j - 1] - syo;
        base[j] = std::max(bm, bx);
        from_x[j] = bx > bm;
        cost[j] = ob * cont_a;
    }
}

#define BIOACCEL_DIAG_ARGS                                                                              \
    int j0, int j1, const float *__restrict pM, const float *__restrict pX, const float *__restrict pY, \
        const float *__restrict s, const float *__restrict occ_b, const float *__restrict credit_b,     \
        const float *__restrict start_b, const float *__restrict cont_b, float occ_a, float credit_a,   \
        float *__restrict M, float *__restrict X, std::uint8_t *__restrict t
#define BIOACCEL_DIAG_CALL j0, j1, pM, pX, pY, s, occ_b, credit_b, start_b, cont_b, occ_a, credit_a, M, X, t
#define BIOACCEL_GAP_ARGS                                                                                \
    int j0, int j1, const float *__restrict M, const float *__restrict X, const float *__restrict occ_b, \
        float start_a, float cont_a, float *__restrict base, float *__restrict cost,                     \
        std::uint8_t *__restrict from_x
#define BIOACCEL_GAP_CALL j0, j1, M, X, occ_b, start_a, cont_a, base, cost, from_x

void diagonal_and_down_base(BIOACCEL_DIAG_ARGS) {
    diagonal_and_down_body(BIOACCEL_DIAG_CALL);
}
void gap_in_a_candidates_base(BIOACCEL_GAP_ARGS) {
    gap_in_a_candidates_body(BIOACCEL_GAP_CALL);
}
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2"))) void diagonal_and_down_avx2(BIOACCEL_DIAG_ARGS) {
    diagonal_and_down_body(BIOACCEL_DIAG_CALL);
}
__attribute__((target("avx2"))) void gap_in_a_candidates_avx2(BIOACCEL_GAP_ARGS) {
    gap_in_a_candidates_body(BIOACCEL_GAP_CALL);
}
#endif

#undef BIOACCEL_DIAG_ARGS
#undef BIOACCEL_DIAG_CALL
#undef BIOACCEL_GAP_ARGS
#undef BIOACCEL_GAP_CALL

// The row kernels the CPU probe (cpu.hpp) picks.
struct RowKernels {
    decltype(&diagonal_and_down_base) diagonal_and_down = diagonal_and_down_base;
    decltype(&gap_in_a_candidates_base) gap_in_a_candidates = gap_in_a_candidates_base;
    RowKernels() {
#if defined(__x86_64__) && defined(__GNUC__)
        if (active_isa() >= Isa::Avx2) {
            diagonal_and_down = diagonal_and_down_avx2;
            gap_in_a_candidates = gap_in_a_candidates_avx2;
        }
#endif
    }
};

class ProfileDP {
public:
    // sc_b: the scoring of B's gap terms (gaps inserted into B), sc when null
    ProfileDP(const Profile& a, const Profile& b, const MsaScoring& sc, const MsaScoring* sc_b = nullptr)
        : a_(a),
          b_(b),
          ga_(gap_terms(a, sc)),
          gb_(gap_terms(b, sc_b ? *sc_b : sc)),
          scores_(a, b, sc, ga_, gb_) {}

    // band: the cells (i, j) computed are lo[i] <= j <= hi[i] (both non-decreasing in i,
    // lo[0] = 0, hi[n] = m); null for all cells.
    void set_band(const int* lo, const int* hi) {
        lo_ = lo;
        hi_ = hi;
    }

    void first_row(Rows& r) const {
        const int m = hi_ ? hi_[0] : b_.len;
        r.clear_outside(0, m);
        r.M[0] = 0.0f;
        r.X[0] = kNeg;
        r.Y[0] = kNeg;
        const float st = ga_.start[0], ct = ga_.cont[0];
        for (int j = 1; j <= m; ++j) {
            const float occ = b_.occ[j - 1];
            r.M[j] = kNeg;
            r.X[j] = kNeg;
            float best = r.M[j - 1] - occ * st;
            if (r.Y[j - 1] - occ * ct > best) best = r.Y[j - 1] - occ * ct;
            if (r.X[j - 1] - occ * st > best) best = r.X[j - 1] - occ * st;
            r.Y[j] = best;
        }
    }

    // DP columns j0..j1 (inclusive, within 0..m) of row i from the previous row; the columns
    // left of j0 of row i must be done. s: a scratch row of m scores; t: row i's traceback
    // bytes (bits 0-1 the state before M, 2-3 before X, 4-5 before Y; 0 = M, 1 = X, 2 = Y).
    void row_segment(int i, int j0, int j1, const Rows& prev, Rows& cur, RowScratch& w,
                     std::uint8_t* t) const {
        float* s = w.s.data();
        scores_.row(i - 1, s, j0, j1);
        const float occ_a = a_.occ[i - 1];
        const float credit_a = ga_.credit[i - 1];
        const float start_a = ga_.start[i], cont_a = ga_.cont[i];
        const float* occ_b = b_.occ.data();
        const float* pM = prev.M.data();
        const float* pX = prev.X.data();
        const float* pY = prev.Y.data();
        float* M = cur.M.data();
        float* X = cur.X.data();
        float* Y = cur.Y.data();
        if (j0 == 0) {  // column 0: only a gap in B
            const float so = occ_a * gb_.start[0], co = occ_a * gb_.cont[0];
            float best = pM[0] - so;
            std::uint8_t st = 0;
            if (pX[0] - co > best) {
                best = pX[0] - co;
                st = 1;
            }
            if (pY[0] - so > best) {
                best = pY[0] - so;
                st = 2;
            }
            M[0] = kNeg;
            Y[0] = kNeg;
            X[0] = best;
            t[0] = static_cast<std::uint8_t>(st << 2);
        }
        const int jf = std::max(j0, 1);
        kernels_.diagonal_and_down(jf, j1, pM, pX, pY, s, occ_b, gb_.credit.data(), gb_.start.data(),
                                   gb_.cont.data(), occ_a, credit_a, M, X, t);
        // Y (gap in A at boundary i) runs along the row: ties go to M, then Y, then X. The
        // candidates from M and X of the row are gathered first (vectorised); the loop that
        // carries Y along the row then does one subtraction and one max per cell.
        const float* base_ = w.base.data();
        const float* cost_ = w.cost.data();
        const std::uint8_t* from_x_ = w.from_x.data();
        kernels_.gap_in_a_candidates(jf, j1, M, X, occ_b, start_a, cont_a, w.base.data(), w.cost.data(),
                                     w.from_x.data());
        float y = Y[jf - 1];
        for (int j = jf; j <= j1; ++j) {
            const float base = base_[j], cy = y - cost_[j];
            // the value is the max either way; the state: Y wins over M only when greater,
            // over X also on a tie (M > Y > X)
            const int fx = from_x_[j];
            const int take_y = (cy > base) | (fx & (cy == base));
            y = std::max(base, cy);
            Y[j] = y;
            t[j] = static_cast<std::uint8_t>(t[j] | ((fx + take_y * (2 - fx)) << 4));
        }
    }

    // Rows (r0, r1] from row r0 held in `cur`; `cur` ends holding row r1. Traceback bytes of
    // row i go to tb[(i - r0 - 1) * (m + 1) + j] when tb is not null.
    void fill(int r0, int r1, Rows& cur, Rows& prev, std::uint8_t* tb) {
        const int m = b_.len;
        for (int i = r0 + 1; i <= r1; ++i) {
            std::swap(cur, prev);
            const int lo = lo_ ? lo_[i] : 0, hi = hi_ ? hi_[i] : m;
            cur.clear_outside(lo, hi);
            std::uint8_t* t = tb ? tb + static_cast<std::size_t>(i - r0 - 1) * (m + 1) : scratch_.data();
            row_segment(i, lo, hi, prev, cur, work_, t);
        }
    }

    // Rows (r0, r1] from row r0 (`start`), no band, on `threads` threads: thread k computes
    // rows r0 + k + 1, r0 + k + 1 + threads, ... in column segments, each segment once the row
    // above has passed it (a wavefront). Traceback bytes as in fill() when tb is not null;
    // with `every` > 0, rows r0 + every, r0 + 2 every, ... (before r1) are copied to saved
    // (a checkpoint per block of the long-profile traceback), each segment before the next
    // row may read it, so before any thread can overwrite it. Every cell is computed as by
    // fill(), so the result is the same. Returns row r1.
    Rows fill_wavefront(int r0, int r1, const Rows& start, int threads, std::uint8_t* tb, int every = 0,
                        std::vector<Rows>* saved = nullptr) {
        const int m = b_.len;
        const int ring_size = threads + 1;
        std::vector<Rows> ring(ring_size, Rows(m));
        for (Rows& r : ring) r.clear_outside(0, m);
        ring[r0 % ring_size] = start;
        const std::size_t first_saved = saved ? saved->size() : 0;
        if (every > 0 && saved)
            for (int r = r0 + every; r < r1; r += every) {
                saved->emplace_back(m);
                saved->back().clear_outside(0, m);
            }
        std::vector<std::atomic<int>> done(r1 - r0 + 1);  // columns finished per row
        for (auto& d : done) d.store(0, std::memory_order_relaxed);
        done[0].store(m + 1, std::memory_order_release);
        const int width = std::max(64, std::min(1024, (m + 1) / (4 * threads) + 1));
        auto work = [&](int k) {
            RowScratch w(m);
            for (int i = r0 + 1 + k; i <= r1; i += threads) {
                const Rows& prev = ring[(i - 1) % ring_size];
                Rows& cur = ring[i % ring_size];
                std::uint8_t* t = tb ? tb + static_cast<std::size_t>(i - r0 - 1) * (m + 1) : w.tb.data();
                Rows* copy = (every > 0 && saved && (i - r0) % every == 0 && i < r1)
                                 ? &(*saved)[first_saved + (i - r0) / every - 1]
                                 : nullptr;
                for (int j0 = 0; j0 <= m; j0 += width) {
                    const int j1 = std::min(m, j0 + width - 1);
                    // spin a little, then sleep: on a machine with more runnable threads
                    // than cores a spinning waiter takes the time the row above needs
                    for (int spins = 0; done[i - 1 - r0].load(std::memory_order_acquire) <= j1; ++spins) {
                        if (spins < 64)
                            std::this_thread::yield();
                        else
                            std::this_thread::sleep_for(std::chrono::microseconds(20));
                    }
                    row_segment(i, j0, j1, prev, cur, w, t);
                    if (copy)
                        for (int j = j0; j <= j1; ++j) {
                            copy->M[j] = cur.M[j];
                            copy->X[j] = cur.X[j];
                            copy->Y[j] = cur.Y[j];
                        }
                    done[i - r0].store(j1 + 1, std::memory_order_release);
                }
            }
        };
        std::vector<std::thread> pool;
        for (int k = 1; k < threads; ++k) pool.emplace_back(work, k);
        work(0);
        for (std::thread& th : pool) th.join();
        return ring[r1 % ring_size];
    }

    bool banded() const { return lo_ != nullptr; }

    const Profile& a_;
    const Profile& b_;
    GapTerms ga_, gb_;
    PairScores scores_;
    RowKernels kernels_;
    RowScratch work_ = RowScratch(b_.len);
    mutable std::vector<std::uint8_t> scratch_ = std::vector<std::uint8_t>(b_.len + 1);
    const int* lo_ = nullptr;
    const int* hi_ = nullptr;
};

int best_state(const Rows& r, int m, float& score) {
    int st = 0;
    score = r.M[m];
    if (r.X[m] > score) {
        score = r.X[m];
        st = 1;
    }
    if (r.Y[m] > score) {
        score = r.Y[m];
        st = 2;
    }
    return st;
}

}  // namespace

double align_profiles(const Profile& a, const Profile& b, const MsaScoring& sc, Path& path,
                      std::int64_t full_limit, const int* band_lo, const int* band_hi, int threads,
                      const MsaScoring* sc_b) {
    if (a.letters != sc.letters || b.letters != sc.letters)
        throw std::invalid_argument("align_profiles: profiles and scoring differ in alphabet");
    const int n = a.len, m = b.len;
    path.clear();
    ProfileDP dp(a, b, sc, sc_b);
    if (band_lo && band_hi) {
        if (band_lo[0] != 0 || band_hi[n] != m)
            throw std::invalid_argument("align_profiles: the band must hold (0, 0) and (n, m)");
        dp.set_band(band_lo, band_hi);
    }
    Rows cur(m), prev(m);
    dp.first_row(cur);
    const std::int64_t cells = static_cast<std::int64_t>(n + 1) * (m + 1);
    // block boundaries: rows 0 = b_0 < b_1 < ... < b_B = n, with checkpoints at each b_k
    int step = n;
    if (cells > full_limit && n > 1) {
        step = std::max(1, static_cast<int>(std::sqrt(static_cast<double>(n))));
        // keep one block's traceback within the limit too
        const std::int64_t max_rows = std::max<std::int64_t>(1, full_limit / (m + 1));
        step = static_cast<int>(std::min<std::int64_t>(step, max_rows));
    }
    step = std::max(step, 1);
    std::vector<Rows> checkpoints;
    std::vector<int> marks;
    std::vector<std::uint8_t> tb;
    float score;
    int state;
    // a wavefront over rows when threads are offered: the whole DP, or each checkpointed
    // pass of a long one (the same cells either way)
    const bool wavefront =
        threads > 1 && !(band_lo && band_hi) && cells >= kWavefrontCells && m >= 256 && n >= 2 * threads;
    if (step >= n && wavefront) {
        tb.resize(static_cast<std::size_t>(n) * (m + 1));
        cur = dp.fill_wavefront(0, n, cur, threads, tb.data());
        state = best_state(cur, m, score);
        marks = {0, n};
    } else if (step >= n) {
        tb.resize(static_cast<std::size_t>(n) * (m + 1));
        dp.fill(0, n, cur, prev, tb.data());
        state = best_state(cur, m, score);
        marks = {0, n};
    } else if (wavefront) {
        for (int r = 0; r < n; r += step) marks.push_back(r);
        marks.push_back(n);
        checkpoints.push_back(cur);
        cur = dp.fill_wavefront(0, n, cur, threads, nullptr, step, &checkpoints);
        state = best_state(cur, m, score);
        tb.resize(static_cast<std::size_t>(step) * (m + 1));
    } else {
        for (int r = 0; r < n; r += step) {
            marks.push_back(r);
            checkpoints.push_back(cur);
            dp.fill(r, std::min(n, r + step), cur, prev, nullptr);
        }
        marks.push_back(n);
        state = best_state(cur, m, score);
        tb.resize(static_cast<std::size_t>(step) * (m + 1));
    }
    // traceback, block by block from the last
    int i = n, j = m;
    for (int blk = static_cast<int>(marks.size()) - 2; blk >= 0 && i > 0; --blk) {
        const int r0 = marks[blk], r1 = marks[blk + 1];
        if (!checkpoints.empty()) {
            if (wavefront && r1 - r0 >= 2 * threads) {
                dp.fill_wavefront(r0, r1, checkpoints[blk], threads, tb.data());
            } else {
                cur = checkpoints[blk];
                dp.fill(r0, r1, cur, prev, tb.data());
            }
        }
        while (i > r0) {
            if (j == 0) {
                path.push_back(GapInB);
                --i;
                continue;
            }
            const std::uint8_t t = tb[static_cast<std::size_t>(i - r0 - 1) * (m + 1) + j];
            if (state == 0) {
                path.push_back(Match);
                state = t & 3;
                --i;
                --j;
            } else if (state == 1) {
                path.push_back(GapInB);
                state = (t >> 2) & 3;
                --i;
            } else {
                path.push_back(GapInA);
                state = (t >> 4) & 3;
                --j;
            }
        }
    }
    while (j > 0) {
        path.push_back(GapInA);
        --j;
    }
    std::reverse(path.begin(), path.end());
    return score;
}

DpInputs dp_inputs(const Profile& a, const Profile& b, const MsaScoring& sc) {
    if (a.letters != sc.letters || b.letters != sc.letters)
        throw std::invalid_argument("dp_inputs: profiles and scoring differ in alphabet");
    const GapTerms ga = gap_terms(a, sc), gb = gap_terms(b, sc);
    const PairScores scores(a, b, sc, ga, gb);
    DpInputs in;
    in.n = a.len;
    in.m = b.len;
    in.letters = sc.letters;
    in.sa = scores.sa();
    in.fbt = scores.fbt();
    in.used.assign(scores.used().begin(), scores.used().end());
    in.single_b = b.single;
    in.occ_a = a.occ;
    in.occ_b = b.occ;
    for (auto [g, out] : {std::make_pair(&ga, &in.gaps_a), std::make_pair(&gb, &in.gaps_b)}) {
        out->start = g->start;
        out->cont = g->cont;
        out->own = g->own;
        out->credit = g->credit;
    }
    return in;
}

double path_score(const Profile& a, const Profile& b, const MsaScoring& sc, const Path& path) {
    const GapTerms ga = gap_terms(a, sc), gb = gap_terms(b, sc);
    PairScores scores(a, b, sc, ga, gb);
    double total = 0;
    int i = 0, j = 0;
    std::uint8_t prev = Match;
    for (std::uint8_t op : path) {
        if (op == Match) {
            if (i >= a.len || j >= b.len) throw std::invalid_argument("path_score: path too long");
            total += scores.cell(i, j);
            if (prev == GapInB) total += static_cast<double>(a.occ[i]) * gb.credit[j];
            if (prev == GapInA) total += static_cast<double>(b.occ[j]) * ga.credit[i];
            ++i;
            ++j;
        } else if (op == GapInB) {
            if (i >= a.len) throw std::invalid_argument("path_score: path too long");
            total -= static_cast<double>(a.occ[i]) * (prev == GapInB ? gb.cont[j] : gb.start[j]);
            ++i;
        } else {
            if (j >= b.len) throw std::invalid_argument("path_score: path too long");
            total -= static_cast<double>(b.occ[j]) * (prev == GapInA ? ga.cont[i] : ga.start[i]);
            ++j;
        }
        prev = op;
    }
    if (i != a.len || j != b.len)
        throw std::invalid_argument("path_score: path does not cover both profiles");
    return total;
}

}  // namespace msa
}  // namespace bioaccel
