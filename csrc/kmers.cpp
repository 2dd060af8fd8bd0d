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

// Row i (bitmap `bits` over value ranks, running counts `below` per word) against every
// later row j, into row[j - i - 1]. The union's count up to b[y] (row i's values below
// b[y], plus b's first y + 1, less those shared) never falls as y grows, so b is walked
// in blocks of kBlock with bit tests only (count_block: how many of a block's 16 values
// row i holds), and the count is taken once per block, at its last value; only the block
// where it passes s is walked again value by value.
constexpr std::int64_t kBlock = 16;

inline std::int64_t in_row(const std::uint64_t* bits, std::uint32_t u) { return (bits[u >> 6] >> (u & 63)) & 1; }

template <class CountBlock>
__attribute__((always_inline)) inline void minhash_row_body(const KmerView& t, const std::uint64_t* bits,
                                                            const std::uint32_t* below, std::int64_t i,
                                                            std::int64_t s, double* row, CountBlock count_block) {
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
        row[j - i - 1] = seen > 0 ? static_cast<double>(shared) / static_cast<double>(seen) : 0.0;
    }
}

void minhash_row_scalar(const KmerView& t, const std::uint64_t* bits, const std::uint32_t* below,
                        std::int64_t i, std::int64_t s, double* row) {
    minhash_row_body(t, bits, below, i, s, row, [](const std::uint64_t* w, const std::uint32_t* b) {
        std::int64_t add = 0;
        for (std::int64_t c = 0; c < kBlock; ++c) add += in_row(w, b[c]);
        return add;
    });
}

#if defined(__x86_64__) && defined(__GNUC__)
// The block's bit tests by AVX2 gathers: 8 ranks a load, their 32-bit words of the bitmap
// gathered (bit u of the little-endian 64-bit words is bit u % 32 of 32-bit word u / 32).
__attribute__((target("avx2,popcnt"))) void minhash_row_avx2(const KmerView& t, const std::uint64_t* bits,
                                                             const std::uint32_t* below, std::int64_t i,
                                                             std::int64_t s, double* row) {
    minhash_row_body(t, bits, below, i, s, row,
                     [](const std::uint64_t* w, const std::uint32_t* b) __attribute__((target("avx2"))) {
                         const int* words = reinterpret_cast<const int*>(w);
                         const __m256i low5 = _mm256_set1_epi32(31), one = _mm256_set1_epi32(1);
                         const __m256i u0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b));
                         const __m256i u1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 8));
                         const __m256i g0 = _mm256_i32gather_epi32(words, _mm256_srli_epi32(u0, 5), 4);
                         const __m256i g1 = _mm256_i32gather_epi32(words, _mm256_srli_epi32(u1, 5), 4);
                         const __m256i h0 = _mm256_and_si256(_mm256_srlv_epi32(g0, _mm256_and_si256(u0, low5)), one);
                         const __m256i h1 = _mm256_and_si256(_mm256_srlv_epi32(g1, _mm256_and_si256(u1, low5)), one);
                         // the 16 lanes' 0/1: add the two vectors, then fold to one lane
                         const __m256i sum = _mm256_add_epi32(h0, h1);
                         const __m128i x = _mm_add_epi32(_mm256_castsi256_si128(sum), _mm256_extracti128_si256(sum, 1));
                         const __m128i y2 = _mm_add_epi32(x, _mm_shuffle_epi32(x, 0x4e));
                         const __m128i z = _mm_add_epi32(y2, _mm_shuffle_epi32(y2, 0xb1));
                         return static_cast<std::int64_t>(_mm_cvtsi128_si32(z));
                     });
}
#endif

void minhash_row(const KmerView& t, const std::uint64_t* bits, const std::uint32_t* below, std::int64_t i,
                 std::int64_t s, double* row) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (active_isa() >= Isa::Avx2) return minhash_row_avx2(t, bits, below, i, s, row);
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
            if (a[x] < b[y]) ++x;
            else if (b[y] < a[x]) ++y;
            else { shared += std::min(ca[x], cb[y]); ++x; ++y; }
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

// Mash's distance from a Jaccard estimate (0.0 - : no -0.0 for identical sets).
inline double mash_from_jaccard(double j, int k) {
    if (!(j > 0)) return 1.0;
    return std::min(0.0 - std::log(2.0 * j / (1.0 + j)) / k, 1.0);
}

