// Growth-driven amplicon clustering: each member's neighbours are searched when the growth
// reaches it, among the amplicons still free, instead of listing every pair within d first.
// See bioaccel/clusters.hpp.
//
// The index is a partition filter (csrc/include/bioaccel/packed_edit.hpp's segment
// masking, Pass-Join's generalised): an indexed sequence of length l is cut into q
// segments; d edits touch at most d of them, so for some mask M of d segments the other
// runs appear unchanged in the partner, each shifted by the net length change of the
// masked groups before it. Every node is indexed under its C(q, d) keys (one per mask: the
// sum of its unmasked segments' terms); a probe of y computes, for every length within d of
// |y|, every mask's key at every shift pattern d edits allow (edit::KeyPlan, enumerated
// once per length difference; the probe sums its segments' terms at those shifts).
// Complete for the threshold; the keys span q - d segments, so members of one amplicon
// family (which all share any one segment) meet only when their differences fall in the
// same d segments. Nodes shorter than q (an empty segment) are candidates of every probe
// within d of their length.
//
// With OTU breaking a member grows only into lighter (or as heavy) amplicons: nodes are in
// decreasing abundance and each key's run is in node order, so the scan starts at the
// member's abundance.
//
// At d = 1 a key leaves one segment masked, and a candidate sharing the other three may
// still differ from the probe by many edits inside it (in a dense family, most of them). Each entry therefore
// carries a tag: a byte-hash of each quarter of its masked segment. One edit leaves the quarters before it in
// place and those after it shifted by the length difference, so a partner within 1 edit matches at least
// three quarters that way (a prefix unshifted, a suffix shifted); the scan checks this
// before a candidate is visited (a hash collision only lets a candidate through; the
// verification decides). At d >= 2 a candidate's 3-gram counts are compared with the
// probe's first (the q-gram lemma, edit::GramCounts), which turns most family members
// more than d edits away before Landau-Vishkin (benchmarks/bench_growth_filters.py).
//
// Taken amplicons are dropped from the index as the probes meet them (each key's run is
// compacted in place), so a run is scanned past a taken amplicon at most once.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "bioaccel/clusters.hpp"
#include "bioaccel/common.hpp"
#include "bioaccel/huge_pages.hpp"
#include "bioaccel/packed_edit.hpp"
#include "bioaccel/stop.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace bioaccel::clusters {
namespace {

using edit::GramCounts;
using edit::Hasher;
using edit::layout_of;
using edit::Letters;
using edit::lv_distance;
using edit::Mask;
using edit::masks_of;
using edit::mix;
using edit::Packed;
using edit::probe_keys;
using edit::ProbeTerms;
using edit::sequence_keys;
using u64 = std::uint64_t;
using u32 = std::uint32_t;
using i64 = std::int64_t;

constexpr u32 kNoNode = 0xFFFFFFFFu;  // amplicons are fewer (node indices are u32)

// One thread's scratch for probes: prefix hashes, the keys and their terms (ProbeTerms),
// and per node the probe that last met it.
struct Probe {
    std::vector<u64> prefix, keys;        // keys: the probe's keys (top 32 bits)
    std::vector<u64> tags;                // at d = 1: per key, its masked segment's quarter tags
                                          // unshifted (low 32 bits) and shifted (high 32 bits)
    std::vector<std::uint8_t> tag_valid;  // which quarters lie inside the probe (bits 0-3,
                                          // 4-7 shifted)
    std::vector<i64> part;                // scratch: a masked segment's quarters
    std::vector<u32> at;                  // and where their buckets start
    std::vector<u32> live;                // the keys whose bit is set in the key set
    ProbeTerms terms;                     // the indexed length's layout and its segments' terms
    std::vector<std::uint8_t> letters;    // the probe's codes, when the letters are packed
    std::vector<u32> stamp;
    u32 tick = 0;
    explicit Probe(i64 n) { assign_huge(stamp, static_cast<std::size_t>(n), u32(0)); }
    void next() {
        if (++tick == 0) {
            std::fill(stamp.begin(), stamp.end(), 0);
            tick = 1;
        }
    }
    bool first_visit(u32 node) {
        if (stamp[node] == tick) return false;
        stamp[node] = tick;
        return true;
    }
};

// The quarters' byte-hash tag of s[start, start + len) placed at `shift` in a sequence of
// length `total` (prefix hashes P): byte p for quarter p, and in `valid` bit p when the
// quarter lies inside that sequence.
u32 quarter_tags(const Hasher& hs, const std::vector<u64>& P, i64 total, i64 start, i64 len, i64 shift,
                 std::vector<i64>& part, unsigned& valid) {
    layout_of(len, 4, part);
    u32 tag = 0;
    valid = 0;
    for (int p = 0; p < 4; ++p) {
        const i64 pos = start + part[p] + shift, plen = part[p + 1] - part[p];
        if (pos < 0 || pos + plen > total) continue;
        valid |= 1u << p;
        const u64 h = mix(hs.sub(P, pos, plen) + static_cast<u64>(p + 1) * 0xD6E8FEB86659FD93ULL);
        tag |= static_cast<u32>(h >> 56) << (8 * p);
    }
    return tag;
}

// Whether a tag may be within one edit of the probe's quarters (see the file's comment):
// the unshifted quarters matching from the first on and the shifted ones from the last
// back cover at least three of the four.
inline bool tags_admit(u32 tag, u64 probe_tags, unsigned valid) {
    const u32 a = static_cast<u32>(probe_tags) ^ tag, b = static_cast<u32>(probe_tags >> 32) ^ tag;
    int prefix = 0, suffix = 0;
    while (prefix < 4 && (valid >> prefix & 1u) && ((a >> (8 * prefix)) & 0xFFu) == 0) ++prefix;
    while (suffix < 4 && (valid >> (7 - suffix) & 1u) && ((b >> (8 * (3 - suffix))) & 0xFFu) == 0) ++suffix;
    return prefix + suffix >= 3;
}

// Segments for threshold d: keys on q - d segments at C(q, d) keys a node. Measured on
// simulated 16S V4 sets (10^5 uniques, benchmarks/amplicon_sim.py): q = d + 3 probes
// least and verifies few enough up to d = 3 (d + 2: 2-5x the candidates; d + 4: 2-3x the
// probes); past it the keys a node and the shift patterns a probe grow as d^3. (With the
// key plan and the q-gram test since, q = d + 3 is still the fastest at d = 2 and 3: the
// growth at 10^5, d = 3: d + 2 1.71 s, d + 3 0.95 s, d + 4 1.81 s.)

// k with 2^k nearest x (x >= 1) in ratio: log2(x) rounded.
int nearest_log2(i64 x) {
    return static_cast<int>(std::lround(std::log2(static_cast<double>(x))));
}

// The most first-pass keys the segment index keeps for its second pass (4 bytes each).
constexpr i64 kFirstKeysMost = i64(1) << 24;

int segments_for(i64 d) {
    if (d <= 3) return static_cast<int>(d + 3);
    if (d <= 6) return static_cast<int>(d + 2);
    return static_cast<int>(d + 1);
}

class SegmentIndex {
public:
    // Index the nodes with include[node] != 0 (all when include is null).
    SegmentIndex(const Letters& v, const std::uint8_t* include, i64 d, int q)
        : v_(v),
          d_(d),
          q_(q),
          masks_(masks_of(q, static_cast<int>(d))),
          plan_(edit::key_plan(q, static_cast<int>(d), masks_)),
          hs_(v.longest() + 1),
          tagged_(d == 1) {
        if (q < d + 1) throw std::invalid_argument("segments must be at least max_distance + 1");
        for (const Mask& m : masks_) {  // at d = 1: the segment each mask leaves out
            int left_out = 0;
            for (std::size_t t = 0; t < m.a.size(); ++t)
                if (m.a[t] == left_out) left_out = m.b[t];
            masked_.push_back(left_out);
        }
        const i64 n = v.count(), per = static_cast<i64>(masks_.size());
        present_.assign(static_cast<std::size_t>(v.longest() + 1), 0);
        i64 entries = 0;
        for (i64 s = 0; s < n; ++s) {
            if (include && !include[s]) continue;
            ++present_[v.length(s)];
            if (v.length(s) < q_)
                short_.push_back(static_cast<u32>(s));
            else
                entries += per;
        }
        if (entries >= (i64(1) << 32))
            throw std::invalid_argument("too many amplicons for the segment index");
        // an entry is 4 bytes: the key's low 32 - bits_ bits (its top bits_ are the bucket's)
        // and node_bits_ for the node, node_bits_ <= bits_ (all ones: a dropped entry)
        node_bits_ = 1;
        while ((i64(1) << node_bits_) <= n) ++node_bits_;
        // buckets: the power of two nearest (in ratio) a quarter of the entries, 2.8-5.7
        // entries a bucket (the next power up held 1.4-2.8: at 10^6 amplicons and d = 3 it
        // took 32 MB where this takes 16)
        bits_ = std::max(1, nearest_log2(std::max<i64>(entries / 4, 2)));
        while (bits_ < node_bits_ && bits_ < 31) ++bits_;
        if (node_bits_ > bits_) throw std::invalid_argument("too many amplicons for the segment index");
        dead_ = (u32(1) << node_bits_) - 1;
        rest_mask_ = (u32(1) << (32 - bits_)) - 1;
        const i64 nb = i64(1) << bits_;
        assign_huge(dir_, static_cast<std::size_t>(nb) + 1, u32(0));
        // the key set: the power of two nearest 8 bits an entry (5.7-11.3)
        key_bits_ = std::min(32, std::max(6, nearest_log2(8 * std::max<i64>(entries, 1))));
        assign_huge(key_set_, static_cast<std::size_t>(1) << (key_bits_ - 6), u64(0));
        assign_huge(entry_, static_cast<std::size_t>(entries), u32(0));
        if (tagged_) assign_huge(tag_, static_cast<std::size_t>(entries), u32(0));
        std::vector<u64> P, keys(static_cast<std::size_t>(per)), terms;
        std::vector<std::uint8_t> scratch;  // a packed sequence's codes
        std::vector<i64> st, part;
        // the keys of the first pass, in node order, for the second (without tags, which
        // need each node's prefix hashes again): hashed once, 4 bytes an entry a while, as
        // long as that is at most kFirstKeysMost entries; past it (10^6 amplicons at d = 3:
        // 80 MB beside the entries, the index's peak) the second pass hashes them again
        const bool keep_first = !tagged_ && entries <= kFirstKeysMost;
        std::vector<u32> first(keep_first ? static_cast<std::size_t>(entries) : 0);
        for (int pass = 0; pass < 2; ++pass) {
            // pass 1 places each entry at dir_[bucket] and moves it on (each bucket's next
            // slot), so after it dir_[b] is bucket b + 1's start: shifted back below
            if (pass == 1)
                for (i64 b = 0; b < nb; ++b) dir_[b + 1] += dir_[b];
            std::size_t at = 0;
            for (i64 s = 0; s < n; ++s) {
                if ((s & 4095) == 0) throw_if_stopped();  // built before any thread starts
                const i64 len = v.length(s);
                if ((include && !include[s]) || len < q_) continue;
                if (pass == 1 && keep_first) {
                    for (i64 mi = 0; mi < per; ++mi) {
                        const u64 hk = first[at++];
                        entry_[dir_[hk >> (32 - bits_)]++] = entry_of(hk, static_cast<u32>(s));
                    }
                    continue;
                }
                Hasher::prefix(v.seq(s, scratch), len, P);
                layout_of(len, q_, st);
                sequence_keys(hs_, P, len, st, masks_, keys.data(), terms);
                for (i64 mi = 0; mi < per; ++mi) {
                    const u64 hk = keys[mi] >> 32;
                    const u64 b = hk >> (32 - bits_);
                    if (pass == 0) {
                        ++dir_[b + 1];
                        key_set_[(hk & ((u64(1) << key_bits_) - 1)) >> 6] |= key_bits(hk);
                        if (keep_first) first[at++] = static_cast<u32>(hk);
                        continue;
                    }
                    if (!tagged_) {
                        entry_[dir_[b]++] = entry_of(hk, static_cast<u32>(s));
                        continue;
                    }
                    const int u = masked_[mi];
                    unsigned valid = 0;
                    tag_[dir_[b]] = quarter_tags(hs_, P, len, st[u], st[u + 1] - st[u], 0, part, valid);
                    entry_[dir_[b]++] = entry_of(hk, static_cast<u32>(s));
                }
            }
        }
        std::vector<u32>().swap(first);
        for (i64 b = nb; b > 0; --b) dir_[b] = dir_[b - 1];
        dir_[0] = 0;
        std::vector<std::pair<u32, u32>> scratch32;
        for (i64 b = 0; b < nb; ++b) {
            if ((b & 65535) == 0) throw_if_stopped();
            if (tagged_)
                sort_with_tags(tag_, dir_[b], dir_[b + 1], scratch32);
            else
                std::sort(entry_.begin() + dir_[b], entry_.begin() + dir_[b + 1]);
        }
    }

