#include "bioaccel/neighbors.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "bioaccel/common.hpp"
#include "bioaccel/matrix_text.hpp"
#include "bioaccel/packed_edit.hpp"
#include "bioaccel/stop.hpp"

namespace bioaccel {
namespace {

using u64 = std::uint64_t;
using u32 = std::uint32_t;
using i64 = std::int64_t;
using edit::Hasher;
using edit::layout_of;
using edit::lv_distance;
using edit::Mask;
using edit::masks_of;
using edit::Packed;
using edit::probe_keys;
using edit::ProbeTerms;
using edit::sequence_keys;

struct Edge {
    u32 i, j;
    std::int32_t d;
};

inline bool wanted(i64 r, const NeighborOptions& o, i64 last) {
    return r >= o.first && r < last;
}

// Per-thread edges, merged and sorted by (i, j).
NeighborEdges collect(std::vector<std::vector<Edge>>& parts, i64 candidates) {
    std::size_t total = 0;
    for (const auto& p : parts) total += p.size();
    std::vector<Edge> all;
    all.reserve(total);
    for (auto& p : parts) {
        all.insert(all.end(), p.begin(), p.end());
        std::vector<Edge>().swap(p);
    }
    std::sort(all.begin(), all.end(),
              [](const Edge& x, const Edge& y) { return x.i != y.i ? x.i < y.i : x.j < y.j; });
    NeighborEdges out;
    out.candidates = candidates;
    out.i.resize(all.size());
    out.j.resize(all.size());
    out.d.resize(all.size());
    for (std::size_t t = 0; t < all.size(); ++t) {
        out.i[t] = all[t].i;
        out.j[t] = all[t].j;
        out.d[t] = all[t].d;
    }
    return out;
}

// ---- d <= 1: microvariants ------------------------------------------------------------

// A variant's key: its polynomial hash and length, multiplied through (the high bits index
// the table and the Bloom filter); never 0, the table's free mark.
inline u64 variant_key(u64 h, i64 len) {
    const u64 k = (h ^ (static_cast<u64>(len) * 0xD6E8FEB86659FD93ULL)) * 0x9E3779B97F4A7C15ULL;
    return k ? k : 1;
}

// Variants of one probe: key and kind (0 itself, 1 a substitution, 2 a deletion, 3 an insertion).
struct Variant {
    u64 key;
    int kind;
};

NeighborEdges microvariants(const SeqView& v, const Packed& S, const std::vector<int>& letters,
                            const NeighborOptions& o, i64 last, int threads) {
    const i64 n = v.count, k = o.max_distance;
    i64 longest = 0;
    for (i64 i = 0; i < n; ++i) longest = std::max(longest, v.length(i));
    const Hasher hs(longest + 1);
    std::vector<u64> keys(static_cast<std::size_t>(n));
#ifdef _OPENMP
#pragma omp parallel num_threads(threads)
#endif
    {
        std::vector<u64> P;
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
        for (i64 i = 0; i < n; ++i) {
            Hasher::prefix(v.seq(i), v.length(i), P);
            keys[i] = variant_key(P[v.length(i)], v.length(i));
        }
    }
    // open addressing (a key of 0 marks a free slot) and a blocked Bloom filter: two bits in
    // one 64-bit word a key (one cache line a test), ~16 bits a key
    int tbits = 4;
    while ((i64(1) << tbits) < 2 * n + 16) ++tbits;
    const u64 tmask = (u64(1) << tbits) - 1;
    std::vector<u64> tkey(static_cast<std::size_t>(tmask + 1), 0);
    std::vector<u32> tid(static_cast<std::size_t>(tmask + 1), 0);
    int wbits = 10;
    while ((i64(1) << wbits) < (16 * n) / 64) ++wbits;
    std::vector<u64> bloom(static_cast<std::size_t>(1) << wbits, 0);
    auto slot = [tbits](u64 key) { return key >> (64 - tbits); };
    auto word = [wbits](u64 key) { return key >> (64 - wbits); };
    auto bits2 = [](u64 key) { return (u64(1) << ((key >> 20) & 63)) | (u64(1) << ((key >> 26) & 63)); };
    for (i64 i = 0; i < n; ++i) {
        const u64 key = keys[i];
        u64 p = slot(key);
        while (tkey[p]) p = (p + 1) & tmask;
        tkey[p] = key;
        tid[p] = static_cast<u32>(i);
        bloom[word(key)] |= bits2(key);
    }
    std::vector<u64>().swap(keys);
    std::vector<std::vector<Edge>> parts(static_cast<std::size_t>(threads));
    i64 candidates = 0;
#ifdef _OPENMP
#pragma omp parallel num_threads(threads) reduction(+ : candidates)
#endif
    {
#ifdef _OPENMP
        const int me = omp_get_thread_num();
#else
        const int me = 0;
#endif
        std::vector<Edge>& out = parts[static_cast<std::size_t>(me)];
        std::vector<u64> P;
        std::vector<i64> buf;
        std::vector<Variant> vars;
        std::vector<std::pair<u32, std::int32_t>> found;
        const bool sym = o.symmetric;
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 256)
#endif
        for (i64 r = 0; r < n; ++r) {
            if (!wanted(r, o, last) || stop_requested()) continue;  // stopped: the rest skipped
            const std::uint8_t* s = v.seq(r);
            const i64 L = v.length(r);
            Hasher::prefix(s, L, P);
            const u64 H = P[L];
            vars.clear();
            vars.push_back({variant_key(H, L), 0});
            if (k >= 1) {
                for (i64 p = 0; p < L; ++p) {
                    const u64 w = hs.pw[L - 1 - p];
                    const u64 here = u64(s[p]) + 1;
                    for (int c : letters)
                        if (c != s[p]) vars.push_back({variant_key(H + (u64(c) + 1 - here) * w, L), 1});
                }
                for (i64 p = 0; p < L; ++p) {
                    if (p > 0 && s[p] == s[p - 1]) continue;  // one deletion per homopolymer run
                    const u64 w = hs.pw[L - 1 - p];
                    vars.push_back({variant_key(P[p] * w + (H - P[p + 1] * w), L - 1), 2});
                }
                if (sym) {  // longer partners: insertions, one per (run, letter)
                    for (i64 p = 0; p <= L; ++p) {
                        const u64 right = H - P[p] * hs.pw[L - p];
                        for (int c : letters) {
                            if (p > 0 && c == s[p - 1]) continue;
                            const u64 h = P[p] * hs.pw[L - p + 1] + (u64(c) + 1) * hs.pw[L - p] + right;
                            vars.push_back({variant_key(h, L + 1), 3});
                        }
                    }
                }
            }
            found.clear();
            constexpr std::size_t ahead = 12;
            const std::size_t nv = vars.size();
            for (std::size_t t = 0; t < std::min(ahead, nv); ++t)
                __builtin_prefetch(&bloom[word(vars[t].key)]);
            for (std::size_t t = 0; t < nv; ++t) {
                if (t + ahead < nv) __builtin_prefetch(&bloom[word(vars[t + ahead].key)]);
                const u64 key = vars[t].key;
                const u64 b = bits2(key);
                if ((bloom[word(key)] & b) != b) continue;
                const int kind = vars[t].kind;
                for (u64 p = slot(key); tkey[p]; p = (p + 1) & tmask) {
                    if (tkey[p] != key) continue;
                    const i64 j = tid[p];
                    // the partner: later by index (symmetric), else earlier by (length, index)
                    const bool same_length = kind <= 1;
                    if (sym ? j <= r : (same_length && j >= r)) continue;
                    ++candidates;
                    if (!o.verify) {
                        found.emplace_back(static_cast<u32>(j), -1);
                        continue;
                    }
                    const i64 want = kind == 0 ? 0 : 1;
                    if (lv_distance(S, j, r, want, buf) == want)
                        found.emplace_back(static_cast<u32>(j), want);
                }
            }
            std::sort(found.begin(), found.end());
            for (std::size_t t = 0; t < found.size(); ++t) {
                if (t && found[t].first == found[t - 1].first) continue;
                const u32 j = found[t].first;
                out.push_back(Edge{std::min<u32>(j, static_cast<u32>(r)),
                                   std::max<u32>(j, static_cast<u32>(r)), found[t].second});
            }
        }
    }
    throw_if_stopped();  // outside the parallel region
    return collect(parts, candidates);
}

// ---- d >= 2: segment masking --------------------------------------------------------

NeighborEdges segment_filter(const SeqView& v, const Packed& S, const NeighborOptions& o, i64 last,
                             int threads) {
    const i64 n = v.count;
    i64 longest = 0;
    std::vector<i64> lens(static_cast<std::size_t>(n));
    for (i64 i = 0; i < n; ++i) longest = std::max(longest, lens[i] = v.length(i));
    // no two sequences are more than `longest` edits apart: a larger threshold finds the
    // same pairs, and would only grow the masks and shift patterns (as d^3)
    const i64 d = std::min(o.max_distance, longest);
    int q = o.segments;
    if (q <= 0) {
        std::vector<i64> sorted = lens;
        std::nth_element(sorted.begin(), sorted.begin() + n / 2, sorted.end());
        q = neighbor_segments(d, n ? sorted[n / 2] : 0);
    }
    if (q < d + 1) throw std::invalid_argument("segments must be at least max_distance + 1");
    const Hasher hs(longest);
    const std::vector<Mask> masks = masks_of(q, static_cast<int>(d));
    const edit::KeyPlan plan = edit::key_plan(q, static_cast<int>(d), masks);
    const edit::GramCounts grams(v);
    const i64 per = static_cast<i64>(masks.size());
    const i64 entries = n * per;
    // buckets by the key's top bits, ~4 entries a bucket; each entry, 4 bytes, keeps the
    // key's low 32 - node_bits bits (a fingerprint: a false match only costs a verification;
    // with the bucket's bits, 32 + log2 of the masks / 4 bits of the key in all) above the
    // sequence's node_bits, sorted within the bucket: one key's sequences are a run, in
    // index order
    if (entries >= (i64(1) << 32)) throw std::invalid_argument("too many sequences for the segment index");
    int node_bits = 1;  // all ones is no sequence
    while ((i64(1) << node_bits) <= n) ++node_bits;
    if (node_bits > 31) throw std::invalid_argument("too many sequences for the segment index");
    const u32 node_mask = (u32(1) << node_bits) - 1;
    auto entry_of = [&](u64 key, u32 node) {
        return (static_cast<u32>(key) & (~u32(0) >> node_bits)) << node_bits | node;
    };
    int bits = 1;
    while ((i64(1) << bits) < std::max<i64>(entries / 4, 2)) ++bits;
    const i64 nb = i64(1) << bits;
    std::vector<u32> dir(static_cast<std::size_t>(nb) + 1, 0);
    std::vector<u32> entry(static_cast<std::size_t>(entries));
    std::vector<u64> terms;
    auto keys_of = [&](i64 s, std::vector<u64>& P, std::vector<i64>& st, u64* out) {
        Hasher::prefix(v.seq(s), lens[s], P);
        layout_of(lens[s], q, st);
        sequence_keys(hs, P, lens[s], st, masks, out, terms);
    };
    {
        std::vector<u64> P, kk(static_cast<std::size_t>(per));
        std::vector<i64> st;
        for (i64 s = 0; s < n; ++s) {
            keys_of(s, P, st, kk.data());
            for (u64 key : kk) ++dir[(key >> (64 - bits)) + 1];
        }
        for (i64 b = 0; b < nb; ++b) dir[b + 1] += dir[b];
        std::vector<u32> fill(dir.begin(), dir.end() - 1);
        for (i64 s = 0; s < n; ++s) {
            keys_of(s, P, st, kk.data());
            for (u64 key : kk) {
                const u32 at = fill[key >> (64 - bits)]++;
                entry[at] = entry_of(key, static_cast<u32>(s));
            }
        }
    }
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 4096) num_threads(threads)
#endif
    for (i64 b = 0; b < nb; ++b) std::sort(entry.begin() + dir[b], entry.begin() + dir[b + 1]);
    std::vector<std::vector<Edge>> parts(static_cast<std::size_t>(threads));
    i64 candidates = 0;
#ifdef _OPENMP
#pragma omp parallel num_threads(threads) reduction(+ : candidates)
#endif
    {
#ifdef _OPENMP
        const int me = omp_get_thread_num();
#else
        const int me = 0;
#endif
        std::vector<Edge>& out = parts[static_cast<std::size_t>(me)];
        std::vector<u64> P;
        std::vector<i64> buf;
        ProbeTerms terms_of_probe;
        std::vector<u32> cands;
        std::vector<u32> stamp(static_cast<std::size_t>(n), 0);  // r + 1: already a candidate of r
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 64)
#endif
        for (i64 r = 0; r < n; ++r) {
            if (!wanted(r, o, last) || stop_requested()) continue;  // stopped: the rest skipped
            const i64 lr = lens[r];
            Hasher::prefix(v.seq(r), lr, P);
            terms_of_probe.new_probe();
            cands.clear();
            const i64 ls_hi = o.symmetric ? lr + d : lr;
            for (i64 ls = std::max<i64>(0, lr - d); ls <= ls_hi; ++ls) {
                probe_keys(hs, P, lr, ls, masks.size(), plan, terms_of_probe, [&](u64 key, std::size_t) {
                    const u64 b = key >> (64 - bits);
                    // the key's run, from the first partner allowed (symmetric: s > r)
                    const u32 from = entry_of(key, o.symmetric ? static_cast<u32>(r + 1) : 0);
                    const u32* x = std::lower_bound(entry.data() + dir[b], entry.data() + dir[b + 1], from);
                    const u32* end = entry.data() + dir[b + 1];
                    // asymmetric, same length: only s < r (the run is in index order)
                    const u32 stop =
                        entry_of(key, !o.symmetric && ls == lr ? static_cast<u32>(r) : node_mask);
                    const u32 mark = static_cast<u32>(r + 1);
                    for (; x < end && *x < stop; ++x) {
                        const u32 s = *x & node_mask;
                        if (stamp[s] == mark) continue;
                        stamp[s] = mark;
                        cands.push_back(s);
                    }
                });
            }
            candidates += static_cast<i64>(cands.size());
            grams.keep_within(r, cands, d);  // the q-gram lemma (edit::GramCounts)
            for (u32 s : cands) {
                // a key's fingerprint may match another length's key: the pairing rule on
                // the true lengths keeps every pair to one probe
                const i64 ls = lens[s];
                if (std::llabs(ls - lr) > d || (!o.symmetric && (ls > lr || (ls == lr && s >= r)))) continue;
                std::int32_t dist = -1;
                if (o.verify) {
                    const i64 dd = lv_distance(S, s, r, d, buf);
                    if (dd > d) continue;
                    dist = static_cast<std::int32_t>(dd);
                }
                out.push_back(
                    Edge{std::min<u32>(s, static_cast<u32>(r)), std::max<u32>(s, static_cast<u32>(r)), dist});
            }
        }
    }
    throw_if_stopped();  // outside the parallel region
    return collect(parts, candidates);
}

