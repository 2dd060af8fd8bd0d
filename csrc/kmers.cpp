#include "bioaccel/kmers.hpp"

#include "bioaccel/common.hpp"

#include <algorithm>
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
// later row j, into row[j - i - 1]. Cloned per instruction set for hardware popcount.
BIOACCEL_CLONES
void minhash_row(const KmerView& t, const std::uint64_t* bits, const std::uint32_t* below,
                 std::int64_t i, std::int64_t s, double* row) {
    const std::int64_t n = t.n;
    const std::int64_t na = t.offsets[i + 1] - t.offsets[i];
    for (std::int64_t j = i + 1; j < n; ++j) {
        const std::uint32_t* b = t.rank + t.offsets[j];
        const std::int64_t nb = t.offsets[j + 1] - t.offsets[j];
        std::int64_t shared = 0, seen = -1;
        for (std::int64_t y = 0; y < nb; ++y) {
            const std::uint32_t u = b[y];
            const std::uint64_t word = bits[u >> 6];
            const std::uint64_t bit = std::uint64_t(1) << (u & 63);
            const std::int64_t lower = below[u >> 6] + __builtin_popcountll(word & (bit - 1));
            // union values up to u: row i's below u, plus b's first y + 1, less those shared
            if (lower + y + 1 - shared > s) {
                seen = s;
                break;
            }
            shared += (word & bit) != 0;
        }
        if (seen < 0) seen = std::min<std::int64_t>(s, na + nb - shared);
        row[j - i - 1] = seen > 0 ? static_cast<double>(shared) / static_cast<double>(seen) : 0.0;
    }
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

void kmer_rows(const KmerView& t, KmerMetric metric, std::int64_t sketch_size,
               const std::int64_t* lengths, int k, std::int64_t i0, std::int64_t i1, double* out,
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
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 4)
#endif
        for (std::int64_t i = i0; i < i1; ++i) {
            double* row = out + (first(i) - first(i0));
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
                minhash_row(t, bits.data(), below.data(), i, sketch_size, row);
            } else if (metric == KmerMetric::CountFraction) {
                count_row(t, lengths, k, i, row);
            } else {
                jaccard_row(t, i, row);
            }
        }
    }
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
