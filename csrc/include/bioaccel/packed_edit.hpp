// Sequences packed for word-wise comparison, Landau-Vishkin edit distance with a threshold,
// and polynomial substring hashes: the verification and hashing shared by the neighbour
// search (csrc/neighbors/) and the growth-driven clustering (csrc/clusters/growth.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <vector>

#include "bioaccel/align.hpp"  // SeqView

#ifdef _OPENMP
#include <omp.h>
#endif

namespace bioaccel::edit {

using u64 = std::uint64_t;
using i64 = std::int64_t;

// The polynomial base of every hash (odd, so it is invertible modulo 2^64).
constexpr u64 kBase = 0x9E3779B97F4A7C15ULL;
constexpr i64 kNeg = -(i64(1) << 40);

inline u64 mix(u64 x) {  // splitmix64's finaliser
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ULL;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBULL;
    x ^= x >> 31;
    return x;
}

// The sequences packed `bits` (2 or 8) a letter, each from a word boundary, a spare word at
// the end so that a read of two words never leaves the buffer.
class Packed {
public:
    Packed(const SeqView& v, int bits, int threads)
        : bits_(bits), shift_(bits == 8 ? 3 : 1), per_(64 / bits) {
        if (bits != 2 && bits != 8) throw std::invalid_argument("Packed: bits must be 2 or 8");
        const i64 n = v.count;
        woff_.resize(static_cast<std::size_t>(n) + 1);
        len_.resize(static_cast<std::size_t>(n));
        woff_[0] = 0;
        for (i64 i = 0; i < n; ++i) {
            len_[i] = v.length(i);
            woff_[i + 1] = woff_[i] + (len_[i] + per_ - 1) / per_;
        }
        w_.assign(static_cast<std::size_t>(woff_[n]) + 2, 0);
        const u64 mask = bits == 8 ? 0xFF : 3;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(threads)
#else
        (void)threads;
#endif
        for (i64 i = 0; i < n; ++i) {
            const std::uint8_t* s = v.seq(i);
            u64* out = w_.data() + woff_[i];
            for (i64 p0 = 0; p0 < len_[i]; p0 += per_, ++out) {  // a word at a time
                const i64 m = std::min<i64>(per_, len_[i] - p0);
                u64 x = 0;
                for (i64 t = 0; t < m; ++t) x |= (u64(s[p0 + t]) & mask) << (bits_ * t);
                *out = x;
            }
        }
    }

    i64 length(i64 i) const {
        return len_[i];
    }

    // Asks for the first words of sequence i ahead of a comparison.
    void prefetch(i64 i) const {
        const u64* w = w_.data() + woff_[i];
        __builtin_prefetch(w);
        __builtin_prefetch(w + 8);
    }

    // Letters p, p + 1, ... of sequence i from bit 0 on (letters past the end are garbage).
    u64 chunk(i64 i, i64 p) const {
        const u64 bit = static_cast<u64>(woff_[i]) * 64 + static_cast<u64>(p) * bits_;
        const u64 word = bit >> 6;
        const unsigned sh = bit & 63;
        u64 x = w_[word] >> sh;
        if (sh) x |= w_[word + 1] << (64 - sh);
        return x;
    }