    // visit(node) once for every indexed node >= from that may lie within d of node r (and
    // some that do not: the caller verifies), in no particular order. With Compact, nodes
    // for which dead(node) holds are dropped from the index on the way (one thread only);
    // without it the index is read only.
    template <bool Compact, class Dead, class Visit>
    void candidates(i64 r, u32 from, Probe& pr, Dead&& dead, Visit&& visit) {
        pr.next();
        pr.keys.clear();
        pr.tags.clear();
        pr.tag_valid.clear();
        const i64 lr = v_.length(r), d = d_;
        Hasher::prefix(v_.seq(r, pr.letters), lr, pr.prefix);
        pr.terms.new_probe();
        const i64 top = static_cast<i64>(present_.size()) - 1;
        for (i64 ls = std::max<i64>(0, lr - d); ls <= std::min(top, lr + d); ++ls) {
            if (!present_[ls] || ls < q_) continue;
            const i64 delta = lr - ls;
            probe_keys(hs_, pr.prefix, lr, ls, masks_.size(), plan_, pr.terms, [&](u64 key, std::size_t mi) {
                pr.keys.push_back(key >> 32);
                if (tagged_) {  // the masked segment: unshifted before the edit, by delta after
                    const int u = masked_[mi];
                    const i64 a = pr.terms.st[u], len = pr.terms.st[u + 1] - a;
                    unsigned va = 0, vb = 0;
                    const u64 ta = quarter_tags(hs_, pr.prefix, lr, a, len, 0, pr.part, va);
                    const u64 tb = quarter_tags(hs_, pr.prefix, lr, a, len, delta, pr.part, vb);
                    pr.tags.push_back(ta | tb << 32);
                    pr.tag_valid.push_back(static_cast<std::uint8_t>(va | vb << 4));
                }
            });
        }
        // the keys' buckets, then their runs, fetched ahead of the scans (random reads)
        pr.at.resize(pr.keys.size());
        // Fetches in pipelines (as many in flight as a core keeps; at d = 3 a probe has
        // hundreds of keys): first each key's bits in the key set, kAhead keys ahead, which
        // keeps the keys that may be indexed (a quarter of them on the 16S V4 set of 10^5 at
        // d = 2, counted once with a temporary counter); then
        // for those, a key's bucket 2 x kAhead keys before its scan and its run's start
        // kAhead before. 16 rather than 8 ahead: the growth at 10^5, d = 3, 3-4 % faster
        // (the key set and the buckets are L3 reads at that size; a short loop's 8 keys
        // ahead came back too late).
        const std::size_t K = pr.keys.size();
        constexpr std::size_t kAhead = 16;
        const u64 key_mask = (u64(1) << key_bits_) - 1;
        auto set_word = [&](std::size_t k) { return &key_set_[(pr.keys[k] & key_mask) >> 6]; };
        // without a branch a key (which keys pass is not predictable): each is written,
        // and the count moves on only for those that pass
        pr.live.resize(K + 1);
        std::size_t L = 0;
        for (std::size_t k = 0; k < std::min(K, kAhead); ++k) __builtin_prefetch(set_word(k));
        for (std::size_t k = 0; k < K; ++k) {
            if (k + kAhead < K) __builtin_prefetch(set_word(k + kAhead));
            const u64 want = key_bits(pr.keys[k]);
            pr.live[L] = static_cast<u32>(k);
            L += (*set_word(k) & want) == want;
        }
        auto bucket_of = [&](std::size_t t) { return pr.keys[pr.live[t]] >> (32 - bits_); };
        auto fetch_run = [&](std::size_t t) {
            pr.at[pr.live[t]] = dir_[bucket_of(t)];
            __builtin_prefetch(&entry_[pr.at[pr.live[t]]]);
        };
        for (std::size_t t = 0; t < std::min(L, 2 * kAhead); ++t) __builtin_prefetch(&dir_[bucket_of(t)]);
        for (std::size_t t = 0; t < std::min(L, kAhead); ++t) fetch_run(t);
        for (std::size_t t = 0; t < L; ++t) {
            if (t + 2 * kAhead < L) __builtin_prefetch(&dir_[bucket_of(t + 2 * kAhead)]);
            if (t + kAhead < L) fetch_run(t + kAhead);
            scan<Compact>(pr.live[t], pr.at[pr.live[t]], from, pr, dead, visit);
        }
        if (!short_.empty()) {
            std::size_t w = 0;
            for (std::size_t k = 0; k < short_.size(); ++k) {
                const u32 x = short_[k];
                if (Compact && dead(x)) continue;
                if (Compact) short_[w++] = x;
                if (x >= from && std::llabs(v_.length(x) - lr) <= d && pr.first_visit(x)) visit(x);
            }
            if (Compact) short_.resize(w);
        }
    }

