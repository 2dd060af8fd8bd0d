// The consistency transformation of sparse posteriors, the UPGMA guide tree of expected
// accuracies, progressive alignment maximising summed posteriors, and refinement by random
// bipartitions that keeps that objective. See bioaccel/msa_accurate.hpp.
//
// Determinism: every transformed pair depends only on the inputs (the sum over z runs in
// increasing z, and within z in increasing k, whichever thread computes the pair); the
// progressive and refinement stages are serial with a seeded generator.
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>

#include "bioaccel/msa_stop.hpp"
#include "bioaccel/common.hpp"
#include "bioaccel/msa_accurate.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace bioaccel {
namespace msa {

namespace {

// Transpose of a sparse matrix (rows <-> columns), columns increasing within each row.
SparsePost transpose(const SparsePost& a) {
    SparsePost t;
    t.rows = a.cols;
    t.cols = a.rows;
    t.row_start.assign(std::size_t(a.cols) + 1, 0);
    for (std::int32_t c : a.col) ++t.row_start[c + 1];
    for (std::int32_t r = 0; r < a.cols; ++r) t.row_start[r + 1] += t.row_start[r];
    t.col.resize(a.col.size());
    t.p.resize(a.p.size());
    std::vector<std::uint32_t> fill(t.row_start.begin(), t.row_start.end() - 1);
    for (std::int32_t r = 0; r < a.rows; ++r)
        for (std::uint32_t k = a.row_start[r]; k < a.row_start[r + 1]; ++k) {
            const std::uint32_t at = fill[a.col[k]]++;
            t.col[at] = r;
            t.p[at] = a.p[k];
        }
    return t;
}

}  // namespace

std::vector<SparsePost> consistency_round(const std::vector<SparsePost>& post, std::int64_t n, float cutoff,
                                          int threads) {
    const std::int64_t pairs = n * (n - 1) / 2;
    if (std::int64_t(post.size()) != pairs)
        throw std::invalid_argument("consistency: expected " + std::to_string(pairs) +
                                    " pair matrices, got " + std::to_string(post.size()));
    if (!(cutoff > 0 && cutoff <= 1)) throw std::invalid_argument("posterior cut-off must be in (0, 1]");
    std::vector<SparsePost> out(pairs);
    const float inv_n = 1.0f / static_cast<float>(n);
#ifdef _OPENMP
#pragma omp parallel num_threads(resolve_threads(threads))
#endif
    {
        std::vector<SparsePost> rx(n), cx(n);  // Pxz as rows of x; Pzx as rows of z
        std::vector<float> acc;                // lx x ly, kept zero between pairs
        std::vector<std::int32_t> lo, hi;      // the touched column range of each row
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 1)
#endif
        for (std::int64_t x = 0; x < n - 1; ++x) {
            if (stop_requested()) continue;  // the rest skipped; thrown below
            for (std::int64_t z = 0; z < n; ++z) {
                if (z == x) continue;
                if (x < z) {
                    rx[z] = post[pair_index(x, z, n)];
                    cx[z] = transpose(rx[z]);
                } else {
                    cx[z] = post[pair_index(z, x, n)];
                    rx[z] = transpose(cx[z]);
                }
            }
            const std::int64_t lx = rx[x == 0 ? 1 : 0].rows;
            for (std::int64_t y = x + 1; y < n; ++y) {
                const SparsePost& pxy = rx[y];
                const std::int64_t ly = pxy.cols;
                if (acc.size() < std::size_t(lx) * ly) acc.assign(std::size_t(lx) * ly, 0.0f);
                lo.assign(lx, std::numeric_limits<std::int32_t>::max());
                hi.assign(lx, -1);
                auto add = [&](std::int64_t a, std::int32_t b, float v) {
                    acc[std::size_t(a) * ly + b] += v;
                    lo[a] = std::min(lo[a], b);
                    hi[a] = std::max(hi[a], b);
                };
                for (std::int64_t z = 0; z < n; ++z) {
                    if (z == x) continue;
                    if (z == y) {  // z = x and z = y each give Pxy once
                        for (std::int64_t a = 0; a < lx; ++a)
                            for (std::uint32_t k = pxy.row_start[a]; k < pxy.row_start[a + 1]; ++k)
                                add(a, pxy.col[k], 2.0f * pxy.p[k]);
                        continue;
                    }
                    if (z < y) {  // Pzy stored with rows of z
                        const SparsePost& pzy = post[pair_index(z, y, n)];
                        const SparsePost& pxz = rx[z];
                        for (std::int64_t a = 0; a < lx; ++a)
                            for (std::uint32_t k = pxz.row_start[a]; k < pxz.row_start[a + 1]; ++k) {
                                const std::int32_t mid = pxz.col[k];
                                const float v = pxz.p[k];
                                for (std::uint32_t q = pzy.row_start[mid]; q < pzy.row_start[mid + 1]; ++q)
                                    add(a, pzy.col[q], v * pzy.p[q]);
                            }
                    } else {  // Pyz stored with rows of y; Pzx rows of z
                        const SparsePost& pyz = post[pair_index(y, z, n)];
                        const SparsePost& pzx = cx[z];
                        for (std::int64_t b = 0; b < ly; ++b)
                            for (std::uint32_t q = pyz.row_start[b]; q < pyz.row_start[b + 1]; ++q) {
                                const std::int32_t mid = pyz.col[q];
                                const float v = pyz.p[q];
                                for (std::uint32_t k = pzx.row_start[mid]; k < pzx.row_start[mid + 1]; ++k)
                                    add(pzx.col[k], static_cast<std::int32_t>(b), pzx.p[k] * v);
                            }
                    }
                }
                SparsePost res;
                res.rows = static_cast<std::int32_t>(lx);
                res.cols = static_cast<std::int32_t>(ly);
                res.row_start.assign(lx + 1, 0);
                for (std::int64_t a = 0; a < lx; ++a) {
                    float* row = acc.data() + std::size_t(a) * ly;
                    for (std::int32_t b = lo[a]; b <= hi[a]; ++b) {
                        const float v = row[b] * inv_n;
                        if (v >= cutoff) {
                            res.col.push_back(b);
                            res.p.push_back(std::min(v, 1.0f));
                        }
                        row[b] = 0.0f;
                    }
                    res.row_start[a + 1] = static_cast<std::uint32_t>(res.col.size());
                }
                res.col.shrink_to_fit();
                res.p.shrink_to_fit();
                out[pair_index(x, y, n)] = std::move(res);
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
