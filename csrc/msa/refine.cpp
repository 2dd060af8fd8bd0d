// Refinement (as FAMSA's): split the rows in two by the gap pattern of a column, realign the
// two sub-alignments as profiles near their current placement, and keep the new alignment
// when it scores higher than the current placement of the same two profiles.
#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <stdexcept>

#include "bioaccel/msa.hpp"

namespace bioaccel {
namespace msa {

namespace {

// Realigns one split; returns true (and rewrites column_of, n_columns) when accepted.
bool try_split(const SeqView& seqs, const MsaScoring& sc, const double* weights,
               const std::uint8_t* side, std::int32_t* column_of, std::int64_t& n_columns,
               int radius) {
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
            if (in_a && in_b) current.push_back(Match);
            else if (in_a) current.push_back(GapInB);
            else if (in_b) current.push_back(GapInA);
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
    const double old_score = path_score(a, b, sc, current);
    const double new_score = path_score(a, b, sc, path);
    if (!(new_score > old_score + 1e-6 * std::max(1.0, std::fabs(old_score)))) return false;
    // new column of each part's column
    std::vector<std::int32_t> map_a(cols_a.size()), map_b(cols_b.size());
    std::int32_t i = 0, j = 0;
    for (std::size_t c = 0; c < path.size(); ++c) {
        if (path[c] != GapInA) map_a[i++] = static_cast<std::int32_t>(c);
        if (path[c] != GapInB) map_b[j++] = static_cast<std::int32_t>(c);
    }
    auto remap = [&](const std::vector<std::int64_t>& rows, const std::vector<std::int32_t>& cols,
                     const std::vector<std::int32_t>& map) {
        for (std::int64_t s : rows)
            for (std::int64_t k = seqs.offsets[s]; k < seqs.offsets[s + 1]; ++k) {
                const auto it = std::lower_bound(cols.begin(), cols.end(), column_of[k]);
                column_of[k] = map[it - cols.begin()];
            }
    };
    remap(rows_a, cols_a, map_a);
    remap(rows_b, cols_b, map_b);
    n_columns = static_cast<std::int64_t>(path.size());
    return true;
}

}  // namespace

namespace {

// The distinct row splits made by the gap pattern of the current alignment's columns: for
// each column holding gaps and residues, the rows with a gap there. Each split is stored
// with row 0 on side 0, so a pattern and its complement are one split; ordered by the size
// of the smaller side, then by column.
std::vector<std::vector<std::uint8_t>> gap_pattern_splits(const SeqView& seqs,
                                                          const std::int32_t* column_of,
                                                          std::int64_t n_columns) {
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
    std::vector<std::vector<std::uint8_t>> out;
    std::set<std::vector<std::uint8_t>> seen;
    for (const auto& oc : order)
        if (seen.insert(has[oc.second]).second) out.push_back(has[oc.second]);
    return out;
}

}  // namespace

std::int64_t refine_gap_splits(const SeqView& seqs, const MsaScoring& sc, const double* weights,
                               int iterations, std::uint64_t seed, int radius,
                               std::int32_t* column_of, std::int64_t n_columns,
                               std::int64_t* accepted) {
    std::int64_t kept = 0;
    std::mt19937_64 rng(seed);
    std::set<std::vector<std::uint8_t>> tried;
    for (int it = 0; it < iterations; ++it) {
        std::vector<std::vector<std::uint8_t>> cands = gap_pattern_splits(seqs, column_of, n_columns);
        std::vector<std::size_t> fresh;
        for (std::size_t k = 0; k < cands.size(); ++k)
            if (!tried.count(cands[k])) fresh.push_back(k);
        if (fresh.empty()) break;
        const std::vector<std::uint8_t>& side = cands[fresh[rng() % fresh.size()]];
        tried.insert(side);
        if (try_split(seqs, sc, weights, side.data(), column_of, n_columns, radius)) {
            ++kept;
            tried.clear();
        }
    }
    if (accepted) *accepted = kept;
    return n_columns;
}

}  // namespace msa
}  // namespace bioaccel
