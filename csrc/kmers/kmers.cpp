#include "bioaccel/kmers.hpp"

#include "bioaccel/common.hpp"
#include "bioaccel/cpu.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cstdlib>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace bioaccel {
namespace {

// MurmurHash3's 64-bit finaliser, seeded: a bijective mix of the k-mer code.
inline std::uint64_t mix64(std::uint64_t x, std::uint64_t seed) {
    x ^= seed + 0x9e3779b97f4a7c15ULL;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

// What the MinHash estimate of one pair counts: shared / seen.
struct MinHashCount {
    std::int64_t shared, seen;
};

// Row i (bitmap `bits` over value ranks, running counts `below` per word) against every
// later row j, into row[j - i - 1]. The union's count up to b[y] (row i's values below
// b[y], plus b's first y + 1, less those shared) never falls as y grows, so b is walked
// in blocks of kBlock with bit tests only (count_block: how many of a block's 16 values
// row i holds), and the count is taken once per block, at its last value; only the block
// where it passes s is walked again value by value.
constexpr std::int64_t kBlock = 16;

inline std::int64_t in_row(const std::uint64_t* bits, std::uint32_t u) {
    return (bits[u >> 6] >> (u & 63)) & 1;
}

template <class CountBlock>
__attribute__((always_inline)) inline void minhash_row_body(const KmerView& t, const std::uint64_t* bits,
                                                            const std::uint32_t* below, std::int64_t i,
                                                            std::int64_t s, MinHashCount* row,
                                                            CountBlock count_block) {
    const std::int64_t n = t.n;
    const std::int64_t na = t.offsets[i + 1] - t.offsets[i];
    const auto a_below = [bits, below](std::uint32_t u) -> std::int64_t {  // row i's values < u
        return below[u >> 6] + __builtin_popcountll(bits[u >> 6] & ((std::uint64_t(1) << (u & 63)) - 1));
    };
    for (std::int64_t j = i + 1; j < n; ++j) {
        const std::uint32_t* b = t.rank + t.offsets[j];
        const std::int64_t nb = t.offsets[j + 1] - t.offsets[j];
        std::int64_t shared = 0, y = 0;
        bool full = false;  // the union's s smallest end before b[y]
        for (; y + kBlock <= nb; y += kBlock) {
            const std::int64_t add = count_block(bits, b + y);
            const std::uint32_t last = b[y + kBlock - 1];
            if (a_below(last) + y + kBlock - (shared + add - in_row(bits, last)) > s) break;
            shared += add;
        }
        for (; y < nb; ++y) {  // the block that passes s (or the tail), value by value
            const std::uint32_t u = b[y];
            if (a_below(u) + y + 1 - shared > s) {
                full = true;
                break;
            }
            shared += in_row(bits, u);
        }
        const std::int64_t seen = full ? s : std::min<std::int64_t>(s, na + nb - shared);
        row[j - i - 1] = {shared, seen};
    }
}

void minhash_row_scalar(const KmerView& t, const std::uint64_t* bits, const std::uint32_t* below,
                        std::int64_t i, std::int64_t s, MinHashCount* row) {
    minhash_row_body(t, bits, below, i, s, row, [](const std::uint64_t* w, const std::uint32_t* b) {
        std::int64_t add = 0;
        for (std::int64_t c = 0; c < kBlock; ++c) add += in_row(w, b[c]);
        return add;
    });
}

#if defined(__x86_64__) && defined(__GNUC__)
// The block's bit tests by gathers: bit u of the little-endian 64-bit words is bit u % 32
// of 32-bit word u / 32; each rank's word is gathered, tested against its bit, and the
// lanes that hold it counted from the compare mask (no horizontal sum).
// AVX2: two gathers of 8 ranks.
__attribute__((target("avx2,popcnt"))) void minhash_row_avx2(const KmerView& t, const std::uint64_t* bits,
                                                             const std::uint32_t* below, std::int64_t i,
                                                             std::int64_t s, MinHashCount* row) {
    minhash_row_body(
        t, bits, below, i, s, row,
        [](const std::uint64_t* w, const std::uint32_t* b) __attribute__((target("avx2,popcnt"))) {
            const int* words = reinterpret_cast<const int*>(w);
            const __m256i low5 = _mm256_set1_epi32(31), one = _mm256_set1_epi32(1);
            const __m256i u0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b));
            const __m256i u1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 8));
            const __m256i g0 = _mm256_i32gather_epi32(words, _mm256_srli_epi32(u0, 5), 4);
            const __m256i g1 = _mm256_i32gather_epi32(words, _mm256_srli_epi32(u1, 5), 4);
            const __m256i bit0 = _mm256_sllv_epi32(one, _mm256_and_si256(u0, low5));
            const __m256i bit1 = _mm256_sllv_epi32(one, _mm256_and_si256(u1, low5));
            const __m256i in0 = _mm256_cmpeq_epi32(_mm256_and_si256(g0, bit0), bit0);
            const __m256i in1 = _mm256_cmpeq_epi32(_mm256_and_si256(g1, bit1), bit1);
            const unsigned mask = static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(in0))) |
                                  (static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(in1))) << 8);
            return static_cast<std::int64_t>(__builtin_popcount(mask));
        });
}

