// Sequences packed for word-wise comparison, Landau-Vishkin edit distance with a threshold,
// and polynomial substring hashes: the verification and hashing shared by the neighbour
// search (csrc/neighbors/) and the growth-driven clustering (csrc/clusters/growth.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <vector>

#include "bioaccel/align.hpp"  // SeqView
#include "bioaccel/huge_pages.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif
#if defined(__SSE2__)
#include <emmintrin.h>
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
        i64 total = 0;
        woff_.resize(static_cast<std::size_t>(n));
        len_.resize(static_cast<std::size_t>(n));
        for (i64 i = 0; i < n; ++i) {
            if (v.length(i) > kMaxLength || total > kMaxLength)
                throw std::invalid_argument("Packed: sequences past 2^32 - 1 letters or words");
            len_[i] = static_cast<std::uint32_t>(v.length(i));
            woff_[i] = static_cast<std::uint32_t>(total);
            total += (v.length(i) + per_ - 1) / per_;
        }
        assign_huge(w_, static_cast<std::size_t>(total) + 2, decltype(w_)::value_type(0));
        const u64 mask = bits == 8 ? 0xFF : 3;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(threads)
#else
        (void)threads;
#endif
        for (i64 i = 0; i < n; ++i) {
            const std::uint8_t* s = v.seq(i);
            u64* out = w_.data() + woff_[i];
            for (i64 p0 = 0; p0 < length(i); p0 += per_, ++out) {  // a word at a time
                const i64 m = std::min<i64>(per_, length(i) - p0);
                u64 x = 0;
                for (i64 t = 0; t < m; ++t) x |= (u64(s[p0 + t]) & mask) << (bits_ * t);
                *out = x;
            }
        }
    }

    // Sequences already packed 2 bits a letter (the amplicon reader's letters, in any order
    // in the words): sequence i is len[i] letters from words[start[i]] on, its letter t at
    // bits 2t of them, zero past its end up to its last word; a spare word after the last.
    Packed(std::vector<u64>&& words, std::vector<std::uint32_t>&& start, std::vector<std::uint32_t>&& len)
        : bits_(2), shift_(1), per_(32), woff_(std::move(start)), len_(std::move(len)), w_(std::move(words)) {
        if (woff_.size() != len_.size())
            throw std::invalid_argument("Packed: starts and lengths differ in number");
        for (std::size_t i = 0; i < len_.size(); ++i)
            if (static_cast<std::size_t>(woff_[i]) + (len_[i] + std::size_t(31)) / 32 + 1 > w_.size())
                throw std::invalid_argument("Packed: a sequence's words lie past the buffer");
    }
    // the most letters a sequence and words in all (4 bytes each a sequence)
    static constexpr i64 kMaxLength = 0xFFFFFFFFLL;

    i64 count() const {
        return static_cast<i64>(len_.size());
    }
    i64 length(i64 i) const {
        return len_[i];
    }
    int bits() const {
        return bits_;
    }
    // Sequence i's words (words(i)[0 .. word_count(i)), letters past its end zero).
    const u64* words(i64 i) const {
        return w_.data() + woff_[i];
    }
    i64 word_count(i64 i) const {
        return (length(i) + per_ - 1) / per_;
    }
    // Bytes held (the words, the offsets and the lengths).
    std::size_t bytes() const {
        return w_.capacity() * 8 + (woff_.capacity() + len_.capacity()) * 4;
    }

    // Sequence i's codes, a byte each, into out (length(i) bytes).
    void decode(i64 i, std::uint8_t* out) const {
        const u64* w = w_.data() + woff_[i];
        const u64 mask = bits_ == 8 ? 0xFF : 3;
        for (i64 p0 = 0; p0 < length(i); p0 += per_, ++w) {
            const i64 m = std::min<i64>(per_, length(i) - p0);
            u64 x = *w;
            for (i64 t = 0; t < m; ++t, x >>= bits_) out[p0 + t] = static_cast<std::uint8_t>(x & mask);
        }
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
        const i64 lim = std::min(length(a) - pa, length(b) - pb);
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
    int bits_, shift_, per_;                 // shift_: log2(bits_)
    std::vector<std::uint32_t> woff_, len_;  // each sequence's first word and its length
    std::vector<u64> w_;
};

