#include "bioaccel/align.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

namespace bioaccel {
namespace {

constexpr std::int64_t NEG = std::numeric_limits<std::int64_t>::min() / 4;

// Direction byte of a cell: bits 0-1 where H came from, bit 2 E extended, bit 3 F extended.
enum : std::uint8_t { kDiag = 0, kFromE = 1, kFromF = 2, kStart = 3, kEExt = 4, kFExt = 8 };

// Gotoh recurrences, rows i = query (a), columns j = target (b):
//   E[i][j] = max(E[i][j-1] - e, H[i][j-1] - o)   horizontal: b_j against a gap ('D')
//   F[i][j] = max(F[i-1][j] - e, H[i-1][j] - o)   vertical:   a_i against a gap ('I')
//   H[i][j] = max(H[i-1][j-1] + s(a_i, b_j), E, F [, 0 when local])
// Ties: a local cell of value 0 starts the alignment; then diagonal, E, F; gaps open
// rather than extend.
class Traceback {
public:
    Traceback(const std::uint8_t* a, std::int64_t m, const std::uint8_t* b, std::int64_t n,
              const ScoreScheme& s)
        : a_(a),
          b_(b),
          m_(m),
          n_(n),
          s_(s),
          o_(s.gap_open),
          e_(s.gap_extend),
          global_(s.mode == AlignMode::Global),
          local_(s.mode == AlignMode::Local) {
        // rows per block: full matrix when small, else ~sqrt(16 m) (checkpoints of 16 bytes
        // per column every k rows, plus k rows of direction bytes)
        const double cells = static_cast<double>(m) * static_cast<double>(n + 1);
        k_ = cells <= 64e6 ? std::max<std::int64_t>(m, 1)
                           : std::max<std::int64_t>(1, static_cast<std::int64_t>(std::sqrt(16.0 * m)));
    }

    AlignmentResult run() {
        forward();
        AlignmentResult res;
        res.score = best_;
        std::int64_t i = ie_, j = je_;
        res.query_end = i;
        res.target_end = j;
        std::vector<char> ops;  // reversed
        int state = 0;          // 0 H, 1 E, 2 F
        for (;;) {
            if (i == 0 || j == 0) {
                if (global_) {
                    ops.insert(ops.end(), static_cast<std::size_t>(i), 'I');
                    ops.insert(ops.end(), static_cast<std::size_t>(j), 'D');
                    i = j = 0;
                }
                break;
            }
            const std::uint8_t d = dir(i, j);
            if (state == 0) {
                const int src = d & 3;
                if (src == kStart) break;
                if (src == kDiag) {
                    ops.push_back('M');
                    --i;
                    --j;
                } else {
                    state = src == kFromE ? 1 : 2;
                }
            } else if (state == 1) {
                ops.push_back('D');
                state = (d & kEExt) ? 1 : 0;
                --j;
            } else {
                ops.push_back('I');
                state = (d & kFExt) ? 2 : 0;
                --i;
            }
        }
        res.query_start = i;
        res.target_start = j;
        std::reverse(ops.begin(), ops.end());
        for (std::size_t t = 0; t < ops.size();) {
            std::size_t u = t;
            while (u < ops.size() && ops[u] == ops[t]) ++u;
            res.cigar += std::to_string(u - t);
            res.cigar += ops[t];
            t = u;
        }
        return res;
    }

private:
    std::int64_t border(std::int64_t len) const { return (global_ && len) ? -(o_ + (len - 1) * e_) : 0; }

    // One row: H/F of row i-1 in (h, f) become row i; directions into d when given.
    void step_row(std::int64_t i, std::vector<std::int64_t>& h, std::vector<std::int64_t>& f,
                  std::uint8_t* d) const {
        const std::int32_t* row = s_.table + std::int64_t(a_[i - 1]) * s_.alphabet;
        std::int64_t diag = h[0];
        h[0] = border(i);
        std::int64_t e = NEG;
        for (std::int64_t j = 1; j <= n_; ++j) {
            const std::int64_t e_open = h[j - 1] - o_, e_ext = e - e_;
            std::uint8_t bits = 0;
            if (e_ext > e_open) {
                e = e_ext;
                bits |= kEExt;
            } else {
                e = e_open;
            }
            const std::int64_t f_open = h[j] - o_, f_ext = f[j] - e_;
            if (f_ext > f_open) {
                f[j] = f_ext;
                bits |= kFExt;
            } else {
                f[j] = f_open;
            }
            const std::int64_t dg = diag + row[b_[j - 1]];
            std::int64_t v = dg;
            std::uint8_t src = kDiag;
            if (e > v) {
                v = e;
                src = kFromE;
            }
            if (f[j] > v) {
                v = f[j];
                src = kFromF;
            }
            if (local_ && v <= 0) {
                v = 0;
                src = kStart;
            }
            diag = h[j];
            h[j] = v;
            if (d) d[j] = bits | src;
        }
    }