std::vector<int> letters_used(const SeqView& v, int alphabet) {
    std::vector<char> seen(static_cast<std::size_t>(alphabet), 0);
    const i64 total = v.offsets[v.count];
    for (i64 t = 0; t < total; ++t) seen[v.codes[t]] = 1;
    std::vector<int> out;
    for (int c = 0; c < alphabet; ++c)
        if (seen[c]) out.push_back(c);
    return out;
}

void check_input(const SeqView& v, int alphabet) {
    if (alphabet < 1 || alphabet > 256) throw std::invalid_argument("alphabet must have 1..256 letters");
    if (v.count >= (i64(1) << 32) - 1) throw std::invalid_argument("at most 2^32 - 2 sequences");
    const i64 total = v.offsets[v.count];
    for (i64 t = 0; t < total; ++t)
        if (v.codes[t] >= alphabet)
            throw std::invalid_argument("a sequence code (" + std::to_string(v.codes[t]) +
                                        ") is outside the alphabet of " + std::to_string(alphabet) +
                                        " letters");
}

}  // namespace

int neighbor_segments(std::int64_t max_distance, std::int64_t median_length) {
    const i64 d = max_distance;
    if (d < 0) throw std::invalid_argument("max_distance must be >= 0");
    auto choose = [](i64 a, i64 b) {
        double c = 1;
        for (i64 t = 0; t < b; ++t) c = c * static_cast<double>(a - t) / static_cast<double>(t + 1);
        return c;
    };
    i64 q = d + 1;
    // more segments key on more letters (fewer family members collide) at C(q, d) index
    // entries a sequence; at most 36 of them, segments of >= 8 letters
    while (d > 0 && choose(q + 1, d) <= 36 && median_length / (q + 1) >= 8) ++q;
    return static_cast<int>(q);
}