// Sequences as the growth and the neighbour search read them: codes a byte each (a
// SeqView) or a Packed set (the amplicon reader's 2 bits a letter, a quarter of the memory).
// seq(i, scratch) gives sequence i's codes in place, or decoded into the caller's scratch.
class Letters {
public:
    Letters(const SeqView& v) : v_(v) {}  // NOLINT: a SeqView is Letters
    explicit Letters(const Packed& p) : p_(&p) { v_.count = p.count(); }
    i64 count() const { return v_.count; }
    i64 length(i64 i) const { return p_ ? p_->length(i) : v_.length(i); }
    const std::uint8_t* seq(i64 i, std::vector<std::uint8_t>& scratch) const {
        if (!p_) return v_.seq(i);
        scratch.resize(static_cast<std::size_t>(p_->length(i)) + 1);
        p_->decode(i, scratch.data());
        return scratch.data();
    }
    // The packed set, or null for codes a byte each (then view() holds them).
    const Packed* packed() const { return p_; }
    const SeqView& view() const { return v_; }
    i64 longest() const {
        i64 m = 0;
        for (i64 s = 0; s < count(); ++s) m = std::max(m, length(s));
        return m;
    }

private:
    SeqView v_{};
    const Packed* p_ = nullptr;
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

// Each sequence's 3-gram counts (letters by their low two bits: a function of the letters,
// which can only bring two sequences closer), for the q-gram lemma: one edit moves at most
// 6 counts by one (3 grams out, 3 in), so two sequences whose counts differ by more than
// 6k in sum are more than k edits apart. Counts are 4 bits (saturated at 15: saturation
// only shrinks differences), 32 bytes a sequence, while the longest sequence has at most
// 640 letters (10 grams a count on average); a byte each (64 bytes) past that. On the 16S V4
// set of 10^5 amplicons at d = 3 a member's index candidates are mostly family members 4-10
// edits away (98.6 % fail); this test turns most of them away before Landau-Vishkin (the
// growth 1.55 -> 0.98 s at d = 3, 0.77 -> 0.47 s at d = 2).
class GramCounts {
public:
    explicit GramCounts(const Letters& v) {
        const i64 longest = v.longest();
        wide_ = longest > 640;
        shift_ = wide_ ? 6 : 5;
        const unsigned cap = wide_ ? 255 : 15;
        assign_huge(counts_, static_cast<std::size_t>(v.count()) << shift_, std::uint8_t(0));
        std::vector<std::uint8_t> scratch;
        std::uint8_t full[64];
        // four tallies (by position mod 4), so a repeated gram's counts do not wait on each
        // other; summed and capped at the end
        std::uint32_t tally[4][64];
        for (i64 s = 0; s < v.count(); ++s) {
            std::fill(&tally[0][0], &tally[0][0] + 4 * 64, 0u);
            const std::uint8_t* x = v.seq(s, scratch);
            const i64 len = v.length(s);
            if (len >= 3) {
                unsigned g = ((x[0] & 3u) << 2) | (x[1] & 3u);
                for (i64 p = 2; p < len; ++p) {
                    g = ((g << 2) | (x[p] & 3u)) & 63u;
                    ++tally[p & 3][g];
                }
            }
            for (int k = 0; k < 64; ++k)
                full[k] = static_cast<std::uint8_t>(
                    std::min<std::uint32_t>(cap, tally[0][k] + tally[1][k] + tally[2][k] + tally[3][k]));
            std::uint8_t* out = counts_.data() + (s << shift_);
            if (wide_)
                std::copy(full, full + 64, out);
            else
                for (int k = 0; k < 32; ++k)
                    out[k] = static_cast<std::uint8_t>(full[2 * k] | full[2 * k + 1] << 4);
        }
    }
    void prefetch(i64 s) const { __builtin_prefetch(counts_.data() + (s << shift_)); }
    // Keeps the candidates of probe r that may be within k edits of it (in order), their
    // counts fetched a few candidates ahead.
    template <class Node>
    void keep_within(i64 r, std::vector<Node>& cand, i64 k) const {
        constexpr std::size_t ahead = 6;
        std::size_t w = 0;
        for (std::size_t c = 0; c < std::min(ahead, cand.size()); ++c) prefetch(cand[c]);
        for (std::size_t c = 0; c < cand.size(); ++c) {
            if (c + ahead < cand.size()) prefetch(cand[c + ahead]);
            if (within(r, cand[c], k)) cand[w++] = cand[c];
        }
        cand.resize(w);
    }
    // Whether a and b may be within k edits (their counts differ by at most 6k in sum).
    bool within(i64 a, i64 b, i64 k) const {
        const std::uint8_t* x = counts_.data() + (a << shift_);
        const std::uint8_t* y = counts_.data() + (b << shift_);
        return (wide_ ? l1_wide(x, y) : l1_narrow(x, y)) <= 6 * k;
    }

private:
    // The sums of absolute differences: SSE2's psadbw on the nibbles (narrow) or bytes
    // (wide), 16 a step (x86-64 always has SSE2); the scalar loops elsewhere. The growth
    // at 10^5, d = 3 spent 6 % of its time in the scalar narrow loop.
    static int l1_narrow(const std::uint8_t* x, const std::uint8_t* y) {
#if defined(__SSE2__)
        const __m128i low = _mm_set1_epi8(0x0F);
        __m128i acc = _mm_setzero_si128();
        for (int h = 0; h < 32; h += 16) {
            const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x + h));
            const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(y + h));
            acc = _mm_add_epi64(acc, _mm_sad_epu8(_mm_and_si128(a, low), _mm_and_si128(b, low)));
            acc = _mm_add_epi64(acc, _mm_sad_epu8(_mm_and_si128(_mm_srli_epi16(a, 4), low),
                                                  _mm_and_si128(_mm_srli_epi16(b, 4), low)));
        }
        return _mm_cvtsi128_si32(acc) + _mm_cvtsi128_si32(_mm_srli_si128(acc, 8));
