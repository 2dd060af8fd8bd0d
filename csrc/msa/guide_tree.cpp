// Distances for the guide tree (bit-parallel LCS, as FAMSA) and single-linkage merges.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

#include "bioaccel/common.hpp"
#include "bioaccel/msa.hpp"

namespace bioaccel {
namespace msa {

namespace {

// Match masks of one sequence: for each letter below `letters`, the bits of its positions.
struct MatchMasks {
    int words = 0;
    std::vector<std::uint64_t> bits;  // letters x words
    void build(const std::uint8_t* s, std::int64_t len, int letters) {
        words = static_cast<int>((len + 63) / 64);
        bits.assign(static_cast<std::size_t>(letters) * std::max(words, 1), 0);
        for (std::int64_t k = 0; k < len; ++k)
            if (s[k] < letters) bits[static_cast<std::size_t>(s[k]) * words + k / 64] |= 1ULL << (k % 64);
    }
};

// LCS length of a (as masks, length la) and b: Allison-Dix / Hyyro's bit-vector recurrence
// V' = (V + (V & M)) | (V & ~M), the LCS being the number of zero bits of V at the end.
std::int64_t lcs_length(const MatchMasks& ma, std::int64_t la, const std::uint8_t* b,
                        std::int64_t lb, int letters, std::vector<std::uint64_t>& v) {
    const int w = ma.words;
    if (w == 0 || lb == 0) return 0;
    v.assign(w, ~0ULL);
    for (std::int64_t k = 0; k < lb; ++k) {
        if (b[k] >= letters) continue;  // never matches
        const std::uint64_t* m = ma.bits.data() + static_cast<std::size_t>(b[k]) * w;
        std::uint64_t carry = 0;
        for (int x = 0; x < w; ++x) {
            const std::uint64_t u = v[x] & m[x];
            const std::uint64_t sum = v[x] + u + carry;
            carry = (sum < v[x]) || (carry && sum == v[x]) ? 1 : 0;
            v[x] = sum | (v[x] - u);
        }
    }
    std::int64_t ones = 0;
    for (int x = 0; x < w; ++x) {
        std::uint64_t word = v[x];
        if (x == w - 1 && la % 64) word |= ~0ULL << (la % 64);  // bits past the end count as 1
        ones += __builtin_popcountll(word);
    }
    return static_cast<std::int64_t>(w) * 64 - ones;
}

}  // namespace

double lcs_distance(std::int64_t la, std::int64_t lb, std::int64_t lcs) {
    if (lcs == 0) return std::numeric_limits<float>::max();
    return std::pow(static_cast<double>(la + lb - 2 * lcs), 0.75) / static_cast<double>(lcs);
}

void lcs_distances(const SeqView& seqs, int letters, const std::int64_t* rows_a,
                   std::int64_t na, const std::int64_t* rows_b, std::int64_t nb, bool condensed,
                   float* out, int threads) {
    if (letters < 1 || letters > 255) throw std::invalid_argument("letters must be in [1, 255]");
    const int workers = resolve_threads(threads);
    (void)workers;  // unused when built without OpenMP
#pragma omp parallel num_threads(workers)
    {
        MatchMasks masks;
        std::vector<std::uint64_t> v;
#pragma omp for schedule(dynamic, 1)
        for (std::int64_t i = 0; i < na; ++i) {
            const std::int64_t a = rows_a[i];
            masks.build(seqs.seq(a), seqs.length(a), letters);
            // condensed: pairs (i, j > i) of rows_a with itself, row i starting after the
            // pairs of rows 0..i-1
            const std::int64_t j0 = condensed ? i + 1 : 0;
            const std::int64_t jn = condensed ? na : nb;
            const std::int64_t base = condensed ? i * na - i * (i + 1) / 2 : i * nb;
            for (std::int64_t j = j0; j < jn; ++j) {
                const std::int64_t b = condensed ? rows_a[j] : rows_b[j];
                const std::int64_t l = lcs_length(masks, seqs.length(a), seqs.seq(b),
                                                  seqs.length(b), letters, v);
                out[base + (condensed ? j - i - 1 : j)] =
                    static_cast<float>(lcs_distance(seqs.length(a), seqs.length(b), l));
            }
        }
    }
}

void single_linkage(const float* condensed, std::int64_t n, std::int64_t* merges,
                    double* heights) {
    if (n < 2) return;
    auto d = [&](std::int64_t i, std::int64_t j) {
        if (i > j) std::swap(i, j);
        return condensed[i * n - i * (i + 1) / 2 + j - i - 1];
    };
    // Prim's minimum spanning tree from tip 0; ties go to the lower index
    std::vector<float> best(n, std::numeric_limits<float>::infinity());
    std::vector<std::int64_t> from(n, -1);
    std::vector<char> in(n, 0);
    struct Edge {
        float w;
        std::int64_t a, b;
    };
    std::vector<Edge> edges;
    edges.reserve(n - 1);
    std::int64_t cur = 0;
    in[0] = 1;
    for (std::int64_t step = 1; step < n; ++step) {
        std::int64_t next = -1;
        for (std::int64_t j = 0; j < n; ++j) {
            if (in[j]) continue;
            const float w = d(cur, j);
            if (w < best[j]) {
                best[j] = w;
                from[j] = cur;
            }
            if (next < 0 || best[j] < best[next]) next = j;
        }
        in[next] = 1;
        edges.push_back({best[next], std::min(from[next], next), std::max(from[next], next)});
        cur = next;
    }
    std::stable_sort(edges.begin(), edges.end(), [](const Edge& x, const Edge& y) {
        if (x.w != y.w) return x.w < y.w;
        if (x.a != y.a) return x.a < y.a;
        return x.b < y.b;
    });
    // Kruskal order over the MST edges gives the single-linkage merges
    std::vector<std::int64_t> root(n), node(n);
    std::iota(root.begin(), root.end(), 0);
    std::iota(node.begin(), node.end(), 0);
    auto find = [&](std::int64_t x) {
        while (root[x] != x) x = root[x] = root[root[x]];
        return x;
    };
    for (std::int64_t k = 0; k < n - 1; ++k) {
        const std::int64_t ra = find(edges[k].a), rb = find(edges[k].b);
        const std::int64_t na = node[ra], nb = node[rb];
        merges[2 * k] = std::min(na, nb);
        merges[2 * k + 1] = std::max(na, nb);
        if (heights) heights[k] = edges[k].w;
        root[rb] = ra;
        node[ra] = n + k;
    }
}

}  // namespace msa
}  // namespace bioaccel