    // Node x will never be a candidate again (the growth took it): a length whose indexed
    // nodes are all taken is no longer probed (the late probes of a growth skip most
    // lengths within d). Call at most once a node, and only for indexed nodes.
    void drop(u32 x) { --present_[v_.length(x)]; }

private:
    // Sort the entries lo..hi, their tags (parallel to them) moved along (`both`: scratch).
    template <class Tag>
    void sort_with_tags(std::vector<Tag>& tags, u32 lo, u32 hi, std::vector<std::pair<u32, Tag>>& both) {
        both.clear();
        for (u32 x = lo; x < hi; ++x) both.emplace_back(entry_[x], tags[x]);
        std::sort(both.begin(), both.end());
        for (std::size_t k = 0; k < both.size(); ++k) {
            entry_[lo + k] = both[k].first;
            tags[lo + k] = both[k].second;
        }
    }

    // The run of probe key k: visit its live nodes >= from (that its tag admits, at d = 1).
    template <bool Compact, class Dead, class Visit>
    void scan(std::size_t k, u32 bucket_start, u32 from, Probe& pr, Dead& dead, Visit& visit) {
        const u64 hk = pr.keys[k];
        const u64 b = hk >> (32 - bits_);
        const u32 rest = static_cast<u32>(hk) & rest_mask_;
        u32* const base = entry_.data();
        u32* const end = base + dir_[b + 1];
        u32* x = lower_entry(base + bucket_start, end, entry_of(hk, std::min(from, dead_)));
        u32* w = x;
        const u64 probe_tags = tagged_ ? pr.tags[k] : 0;
        const unsigned valid = tagged_ ? pr.tag_valid[k] : 0;
        for (; x < end && (*x >> node_bits_) == rest; ++x) {
            const u32 node = *x & dead_;
            if (node == dead_) break;
            const u32 tag = tagged_ ? tag_[x - base] : 0;
            if (Compact) {
                if (dead(node)) continue;
                if (tagged_) tag_[w - base] = tag;
                *w++ = *x;
            }
            if (tagged_ && !tags_admit(tag, probe_tags, valid)) continue;
            if (pr.first_visit(node)) visit(node);
        }
        if (Compact)
            for (; w < x; ++w) *w = entry_of(hk, dead_);
    }

