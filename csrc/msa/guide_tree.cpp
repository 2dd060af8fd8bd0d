// Single-linkage guide trees (as FAMSA's default): SLINK's pointer representation, fed one
// row of distances at a time, so neither the condensed matrix nor the LCS stream is kept
// whole.
#include <algorithm>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "bioaccel/common.hpp"
#include "bioaccel/msa.hpp"

namespace bioaccel {
namespace msa {

Slink::Slink(std::int64_t n) : pi_(n), lambda_(n), m_(n) {}

void Slink::add(const float* d) {
    constexpr float kInf = std::numeric_limits<float>::infinity();
    if (added_ >= size()) throw std::logic_error("SLINK: every point is in already");
    const std::int64_t i = added_++;
    pi_[i] = i;
    lambda_[i] = kInf;
    std::copy(d, d + i, m_.begin());
    for (std::int64_t j = 0; j < i; ++j) {
        const std::int64_t p = pi_[j];
        if (lambda_[j] >= m_[j]) {
            m_[p] = std::min(m_[p], lambda_[j]);
            lambda_[j] = m_[j];
            pi_[j] = i;
        } else {
            m_[p] = std::min(m_[p], m_[j]);
        }
    }
    for (std::int64_t j = 0; j < i; ++j)
        if (lambda_[j] >= lambda_[pi_[j]]) pi_[j] = i;
}

void Slink::merges(std::int64_t* merges, double* heights) const {
    const std::int64_t n = size();
    if (added_ != n) throw std::logic_error("SLINK: merges asked before every point is in");
    if (n < 2) return;
    std::vector<std::int64_t> order(n - 1);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::int64_t a, std::int64_t b) { return lambda_[a] < lambda_[b]; });
    std::vector<std::int64_t> root(n), node(n);
    std::iota(root.begin(), root.end(), 0);
    std::iota(node.begin(), node.end(), 0);
    auto find = [&](std::int64_t x) {
        while (root[x] != x) x = root[x] = root[root[x]];
        return x;
    };
    for (std::int64_t k = 0; k < n - 1; ++k) {
        const std::int64_t j = order[k];
        const std::int64_t ra = find(j), rb = find(pi_[j]);
        const std::int64_t na = node[ra], nb = node[rb];
        merges[2 * k] = std::min(na, nb);
        merges[2 * k + 1] = std::max(na, nb);
        if (heights) heights[k] = lambda_[j];
        root[ra] = rb;
        node[rb] = n + k;
    }
}

void single_linkage(const float* condensed, std::int64_t n, std::int64_t* merges, double* heights) {
    if (n < 2) return;
    Slink slink(n);
    std::vector<float> row(n);
    for (std::int64_t i = 0; i < n; ++i) {
        for (std::int64_t j = 0; j < i; ++j) row[j] = condensed[condensed_index(j, i, n)];
        slink.add(row.data());
    }
    slink.merges(merges, heights);
}

void single_linkage_lcs(const SeqView& seqs, int letters, const std::int64_t* rows, std::int64_t n,
                        int threads, std::int64_t* merges, double* heights) {
    if (letters < 1 || letters > 255) throw std::invalid_argument("letters must be in [1, 255]");
    if (n < 2) return;
    constexpr int kLanes = LcsRowKernel::kLanes;
    constexpr std::int64_t kTargetChunk = 512;
    const int workers = resolve_threads(threads);
    // rows [i0, i0 + block) are computed together: enough groups of eight to share out
    const std::int64_t block = std::min<std::int64_t>(n, std::int64_t(kLanes) * 8 * workers);
    std::vector<float> rowbuf(static_cast<std::size_t>(block * n));
    Slink slink(n);
    for (std::int64_t i0 = 0; i0 < n; i0 += block) {
        const std::int64_t rows_here = std::min(block, n - i0);
        const std::int64_t groups = (rows_here + kLanes - 1) / kLanes;
        const std::int64_t targets = i0 + rows_here - 1;  // j < i for the block's last row
        const std::int64_t chunks = std::max<std::int64_t>((targets + kTargetChunk - 1) / kTargetChunk, 1);
#pragma omp parallel num_threads(workers)
        {
            LcsRowKernel kernel;
            float d[kLanes];
#pragma omp for schedule(dynamic, 1) collapse(2)
            for (std::int64_t g = 0; g < groups; ++g) {
                for (std::int64_t c = 0; c < chunks; ++c) {
                    const std::int64_t q0 = i0 + g * kLanes;
                    const int count = static_cast<int>(std::min<std::int64_t>(kLanes, i0 + rows_here - q0));
                    const std::int64_t j_end = std::min(q0 + count - 1, (c + 1) * kTargetChunk);
                    if (c * kTargetChunk >= j_end) continue;
                    kernel.set_queries(seqs, rows + q0, count, letters);
                    for (std::int64_t j = c * kTargetChunk; j < j_end; ++j) {
                        kernel.distances_to(rows[j], d);
                        for (int l = 0; l < count; ++l)
                            if (j < q0 + l) rowbuf[static_cast<std::size_t>((q0 + l - i0) * n + j)] = d[l];
                    }
                }
            }
        }
        for (std::int64_t r = 0; r < rows_here; ++r) slink.add(rowbuf.data() + r * n);
    }
    slink.merges(merges, heights);
}

}  // namespace msa
}  // namespace bioaccel