// AVX-512: one gather of 16 ranks, a test into a 16-bit mask.
__attribute__((target("avx512f,avx512bw,avx512vl,avx2,popcnt"))) void minhash_row_avx512(
    const KmerView& t, const std::uint64_t* bits, const std::uint32_t* below, std::int64_t i, std::int64_t s,
    MinHashCount* row) {
    minhash_row_body(
        t, bits, below, i, s, row,
        [](const std::uint64_t* w, const std::uint32_t* b)
            __attribute__((target("avx512f,avx512bw,avx512vl,avx2,popcnt"))) {
                const __m512i u = _mm512_loadu_si512(b);
                const __m512i g = _mm512_i32gather_epi32(_mm512_srli_epi32(u, 5), w, 4);
                const __m512i bit =
                    _mm512_sllv_epi32(_mm512_set1_epi32(1), _mm512_and_si512(u, _mm512_set1_epi32(31)));
                return static_cast<std::int64_t>(__builtin_popcount(_mm512_test_epi32_mask(g, bit)));
            });
}
#endif

void minhash_row(const KmerView& t, const std::uint64_t* bits, const std::uint32_t* below, std::int64_t i,
                 std::int64_t s, MinHashCount* row) {
#if defined(__x86_64__) && defined(__GNUC__)
    switch (active_isa()) {
        case Isa::Avx512:
            return minhash_row_avx512(t, bits, below, i, s, row);
        case Isa::Avx2:
            return minhash_row_avx2(t, bits, below, i, s, row);
        default:
            break;
    }
#endif
    minhash_row_scalar(t, bits, below, i, s, row);
}

// Edgar's fraction of shared k-mer counts of row i against every later row.
void count_row(const KmerView& t, const std::int64_t* lengths, int k, std::int64_t i, double* row) {
    const std::uint64_t* a = t.values + t.offsets[i];
    const std::uint32_t* ca = t.counts + t.offsets[i];
    const std::int64_t na = t.offsets[i + 1] - t.offsets[i];
    for (std::int64_t j = i + 1; j < t.n; ++j) {
        const std::uint64_t* b = t.values + t.offsets[j];
        const std::uint32_t* cb = t.counts + t.offsets[j];
        const std::int64_t nb = t.offsets[j + 1] - t.offsets[j];
        std::int64_t x = 0, y = 0, shared = 0;
        while (x < na && y < nb) {
            if (a[x] < b[y])
                ++x;
            else if (b[y] < a[x])
                ++y;
            else {
                shared += std::min(ca[x], cb[y]);
                ++x;
                ++y;
            }
        }
        const std::int64_t denom = std::min(lengths[i], lengths[j]) - k + 1;
        row[j - i - 1] = denom > 0 ? static_cast<double>(shared) / static_cast<double>(denom) : 0.0;
    }
}

// Exact Jaccard of row i against every later row: walk the whole union (branch-free merge:
// the comparisons are unpredictable).
void jaccard_row(const KmerView& t, std::int64_t i, double* row) {
    const std::uint64_t* a = t.values + t.offsets[i];
    const std::int64_t na = t.offsets[i + 1] - t.offsets[i];
    for (std::int64_t j = i + 1; j < t.n; ++j) {
        const std::uint64_t* b = t.values + t.offsets[j];
        const std::int64_t nb = t.offsets[j + 1] - t.offsets[j];
        std::int64_t x = 0, y = 0, shared = 0, seen = 0;
        while (x < na && y < nb) {
            const std::uint64_t va = a[x], vb = b[y];
            shared += va == vb;
            x += va <= vb;
            y += vb <= va;
            ++seen;
        }
        seen += (na - x) + (nb - y);
        row[j - i - 1] = seen > 0 ? static_cast<double>(shared) / static_cast<double>(seen) : 0.0;
    }
}

}  // namespace