    // The first entry of [lo, hi) (sorted) not below `value`. A
    // galloping search from lo: a probe's run starts near its bucket's start and its first
    // live entry near the run's start (on the 16S V4 sets, 10^5 amplicons at d = 2: buckets
    // of 39 entries and 0.4 entries before `from`, as met by the probes: counted once with a
    // temporary counter), so a binary search
    // over the whole bucket would fetch entries far from the answer.
    u32* lower_entry(u32* lo, u32* hi, u32 value) const {
        if (lo >= hi || *lo >= value) return lo;
        std::ptrdiff_t step = 1;  // *lo < value throughout
        u32* top = hi;
        for (;;) {
            if (hi - lo <= step) break;
            u32* probe = lo + step;
            if (*probe >= value) {
                top = probe;
                break;
            }
            lo = probe;
            step *= 2;
        }
        // the answer lies in (lo, top]
        std::ptrdiff_t count = top - lo - 1;
        ++lo;
        while (count > 0) {
            const std::ptrdiff_t half = count / 2;
            u32* mid = lo + half;
            if (*mid < value) {
                lo = mid + 1;
                count -= half + 1;
            } else {
                count = half;
            }
        }
        return lo;
    }

    const Letters v_;
    i64 d_;
    int q_;
    std::vector<Mask> masks_;
    edit::KeyPlan plan_;  // the shift patterns a probe tries, per length difference
    Hasher hs_;
    bool tagged_;              // d = 1: entries carry their masked segment's quarter tags
    std::vector<int> masked_;  // at d = 1: the segment each mask leaves out
    std::vector<u32> tag_;     // parallel to entry_ when tagged_
    int bits_ = 1;
    // The key set, a blocked Bloom filter: for a key, the word of its low key_bits_ bits
    // (8 bits an indexed entry or more), and in it the two bits of key_bits(key)
    int key_bits_ = 6;
    std::vector<u64> key_set_;
    // A key's two bits in its word: its low 6 bits, and the top 6 of its product with an odd
    // constant. Two bits in one word pass 1 in 20 of the keys no entry has (one bit: 1 in 9),
    // for the same single fetch.
    static u64 key_bits(u64 hk) {
        return (u64(1) << (hk & 63)) | (u64(1) << ((hk * 0x9E3779B97F4A7C15ULL) >> 58));
    }
    std::vector<i64> present_;  // indexed nodes of each length (not yet dropped: see drop)
    std::vector<u32> dir_;
    // (the key's bits below its bucket's, node), sorted; bucket b is entries dir_[b]..dir_[b+1]
    std::vector<u32> entry_;
    int node_bits_ = 1;
    u32 dead_ = 1;       // a dropped entry's node (all node_bits_ ones): runs end at the first one
    u32 rest_mask_ = 0;  // the key's bits an entry keeps
    u32 entry_of(u64 hk, u32 node) const { return (static_cast<u32>(hk) & rest_mask_) << node_bits_ | node; }
    std::vector<u32> short_;  // indexed nodes shorter than q (an empty segment matches anything)
};

// Whether the q-gram test runs before Landau-Vishkin (d >= 2; edit::GramCounts): gram_test
// -1 (the default: yes) or 1 yes, 0 no (for the tests and benchmarks/bench_growth_filters.py:
// the growth is the same either way). It replaced the parts filter (each index entry's masked
// segments cut in parts and byte-hashed into an 8-byte tag): once the probes' keys came from
// the key plan, the gram test alone was faster at every size measured (the growth with the
// gram test, parts filter off / on: 10^5 amplicons 0.52 / 0.93 s at d = 2, 1.04 / 2.20 s at
// d = 3; 3 x 10^5 2.31 / 4.11 s and 4.82 / 9.14 s; 10^6 at d = 2 11.5 / 19.9 s), with half
// the index's memory.
bool gram_test_on(i64 d, int gram_test) {
    if (gram_test < -1 || gram_test > 1) throw std::invalid_argument("gram_test must be -1, 0 or 1");
    return d >= 2 && gram_test != 0;
}

void check_view(const Letters& v) {
    if (v.count() >= static_cast<i64>(kNoNode)) throw std::invalid_argument("at most 2^32 - 2 amplicons");
    if (v.packed()) return;
    const SeqView& b = v.view();
    for (i64 s = 0; s < b.count; ++s)
        if (b.offsets[s + 1] < b.offsets[s]) throw std::invalid_argument("offsets decrease");
}

}  // namespace

