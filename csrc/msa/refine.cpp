// Refinement (as FAMSA's): split the rows in two by the gap pattern of a column, realign the
// two sub-alignments as profiles near their current placement, and keep the new alignment
// when its exact sum-of-pairs score (every pair of rows, gaps counted per pair) is higher.
// Only pairs across the split change, so only they are scored.
#include <algorithm>
#include <cmath>
#include <random>
#include <map>
#include <numeric>
#include <set>
#include <stdexcept>

#include "bioaccel/stop.hpp"
#include "bioaccel/common.hpp"
#include "bioaccel/msa.hpp"

namespace bioaccel {
namespace msa {

namespace {

// The rows of one side of a split, in an alignment of `width` columns: residue counts per
// column and letter, gap cells per column by kind, and every gap run (maximal, in its own
// row). Built in O(residues + runs + width).
struct SideGaps {
    struct Run {
        std::int32_t s, e;
        bool terminal;  // before the row's first residue or after its last
    };
    std::int64_t rows = 0;
    std::vector<std::int32_t> counts;                                  // width x letters
    std::vector<std::int32_t> residues, gaps_internal, gaps_terminal;  // per column
    std::vector<Run> runs;

    SideGaps(const SeqView& seqs, const MsaScoring& sc, const std::vector<std::int64_t>& rows_in,
             const std::int32_t* col, std::int64_t width)
        : rows(static_cast<std::int64_t>(rows_in.size())),
          counts(static_cast<std::size_t>(width * sc.letters), 0),
          residues(width, 0),
          gaps_internal(width + 1, 0),
          gaps_terminal(width + 1, 0) {
        const std::int32_t W = static_cast<std::int32_t>(width);
        for (std::int64_t r : rows_in) {
            const std::int64_t k0 = seqs.offsets[r], k1 = seqs.offsets[r + 1];
            std::int32_t prev = -1;
            for (std::int64_t k = k0; k < k1; ++k) {
                const std::int32_t c = col[k];
                counts[static_cast<std::size_t>(c) * sc.letters + sc.letter_of[seqs.codes[k]]] += 1;
                residues[c] += 1;
                if (c > prev + 1) runs.push_back({prev + 1, c - 1, prev < 0});
                prev = c;
            }
            if (prev < W - 1) runs.push_back({prev + 1, W - 1, true});
        }
        // gap cells per column: a difference array over the runs, then prefix sums
        for (const Run& run : runs) {
            std::vector<std::int32_t>& g = run.terminal ? gaps_terminal : gaps_internal;
            g[run.s] += 1;
            g[run.e + 1] -= 1;
        }
        for (std::int64_t c = 1; c <= width; ++c) {
            gaps_internal[c] += gaps_internal[c - 1];
            gaps_terminal[c] += gaps_terminal[c - 1];
        }
    }
};

// For each run of x: how many rows of y are gapped over all of it, i.e. have a run [s', e']
// with s' <= s and e' >= e (a row's runs are disjoint, so at most one of them does). Offline
// dominance counting, ends from the last column down: y's runs ending at e enter a Fenwick
// tree over their starts, then x's runs ending at e count the starts <= s. O(runs log width).
std::vector<std::int64_t> covering_counts(const SideGaps& x, const SideGaps& y, std::int64_t width) {
    auto by_end = [&](const SideGaps& side, std::vector<std::int64_t>& first,
                      std::vector<std::int32_t>& order) {  // runs bucketed by end (CSR)
        first.assign(width + 1, 0);
        for (const SideGaps::Run& run : side.runs) first[run.e + 1] += 1;
        for (std::int64_t c = 0; c < width; ++c) first[c + 1] += first[c];
        order.resize(side.runs.size());
        std::vector<std::int64_t> fill(first.begin(), first.end() - 1);
        for (std::size_t q = 0; q < side.runs.size(); ++q)
            order[fill[side.runs[q].e]++] = static_cast<std::int32_t>(q);
    };
    std::vector<std::int64_t> first_x, first_y;
    std::vector<std::int32_t> order_x, order_y;
    by_end(x, first_x, order_x);
    by_end(y, first_y, order_y);
    std::vector<std::int32_t> tree(width + 1, 0);  // Fenwick over run starts 0..width-1
    std::vector<std::int64_t> out(x.runs.size(), 0);
    for (std::int64_t e = width - 1; e >= 0; --e) {
        for (std::int64_t k = first_y[e]; k < first_y[e + 1]; ++k)
            for (std::int64_t i = y.runs[order_y[k]].s + 1; i <= width; i += i & -i) tree[i] += 1;
        for (std::int64_t k = first_x[e]; k < first_x[e + 1]; ++k) {
            std::int64_t covered = 0;
            for (std::int64_t i = x.runs[order_x[k]].s + 1; i > 0; i -= i & -i) covered += tree[i];
            out[order_x[k]] = covered;
        }
    }
    return out;
}

// Gap openings and gap cells of side x's rows facing side y's residues: each run of an x row
// opens one gap against every y row with a residue somewhere in it (those not gapped over
// all of it); every (gap, residue) cell is one opening or one extension.
void gap_terms(const SideGaps& x, const SideGaps& y, std::int64_t width, double& open_int, double& cells_int,
               double& open_term, double& cells_term) {
    const std::vector<std::int64_t> covered = covering_counts(x, y, width);
    for (std::size_t q = 0; q < x.runs.size(); ++q)
        (x.runs[q].terminal ? open_term : open_int) += static_cast<double>(y.rows - covered[q]);
    for (std::int64_t c = 0; c < width; ++c) {
        cells_int += static_cast<double>(x.gaps_internal[c]) * y.residues[c];
        cells_term += static_cast<double>(x.gaps_terminal[c]) * y.residues[c];
    }
}

}  // namespace

double cross_sum_of_pairs(const SeqView& seqs, const MsaScoring& sc, const std::vector<std::int64_t>& rows_a,
                          const std::vector<std::int64_t>& rows_b, const std::int32_t* col,
                          std::int64_t width) {
    const SideGaps a(seqs, sc, rows_a, col, width), b(seqs, sc, rows_b, col, width);
    const int K = sc.letters;
    double sub = 0;
    std::vector<double> row_scores(K);
    for (std::int64_t c = 0; c < width; ++c) {
        if (!a.residues[c] || !b.residues[c]) continue;
        const std::int32_t* ca = a.counts.data() + c * K;
        const std::int32_t* cb = b.counts.data() + c * K;
        for (int x = 0; x < K; ++x) {
            if (!ca[x]) continue;
            const float* m = sc.sub.data() + static_cast<std::size_t>(x) * K;
            double t = 0;
            for (int y = 0; y < K; ++y) t += static_cast<double>(m[y]) * cb[y];
            sub += ca[x] * t;
        }
    }
    double open_int = 0, cells_int = 0, open_term = 0, cells_term = 0;
    gap_terms(a, b, width, open_int, cells_int, open_term, cells_term);
    gap_terms(b, a, width, open_int, cells_int, open_term, cells_term);
    return sub - sc.gap_open * open_int - sc.gap_extend * (cells_int - open_int) - sc.term_open * open_term -
           sc.term_extend * (cells_term - open_term);
}

namespace {

// Realigns one split of the alignment `column_of` (read only); returns true, with the new
// column of every residue in `moved` and the new width, when accepted.
bool try_split(const SeqView& seqs, const MsaScoring& sc, const double* weights, const std::uint8_t* side,
               const std::int32_t* column_of, std::int64_t n_columns, int radius,
               std::vector<std::int32_t>& moved, std::int64_t& new_columns) {
    std::vector<std::int64_t> rows_a, rows_b;
    for (std::int64_t r = 0; r < seqs.count; ++r) (side[r] ? rows_b : rows_a).push_back(r);
    if (rows_a.empty() || rows_b.empty()) return false;
    std::vector<std::int32_t> cols_a, cols_b;
    const Profile a = rows_profile(seqs, column_of, rows_a.data(), static_cast<std::int64_t>(rows_a.size()),
                                   weights, sc, cols_a);
    const Profile b = rows_profile(seqs, column_of, rows_b.data(), static_cast<std::int64_t>(rows_b.size()),
                                   weights, sc, cols_b);
    // the current placement as a path over the columns either part uses
    Path current;
    current.reserve(n_columns);
    {
        std::size_t ia = 0, ib = 0;
        for (std::int64_t c = 0; c < n_columns; ++c) {
            const bool in_a = ia < cols_a.size() && cols_a[ia] == c;
            const bool in_b = ib < cols_b.size() && cols_b[ib] == c;
            if (in_a && in_b)
                current.push_back(Match);
            else if (in_a)
                current.push_back(GapInB);
            else if (in_b)
                current.push_back(GapInA);
            ia += in_a;
            ib += in_b;
        }
    }
    // search within `radius` columns of the current placement (FAMSA uses 50)
    std::vector<int> lo(a.len + 1, b.len), hi(a.len + 1, 0);
    {
        int i = 0, j = 0;
        lo[0] = 0;
        hi[0] = 0;
        for (std::uint8_t op : current) {
            if (op != GapInA) ++i;
            if (op != GapInB) ++j;
            lo[i] = std::min(lo[i], j);
            hi[i] = std::max(hi[i], j);
        }
        for (int r = 0; r <= a.len; ++r) {
            lo[r] = std::max(0, lo[r] - radius);
            hi[r] = std::min(b.len, hi[r] + radius);
        }
        lo[0] = 0;
        hi[a.len] = b.len;
    }
    Path path;
    align_profiles(a, b, sc, path, std::int64_t(1) << 26, radius > 0 ? lo.data() : nullptr,
                   radius > 0 ? hi.data() : nullptr);
    if (path == current) return false;
    // new column of each part's column, then of every residue
    std::vector<std::int32_t> map_a(cols_a.size()), map_b(cols_b.size());
    std::int32_t i = 0, j = 0;
    for (std::size_t c = 0; c < path.size(); ++c) {
        if (path[c] != GapInA) map_a[i++] = static_cast<std::int32_t>(c);
        if (path[c] != GapInB) map_b[j++] = static_cast<std::int32_t>(c);
    }
    moved.assign(column_of, column_of + seqs.offsets[seqs.count]);
    auto remap = [&](const std::vector<std::int64_t>& rows, const std::vector<std::int32_t>& cols,
                     const std::vector<std::int32_t>& map) {
        for (std::int64_t s : rows)
            for (std::int64_t k = seqs.offsets[s]; k < seqs.offsets[s + 1]; ++k) {
                const auto it = std::lower_bound(cols.begin(), cols.end(), column_of[k]);
                moved[k] = map[it - cols.begin()];
            }
    };
    remap(rows_a, cols_a, map_a);
    remap(rows_b, cols_b, map_b);
    const double old_score = cross_sum_of_pairs(seqs, sc, rows_a, rows_b, column_of, n_columns);
    const double new_score =
        cross_sum_of_pairs(seqs, sc, rows_a, rows_b, moved.data(), static_cast<std::int64_t>(path.size()));
    if (!(new_score > old_score + 1e-9 * std::max(1.0, std::fabs(old_score)))) return false;
    new_columns = static_cast<std::int64_t>(path.size());
    return true;
}

}  // namespace

namespace {

// The distinct row splits made by the gap pattern of the current alignment's columns: for
// each column holding gaps and residues, the rows with a gap there. Each split is stored
// with row 0 on side 0, so a pattern and its complement are one split; with the number of
// columns that make it; ordered by the size of the smaller side, then by first column.
std::vector<std::pair<std::vector<std::uint8_t>, std::int64_t>> gap_pattern_splits(
    const SeqView& seqs, const std::int32_t* column_of, std::int64_t n_columns) {
    const std::int64_t n = seqs.count;
    std::vector<std::vector<std::uint8_t>> has(n_columns, std::vector<std::uint8_t>(n, 1));
    for (std::int64_t s = 0; s < n; ++s)
        for (std::int64_t k = seqs.offsets[s]; k < seqs.offsets[s + 1]; ++k) has[column_of[k]][s] = 0;
    std::vector<std::pair<std::int64_t, std::int64_t>> order;  // (smaller side, column)
    for (std::int64_t c = 0; c < n_columns; ++c) {
        std::vector<std::uint8_t>& side = has[c];  // 1 = gap
        std::int64_t gaps = 0;
        for (std::uint8_t g : side) gaps += g;
        if (gaps == 0 || gaps == n) continue;
        if (side[0])
            for (std::uint8_t& g : side) g ^= 1;
        order.emplace_back(std::min(gaps, n - gaps), c);
    }
    std::sort(order.begin(), order.end());
    std::vector<std::pair<std::vector<std::uint8_t>, std::int64_t>> out;
    std::map<std::vector<std::uint8_t>, std::size_t> index;
    for (const auto& oc : order) {
        const auto found = index.emplace(has[oc.second], out.size());
        if (found.second) out.emplace_back(has[oc.second], 0);
        out[found.first->second].second += 1;
    }
    return out;
}

}  // namespace

std::int64_t refine_gap_splits(const SeqView& seqs, const MsaScoring& sc, const double* weights,
                               int iterations, std::uint64_t seed, int radius, std::int32_t* column_of,
                               std::int64_t n_columns, std::int64_t* accepted, int threads) {
    const int workers = resolve_threads(threads);
    std::int64_t kept = 0;
    std::mt19937_64 rng(seed);
    std::set<std::vector<std::uint8_t>> tried;
    std::vector<std::pair<std::vector<std::uint8_t>, std::int64_t>> cands;
    bool stale = true;  // the splits of the current alignment are recomputed after a change
    // Speculation: up to `workers` splits are drawn as the serial loop would draw them (each
    // marked tried before the next is drawn), realigned at once, and taken in draw order up
    // to the first accepted one; the draws after it are undone (the generator goes back to
    // its state after that draw, the later splits are untried again), so the result is the
    // serial loop's whatever the thread count.
    struct Draw {
        std::vector<std::uint8_t> side;
        std::mt19937_64 rng_after;
        bool accepted = false;
        std::vector<std::int32_t> moved;
        std::int64_t columns = 0;
    };
    int it = 0;
    while (it < iterations) {
        throw_if_stopped();
        if (stale) cands = gap_pattern_splits(seqs, column_of, n_columns);
        stale = false;
        std::vector<Draw> draws;
        while (static_cast<int>(draws.size()) < std::min(workers, iterations - it)) {
            // a column drawn uniformly among those whose split is untried (as FAMSA draws
            // columns and skips tried splits): a split made by many columns comes up more often
            std::vector<std::size_t> fresh;
            std::int64_t columns = 0;
            for (std::size_t k = 0; k < cands.size(); ++k)
                if (!tried.count(cands[k].first)) {
                    fresh.push_back(k);
                    columns += cands[k].second;
                }
            if (fresh.empty()) break;
            std::int64_t draw = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(columns));
            std::size_t pick = 0;
            while (draw >= cands[fresh[pick]].second) draw -= cands[fresh[pick++]].second;
            tried.insert(cands[fresh[pick]].first);
            draws.push_back({cands[fresh[pick]].first, rng});
        }
        if (draws.empty()) break;
#pragma omp parallel for num_threads(workers) schedule(dynamic, 1)
        for (std::int64_t d = 0; d < static_cast<std::int64_t>(draws.size()); ++d) {
            Draw& x = draws[d];
            x.accepted =
                try_split(seqs, sc, weights, x.side.data(), column_of, n_columns, radius, x.moved, x.columns);
        }
        for (std::size_t d = 0; d < draws.size(); ++d) {
            ++it;
            if (!draws[d].accepted) continue;
            std::copy(draws[d].moved.begin(), draws[d].moved.end(), column_of);
            n_columns = draws[d].columns;
            rng = draws[d].rng_after;
            ++kept;
            tried.clear();  // the later draws are forgotten with the rest
            stale = true;
            break;
        }
    }
    if (accepted) *accepted = kept;
    return n_columns;
}

}  // namespace msa
}  // namespace bioaccel
