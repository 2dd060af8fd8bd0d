#include "bioaccel/trees.hpp"

#include "bioaccel/common.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace bioaccel {
namespace {

inline std::size_t tri(std::int64_t i, std::int64_t j, std::int64_t n) {
    return static_cast<std::size_t>(condensed_index(i, j, n));
}

struct Merge {
    std::int64_t a, b;  // slots merged; the new cluster takes slot b
    double dist;
};

}  // namespace

EdgeList upgma(const double* d, std::int64_t n) {
    if (n < 2) throw std::invalid_argument("upgma needs at least 2 taxa, got " + std::to_string(n));
    std::vector<double> c(static_cast<std::size_t>(n) * (n - 1) / 2);
    for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t j = i + 1; j < n; ++j) {
            const double v = d[i * n + j];
            if (!std::isfinite(v))
                throw std::invalid_argument("upgma: distance at row " + std::to_string(i) + ", column " +
                                            std::to_string(j) + " is not finite");
            c[tri(i, j, n)] = v;
        }
    std::vector<std::int64_t> size(n, 1);
    std::vector<char> active(n, 1);
    std::vector<Merge> merges;
    merges.reserve(n - 1);
    std::vector<std::int64_t> chain;
    chain.reserve(n);

    // Nearest-neighbour chain (Murtagh 1983): exact for reducible linkages such as average.
    while (static_cast<std::int64_t>(merges.size()) < n - 1) {
        if (chain.empty()) {
            std::int64_t first = 0;
            while (!active[first]) ++first;
            chain.push_back(first);
        }
        for (;;) {
            const std::int64_t a = chain.back();
            const std::int64_t prev = chain.size() >= 2 ? chain[chain.size() - 2] : -1;
            std::int64_t b = prev;
            double best = prev >= 0 ? c[tri(a, prev, n)] : std::numeric_limits<double>::infinity();
            for (std::int64_t k = 0; k < n; ++k) {
                if (!active[k] || k == a) continue;
                const double v = c[tri(a, k, n)];
                if (v < best) {  // strict: the chain predecessor wins ties, so the chain ends
                    best = v;
                    b = k;
                }
            }
            if (b == prev) {
                chain.pop_back();
                chain.pop_back();
                merges.push_back({a, b, best});
                const double sa = static_cast<double>(size[a]), sb = static_cast<double>(size[b]);
                for (std::int64_t k = 0; k < n; ++k) {
                    if (!active[k] || k == a || k == b) continue;
                    c[tri(b, k, n)] = (sa * c[tri(a, k, n)] + sb * c[tri(b, k, n)]) / (sa + sb);
                }
                active[a] = 0;
                size[b] += size[a];
                break;
            }
            chain.push_back(b);
        }
    }

    // Replay the merges in the order they happened (a merge always follows the ones that
    // built its two clusters), placing each new node at height dist / 2.
    std::vector<std::int64_t> node_of_slot(n);
    std::vector<double> height_of_slot(n, 0.0);
    for (std::int64_t i = 0; i < n; ++i) node_of_slot[i] = i;
    EdgeList out;
    std::int64_t next = n;
    for (const Merge& m : merges) {
        const double h = m.dist / 2;
        out.parent.push_back(next);
        out.child.push_back(node_of_slot[m.a]);
        out.length.push_back(h - height_of_slot[m.a]);
        out.parent.push_back(next);
        out.child.push_back(node_of_slot[m.b]);
        out.length.push_back(h - height_of_slot[m.b]);
        node_of_slot[m.b] = next;
        height_of_slot[m.b] = h;
        ++next;
    }
    out.root = next - 1;
    return out;
}

}  // namespace bioaccel