Growth swarm_grow_search(const Letters& v, const std::uint64_t* abundance, std::int64_t d, bool breaking,
                         bool swarm_differences, int gram_test) {
    if (d < 1 || d > 255) throw std::invalid_argument("max_distance must be 1 to 255");
    check_view(v);
    const i64 n = v.count();
    std::unique_ptr<Packed> own;
    const Packed& S = edit::packed_of(v, own, 1);
    // no two amplicons are more than the longest length apart: a larger d finds the same
    // partners, with masks and shift patterns that grow as d^3
    i64 longest = 0;
    for (i64 s = 0; s < n; ++s) longest = std::max(longest, v.length(s));
    const i64 reach = std::max<i64>(1, std::min(d, longest));
    SegmentIndex index(v, nullptr, reach, segments_for(reach));
    const std::unique_ptr<GramCounts> grams =
        gram_test_on(reach, gram_test) ? std::make_unique<GramCounts>(v) : nullptr;
    Probe probe(n);
    Growth out;
    out.order.reserve(static_cast<std::size_t>(n));
    out.found.reserve(static_cast<std::size_t>(n));
    out.generation.assign(static_cast<std::size_t>(n), 0);
    out.radius.assign(static_cast<std::size_t>(n), 0);  // (no parent: 8 bytes a node nobody reads)
    std::vector<std::uint8_t> taken;
    assign_huge(taken, static_cast<std::size_t>(n), std::uint8_t(0));
    std::vector<std::uint32_t> next;
    std::vector<std::pair<i64, i64>> hits;  // (node, differences) found by one member
    std::vector<u32> cand;
    std::vector<i64> buf, H, E;
    std::vector<std::uint8_t> dirs, letters_u, letters_x;  // packed letters decoded for swarm_align
    auto dead = [&](u32 x) { return taken[x] != 0; };
    // nodes are in decreasing abundance: those of abundance <= node u's start at the first
    // node of u's abundance (a binary search a member, not 4 bytes a node)
    for (i64 u = 1; u < n; ++u)
        if (abundance[u] > abundance[u - 1])
            throw std::invalid_argument("amplicons must be in decreasing abundance (swarm's order)");
    auto lightest_from = [&](i64 u) {
        return static_cast<u32>(std::partition_point(abundance, abundance + u,
                                                     [&](std::uint64_t a) { return a > abundance[u]; }) -
                                abundance);
    };
    for (i64 seed = 0; seed < n; ++seed) {
        if (taken[seed]) continue;
        taken[seed] = 1;
        index.drop(static_cast<u32>(seed));
        out.starts.push_back(static_cast<i64>(out.order.size()));
        out.order.push_back(static_cast<u32>(seed));
        out.found.push_back(static_cast<u32>(seed));
        std::size_t begin = out.order.size() - 1, end = out.order.size();
        while (begin < end) {
            next.clear();
            for (std::size_t k = begin; k < end; ++k) {
                if ((k & 255) == 0) throw_if_stopped();
                const i64 u = out.order[k];
                hits.clear();
                cand.clear();
                // nodes from lightest_from[u] on are as light as u or lighter (breaking)
                index.candidates<true>(u, breaking ? lightest_from(u) : 0, probe, dead,
                                       [&](u32 x) { cand.push_back(x); });
                // verified with the partners' letters fetched a few candidates ahead
                constexpr std::size_t ahead = 6;
                if (grams) grams->keep_within(u, cand, d);  // the q-gram test turns most away
                for (std::size_t c = 0; c < std::min(ahead, cand.size()); ++c) S.prefetch(cand[c]);
                for (std::size_t c = 0; c < cand.size(); ++c) {
                    if (c + ahead < cand.size()) S.prefetch(cand[c + ahead]);
                    const u32 x = cand[c];
                    i64 e = lv_distance(S, u, x, d, buf);
                    if (e > d) continue;
                    if (swarm_differences && e >= 2) {
                        // swarm's count (never below the edit distance), u as its query
                        e = swarm_align(v.seq(u, letters_u), v.length(u), v.seq(x, letters_x), v.length(x), d,
                                        false, H, E, dirs, e)
                                .diffs;
                        if (e > d) continue;
                    }
                    hits.emplace_back(x, e);
                }
                std::sort(hits.begin(), hits.end());
                for (const auto& [x, e] : hits) {
                    taken[x] = 1;
                    index.drop(static_cast<u32>(x));
                    out.generation[x] = out.generation[u] + 1;
                    out.radius[x] = out.radius[u] + e;
                    next.push_back(static_cast<u32>(x));
                    out.found.push_back(static_cast<u32>(x));
                }
            }
            std::sort(next.begin(), next.end());
            begin = end;
            out.order.insert(out.order.end(), next.begin(), next.end());
            end = out.order.size();
        }
    }
    out.starts.push_back(static_cast<i64>(out.order.size()));
    return out;
}