namespace {

// The sketches of rows (i0, n) transposed for the values of rows [i0, i1): for each value
// rank u, every (row j, position y) that holds it, rows ascending. Built per call (a row
// tile), only when it stays within kMaxPostings entries.
struct Postings {
    std::vector<std::uint32_t> start;  // universe + 1
    std::vector<std::uint32_t> row, pos;
    bool built = false;
};
constexpr std::int64_t kMaxPostings = std::int64_t(1) << 26;

Postings build_postings(const KmerView& t, std::int64_t i0, std::int64_t i1) {
    Postings p;
    const std::size_t universe = t.universe;
    std::vector<std::uint64_t> in_tile(universe / 64 + 1, 0);
    for (std::int64_t x = t.offsets[i0]; x < t.offsets[i1]; ++x)
        in_tile[t.rank[x] >> 6] |= std::uint64_t(1) << (t.rank[x] & 63);
    const auto held = [&in_tile](std::uint32_t u) { return (in_tile[u >> 6] >> (u & 63)) & 1; };
    const std::int64_t from = t.offsets[std::min(i0 + 1, t.n)], to = t.offsets[t.n];
    p.start.assign(universe + 1, 0);
    std::int64_t total = 0;
    for (std::int64_t x = from; x < to; ++x) {
        const std::uint32_t u = t.rank[x];
        const std::uint64_t h = held(u);
        p.start[u + 1] += static_cast<std::uint32_t>(h);
        total += static_cast<std::int64_t>(h);
    }
    if (total > kMaxPostings) return Postings{};
    for (std::size_t u = 0; u < universe; ++u) p.start[u + 1] += p.start[u];
    p.row.resize(static_cast<std::size_t>(total));
    p.pos.resize(static_cast<std::size_t>(total));
    std::vector<std::uint32_t> fill(p.start.begin(), p.start.end() - 1);
    for (std::int64_t j = std::min(i0 + 1, t.n); j < t.n; ++j) {
        const std::uint32_t* b = t.rank + t.offsets[j];
        const std::int64_t nb = t.offsets[j + 1] - t.offsets[j];
        for (std::int64_t y = 0; y < nb; ++y) {
            if (!held(b[y])) continue;
            const std::uint32_t at = fill[b[y]]++;
            p.row[at] = static_cast<std::uint32_t>(j);
            p.pos[at] = static_cast<std::uint32_t>(y);
        }
    }
    p.built = true;
    return p;
}

// Row i against every later row from the postings of its values. A value v shared with
// row j, at position x in row i and y in row j, the t-th shared one in value order, has
// x + 1 + y + 1 - t values of the union at or below it; it counts towards the estimate
// when that is <= s (the union's s smallest), exactly the values the bitmap walk counts.
// `at` holds, per value of row i, its first posting of a later row; returns false (nothing
// written) when the postings of the row would cost more than the bitmap walk.
bool minhash_row_postings(const KmerView& t, const Postings& p, std::int64_t i, std::int64_t s, bool force,
                          std::vector<std::uint32_t>& at, std::vector<std::uint64_t>& cnt,
                          MinHashCount* row) {
    const std::uint32_t* a = t.rank + t.offsets[i];
    const std::int64_t na = t.offsets[i + 1] - t.offsets[i], n = t.n;
    at.resize(static_cast<std::size_t>(na));
    std::int64_t cost = 0;
    for (std::int64_t x = 0; x < na; ++x) {
        const std::uint32_t* lo = p.row.data() + p.start[a[x]];
        const std::uint32_t* hi = p.row.data() + p.start[a[x] + 1];
        const std::uint32_t* first = std::upper_bound(lo, hi, static_cast<std::uint32_t>(i));
        at[x] = static_cast<std::uint32_t>(first - p.row.data());
        cost += hi - first;
    }
    // a posting costs a few bit tests' worth; the bitmap walk about min(s, |row|) tests a pair
    const std::int64_t walk =
        (n - i - 1) *
        std::min<std::int64_t>(s, (t.offsets[n] - t.offsets[i + 1]) / std::max<std::int64_t>(1, n - i - 1));
    if (!force && 4 * cost > walk) return false;
    // per later row j: shared values so far (low 32 bits) and those counted (high 32 bits)
    std::fill(cnt.begin() + i + 1, cnt.end(), 0);
    for (std::int64_t x = 0; x < na; ++x) {
        const std::uint32_t end = p.start[a[x] + 1];
        for (std::uint32_t q = at[x]; q < end; ++q) {
            std::uint64_t c = cnt[p.row[q]] + 1;
            const std::int64_t shared_so_far = static_cast<std::uint32_t>(c);
            c += static_cast<std::uint64_t>(x + 2 + p.pos[q] <= s + shared_so_far) << 32;
            cnt[p.row[q]] = c;
        }
    }
    for (std::int64_t j = i + 1; j < n; ++j) {
        const std::int64_t nb = t.offsets[j + 1] - t.offsets[j];
        const std::int64_t shared = static_cast<std::int64_t>(cnt[j] >> 32),
                           common = static_cast<std::uint32_t>(cnt[j]);
        row[j - i - 1] = {shared, std::min<std::int64_t>(s, na + nb - common)};
    }
    return true;
}

inline double jaccard_estimate(MinHashCount c) {
    return c.seen > 0 ? static_cast<double>(c.shared) / static_cast<double>(c.seen) : 0.0;
}

// Mash's distance from a Jaccard estimate (0.0 - : no -0.0 for identical sets).
inline double mash_from_jaccard(double j, int k) {
    if (!(j > 0)) return 1.0;
    return std::min(0.0 - std::log(2.0 * j / (1.0 + j)) / k, 1.0);
}

template <typename T>
void kmer_rows_as(const KmerView& t, KmerMetric metric, std::int64_t sketch_size, const std::int64_t* lengths,
                  int k, std::int64_t i0, std::int64_t i1, T* out, int threads) {
    const std::int64_t n = t.n;
    if (metric == KmerMetric::CountFraction && t.counts == nullptr)
        throw std::invalid_argument("the k-mer-count distance needs counts");
    if (metric == KmerMetric::MinHash && t.rank == nullptr)
        throw std::invalid_argument("the MinHash estimate needs value ranks");
    if (!(0 <= i0 && i0 <= i1 && i1 <= n)) throw std::invalid_argument("rows outside the table");
    const std::size_t words = metric == KmerMetric::MinHash ? t.universe / 64 + 1 : 0;
    const auto first = [n](std::int64_t i) { return condensed_row_start(i, n); };  // pairs before row i
    // Mash distances of the pairs whose union fills the sketch (seen == s, most of them),
    // by shared count: the same expression on the same values, computed once.
    std::vector<double> full_seen;
    // MinHash pairs: from the postings where they are cheaper, else the bitmap walk
    // (BIOACCEL_MINHASH_PAIRS=postings or =bitmap forces one, for tests).
    const char* how = std::getenv("BIOACCEL_MINHASH_PAIRS");
    const std::string pairs_by = how ? how : "";
    Postings postings;
    if (metric == KmerMetric::MinHash && pairs_by != "bitmap" && i0 < i1)
        postings = build_postings(t, i0, i1);
    if (pairs_by == "postings" && metric == KmerMetric::MinHash && !postings.built && i0 < i1)
        throw std::invalid_argument("BIOACCEL_MINHASH_PAIRS=postings: more than 2^26 postings");
    if (metric == KmerMetric::MinHash && sketch_size > 0 && sketch_size <= (std::int64_t(1) << 20)) {
        full_seen.resize(static_cast<std::size_t>(sketch_size) + 1);
        for (std::int64_t x = 0; x <= sketch_size; ++x)
            full_seen[static_cast<std::size_t>(x)] = mash_from_jaccard(jaccard_estimate({x, sketch_size}), k);
    }
#ifdef _OPENMP
#pragma omp parallel num_threads(resolve_threads(threads))
#else
    (void)threads;
#endif
    {
        std::vector<std::uint64_t> bits(words, 0);
        std::vector<std::uint32_t> below(words + 1, 0);        // row values in earlier words
        std::vector<double> row(static_cast<std::size_t>(n));  // similarities of one row
        std::vector<MinHashCount> counts(metric == KmerMetric::MinHash ? static_cast<std::size_t>(n) : 0);
        std::vector<std::uint32_t> at;
        std::vector<std::uint64_t> cnt(postings.built ? static_cast<std::size_t>(n) : 0);
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 4)
#endif
        for (std::int64_t i = i0; i < i1; ++i) {
            if (metric == KmerMetric::MinHash && postings.built &&
                minhash_row_postings(t, postings, i, sketch_size, pairs_by == "postings", at, cnt,
                                     counts.data())) {
                // done from the postings
            } else if (metric == KmerMetric::MinHash) {
                const std::uint32_t* a = t.rank + t.offsets[i];
                const std::int64_t na = t.offsets[i + 1] - t.offsets[i];
                std::fill(bits.begin(), bits.end(), 0);
                for (std::int64_t x = 0; x < na; ++x) bits[a[x] >> 6] |= std::uint64_t(1) << (a[x] & 63);
                std::uint32_t run = 0;
                for (std::size_t w = 0; w < words; ++w) {
                    below[w] = run;
                    run += static_cast<std::uint32_t>(__builtin_popcountll(bits[w]));
                }
                minhash_row(t, bits.data(), below.data(), i, sketch_size, counts.data());
            } else if (metric == KmerMetric::CountFraction) {
                count_row(t, lengths, k, i, row.data());
            } else {
                jaccard_row(t, i, row.data());
            }
            T* dst = out + (first(i) - first(i0));
            const std::int64_t m = n - i - 1;
            if (metric == KmerMetric::MinHash) {
                for (std::int64_t x = 0; x < m; ++x) {
                    const MinHashCount c = counts[x];
                    dst[x] = static_cast<T>(c.seen == sketch_size && !full_seen.empty()
                                                ? full_seen[static_cast<std::size_t>(c.shared)]
                                                : mash_from_jaccard(jaccard_estimate(c), k));
                }
            } else {
                for (std::int64_t x = 0; x < m; ++x) dst[x] = static_cast<T>(1.0 - row[x]);
            }
        }
    }
}

}  // namespace