template <typename T>
void kmer_rows_as(const KmerView& t, KmerMetric metric, std::int64_t sketch_size,
                  const std::int64_t* lengths, int k, std::int64_t i0, std::int64_t i1, T* out,
                  int threads) {
    const std::int64_t n = t.n;
    if (metric == KmerMetric::CountFraction && t.counts == nullptr)
        throw std::invalid_argument("the k-mer-count distance needs counts");
    if (metric == KmerMetric::MinHash && t.rank == nullptr)
        throw std::invalid_argument("the MinHash estimate needs value ranks");
    if (!(0 <= i0 && i0 <= i1 && i1 <= n)) throw std::invalid_argument("rows outside the table");
    const std::size_t words = metric == KmerMetric::MinHash ? t.universe / 64 + 1 : 0;
    const auto first = [n](std::int64_t i) { return i * n - i * (i + 1) / 2; };  // pairs before row i
#ifdef _OPENMP
#pragma omp parallel num_threads(resolve_threads(threads))
#else
    (void)threads;
#endif
    {
        std::vector<std::uint64_t> bits(words, 0);
        std::vector<std::uint32_t> below(words + 1, 0);  // row values in earlier words
        std::vector<double> row(static_cast<std::size_t>(n));  // similarities of one row
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 4)
#endif
        for (std::int64_t i = i0; i < i1; ++i) {
            if (metric == KmerMetric::MinHash) {
                const std::uint32_t* a = t.rank + t.offsets[i];
                const std::int64_t na = t.offsets[i + 1] - t.offsets[i];
                std::fill(bits.begin(), bits.end(), 0);
                for (std::int64_t x = 0; x < na; ++x) bits[a[x] >> 6] |= std::uint64_t(1) << (a[x] & 63);
                std::uint32_t run = 0;
                for (std::size_t w = 0; w < words; ++w) {
                    below[w] = run;
                    run += static_cast<std::uint32_t>(__builtin_popcountll(bits[w]));
                }
                minhash_row(t, bits.data(), below.data(), i, sketch_size, row.data());
            } else if (metric == KmerMetric::CountFraction) {
                count_row(t, lengths, k, i, row.data());
            } else {
                jaccard_row(t, i, row.data());
            }
            T* dst = out + (first(i) - first(i0));
            const std::int64_t m = n - i - 1;
            if (metric == KmerMetric::MinHash) {
                for (std::int64_t x = 0; x < m; ++x) dst[x] = static_cast<T>(mash_from_jaccard(row[x], k));
            } else {
                for (std::int64_t x = 0; x < m; ++x) dst[x] = static_cast<T>(1.0 - row[x]);
            }
        }
    }
}

}  // namespace

void kmer_rows(const KmerView& t, KmerMetric metric, std::int64_t sketch_size,
               const std::int64_t* lengths, int k, std::int64_t i0, std::int64_t i1, double* out,
               int threads) {
    kmer_rows_as(t, metric, sketch_size, lengths, k, i0, i1, out, threads);
}

void kmer_rows(const KmerView& t, KmerMetric metric, std::int64_t sketch_size,
               const std::int64_t* lengths, int k, std::int64_t i0, std::int64_t i1, float* out,
               int threads) {
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
    if (space > 1.8e19)
        throw std::invalid_argument("k = " + std::to_string(k) + " is too large for 64-bit k-mer codes with " +
                                    std::to_string(radix) + " letters");
    if (canonical && radix != 4) throw std::invalid_argument("canonical k-mers need the 4-letter DNA alphabet");
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
            fwd = (valid == k ? (fwd % top) : fwd) * static_cast<std::uint64_t>(radix) + static_cast<std::uint64_t>(d);
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
    for (std::int64_t s = 0; s < n; ++s) t.offsets[s + 1] = t.offsets[s] + static_cast<std::int64_t>(vals[s].size());
    t.values.resize(static_cast<std::size_t>(t.offsets[n]));
    if (with_counts) t.counts.resize(t.values.size());
    for (std::int64_t s = 0; s < n; ++s) {
        std::copy(vals[s].begin(), vals[s].end(), t.values.begin() + t.offsets[s]);
        if (with_counts) std::copy(cnts[s].begin(), cnts[s].end(), t.counts.begin() + t.offsets[s]);
    }
    return t;
}

}  // namespace bioaccel