std::vector<std::int64_t> nearest_in_set(const Letters& v, const std::uint8_t* in_set, std::int64_t d,
                                         int threads, int gram_test) {
    if (d < 0 || d > 255) throw std::invalid_argument("max_distance must be 0 to 255");
    check_view(v);
    const i64 n = v.count();
    const int nt = resolve_threads(threads);
    std::unique_ptr<Packed> own;
    const Packed& S = edit::packed_of(v, own, nt);
    SegmentIndex index(v, in_set, d, segments_for(d));
    const std::unique_ptr<GramCounts> grams =
        gram_test_on(d, gram_test) ? std::make_unique<GramCounts>(v) : nullptr;
    std::vector<std::int64_t> best(static_cast<std::size_t>(n), -1);
#ifdef _OPENMP
#pragma omp parallel num_threads(nt)
#endif
    {
        Probe probe(n);
        std::vector<u32> cand;
        std::vector<i64> buf;
        auto never = [](u32) { return false; };
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 64)
#endif
        for (i64 r = 0; r < n; ++r) {
            if (in_set[r] || stop_requested()) continue;  // stopped: the rest skipped
            cand.clear();
            index.candidates<false>(r, 0, probe, never, [&](u32 x) { cand.push_back(x); });
            std::sort(cand.begin(), cand.end());
            constexpr std::size_t ahead = 6;            // partners' letters fetched ahead, as in the growth
            if (grams) grams->keep_within(r, cand, d);  // the q-gram test first, as in the growth
            for (std::size_t c = 0; c < std::min(ahead, cand.size()); ++c) S.prefetch(cand[c]);
            for (std::size_t c = 0; c < cand.size(); ++c) {
                if (c + ahead < cand.size()) S.prefetch(cand[c + ahead]);
                if (lv_distance(S, r, cand[c], d, buf) <= d) {
                    best[r] = cand[c];
                    break;
                }
            }
        }
    }
    throw_if_stopped();  // outside the parallel region
    return best;
}

namespace {

// The greedy method's rule for a candidate centroid at `e` edits, m the longer length,
// against the best so far (best_e edits at longer length best_m; best_m == 0: none yet):
// the most edits it may have to be taken. It must reach the identity num/den
// ((m - e) den >= num m) and beat the best: a higher identity, or an equal one when it
// comes before the best (`earlier`). -1: none will do.
i64 greedy_allowed(i64 m, i64 num, i64 den, i64 best_e, i64 best_m, bool earlier) {
    if (m <= 0) return -1;
    i64 k = m * (den - num) / den;  // (m - e) den >= num m  <=>  e den <= m (den - num)
    if (best_m > 0) {
        // (m - e) / m against (best_m - best_e) / best_m:  e best_m <(=) m best_e
        const i64 room = m * best_e;
        k = std::min(k, earlier ? room / best_m : (room - 1 < 0 ? -1 : (room - 1) / best_m));
    }
    return k;
}

// A sequence's 4-gram profile: counts of its 4-grams (letters folded to 2 bits: a coarser
// alphabet only brings profiles closer), saturated at 255. One edit changes at most 4
// 4-grams of each sequence, so the L1 distance of two true profiles is at most 8 per edit;
// folding and saturating never increase it, so edits >= L1 / 8 holds for these profiles.
// The same for 3-grams (6 per edit) in a quarter of the bytes: tried first, since the
// 4-gram profiles of a few thousand centroids no longer fit a core's cache.
template <int Gram>
void gram_profile(const std::uint8_t* s, i64 len, std::uint8_t* out) {
    constexpr unsigned size = 1u << (2 * Gram);
    std::fill(out, out + size, std::uint8_t(0));
    unsigned g = 0;
    for (i64 p = 0; p < len; ++p) {
        g = ((g << 2) | (s[p] & 3u)) & (size - 1);
        if (p >= Gram - 1 && out[g] != 255) ++out[g];
    }
}
template <int Gram>
inline int profile_l1(const std::uint8_t* a, const std::uint8_t* b) {
    int sum = 0;
    for (int t = 0; t < (1 << (2 * Gram)); ++t) sum += std::abs(int(a[t]) - int(b[t]));
    return sum;
}
constexpr int kGram = 4, kProfile = 1 << (2 * kGram), kShortGram = 3, kShortProfile = 1 << (2 * kShortGram);

// The grams of profile a that profile b lacks: sum over grams of max(0, a - b). An alignment
// of all of a within a stretch of b with e edits leaves at most Gram e of a's grams without a
// partner (each edit breaks at most Gram of them, and the stretch's grams are among b's), so
// e >= missing / Gram; folding letters and saturating counts only lower the sum.
template <int Gram>
inline int profile_missing(const std::uint8_t* a, const std::uint8_t* b) {
#if defined(__SSE2__)
    __m128i acc = _mm_setzero_si128();
    for (int t = 0; t < (1 << (2 * Gram)); t += 16) {
        const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a + t));
        const __m128i y = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + t));
        acc = _mm_add_epi64(acc, _mm_sad_epu8(_mm_subs_epu8(x, y), _mm_setzero_si128()));
    }
    return _mm_cvtsi128_si32(acc) + _mm_cvtsi128_si32(_mm_srli_si128(acc, 8));
#else
    int sum = 0;
    for (int t = 0; t < (1 << (2 * Gram)); ++t) sum += std::max(0, int(a[t]) - int(b[t]));
    return sum;
#endif
}

}  // namespace

