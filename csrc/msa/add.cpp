// Adding sequences to an existing alignment: the existing rows keep their columns; each new
// sequence is aligned on its own to the fixed profile of those rows (so the result does not
// depend on the other new sequences, their order or the thread count). Long pairs are
// aligned within a band around a chain of exact k-mer anchors between the profile's
// consensus and the new sequence; fragments get free end gaps (semiglobal: placed where they
// match, not stretched across the profile).
#include <algorithm>
#include <cmath>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "bioaccel/common.hpp"
#include "bioaccel/stop.hpp"
#include "bioaccel/msa.hpp"
#include "bioaccel/msa_add.hpp"

namespace bioaccel {
namespace msa {

namespace {

struct Point {
    std::int64_t r, j;
};

// The consensus letter of each profile column (the most frequent; the lowest letter on ties).
std::vector<std::int16_t> consensus(const Profile& p) {
    std::vector<std::int16_t> out(p.len);
    for (int c = 0; c < p.len; ++c) {
        const float* f = p.freq.data() + static_cast<std::size_t>(c) * p.letters;
        out[c] = static_cast<std::int16_t>(std::max_element(f, f + p.letters) - f);
    }
    return out;
}

int kmer_bits(int letters) {
    int bits = 1;
    while ((1 << bits) < letters) ++bits;
    return bits;
}

// k-mer keys of a letter string (key[t] for the k letters from t).
std::vector<std::uint64_t> kmer_keys(const std::int16_t* s, std::int64_t len, int k, int bits) {
    std::vector<std::uint64_t> keys;
    if (len < k) return keys;
    keys.resize(len - k + 1);
    const std::uint64_t mask = (bits * k >= 64) ? ~std::uint64_t(0) : ((std::uint64_t(1) << (bits * k)) - 1);
    std::uint64_t key = 0;
    for (std::int64_t t = 0; t < len; ++t) {
        key = ((key << bits) | static_cast<std::uint64_t>(s[t])) & mask;
        if (t >= k - 1) keys[t - k + 1] = key;
    }
    return keys;
}

}  // namespace

AnchorIndex::AnchorIndex(const std::vector<std::int16_t>& letters, int n_letters) {
    bits_ = kmer_bits(n_letters);
    k_ = bits_ <= 4 ? 12 : 5;  // nucleotides (<= 16 letters): 12-mers; proteins: 5-mers
    const std::vector<std::uint64_t> keys =
        kmer_keys(letters.data(), static_cast<std::int64_t>(letters.size()), k_, bits_);
    index_.reserve(keys.size());
    for (std::size_t t = 0; t < keys.size(); ++t) {
        auto [it, fresh] = index_.emplace(keys[t], static_cast<std::int64_t>(t));
        if (!fresh) it->second = -1;  // repeated: no anchor
    }
}

std::vector<std::pair<std::int64_t, std::int64_t>> AnchorIndex::chain(const std::int16_t* s,
                                                                      std::int64_t len) const {
    const std::vector<std::uint64_t> keys = kmer_keys(s, len, k_, bits_);
    std::vector<std::pair<std::int64_t, std::int64_t>> hits;  // (profile column, position)
    for (std::size_t t = 0; t < keys.size(); ++t) {
        const auto it = index_.find(keys[t]);
        if (it != index_.end() && it->second >= 0)
            hits.emplace_back(it->second, static_cast<std::int64_t>(t));
    }
    // the longest chain increasing in both (positions increase already): patience sorting
    // on the profile column, with predecessors
    std::vector<std::int64_t> tail, tail_at, prev(hits.size(), -1);
    for (std::size_t h = 0; h < hits.size(); ++h) {
        const std::int64_t c = hits[h].first;
        const std::size_t pos = std::lower_bound(tail.begin(), tail.end(), c) - tail.begin();
        if (pos > 0) prev[h] = tail_at[pos - 1];
        if (pos == tail.size()) {
            tail.push_back(c);
            tail_at.push_back(static_cast<std::int64_t>(h));
        } else {
            tail[pos] = c;
            tail_at[pos] = static_cast<std::int64_t>(h);
        }
    }
    std::vector<std::pair<std::int64_t, std::int64_t>> out;
    for (std::int64_t h = tail_at.empty() ? -1 : tail_at.back(); h >= 0; h = prev[h]) out.push_back(hits[h]);
    std::reverse(out.begin(), out.end());
    return out;
}

bool anchor_band(const std::vector<std::pair<std::int64_t, std::int64_t>>& anchors, int k, int n, int m,
                 int radius, bool free_ends, std::vector<int>& lo, std::vector<int>& hi) {
    if (anchors.empty()) return false;
    std::vector<Point> pts;
    pts.push_back({0, 0});
    const Point first{anchors.front().first, anchors.front().second};
    if (free_ends) {  // along the first anchor's diagonal back to the DP's first row/column
        const std::int64_t back = std::min(first.r, first.j);
        pts.push_back({first.r - back, first.j - back});
    }
    for (const auto& [c, t] : anchors) {
        pts.push_back({c, t});
        pts.push_back({c + k, t + k});
    }
    if (free_ends) {
        const Point last = pts.back();
        const std::int64_t fwd = std::min(n - last.r, m - last.j);
        pts.push_back({last.r + fwd, last.j + fwd});
    }
    pts.push_back({n, m});
    lo.assign(n + 1, m);
    hi.assign(n + 1, 0);
    for (std::size_t s = 0; s + 1 < pts.size(); ++s) {
        const Point a = pts[s], b = pts[s + 1];
        const std::int64_t dr = b.r - a.r, dj = b.j - a.j;
        const double rad = radius + std::abs(static_cast<double>(dr - dj));
        for (std::int64_t r = a.r; r <= b.r; ++r) {
            double j_lo, j_hi;
            if (dr == 0) {
                j_lo = static_cast<double>(std::min(a.j, b.j));
                j_hi = static_cast<double>(std::max(a.j, b.j));
            } else {
                j_lo = j_hi = a.j + static_cast<double>(r - a.r) * dj / dr;
            }
            const int l = static_cast<int>(std::max(0.0, std::floor(j_lo - rad)));
            const int h = static_cast<int>(std::min<double>(m, std::ceil(j_hi + rad)));
            lo[r] = std::min(lo[r], l);
            hi[r] = std::max(hi[r], h);
        }
    }
    // every row covered (points run from (0, 0) to (n, m) with rows non-decreasing), made
    // non-decreasing on both sides and connected row to row
    for (int r = n - 1; r >= 0; --r) lo[r] = std::min(lo[r], lo[r + 1]);
    for (int r = 1; r <= n; ++r) hi[r] = std::max(hi[r], hi[r - 1]);
    lo[0] = 0;
    hi[n] = m;
    for (int r = 1; r <= n; ++r) lo[r] = std::min(lo[r], hi[r - 1]);
    return true;
}

bool profile_band(const Profile& a, const Profile& b, int radius, bool free_ends, std::vector<int>& lo,
                  std::vector<int>& hi) {
    if (a.len == 0 || b.len == 0 || a.letters != b.letters) return false;
    const AnchorIndex index(consensus(a), a.letters);
    const std::vector<std::int16_t> cb = b.single.empty() ? consensus(b) : b.single;
    const auto anchors = index.chain(cb.data(), b.len);
    // a chain covering little of the shorter side says nothing about the path
    std::int64_t covered = 0, end = -1;
    for (const auto& an : anchors) {
        covered += std::min<std::int64_t>(index.k(), an.second + index.k() - std::max(end, an.second));
        end = an.second + index.k();
    }
    if (covered * 10 < std::min<std::int64_t>(a.len, b.len)) return false;
    return anchor_band(anchors, index.k(), a.len, b.len, radius, free_ends, lo, hi);
}

bool banded_merge_path(const Profile& a, const Profile& b, const MsaScoring& sc, Path& path) {
    const double cells = static_cast<double>(a.len + 1) * static_cast<double>(b.len + 1);
    const std::int64_t from = a.letters < 20 ? kProgressiveBandCellsNucleotide : kProgressiveBandCells;
    if (cells < static_cast<double>(from)) return false;
    std::vector<int> lo, hi;
    if (!profile_band(a, b, kProgressiveBandRadius, false, lo, hi)) return false;
    align_profiles(a, b, sc, path, std::int64_t(1) << 26, lo.data(), hi.data(), 1);
    return true;
}

AddResult align_to_alignment(const SeqView& existing, const std::int32_t* cols, const double* weights,
                             const SeqView& added, const MsaScoring& sc, const AddOptions& opt, int threads) {
    if (existing.count < 1) throw std::invalid_argument("the existing alignment has no rows");
    std::vector<std::int64_t> rows(existing.count);
    for (std::int64_t r = 0; r < existing.count; ++r) rows[r] = r;
    AddResult res;
    Profile fixed = rows_profile(existing, cols, rows.data(), existing.count, weights, sc, res.kept_columns);
    if (fixed.len == 0) throw std::invalid_argument("the existing alignment has no residues");
    // Fragments: the same sum-of-pairs profile, with the new sequence's leading and trailing
    // gaps free (below); the Python side (msa_engine/add.py) passes each fragment's nearest
    // row alone as the alignment, so it lands where it matches that row.
    MsaScoring sc_new = sc;  // gaps inserted into the new sequence
    if (opt.fragments) sc_new.term_open = sc_new.term_extend = 0.0f;
    res.paths.resize(added.count);
    res.scores.assign(added.count, 0.0);
    res.banded.assign(added.count, 0);
    const int workers = std::max(
        1, std::min<int>(resolve_threads(threads), static_cast<int>(std::max<std::int64_t>(1, added.count))));
    std::exception_ptr failure;
    std::mutex mu;
#pragma omp parallel for schedule(dynamic, 1) num_threads(workers)
    for (std::int64_t s = 0; s < added.count; ++s) {
        if (stop_requested()) continue;  // the rest skipped; thrown below
        try {
            const std::int64_t len = added.length(s);
            if (len == 0) continue;  // an empty path: an all-gap row
            const Profile seq = sequence_profile(added.seq(s), len, sc, 1.0);
            std::vector<int> lo, hi;
            bool band = false;
            const double cells = static_cast<double>(fixed.len + 1) * static_cast<double>(len + 1);
            if (opt.band_radius > 0 && cells >= static_cast<double>(opt.band_from_cells))
                band = profile_band(fixed, seq, opt.band_radius, opt.fragments, lo, hi);
            Path path;
            const double score =
                align_profiles(fixed, seq, sc, path, std::int64_t(1) << 26, band ? lo.data() : nullptr,
                               band ? hi.data() : nullptr, 1, &sc_new);
            res.paths[s] = std::move(path);
            res.scores[s] = score;
            res.banded[s] = band;
        } catch (...) {
            std::lock_guard<std::mutex> lock(mu);
            if (!failure) failure = std::current_exception();
        }
    }
    throw_if_stopped();
    if (failure) std::rethrow_exception(failure);
    return res;
}

}  // namespace msa
}  // namespace bioaccel