    // The number of equal letters from a[pa] and b[pb] on.
    i64 lce(i64 a, i64 pa, i64 b, i64 pb) const {
        const i64 lim = std::min(len_[a] - pa, len_[b] - pb);
        i64 k = 0;
        while (k < lim) {
            const u64 x = chunk(a, pa + k) ^ chunk(b, pb + k);
            // letters from the lowest differing bit: a shift, not a division (an integer
            // division here was the costliest instruction of the d = 3 growth)
            if (x) return std::min(lim, k + static_cast<i64>(__builtin_ctzll(x) >> shift_));
            k += per_;
        }
        return lim;
    }

private:
    int bits_, shift_, per_;  // shift_: log2(bits_)
    std::vector<i64> woff_, len_;
    std::vector<u64> w_;
};

// Global edit distance of a and b when it is <= k, else k + 1: Landau-Vishkin, furthest
// reaching row per diagonal (j - i) and error count, each extended by a word-wise LCE.
// A diagonal d at e errors is left out when e + |diff - d| > k: reaching the end diagonal
// diff from it takes |diff - d| more indels, so no alignment within k passes through it,
// and the optimal one (every state of which passes this test) is still found. At k = 3
// and equal lengths that is 8 extensions instead of 16 (the d = 3 growth's verifications).
inline i64 lv_distance(const Packed& S, i64 a, i64 b, i64 k, std::vector<i64>& buf) {
    const i64 m = S.length(a), n = S.length(b), diff = n - m;
    if (std::llabs(diff) > k) return k + 1;
    if (m == 0 || n == 0) return std::max(m, n);  // <= k: |diff| <= k
    const i64 W = 2 * k + 3, o = k + 1;
    buf.assign(static_cast<std::size_t>(2 * W), kNeg);
    i64* prev = buf.data();
    i64* cur = buf.data() + W;
    const i64 i0 = S.lce(a, 0, b, 0);
    if (diff == 0 && i0 >= m) return 0;
    prev[o] = i0;
    for (i64 e = 1; e <= k; ++e) {
        std::fill(cur, cur + W, kNeg);
        const i64 slack = k - e;  // |diff - d| <= slack
        const i64 dlo = std::max({-e, -m, diff - slack}), dhi = std::min({e, n, diff + slack});
        for (i64 d = dlo; d <= dhi; ++d) {
            i64 i = std::max({prev[o + d] + 1, prev[o + d + 1] + 1, prev[o + d - 1]});
            i = std::min({i, m, n - d});
            if (i < std::max<i64>(0, -d)) continue;
            i += S.lce(a, i, b, i + d);
            cur[o + d] = i;
            if (d == diff && i >= m) return e;
        }
        std::swap(prev, cur);
    }
    return k + 1;
}

// Powers of the base, and prefix hashes of one sequence's letters (code + 1).
struct Hasher {
    std::vector<u64> pw;
    explicit Hasher(i64 longest) {
        pw.resize(static_cast<std::size_t>(longest) + 2);
        pw[0] = 1;
        for (std::size_t t = 1; t < pw.size(); ++t) pw[t] = pw[t - 1] * kBase;
    }
    // P[k] = hash of s[0, k): four letters a step from P[k] (the multiplications of one
    // step independent of each other), so the chain of dependent products is a quarter as long
    static void prefix(const std::uint8_t* s, i64 len, std::vector<u64>& P) {
        constexpr u64 b2 = kBase * kBase, b3 = b2 * kBase, b4 = b3 * kBase;
        P.resize(static_cast<std::size_t>(len) + 1);
        u64 h = 0;
        P[0] = 0;
        i64 k = 0;
        for (; k + 4 <= len; k += 4) {
            const u64 c0 = u64(s[k]) + 1, c1 = u64(s[k + 1]) + 1, c2 = u64(s[k + 2]) + 1,
                      c3 = u64(s[k + 3]) + 1;
            P[k + 1] = h * kBase + c0;
            P[k + 2] = h * b2 + (c0 * kBase + c1);
            P[k + 3] = h * b3 + (c0 * b2 + c1 * kBase + c2);
            h = h * b4 + (c0 * b3 + c1 * b2 + c2 * kBase + c3);
            P[k + 4] = h;
        }
        for (; k < len; ++k) P[k + 1] = h = h * kBase + (u64(s[k]) + 1);
    }
    u64 sub(const std::vector<u64>& P, i64 pos, i64 len) const { return P[pos + len] - P[pos] * pw[len]; }
};

// ---- segment masking: the keys of a partition filter ----------------------------------
//
// A sequence of length l is cut into q segments (layout_of: as even as can be, the longer
// ones last). d edits touch at most d segments, so for some set M of d segments (a mask)
// the other q - d appear unchanged in the partner, each unmasked run shifted by the net
// length change of the masked groups before it. A key hashes a sequence's unmasked runs
// (mask_seed for the length and mask, run_term for each run and where it starts).

// One choice of masked segments: the unmasked runs [a, b) and whether a masked group
// precedes each run and trails the last.
//
// A probe need not try every shift pattern of every mask (Pass-Join's multi-match-aware
// selection, for masks): a pair within d is found under one mask, M = the segments its
// alignment edits, topped up with the lowest-numbered unedited ones. Under M every masked
// segment past the first unmasked one holds an edit, so the group before run t costs at
// least max(late_before[t], |its net length change|) of the d edits, and the trailing
// group max(late_trailing, |its change|): shift patterns over budget are not probed. The
// index is unchanged (every mask of every sequence).
struct Mask {
    std::vector<int> a, b;
    std::vector<char> group_before;
    bool trailing = false;
    std::vector<int> late_before;  // masked segments before run t and after run 0
    int late_trailing = 0;         // segments of the trailing group (all after run 0)
};

// The least of the d edits the masked group of net length change eta with `late` segments
// that must hold an edit costs (see Mask).
inline i64 group_cost(i64 late, i64 eta) {
    return std::max<i64>(late, eta < 0 ? -eta : eta);
}

inline std::vector<Mask> masks_of(int q, int d) {
    std::vector<Mask> out;
    std::vector<int> pick(static_cast<std::size_t>(d));
    for (int t = 0; t < d; ++t) pick[t] = t;
    while (true) {
        std::vector<char> masked(static_cast<std::size_t>(q), 0);
        for (int t : pick) masked[t] = 1;
        Mask m;
        for (int u = 0; u < q;) {
            if (masked[u]) {
                ++u;
                continue;
            }
            const int a = u;
            while (u < q && !masked[u]) ++u;
            m.late_before.push_back(m.b.empty() ? 0 : a - m.b.back());
            m.a.push_back(a);
            m.b.push_back(u);
            m.group_before.push_back(a > 0 ? 1 : 0);
        }
        m.trailing = masked[q - 1] != 0;
        m.late_trailing = m.trailing ? q - m.b.back() : 0;
        out.push_back(m);
        int t = d - 1;
        while (t >= 0 && pick[t] == q - d + t) --t;
        if (t < 0) break;
        ++pick[t];
        for (int x = t + 1; x < d; ++x) pick[x] = pick[x - 1] + 1;
    }
    return out;
}

inline void layout_of(i64 len, int q, std::vector<i64>& start) {
    start.resize(static_cast<std::size_t>(q) + 1);
    const i64 base = len / q, rem = len % q;
    start[0] = 0;
    for (int u = 0; u < q; ++u) start[u + 1] = start[u] + base + (u >= q - rem ? 1 : 0);
}

inline u64 mask_seed(i64 len, std::size_t mask_id) {
    return mix(static_cast<u64>(len) * 0xA24BAED4963EE407ULL +
               static_cast<u64>(mask_id) * 0x9FB21C651E98DF25ULL + 0x2545F4914F6CDD1DULL);
}
inline u64 run_term(u64 h, int first_segment) {
    return mix(h + static_cast<u64>(first_segment + 1) * 0x632BE59BD9B4E019ULL);
}

// 2 bits a letter when every code is below 4 (A C G T), else 8.
inline int packing_bits(const SeqView& v) {
    const i64 total = v.offsets[v.count];
    for (i64 t = 0; t < total; ++t)
        if (v.codes[t] >= 4) return 8;
    return 2;
}

}  // namespace bioaccel::edit