#else
        int sum = 0;
        for (int t = 0; t < 32; ++t) {
            const int lo = int(x[t] & 15u) - int(y[t] & 15u), hi = int(x[t] >> 4) - int(y[t] >> 4);
            sum += (lo < 0 ? -lo : lo) + (hi < 0 ? -hi : hi);
        }
        return sum;
#endif
    }
    static int l1_wide(const std::uint8_t* x, const std::uint8_t* y) {
#if defined(__SSE2__)
        __m128i acc = _mm_setzero_si128();
        for (int h = 0; h < 64; h += 16)
            acc = _mm_add_epi64(acc, _mm_sad_epu8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + h)),
                                                  _mm_loadu_si128(reinterpret_cast<const __m128i*>(y + h))));
        return _mm_cvtsi128_si32(acc) + _mm_cvtsi128_si32(_mm_srli_si128(acc, 8));
#else
        int sum = 0;
        for (int t = 0; t < 64; ++t) sum += std::abs(int(x[t]) - int(y[t]));
        return sum;
#endif
    }

    bool wide_ = false;
    int shift_ = 5;  // log2 of the bytes a sequence
    std::vector<std::uint8_t> counts_;
};

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
// length change of the masked groups before it. A key hashes a sequence's unmasked
// segments (mask_seed for the length and mask, segment_term for each segment).

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
    // from run t on (t = runs: the trailing group alone): the late segments of the groups
    // left, and whether any of them may change the length. A probe stops a shift pattern at
    // run t when those groups cannot bring its shift to the length difference within the
    // budget (they cost at least both), instead of finding it out at the end
    std::vector<int> late_from;
    std::vector<char> shifts_from;
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
        const std::size_t runs = m.a.size();
        m.late_from.assign(runs + 1, m.late_trailing);
        m.shifts_from.assign(runs + 1, m.trailing ? 1 : 0);
        for (std::size_t t = runs; t-- > 0;) {
            m.late_from[t] = m.late_from[t + 1] + m.late_before[t];
            m.shifts_from[t] = m.shifts_from[t + 1] || m.group_before[t];
        }
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

// A key is mask_seed(length, mask) plus the segment_term of each unmasked segment (the
// hash of its letters and its number): the terms of a segment at each shift are computed
// once a probe and summed into every key that holds them, instead of hashing each run of
// each key (at d = 3 a probe has ~380 keys; hashing them was half of the growth's time).
// The seed is a length's term plus a mask's: a probe mixes one per length, not one per
// length and mask.
inline u64 length_seed(i64 len) {
    return mix(static_cast<u64>(len) * 0xA24BAED4963EE407ULL + 0x2545F4914F6CDD1DULL);
}
inline u64 mask_salt(std::size_t mask_id) {
    return mix(static_cast<u64>(mask_id) * 0x9FB21C651E98DF25ULL + 0x3C6EF372FE94F82BULL);
}
inline u64 mask_seed(i64 len, std::size_t mask_id) {
    return length_seed(len) + mask_salt(mask_id);
}
inline u64 segment_term(u64 h, int segment) {
    return mix(h + static_cast<u64>(segment + 1) * 0x632BE59BD9B4E019ULL);
}