NeighborEdges edit_neighbors(const SeqView& seqs, int alphabet, const NeighborOptions& opt, int threads) {
    check_input(seqs, alphabet);
    if (opt.max_distance < 0) throw std::invalid_argument("max_distance must be >= 0");
    if (opt.max_distance > (i64(1) << 30)) throw std::invalid_argument("max_distance is too large");
    if (opt.first < 0) throw std::invalid_argument("first must be >= 0");
    const int nt = resolve_threads(threads);
    const i64 last = opt.last < 0 ? seqs.count : std::min<i64>(opt.last, seqs.count);
    const Packed S(seqs, edit::packing_bits(seqs), nt);
    int method = opt.method;
    if (method == 0) method = opt.max_distance <= 1 ? 1 : 2;
    if (method == 1) {
        if (opt.max_distance > 1)
            throw std::invalid_argument("microvariants serve max_distance 0 and 1 only");
        return microvariants(seqs, S, letters_used(seqs, alphabet), opt, last, nt);
    }
    if (method != 2)
        throw std::invalid_argument("method must be 0 (auto), 1 (microvariants) or 2 (segments)");
    return segment_filter(seqs, S, opt, last, nt);
}

std::string format_neighbor_lines(const char* ids, const std::int64_t* id_offsets, std::int64_t n_ids,
                                  const std::int64_t* i, const std::int64_t* j, const double* d,
                                  std::int64_t k, bool integer, int threads) {
    for (i64 t = 0; t < k; ++t)
        if (i[t] < 0 || i[t] >= n_ids || j[t] < 0 || j[t] >= n_ids)
            throw std::invalid_argument("pair " + std::to_string(t) + " names a sequence outside the ids");
    const int nt = resolve_threads(threads);
    const i64 blocks = std::max<i64>(1, std::min<i64>(nt * 4, (k + 4095) / 4096));
    std::vector<std::string> part(static_cast<std::size_t>(blocks));
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
#else
    (void)nt;
#endif
    for (i64 b = 0; b < blocks; ++b) {
        const i64 lo = k * b / blocks, hi = k * (b + 1) / blocks;
        std::string& out = part[static_cast<std::size_t>(b)];
        char num[40];
        for (i64 t = lo; t < hi; ++t) {
            out.append(ids + id_offsets[i[t]],
                       static_cast<std::size_t>(id_offsets[i[t] + 1] - id_offsets[i[t]]));
            out.push_back('\t');
            out.append(ids + id_offsets[j[t]],
                       static_cast<std::size_t>(id_offsets[j[t] + 1] - id_offsets[j[t]]));
            out.push_back('\t');
            int len;
            if (integer) {
                len = std::snprintf(num, sizeof num, "%lld", static_cast<long long>(d[t]));
            } else {
                len = format_float_repr(d[t], num);
            }
            out.append(num, static_cast<std::size_t>(len));
            out.push_back('\n');
        }
    }
    std::size_t total = 0;
    for (const auto& p : part) total += p.size();
    std::string all;
    all.reserve(total);
    for (auto& p : part) {
        all += p;
        std::string().swap(p);
    }
    return all;
}

void edit_verify_pairs(const SeqView& seqs, int alphabet, const std::int64_t* pi, const std::int64_t* pj,
                       std::int64_t k, std::int64_t max_distance, std::int32_t* out, int threads) {
    check_input(seqs, alphabet);
    if (max_distance < 0) throw std::invalid_argument("max_distance must be >= 0");
    for (i64 t = 0; t < k; ++t)
        if (pi[t] < 0 || pi[t] >= seqs.count || pj[t] < 0 || pj[t] >= seqs.count)
            throw std::invalid_argument("pair " + std::to_string(t) + " (" + std::to_string(pi[t]) + ", " +
                                        std::to_string(pj[t]) + ") is out of range");
    const int nt = resolve_threads(threads);
    const Packed S(seqs, edit::packing_bits(seqs), nt);
#ifdef _OPENMP
#pragma omp parallel num_threads(nt)
#endif
    {
        std::vector<i64> buf;
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 1024)
#endif
        for (i64 t = 0; t < k; ++t)
            if (!stop_requested())
                out[t] = static_cast<std::int32_t>(lv_distance(S, pi[t], pj[t], max_distance, buf));
    }
    throw_if_stopped();
}

}  // namespace bioaccel