void kmer_rows(const KmerView& t, KmerMetric metric, std::int64_t sketch_size, const std::int64_t* lengths,
               int k, std::int64_t i0, std::int64_t i1, double* out, int threads) {
    kmer_rows_as(t, metric, sketch_size, lengths, k, i0, i1, out, threads);
}

void kmer_rows(const KmerView& t, KmerMetric metric, std::int64_t sketch_size, const std::int64_t* lengths,
               int k, std::int64_t i0, std::int64_t i1, float* out, int threads) {
    kmer_rows_as(t, metric, sketch_size, lengths, k, i0, i1, out, threads);
}

std::size_t value_ranks(const std::uint64_t* values, std::size_t m, std::uint32_t* rank) {
    if (m == 0) return 0;
    if (m > std::numeric_limits<std::uint32_t>::max())
        throw std::invalid_argument("more than 2^32 - 1 sketch values: " + std::to_string(m));
    // A bucket sort on the leading bits of value - min (hashes are uniform, so buckets hold
    // a few values each; any other distribution stays correct, only slower), values sorted
    // within their bucket, then ranks handed out in order.
    const auto [lo_it, hi_it] = std::minmax_element(values, values + m);
    const std::uint64_t lo = *lo_it, span = *hi_it - lo;
    int log_buckets = 0;
    while (log_buckets < 24 && (std::size_t(1) << (log_buckets + 1)) <= m) ++log_buckets;
    const int span_bits = span == 0 ? 0 : 64 - __builtin_clzll(span);
    const int shift = std::max(0, span_bits - log_buckets);
    const std::size_t buckets = std::size_t(1) << log_buckets;
    std::vector<std::uint32_t> start(buckets + 1, 0), order(m);
    for (std::size_t x = 0; x < m; ++x) ++start[((values[x] - lo) >> shift) + 1];
    for (std::size_t b = 0; b < buckets; ++b) start[b + 1] += start[b];
    {
        std::vector<std::uint32_t> fill(start.begin(), start.end() - 1);
        for (std::size_t x = 0; x < m; ++x)
            order[fill[(values[x] - lo) >> shift]++] = static_cast<std::uint32_t>(x);
    }
    std::uint32_t next = 0;
    bool any = false;
    std::uint64_t previous = 0;
    for (std::size_t b = 0; b < buckets; ++b) {
        std::uint32_t* first = order.data() + start[b];
        std::uint32_t* last = order.data() + start[b + 1];
        std::sort(first, last, [values](std::uint32_t p, std::uint32_t q) { return values[p] < values[q]; });
        for (std::uint32_t* it = first; it != last; ++it) {
            const std::uint64_t v = values[*it];
            if (any && v != previous) ++next;
            any = true;
            previous = v;
            rank[*it] = next;
        }
    }
    return static_cast<std::size_t>(next) + 1;
}

