// Amplicon clustering on a sparse graph: swarm's growth, centroid clustering and swarm's
// alignment differences. See bioaccel/clusters.hpp.
#include "bioaccel/clusters.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

namespace bioaccel::clusters {

Growth swarm_grow(const Graph& g, const std::uint64_t* abundance, bool breaking) {
    const std::int64_t n = g.n;
    if (n >= (std::int64_t(1) << 32)) throw std::invalid_argument("swarm_grow: at most 2^32 - 1 nodes");
    Growth out;
    out.order.reserve(static_cast<std::size_t>(n));
    out.found.reserve(static_cast<std::size_t>(n));
    out.generation.assign(static_cast<std::size_t>(n), 0);
    out.radius.assign(static_cast<std::size_t>(n), 0);
    out.parent.assign(static_cast<std::size_t>(n), -1);
    std::vector<std::uint8_t> taken(static_cast<std::size_t>(n), 0);
    std::vector<std::uint32_t> next;
    for (std::int64_t seed = 0; seed < n; ++seed) {
        if (taken[seed]) continue;
        taken[seed] = 1;
        out.starts.push_back(static_cast<std::int64_t>(out.order.size()));
        out.order.push_back(static_cast<std::uint32_t>(seed));
        out.found.push_back(static_cast<std::uint32_t>(seed));
        std::size_t begin = out.order.size() - 1, end = out.order.size();
        while (begin < end) {
            next.clear();
            for (std::size_t k = begin; k < end; ++k) {
                const std::int64_t u = out.order[k];
                const std::uint64_t au = abundance[u];
                for (std::int64_t e = g.indptr[u]; e < g.indptr[u + 1]; ++e) {
                    const std::int64_t v = g.nbr[e];
                    if (taken[v] || (breaking && abundance[v] > au)) continue;
                    taken[v] = 1;
                    out.generation[v] = out.generation[u] + 1;
                    out.radius[v] = out.radius[u] + g.dist[e];
                    out.parent[v] = u;
                    next.push_back(static_cast<std::uint32_t>(v));
                    out.found.push_back(static_cast<std::uint32_t>(v));
                }
            }
            std::sort(next.begin(), next.end());
            begin = end;
            out.order.insert(out.order.end(), next.begin(), next.end());
            end = out.order.size();
        }
    }
    out.starts.push_back(static_cast<std::int64_t>(out.order.size()));
    return out;
}

void directed_rows(std::int64_t n, std::int64_t m, const std::int64_t* i, const std::int64_t* j,
                   const std::uint8_t* keep_ij, const std::uint8_t* keep_ji, std::int64_t* indptr) {
    std::fill(indptr, indptr + n + 1, std::int64_t(0));
    for (std::int64_t k = 0; k < m; ++k) {
        if (keep_ij[k]) ++indptr[i[k] + 1];
        if (keep_ji[k]) ++indptr[j[k] + 1];
    }
    for (std::int64_t u = 0; u < n; ++u) indptr[u + 1] += indptr[u];
}

void directed_fill(std::int64_t n, std::int64_t m, const std::int64_t* i, const std::int64_t* j,
                   const std::int32_t* dij, const std::int32_t* dji, const std::uint8_t* keep_ij,
                   const std::uint8_t* keep_ji, const std::int64_t* indptr, std::int64_t* nbr,
                   std::int32_t* dist) {
    // row u: its lower neighbours (the edges j -> i with j = u) from indptr[u], its higher
    // ones after them; the pairs come by (i, j), so each part fills in ascending order
    std::vector<std::int64_t> low(indptr, indptr + n), high(static_cast<std::size_t>(n), 0);
    for (std::int64_t k = 0; k < m; ++k)
        if (keep_ji[k]) ++high[j[k]];
    for (std::int64_t u = 0; u < n; ++u) high[u] += indptr[u];
    for (std::int64_t k = 0; k < m; ++k) {
        if (keep_ji[k]) {
            const std::int64_t at = low[j[k]]++;
            nbr[at] = i[k];
            dist[at] = dji[k];
        }
        if (keep_ij[k]) {
            const std::int64_t at = high[i[k]]++;
            nbr[at] = j[k];
            dist[at] = dij[k];
        }
    }
}

std::vector<std::int64_t> greedy_centroids(const Graph& g, const std::int64_t* lengths, std::int64_t num,
                                           std::int64_t den) {
    if (den <= 0 || num < 0 || num > den) throw std::invalid_argument("identity must be in [0, 1]");
    const std::int64_t n = g.n;
    std::vector<std::int64_t> centroid(static_cast<std::size_t>(n), -1);
    for (std::int64_t v = 0; v < n; ++v) {
        std::int64_t best = -1, best_num = 0, best_den = 1;  // identity as a fraction
        for (std::int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e) {
            const std::int64_t u = g.nbr[e];
            if (u >= v || centroid[u] != u) continue;
            const std::int64_t m = std::max(lengths[u], lengths[v]);
            const std::int64_t d = g.dist[e];
            if (m <= 0 || d > m) continue;
            // (m - d) / m >= num / den
            if ((m - d) * den < num * m) continue;
            // higher identity wins; on a tie the earlier centroid (u increases along the row)
            if (best < 0 || (m - d) * best_den > best_num * m) {
                best = u;
                best_num = m - d;
                best_den = m;
            }
        }
        centroid[v] = best < 0 ? v : best;
    }
    return centroid;
}

namespace {
constexpr std::int64_t kMismatch = 18, kGapOpen = 24, kGapExtend = 13;
constexpr std::int64_t kInf = std::numeric_limits<std::int64_t>::max() / 4;
constexpr std::uint8_t kUp = 1, kLeft = 2, kExtUp = 4, kExtLeft = 8;

// Two sequences of one length that differ by at most kUngappedMost substitutions: their
// ungapped alignment costs at most kMismatch x kUngappedMost, and any alignment with gaps
// holds at least one insertion and one deletion, 2 x (gap open + extend), more. So the
// ungapped alignment is the only optimum, and no dynamic programme is needed for it (three
// quarters of the pairs swarm's count is asked for at d = 2 and 3 on 16S V4 amplicons).
constexpr std::int64_t kUngappedMost = 4;
static_assert(kMismatch * kUngappedMost < 2 * (kGapOpen + kGapExtend),
              "the ungapped shortcut needs every gapped alignment to cost more");

// A pair of lengths delta > 0 apart whose edit distance `edits` is reached by one gap run of
// delta columns (in the shorter sequence) and m = edits - delta substitutions costs C1 =
// m x mismatch + open + delta x extend that way. Any other alignment either has its gaps in
// one sequence (t = 0 extra gap pairs) in o >= 1 runs, with m' >= m substitutions (edits is the
// least count): at least C1, equal only with one run and m' = m (the same count); or gaps in
// both sequences, t >= 1 pairs of them in o >= 2 runs, with m' >= max(0, m - 2t) substitutions
// (its differences m' + delta + 2t are at least edits), costing C1 + 18 (m' - m) + 24 (o - 1)
// + 26 t or more: above C1 for every t when m <= kSingleRunMost (at m = 6, three gap pairs
// in two runs and no substitution cost 6 less than C1). So when such a run exists,
// every optimal alignment is one run with m substitutions: swarm's count is `edits`, and no
// dynamic programme is needed. Of the pairs 2-3 edits apart, 11.1 % take this way in swarm's
// real test data (88.6 % the ungapped one) and 42.8 % on the 16S V4 simulator (47.7 %):
// benchmarks/bench_swarm_count.py.
constexpr std::int64_t kSingleRunMost = 5;
static_assert(kMismatch * 2 < kGapOpen + 2 * kGapExtend && kMismatch * 4 < kGapOpen + 4 * kGapExtend &&
                  kMismatch * kSingleRunMost < kGapOpen + 6 * kGapExtend,
              "the single-run shortcut needs every alignment with gaps on both sides to cost more");

// Whether short s (slen) and long l (slen + delta) align with one gap run of delta columns
// in s and exactly `mismatches` substitutions: the fewest over the run's positions p (s[0, p)
// against l[0, p), s[p, slen) against l[p + delta, ...)), which is never below `mismatches`
// when edits = mismatches + delta is the pair's edit distance.
bool one_run_reaches(const std::uint8_t* s, std::int64_t slen, const std::uint8_t* l, std::int64_t delta,
                     std::int64_t mismatches) {
    std::int64_t cur = 0;  // the run at p = 0: every letter of s against l shifted by delta
    for (std::int64_t i = 0; i < slen; ++i) cur += s[i] != l[i + delta];
    if (cur <= mismatches) return cur == mismatches;
    for (std::int64_t p = 0; p < slen; ++p) {  // the run moved past s[p]: s[p] against l[p]
        cur += static_cast<std::int64_t>(s[p] != l[p]) - static_cast<std::int64_t>(s[p] != l[p + delta]);
        if (cur <= mismatches) return cur == mismatches;
    }
    return false;
}

// The substitutions between a[0, len) and b[0, len), counted until they pass `most`.
std::int64_t substitutions_up_to(const std::uint8_t* a, const std::uint8_t* b, std::int64_t len,
                                 std::int64_t most) {
    std::int64_t h = 0;
    for (std::int64_t k = 0; k < len && h <= most; k += 64) {
        const std::int64_t end = std::min(len, k + 64);
        for (std::int64_t t = k; t < end; ++t) h += a[t] != b[t];
    }
    return h;
}
}  // namespace

SwarmAlignment swarm_align(const std::uint8_t* q, std::int64_t qlen, const std::uint8_t* d, std::int64_t dlen,
                           std::int64_t max_diffs, bool want_cigar, std::vector<std::int64_t>& H,
                           std::vector<std::int64_t>& E, std::vector<std::uint8_t>& dir, std::int64_t edits) {
    SwarmAlignment res;
    if (qlen <= 0 || dlen <= 0) throw std::invalid_argument("swarm_align: empty sequence");
    if (qlen == dlen) {
        const std::int64_t h = substitutions_up_to(q, d, qlen, kUngappedMost);
        if (h <= kUngappedMost) {  // the one optimum is ungapped (see kUngappedMost)
            res.score = h * kMismatch;
            if (max_diffs >= 0 && res.score > max_diffs * (kGapOpen + kGapExtend)) {
                res.diffs = max_diffs + 1;  // as the banded programme says it
                return res;
            }
            res.length = qlen;
            res.diffs = (max_diffs >= 0 && h > max_diffs) ? max_diffs + 1 : h;
            if (want_cigar) res.cigar = (qlen > 1 ? std::to_string(qlen) : std::string()) + 'M';
            return res;
        }
    }
    if (qlen != dlen && edits >= 0 && !want_cigar && (max_diffs < 0 || edits <= max_diffs)) {
        const bool q_longer = qlen > dlen;
        const std::int64_t delta = std::abs(qlen - dlen), m = edits - delta;
        if (m >= 0 && m <= kSingleRunMost &&
            one_run_reaches(q_longer ? d : q, std::min(qlen, dlen), q_longer ? q : d, delta, m)) {
            res.score = m * kMismatch + kGapOpen + delta * kGapExtend;  // see kSingleRunMost
            res.length = std::max(qlen, dlen);
            res.diffs = edits;
            return res;
        }
    }
    // Band, by diagonals k = i - j (query position minus target position) from lo_k to
    // hi_k. An alignment of at most max_diffs differences costs at most max_diffs * (gap
    // open + gap extend); with the edit distance known (edits >= 0), the optimum costs at
    // most edits * (gap open + gap extend) (an edit script is an alignment whose edits cost
    // at most that each): `reach`. Every alignment starts on diagonal 0 and ends on
    // delta = qlen - dlen; one that touches a diagonal k beyond both holds gaps of both
    // kinds (two opens) and at least |2k - delta| gap columns, so the alignments that cost
    // at most `reach` (every optimal one when the pair is within reach, with its ties) stay
    // in the diagonals where 2 x open + |2k - delta| x extend <= reach: the same optimum
    // and the same traceback as the full matrix (at d = 3, a pair of one length 3 edits
    // apart: 5 diagonals; 2 edits apart: 3).
    std::int64_t lo_k = -(dlen - 1), hi_k = qlen - 1;  // the full matrix
    std::int64_t limit = kInf;
    if (max_diffs >= 0) {
        limit = max_diffs * (kGapOpen + kGapExtend);
        const std::int64_t reach = edits >= 0 ? std::min(limit, edits * (kGapOpen + kGapExtend)) : limit;
        const std::int64_t delta = qlen - dlen, gaps = std::abs(delta);
        if (gaps > max_diffs || (gaps > 0 && kGapOpen + gaps * kGapExtend > reach)) {
            res.diffs = max_diffs + 1;
            res.score = kInf;
            return res;
        }
        const std::int64_t top = std::max<std::int64_t>(0, delta), bottom = std::min<std::int64_t>(0, delta);
        const std::int64_t spare = reach - 2 * kGapOpen;  // for gap columns, past the two opens
        hi_k = top;
        while (hi_k < qlen - 1 && spare >= (2 * (hi_k + 1) - delta) * kGapExtend) ++hi_k;
        lo_k = bottom;
        while (lo_k > -(dlen - 1) && spare >= (delta - 2 * (lo_k - 1)) * kGapExtend) --lo_k;
    }
    H.assign(static_cast<std::size_t>(qlen), kInf);
    E.assign(static_cast<std::size_t>(qlen), kInf);
    // the direction bits of the band only: cell (i, j) at j * width + (i - j - lo_k)
    const std::int64_t width = hi_k - lo_k + 1;
    dir.assign(static_cast<std::size_t>(dlen * width), 0);
    for (std::int64_t i = 0; i < qlen && i <= hi_k; ++i) {
        H[i] = kGapOpen + (i + 1) * kGapExtend;
        E[i] = 2 * kGapOpen + (i + 2) * kGapExtend;
    }
    std::int64_t prev_hi = std::min(qlen - 1, hi_k);
    for (std::int64_t j = 0; j < dlen; ++j) {
        const std::int64_t lo = std::max<std::int64_t>(0, j + lo_k), hi = std::min(qlen - 1, j + hi_k);
        if (lo > hi) continue;
        for (std::int64_t i = prev_hi + 1; i <= hi; ++i) H[i] = E[i] = kInf;  // entering the band
        if (hi > prev_hi) prev_hi = hi;
        std::int64_t f, h;
        if (lo == 0) {
            f = 2 * kGapOpen + (j + 2) * kGapExtend;
            h = (j == 0) ? 0 : (kGapOpen + j * kGapExtend);
        } else {
            f = kInf;
            h = H[lo - 1];
            H[lo - 1] = E[lo - 1] = kInf;  // leaving the band
        }
        const std::uint8_t dj = d[j];
        const std::int64_t base = width * j - j - lo_k;  // dir[base + i] is cell (i, j)
        // restrict: the direction bytes alias neither the scores nor the letters, so the
        // scores stay in registers across the column
        std::int64_t* __restrict hp = H.data();
        std::int64_t* __restrict ep = E.data();
        std::uint8_t* __restrict bp = dir.data() + base;
        const std::uint8_t* __restrict qp = q;
        for (std::int64_t i = lo; i <= hi; ++i) {
            const std::int64_t nn = hp[i];
            std::int64_t e = ep[i];
            h += (dj == qp[i]) ? 0 : kMismatch;
            std::uint8_t b = (f < h) ? kUp : 0;
            h = std::min(h, f);
            h = std::min(h, e);
            b |= (e == h) ? kLeft : 0;
            hp[i] = h;
            h += kGapOpen + kGapExtend;
            e += kGapExtend;
            f += kGapExtend;
            b |= (f < h) ? kExtUp : 0;
            b |= (e < h) ? kExtLeft : 0;
            f = std::min(h, f);
            e = std::min(h, e);
            ep[i] = e;
            bp[i] = b;
            h = nn;
        }
    }
    res.score = H[qlen - 1];
    if (res.score > limit) {
        res.diffs = max_diffs + 1;
        return res;
    }
    std::int64_t i = qlen, j = dlen, alength = 0, matches = 0;
    char op = 0;
    std::vector<char> ops;
    if (want_cigar) ops.reserve(static_cast<std::size_t>(qlen + dlen));
    while (i > 0 && j > 0) {
        const std::uint8_t b = dir[static_cast<std::size_t>(width * (j - 1) + (i - 1) - (j - 1) - lo_k)];
        ++alength;
        if (op == 'I' && (b & kExtLeft)) {
            --j;
        } else if (op == 'D' && (b & kExtUp)) {
            --i;
        } else if (b & kLeft) {
            --j;
            op = 'I';
        } else if (b & kUp) {
            --i;
            op = 'D';
        } else {
            if (q[i - 1] == d[j - 1]) ++matches;
            --i;
            --j;
            op = 'M';
        }
        if (want_cigar) ops.push_back(op);
    }
    while (i > 0) {
        ++alength;
        --i;
        if (want_cigar) ops.push_back('D');
    }
    while (j > 0) {
        ++alength;
        --j;
        if (want_cigar) ops.push_back('I');
    }
    res.length = alength;
    res.diffs = alength - matches;
    if (max_diffs >= 0 && res.diffs > max_diffs) res.diffs = max_diffs + 1;
    if (want_cigar) {
        std::string cigar;
        for (std::size_t k = ops.size(); k > 0;) {
            const char c = ops[k - 1];
            std::size_t run = 0;
            while (k > 0 && ops[k - 1] == c) {
                --k;
                ++run;
            }
            if (run > 1) cigar += std::to_string(run);
            cigar += c;
        }
        res.cigar = std::move(cigar);
    }
    return res;
}

}  // namespace bioaccel::clusters