// The key of every mask of one sequence (prefix hashes P, layout st), into out[mask].
inline void sequence_keys(const Hasher& hs, const std::vector<u64>& P, i64 len, const std::vector<i64>& st,
                          const std::vector<Mask>& masks, u64* out, std::vector<u64>& terms) {
    const std::size_t q = st.size() - 1;
    terms.resize(q);
    for (std::size_t u = 0; u < q; ++u)
        terms[u] = segment_term(hs.sub(P, st[u], st[u + 1] - st[u]), static_cast<int>(u));
    for (std::size_t mi = 0; mi < masks.size(); ++mi) {
        const Mask& m = masks[mi];
        u64 key = mask_seed(len, mi);
        for (std::size_t t = 0; t < m.a.size(); ++t)
            for (int u = m.a[t]; u < m.b[t]; ++u) key += terms[static_cast<std::size_t>(u)];
        out[mi] = key;
    }
}

// The shift patterns a probe tries, per length difference: a pair within d is found under
// one mask with its unmasked runs at one pattern of shifts (Mask's comment), and which
// patterns d edits allow depends on the mask, the length difference delta = |probe| -
// |indexed| and d only, not on the letters. So they are enumerated once (the depth-first
// order of masks, then each run's net change increasing), each as its mask and, for every
// unmasked segment, the index of its term at its shift (segment * (2d + 1) + shift + d).
struct KeyPlan {
    int q = 0, d = 0, kept = 0;                    // kept = q - d segments a key
    std::vector<std::vector<std::uint32_t>> mask;  // [delta + d][pattern]
    std::vector<std::vector<std::uint32_t>> term;  // [delta + d][pattern * kept + k]
};

inline KeyPlan key_plan(int q, int d, const std::vector<Mask>& masks) {
    KeyPlan plan;
    plan.q = q;
    plan.d = d;
    plan.kept = q - d;
    const i64 width = 2 * i64(d) + 1;
    if (q < d + 1) throw std::invalid_argument("segments must be at least max_distance + 1");
    plan.mask.resize(static_cast<std::size_t>(width));
    plan.term.resize(static_cast<std::size_t>(width));
    std::vector<std::uint32_t> at;  // the pattern so far: term indices
    for (i64 delta = -d; delta <= d; ++delta) {
        auto& masks_out = plan.mask[static_cast<std::size_t>(delta + d)];
        auto& terms_out = plan.term[static_cast<std::size_t>(delta + d)];
        for (std::size_t mi = 0; mi < masks.size(); ++mi) {
            const Mask& m = masks[mi];
            const std::size_t T = m.a.size();
            // eta: the net length change of the masked group before run t; run t sits at
            // their sum; the groups' costs (group_cost: |eta|, or the segments that must hold
            // an edit if more) summed <= d; a pattern is cut at run t as soon as the groups
            // left cannot bring its shift to delta within the budget
            auto rec = [&](auto&& self, std::size_t t, i64 sh, i64 budget) -> void {
                const i64 rest = delta - sh;
                if (m.shifts_from[t] ? std::max<i64>(m.late_from[t], rest < 0 ? -rest : rest) > budget
                                     : rest != 0)
                    return;
                if (t == T) {
                    masks_out.push_back(static_cast<std::uint32_t>(mi));
                    terms_out.insert(terms_out.end(), at.begin(), at.end());
                    return;
                }
                const i64 lo = m.group_before[t] ? -budget : 0, hi = m.group_before[t] ? budget : 0;
                for (i64 eta = lo; eta <= hi; ++eta) {
                    const i64 cost = group_cost(m.late_before[t], eta);
                    if (cost > budget) continue;
                    const i64 shift = sh + eta;
                    for (int u = m.a[t]; u < m.b[t]; ++u)
                        at.push_back(static_cast<std::uint32_t>(u * width + shift + d));
                    self(self, t + 1, shift, budget - cost);
                    at.resize(at.size() - static_cast<std::size_t>(m.b[t] - m.a[t]));
                }
            };
            rec(rec, 0, 0, d);
        }
    }
    return plan;
}

// A probe's scratch: the layout of the indexed length, each of its segments' term at each
// shift in [-d, d] and whether the segment lies inside the probe there, and the masks'
// salts. Segment u's row is kept from one indexed length to the next while its start and
// length stay (the layouts of neighbouring lengths differ in one boundary): new_probe()
// forgets them.
struct ProbeTerms {
    std::vector<i64> st;
    std::vector<u64> term;                // term[u * (2d + 1) + shift + d]
    std::vector<std::uint8_t> inside;     // parallel to term
    std::vector<i64> row_start, row_len;  // what segment u's row holds (row_len -1: nothing)
    std::vector<u64> salt;                // mask_salt(mask)
    void new_probe() { std::fill(row_len.begin(), row_len.end(), i64(-1)); }
};