KmerTable kmer_table(const SeqView& seqs, const std::int8_t* digit, int radix, int k, bool canonical,
                     bool hashed, std::uint64_t seed, std::int64_t sketch_size, bool with_counts,
                     int threads) {
    if (k < 1) throw std::invalid_argument("k must be >= 1, got " + std::to_string(k));
    if (radix < 2) throw std::invalid_argument("the k-mer alphabet needs at least 2 letters");
    double space = 1;
    for (int i = 0; i < k; ++i) space *= radix;
    if (space > 18446744073709551616.0)  // radix^k codes must fit 64 bits (DNA: k <= 32)
        throw std::invalid_argument("k = " + std::to_string(k) +
                                    " is too large for 64-bit k-mer codes with " + std::to_string(radix) +
                                    " letters");
    if (canonical && radix != 4)
        throw std::invalid_argument("canonical k-mers need the 4-letter DNA alphabet");
    const std::int64_t n = seqs.count;
    std::vector<std::vector<std::uint64_t>> vals(static_cast<std::size_t>(n));
    std::vector<std::vector<std::uint32_t>> cnts(static_cast<std::size_t>(n));
    std::uint64_t top = 1;  // radix^(k-1)
    for (int i = 1; i < k; ++i) top *= static_cast<std::uint64_t>(radix);
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 8) num_threads(resolve_threads(threads))
#else
    (void)threads;