    void forward() {
        std::vector<std::int64_t> h(n_ + 1), f(n_ + 1, NEG);
        for (std::int64_t j = 0; j <= n_; ++j) h[j] = border(j);
        const std::int64_t blocks = (m_ + k_ - 1) / k_;
        cp_h_.assign(static_cast<std::size_t>(blocks) + 1, {});
        cp_f_.assign(static_cast<std::size_t>(blocks) + 1, {});
        cp_h_[0] = h;
        cp_f_[0] = f;
        if (global_) {
            best_ = 0;
        } else {
            best_ = local_ ? 0 : h[n_];  // semi-global: H[0][n]
        }
        ie_ = 0;
        je_ = global_ ? 0 : (local_ ? 0 : n_);
        for (std::int64_t i = 1; i <= m_; ++i) {
            step_row(i, h, f, nullptr);
            if (local_) {
                for (std::int64_t j = 1; j <= n_; ++j)
                    if (h[j] > best_) {
                        best_ = h[j];
                        ie_ = i;
                        je_ = j;
                    }
            } else if (!global_) {
                if (i < m_ && h[n_] > best_) {
                    best_ = h[n_];
                    ie_ = i;
                    je_ = n_;
                }
                if (i == m_)
                    for (std::int64_t j = 0; j <= n_; ++j)
                        if (h[j] > best_) {
                            best_ = h[j];
                            ie_ = i;
                            je_ = j;
                        }
            }
            if (i % k_ == 0 && i < m_) {
                cp_h_[i / k_] = h;
                cp_f_[i / k_] = f;
            }
        }
        if (global_) {
            best_ = h[n_];
            ie_ = m_;
            je_ = n_;
        }
        if (m_ == 0 && !global_ && !local_) {  // semi-global with an empty query
            best_ = 0;
            ie_ = 0;
            je_ = 0;
        }
    }

    std::uint8_t dir(std::int64_t i, std::int64_t j) {
        const std::int64_t block = (i - 1) / k_;
        if (block != loaded_) {
            const std::int64_t r0 = block * k_, r1 = std::min(m_, r0 + k_);
            dirs_.assign(static_cast<std::size_t>((r1 - r0) * (n_ + 1)), 0);
            std::vector<std::int64_t> h = cp_h_[block], f = cp_f_[block];
            for (std::int64_t r = r0 + 1; r <= r1; ++r)
                step_row(r, h, f, dirs_.data() + (r - r0 - 1) * (n_ + 1));
            loaded_ = block;
        }
        return dirs_[static_cast<std::size_t>((i - 1 - loaded_ * k_) * (n_ + 1) + j)];
    }

    const std::uint8_t *a_, *b_;
    std::int64_t m_, n_;
    const ScoreScheme& s_;
    std::int64_t o_, e_;
    bool global_, local_;
    std::int64_t k_ = 1;
    std::vector<std::vector<std::int64_t>> cp_h_, cp_f_;  // checkpoint rows 0, k, 2k, ...
    std::vector<std::uint8_t> dirs_;
    std::int64_t loaded_ = -1;
    std::int64_t best_ = 0, ie_ = 0, je_ = 0;
};

}  // namespace

AlignmentResult align_traceback(const std::uint8_t* a, std::int64_t m, const std::uint8_t* b, std::int64_t n,
                                const ScoreScheme& s) {
    if (s.gap_open < 0 || s.gap_extend < 0) throw std::invalid_argument("gap penalties must be >= 0");
    Traceback tb(a, m, b, n, s);
    return tb.run();
}

}  // namespace bioaccel