std::int64_t infix_distance(const std::uint8_t* p, std::int64_t m, const std::uint8_t* t, std::int64_t n,
                            std::int64_t k) {
    if (k < 0) return k + 1;
    if (m == 0) return 0;
    if (n < m - k) return k + 1;  // the stretch holds at most n letters of p
    // rows: p's letters; columns: t's; row 0 is 0 everywhere (a free start), the answer the
    // least of row m (a free end). A cell (i, j) within k lies on a diagonal j - i in
    // [-k, n - m + k]; each row is computed over that band and the rest reads as too far.
    const std::int32_t far = static_cast<std::int32_t>(k + 1);
    std::vector<std::int32_t> prev(static_cast<std::size_t>(n + 2), 0),
        cur(static_cast<std::size_t>(n + 2), far);
    std::int64_t prev_lo = 0, prev_hi = n;  // row 0: every column, 0
    for (std::int64_t i = 1; i <= m; ++i) {
        const std::int64_t lo = std::max<std::int64_t>(0, i - k), hi = std::min(n, i + (n - m) + k);
        if (lo > hi) return k + 1;
        auto up = [&](std::int64_t j) { return (j >= prev_lo && j <= prev_hi) ? prev[j] : far; };
        std::int32_t left = far, best = far;
        for (std::int64_t j = lo; j <= hi; ++j) {
            std::int32_t v;
            if (j == 0) {
                v = static_cast<std::int32_t>(std::min<std::int64_t>(i, k + 1));  // p[0, i) deleted
            } else {
                const std::int32_t diag = up(j - 1) + (p[i - 1] != t[j - 1] ? 1 : 0);
                v = std::min({diag, up(j) + 1, left + 1});
            }
            v = std::min(v, far);
            cur[j] = v;
            left = v;
            best = std::min(best, v);
        }
        if (best > k) return k + 1;
        std::swap(prev, cur);
        prev_lo = lo;
        prev_hi = hi;
    }
    std::int32_t best = far;
    for (std::int64_t j = prev_lo; j <= prev_hi; ++j) best = std::min(best, prev[j]);
    return best;
}