// The keys of `count` shift patterns: pattern p's mask mask_of[p] and its segments' terms
// at[p * kept ..] (Kept: kept known when compiled, 0: `kept` at run time).
template <int Kept, class Emit>
inline void pattern_keys(std::size_t count, const std::uint32_t* mask_of, const std::uint32_t* at,
                         const u64* term, const std::uint8_t* inside, const u64* salt, u64 seed, Emit& emit,
                         int kept = Kept) {
    const int K = Kept ? Kept : kept;
    for (std::size_t p = 0; p < count; ++p, at += K) {
        u64 key = seed + salt[mask_of[p]];
        unsigned ok = 1;
        for (int k = 0; k < K; ++k) {
            key += term[at[k]];
            ok &= inside[at[k]];
        }
        if (ok) emit(key, mask_of[p]);
    }
}

// Every key under which a sequence of length ls within d edits of the probe (length lr,
// prefix hashes P) is indexed, for every mask and shift pattern d edits allow (KeyPlan),
// whose segments all lie inside the probe: emit(key, mask index), in the plan's order.
// sc.st holds ls's layout afterwards.
template <class Emit>
void probe_keys(const Hasher& hs, const std::vector<u64>& P, i64 lr, i64 ls, std::size_t masks,
                const KeyPlan& plan, ProbeTerms& sc, Emit&& emit) {
    const int q = plan.q;
    const i64 d = plan.d, width = 2 * d + 1;
    layout_of(ls, q, sc.st);
    if (sc.row_len.size() != static_cast<std::size_t>(q) ||
        sc.term.size() != static_cast<std::size_t>(q * width)) {
        sc.term.assign(static_cast<std::size_t>(q * width), 0);
        sc.inside.assign(sc.term.size(), 0);
        sc.row_start.assign(static_cast<std::size_t>(q), 0);
        sc.row_len.assign(static_cast<std::size_t>(q), -1);
    }
    for (int u = 0; u < q; ++u) {
        const i64 len = sc.st[u + 1] - sc.st[u];
        if (sc.row_len[u] == len && sc.row_start[u] == sc.st[u]) continue;  // as for the last length
        sc.row_start[u] = sc.st[u];
        sc.row_len[u] = len;
        for (i64 sh = -d; sh <= d; ++sh) {
            const i64 pos = sc.st[u] + sh;
            const std::size_t k = static_cast<std::size_t>(u * width + sh + d);
            sc.inside[k] = pos >= 0 && pos + len <= lr;
            sc.term[k] = sc.inside[k] ? segment_term(hs.sub(P, pos, len), u) : 0;
        }
    }
    if (sc.salt.size() != masks) {
        sc.salt.resize(masks);
        for (std::size_t mi = 0; mi < masks; ++mi) sc.salt[mi] = mask_salt(mi);
    }
    const u64 seed = length_seed(ls);
    const std::size_t row = static_cast<std::size_t>(lr - ls + d);
    const std::vector<std::uint32_t>& mask_of = plan.mask[row];
    const std::uint32_t* at = plan.term[row].data();
    const u64* term = sc.term.data();
    const std::uint8_t* inside = sc.inside.data();
    const u64* salt = sc.salt.data();
    // the usual segment counts a key (q - d = 3 up to d = 3, 2 past it) with the loop
    // unrolled: the same sums
    switch (plan.kept) {
        case 2:
            pattern_keys<2>(mask_of.size(), mask_of.data(), at, term, inside, salt, seed, emit);
            break;
        case 3:
            pattern_keys<3>(mask_of.size(), mask_of.data(), at, term, inside, salt, seed, emit);
            break;
        default:
            pattern_keys<0>(mask_of.size(), mask_of.data(), at, term, inside, salt, seed, emit, plan.kept);
            break;
    }
}

// 2 bits a letter when every code is below 4 (A C G T), else 8.
inline int packing_bits(const SeqView& v) {
    // a code >= 4 sets a bit above the low two: OR a block together (vectorised), then test
    const i64 total = v.offsets[v.count];
    constexpr i64 kBlock = 4096;
    for (i64 t = 0; t < total; t += kBlock) {
        std::uint8_t any = 0;
        const i64 end = std::min(total, t + kBlock);
        for (i64 k = t; k < end; ++k) any = static_cast<std::uint8_t>(any | v.codes[k]);
        if (any >= 4) return 8;
    }
    return 2;
}

// The Packed set the verification reads: the letters' own when packed, else `own` built
// from the codes (2 bits a letter when every code is below 4, else 8).
inline const Packed& packed_of(const Letters& v, std::unique_ptr<Packed>& own, int threads) {
    if (v.packed()) return *v.packed();
    own = std::make_unique<Packed>(v.view(), packing_bits(v.view()), threads);
    return *own;
}

}  // namespace bioaccel::edit