#endif
    for (std::int64_t s = 0; s < n; ++s) {
        const std::uint8_t* a = seqs.seq(s);
        const std::int64_t len = seqs.length(s);
        std::vector<std::uint64_t>& v = vals[s];
        v.reserve(static_cast<std::size_t>(std::max<std::int64_t>(0, len - k + 1)));
        std::uint64_t fwd = 0, rev = 0;
        int valid = 0;  // letters since the last skipped one
        const int shift = 2 * (k - 1);
        for (std::int64_t i = 0; i < len; ++i) {
            const int d = digit[a[i]];
            if (d < 0) {
                valid = 0;
                fwd = rev = 0;
                continue;
            }
            fwd = (valid == k ? (fwd % top) : fwd) * static_cast<std::uint64_t>(radix) +
                  static_cast<std::uint64_t>(d);
            if (canonical) rev = (rev >> 2) | (static_cast<std::uint64_t>(3 - d) << shift);
            if (valid < k) ++valid;
            if (valid == k) {
                std::uint64_t code = canonical ? std::min(fwd, rev) : fwd;
                v.push_back(hashed ? mix64(code, seed) : code);
            }
        }
        std::sort(v.begin(), v.end());
        if (with_counts) {
            std::vector<std::uint32_t>& c = cnts[s];
            std::size_t w = 0;
            for (std::size_t r = 0; r < v.size();) {
                std::size_t e = r;
                while (e < v.size() && v[e] == v[r]) ++e;
                v[w++] = v[r];
                c.push_back(static_cast<std::uint32_t>(e - r));
                r = e;
            }
            v.resize(w);
        } else {
            v.erase(std::unique(v.begin(), v.end()), v.end());
        }
        if (sketch_size > 0 && static_cast<std::int64_t>(v.size()) > sketch_size) {
            v.resize(static_cast<std::size_t>(sketch_size));
            if (with_counts) cnts[s].resize(static_cast<std::size_t>(sketch_size));
        }
    }
    KmerTable t;
    t.offsets.assign(static_cast<std::size_t>(n) + 1, 0);
    for (std::int64_t s = 0; s < n; ++s)
        t.offsets[s + 1] = t.offsets[s] + static_cast<std::int64_t>(vals[s].size());
    t.values.resize(static_cast<std::size_t>(t.offsets[n]));
    if (with_counts) t.counts.resize(t.values.size());
    for (std::int64_t s = 0; s < n; ++s) {
        std::copy(vals[s].begin(), vals[s].end(), t.values.begin() + t.offsets[s]);
        if (with_counts) std::copy(cnts[s].begin(), cnts[s].end(), t.counts.begin() + t.offsets[s]);
    }
    return t;
}

}  // namespace bioaccel