GreedyCentroids greedy_search(const Letters& v, std::int64_t num, std::int64_t den, int threads,
                              bool overhangs_free) {
    if (den <= 0 || num <= 0 || num > den) throw std::invalid_argument("identity must be in (0, 1]");
    check_view(v);
    const i64 n = v.count();
    const int nt = resolve_threads(threads);
    std::unique_ptr<Packed> own;
    const Packed& S = edit::packed_of(v, own, nt);
    GreedyCentroids out;
    out.centroid.assign(static_cast<std::size_t>(n), -1);
    out.distance.assign(static_cast<std::size_t>(n), 0);
    if (n == 0) return out;
    // Each amplicon first looks for the centroids within `near` edits: a Pass-Join index
    // of the centroids (rebuilt as they accumulate; the newest few, not yet in it, are
    // tried directly). The best centroid of most amplicons is among them, and then no
    // centroid further away can have a higher identity (checked for each amplicon below,
    // not assumed). Otherwise every centroid is tried: the length difference, the 3-gram and
    // 4-gram profile bounds, then Landau-Vishkin, the threshold shrinking as better
    // centroids are found. (16S V4 set of 10^5 amplicons at 97 %: 44 % of the amplicons
    // try every centroid, 86 M pairs; the profiles leave 0.1 M for Landau-Vishkin.)
    i64 longest = 0;
    for (i64 s = 0; s < n; ++s) longest = std::max(longest, v.length(s));
    // near: 2, or 1 where no pair can pass at 2 edits (a cheaper index)
    constexpr i64 kNear = 2;
    const i64 near = std::min(kNear, longest * (den - num) / den + 1);
    std::vector<std::uint8_t> is_centroid(static_cast<std::size_t>(n), 0);
    std::vector<u32> centroids;
    // the centroids' 4-gram and 3-gram profiles (in the order of `centroids`), the probe's
    std::vector<std::uint8_t> profiles, probe_profile(kProfile), short_profiles, probe_short(kShortProfile);
    std::unique_ptr<SegmentIndex> index;
    std::size_t indexed = 0;  // centroids[0, indexed) are in the index
    Probe probe(n);
    std::vector<u32> cand;
    std::vector<i64> buf;
    auto never = [](u32) { return false; };
    struct Best {
        i64 node = -1, e = 0, m = 0;
        i64 cap = std::numeric_limits<i64>::max();  // no centroid beats it at more edits
    };
    // the most edits a pair of longer length m may have (identity alone)
    std::vector<i64> most_of(static_cast<std::size_t>(longest) + 1);
    for (i64 m = 0; m <= longest; ++m) most_of[m] = m * (den - num) / den;
    std::vector<i64> centroid_length;  // parallel to `centroids`
    // the probe's codes, and (infix identity only: the edit distances read bytes) the
    // centroids' own, a byte each: only theirs, not every amplicon's
    std::vector<std::uint8_t> probe_scratch, centroid_codes;
    std::vector<i64> centroid_at;  // parallel to `centroids`: where its codes start
    const std::uint8_t* probe_codes = nullptr;
    // centroids[c] tried against b for amplicon r: b becomes the centroid of the highest
    // identity, on a tie the earlier, whatever order the centroids are tried in
    // (the tests without a division first: the division in greedy_allowed was a third of
    // the time when it came first)
    // overhangs free: identity over the shorter length, the shorter aligned within the longer
    auto consider_infix = [&](Best& b, i64 r, std::size_t c) {
        const i64 lr = v.length(r), lu = centroid_length[c], m = std::min(lr, lu);
        const i64 cap = std::min(most_of[m], b.cap);
        const std::uint8_t *cs = short_profiles.data() + c * kShortProfile,
                           *cl = profiles.data() + c * kProfile;
        const bool r_shorter = lr <= lu, u_shorter = lu <= lr;  // both on equal lengths
        auto missing = [&](bool r_in_u) {  // the bound for the shorter r (or u) within the other
            const int s3 = r_in_u ? profile_missing<kShortGram>(probe_short.data(), cs)
                                  : profile_missing<kShortGram>(cs, probe_short.data());
            if (s3 > kShortGram * cap) return false;
            const int s4 = r_in_u ? profile_missing<kGram>(probe_profile.data(), cl)
                                  : profile_missing<kGram>(cl, probe_profile.data());
            return s4 <= kGram * cap;
        };
        const bool try_r = r_shorter && missing(true), try_u = u_shorter && missing(false);
        if (!try_r && !try_u) return;
        const i64 u = centroids[c];
        const i64 k = b.node < 0 ? cap : std::min(cap, greedy_allowed(m, num, den, b.e, b.m, u < b.node));
        if (k < 0) return;
        i64 e = k + 1;
        const std::uint8_t* cu = centroid_codes.data() + centroid_at[c];
        if (try_r) e = infix_distance(probe_codes, lr, cu, lu, k);
        if (try_u && e > 0) e = std::min(e, infix_distance(cu, lu, probe_codes, lr, std::min(k, e - 1)));
        if (e > k) return;
        // a better centroid's shorter length is at most lr, where greedy_allowed is largest
        b = Best{u, e, m, greedy_allowed(lr, num, den, e, m, true)};
    };
    auto consider = [&](Best& b, i64 r, std::size_t c, i64 most, std::vector<i64>& work) {
        if (overhangs_free) return consider_infix(b, r, c);
        const i64 lr = v.length(r), lu = centroid_length[c], m = std::max(lr, lu);
        const i64 cap = std::min({most, most_of[m], b.cap});
        if (std::llabs(lr - lu) > cap) return;
        if (profile_l1<kShortGram>(probe_short.data(), short_profiles.data() + c * kShortProfile) >
            2 * kShortGram * cap)
            return;
        if (profile_l1<kGram>(probe_profile.data(), profiles.data() + c * kProfile) > 2 * kGram * cap) return;
        const i64 u = centroids[c];
        const i64 k = b.node < 0 ? cap : std::min(cap, greedy_allowed(m, num, den, b.e, b.m, u < b.node));
        if (k < 0 || std::llabs(lr - lu) > k) return;
        const i64 e = lv_distance(S, r, u, k, work);
        if (e > k) return;
        // greedy_allowed grows with m, and a partner is at most lr + most_of[longest] long
        b = Best{u, e, m, greedy_allowed(std::min(longest, lr + most_of[longest]), num, den, e, m, true)};
    };
    std::vector<std::size_t> slot;  // a centroid's place in `centroids`
    slot.assign(static_cast<std::size_t>(n), 0);
    for (i64 r = 0; r < n; ++r) {
        if ((r & 255) == 0) throw_if_stopped();
        Best best;
        const i64 lr = v.length(r);
        probe_codes = v.seq(r, probe_scratch);
        gram_profile<kGram>(probe_codes, lr, probe_profile.data());
        gram_profile<kShortGram>(probe_codes, lr, probe_short.data());
        cand.clear();
        if (index) index->candidates<false>(r, 0, probe, never, [&](u32 x) { cand.push_back(x); });
        for (std::size_t c = indexed; c < centroids.size(); ++c) cand.push_back(centroids[c]);
        for (u32 x : cand) consider(best, r, slot[x], near, buf);  // in any order: see consider
        // A centroid at e > near edits (m <= lr + e) may still pass and beat the best: both
        // conditions only tighten as e grows, so e = near + 1 decides. With overhangs free
        // the edits bound neither length: every centroid is tried.
        const i64 e1 = near + 1, m1 = lr + e1;
        const bool may_pass = overhangs_free || (m1 - e1) * den >= num * m1;
        const bool may_beat = overhangs_free || best.node < 0 || e1 * best.m <= m1 * best.e;
        if (may_pass && may_beat) {
            const std::size_t C = centroids.size();
            if (nt > 1 && C >= 4096) {
                std::vector<Best> local(static_cast<std::size_t>(nt), best);
#ifdef _OPENMP
#pragma omp parallel num_threads(nt)
#endif
                {
#ifdef _OPENMP
                    const std::size_t t = omp_get_thread_num(), T = omp_get_num_threads();  // T <= nt
#else
                    const std::size_t t = 0, T = 1;
#endif
                    std::vector<i64> work;
                    const std::size_t lo = C * t / T, hi = C * (t + 1) / T;
                    for (std::size_t c = lo; c < hi; ++c) consider(local[t], r, c, longest, work);
                }
                // the highest identity; on a tie the earlier centroid
                for (const Best& b : local) {
                    if (b.node < 0 || b.node == best.node) continue;
                    const i64 lhs = (b.m - b.e) * best.m, rhs = (best.m - best.e) * b.m;
                    if (best.node < 0 || lhs > rhs || (lhs == rhs && b.node < best.node)) best = b;
                }
            } else {
                for (std::size_t c = 0; c < C; ++c) consider(best, r, c, longest, buf);
            }
        }
        if (best.node >= 0) {
            out.centroid[r] = best.node;
            out.distance[r] = best.e;
            continue;
        }
        out.centroid[r] = r;
        is_centroid[r] = 1;
        slot[r] = centroids.size();
        centroids.push_back(static_cast<u32>(r));
        centroid_length.push_back(lr);
        if (overhangs_free) {
            centroid_at.push_back(static_cast<i64>(centroid_codes.size()));
            centroid_codes.insert(centroid_codes.end(), probe_codes, probe_codes + lr);
        }
        profiles.insert(profiles.end(), probe_profile.begin(), probe_profile.end());
        short_profiles.insert(short_profiles.end(), probe_short.begin(), probe_short.end());
        // the index is rebuilt when the centroids outside it (which every amplicon tries)
        // pass 64 + 1/64 of those in it (each rebuild reads every amplicon's flag: O(n) a
        // rebuild, O(n log C) in all)
        if (centroids.size() - indexed > 64 + indexed / 64) {
            index = std::make_unique<SegmentIndex>(v, is_centroid.data(), near, segments_for(near));
            indexed = centroids.size();
        }
    }
    return out;
}

}  // namespace bioaccel::clusters
