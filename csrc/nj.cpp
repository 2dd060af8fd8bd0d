#include "bioaccel/common.hpp"
#include "bioaccel/trees.hpp"

#include <algorithm>
#include <cstring>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

namespace bioaccel {
namespace {

struct Candidate {
    double q = std::numeric_limits<double>::infinity();
    std::int64_t lo = -1, hi = -1;  // slots, lo < hi
    bool better_than(const Candidate& o) const {
        if (q != o.q) return q < o.q;
        if (lo != o.lo) return lo < o.lo;
        return hi < o.hi;
    }
};

// One row of candidates: float lower bounds of the distances (rounded down) and node ids.
// Only the first `sorted` entries are in ascending order, and every later entry is at
// least as large as them (a partial sort: most row scans stop within a few entries).
struct SortedRow {
    std::vector<float> bound;
    std::vector<std::int32_t> node;
    std::size_t sorted = 0;
};

constexpr std::size_t kSortedPrefix = 256;

// Order-preserving map of a float onto uint32, so (bound, node) pairs sort as plain integers.
std::uint32_t orderable(float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

float from_orderable(std::uint32_t u) {
    u = (u & 0x80000000u) ? (u & 0x7fffffffu) : ~u;
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

float round_down(double v) {
    float f = static_cast<float>(v);
    if (static_cast<double>(f) > v) f = std::nextafter(f, -std::numeric_limits<float>::infinity());
    return f;
}

class Joiner {
public:
    Joiner(const double* d, std::int64_t n, int threads)
        : n_(n), threads_(resolve_threads(threads)), w_(d, d + n * n), r_(n, 0.0),
          node_of_slot_(n), slot_of_node_(2 * n, -1), rows_(n) {
        for (std::int64_t i = 0; i < n; ++i) {
            node_of_slot_[i] = i;
            slot_of_node_[i] = i;
            alive_.push_back(i);
        }
        recompute_sums();
        rebuild_rows();
    }

    EdgeList run() {
        EdgeList out;
        std::int64_t next_node = n_;
        while (alive_.size() > 3) {
            const Candidate best = full_scan_ ? find_min_q_full() : find_min_q();
            join(best.lo, best.hi, next_node++, out);
            if (!full_scan_ && alive_.size() * 2 <= alive_at_rebuild_) {
                recompute_sums();  // also sheds the rounding drift of the incremental sums
                rebuild_rows();
            }
        }
        const std::int64_t a = alive_[0], b = alive_[1], c = alive_[2];
        const double dab = at(a, b), dac = at(a, c), dbc = at(b, c);
        out.root = next_node;
        add_edge(out, next_node, node_of_slot_[a], (dab + dac - dbc) / 2);
        add_edge(out, next_node, node_of_slot_[b], (dab + dbc - dac) / 2);
        add_edge(out, next_node, node_of_slot_[c], (dac + dbc - dab) / 2);
        return out;
    }

private:
    double at(std::int64_t i, std::int64_t j) const { return w_[i * n_ + j]; }

    static void add_edge(EdgeList& e, std::int64_t p, std::int64_t c, double len) {
        e.parent.push_back(p);
        e.child.push_back(c);
        e.length.push_back(len);
    }

    void recompute_sums() {
        for (std::int64_t i : alive_) {
            double s = 0.0;
            for (std::int64_t k : alive_) s += at(i, k);
            r_[i] = s;
        }
    }

    // Row of slot i holds the alive slots after i in `alive_` order: every alive pair
    // then sits in exactly one row. Rows made later by joins hold all alive nodes.
    void rebuild_rows() {
        alive_at_rebuild_ = alive_.size();
        const std::int64_t m = static_cast<std::int64_t>(alive_.size());
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads_)
#endif
        for (std::int64_t p = 0; p < m; ++p) {
            const std::int64_t i = alive_[p];
            std::vector<std::int64_t> cols(alive_.begin() + p + 1, alive_.end());
            fill_row(i, cols);
        }
    }

    void fill_row(std::int64_t i, const std::vector<std::int64_t>& cols) {
        // sort (rounded-down distance, node id) packed in one integer: no indirection
        std::vector<std::uint64_t> keys(cols.size());
        for (std::size_t t = 0; t < cols.size(); ++t)
            keys[t] = (static_cast<std::uint64_t>(orderable(round_down(at(i, cols[t])))) << 32) |
                      static_cast<std::uint32_t>(node_of_slot_[cols[t]]);
        const std::size_t prefix = std::min(keys.size(), kSortedPrefix);
        if (prefix < keys.size()) std::nth_element(keys.begin(), keys.begin() + prefix, keys.end());
        std::sort(keys.begin(), keys.begin() + prefix);
        SortedRow& row = rows_[i];
        row.sorted = prefix;
        row.bound.resize(keys.size());
        row.node.resize(keys.size());
        for (std::size_t t = 0; t < keys.size(); ++t) {
            row.bound[t] = from_orderable(static_cast<std::uint32_t>(keys[t] >> 32));
            row.node[t] = static_cast<std::int32_t>(keys[t] & 0xffffffffu);
        }
        row.bound.shrink_to_fit();
        row.node.shrink_to_fit();
    }

    // Plain scan of every alive pair, row by row in memory order. Used once the bounds
    // stop pruning (near-star data, where many Q values are close): then the sorted rows
    // only cost memory and random accesses.
    Candidate find_min_q_full() const {
        const std::int64_t m = static_cast<std::int64_t>(alive_.size());
        const double scale = static_cast<double>(m - 2);
        Candidate best;
#ifdef _OPENMP
#pragma omp parallel num_threads(threads_)
#endif
        {
            Candidate local;
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 16) nowait
#endif
            for (std::int64_t p = 0; p < m - 1; ++p) {
                const std::int64_t i = alive_[p];
                const double* wi = &w_[i * n_];
                const double ri = r_[i];
                for (std::int64_t t = p + 1; t < m; ++t) {
                    const std::int64_t j = alive_[t];
                    const double q = scale * wi[j] - ri - r_[j];
                    if (q < local.q || (q == local.q && (i < local.lo || (i == local.lo && j < local.hi)))) {
                        local.q = q;
                        local.lo = i;  // alive_ is ascending, so i < j
                        local.hi = j;
                    }
                }
            }
#ifdef _OPENMP
#pragma omp critical
#endif
            if (local.better_than(best)) best = local;
        }
        if (best.lo < 0) throw std::runtime_error("neighbor_joining: no finite Q value (NaN distances?)");
        return best;
    }

    Candidate find_min_q() {
        const std::int64_t m = static_cast<std::int64_t>(alive_.size());
        const double scale = static_cast<double>(m - 2);
        double rmax = -std::numeric_limits<double>::infinity();
        for (std::int64_t i : alive_) rmax = std::max(rmax, r_[i]);
        Candidate best;
        std::int64_t visits = 0;
#ifdef _OPENMP
#pragma omp parallel num_threads(threads_) reduction(+ : visits)
#endif
        {
            Candidate local;
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 32) nowait
#endif
            for (std::int64_t p = 0; p < m; ++p) {
                const std::int64_t i = alive_[p];
                const SortedRow& row = rows_[i];
                const double ri = r_[i];
                const std::size_t len = row.bound.size();
                for (std::size_t t = 0; t < len; ++t) {
                    // fl() is monotone, so this bound never exceeds any q computed below
                    if (scale * static_cast<double>(row.bound[t]) - ri - rmax > local.q) {
                        if (t < row.sorted) break;  // everything after is at least as large
                        continue;                   // unsorted tail: skip just this one
                    }
                    ++visits;
                    const std::int64_t j = slot_of_node_[row.node[t]];
                    if (j < 0) continue;  // that node has been joined since this row was made
                    Candidate c;
                    c.q = scale * at(i, j) - ri - r_[j];
                    c.lo = std::min(i, j);
                    c.hi = std::max(i, j);
                    if (c.better_than(local)) local = c;
                }
            }
#ifdef _OPENMP
#pragma omp critical
#endif
            if (local.better_than(best)) best = local;
        }
        if (best.lo < 0) throw std::runtime_error("neighbor_joining: no finite Q value (NaN distances?)");
        // Bounds that let through more than a quarter of all pairs no longer pay for the
        // sorted rows: switch to plain scans for the rest of the run (same answer either way).
        if (visits * 4 > m * (m - 1) / 2 && m > 64) {
            full_scan_ = true;
            rows_.clear();
            rows_.shrink_to_fit();
        }
        return best;
    }

    void join(std::int64_t i, std::int64_t j, std::int64_t u, EdgeList& out) {
        const double m = static_cast<double>(alive_.size());
        const double dij = at(i, j);
        const double li = (dij + (r_[i] - r_[j]) / (m - 2)) / 2;
        add_edge(out, u, node_of_slot_[i], li);
        add_edge(out, u, node_of_slot_[j], dij - li);

        slot_of_node_[node_of_slot_[i]] = -1;
        slot_of_node_[node_of_slot_[j]] = -1;
        alive_.erase(std::find(alive_.begin(), alive_.end(), j));
        if (!full_scan_) rows_[j] = SortedRow();

        double ru = 0.0;
        for (std::int64_t k : alive_) {
            if (k == i) continue;
            const double dik = at(i, k), djk = at(j, k);
            const double duk = (dik + djk - dij) / 2;
            r_[k] += duk - dik - djk;
            w_[i * n_ + k] = w_[k * n_ + i] = duk;
            ru += duk;
        }
        w_[i * n_ + i] = 0.0;
        r_[i] = ru;
        node_of_slot_[i] = u;
        slot_of_node_[u] = i;

        if (full_scan_) return;
        std::vector<std::int64_t> cols;
        cols.reserve(alive_.size());
        for (std::int64_t k : alive_)
            if (k != i) cols.push_back(k);
        fill_row(i, cols);
    }

    std::int64_t n_;
    int threads_;
    std::vector<double> w_;                 // working distances, indexed by slot
    std::vector<double> r_;                 // row sums over alive slots
    std::vector<std::int64_t> node_of_slot_;
    std::vector<std::int64_t> slot_of_node_;  // -1 once a node has been joined
    std::vector<std::int64_t> alive_;       // alive slots, ascending
    std::vector<SortedRow> rows_;
    std::size_t alive_at_rebuild_ = 0;
    bool full_scan_ = false;
};

}  // namespace

EdgeList neighbor_joining(const double* d, std::int64_t n, int threads) {
    if (n < 3) throw std::invalid_argument("neighbor_joining needs at least 3 taxa, got " + std::to_string(n));
    if (n > std::numeric_limits<std::int32_t>::max() / 2)
        throw std::invalid_argument("neighbor_joining: too many taxa (" + std::to_string(n) + ")");
    for (std::int64_t t = 0; t < n * n; ++t)
        if (!std::isfinite(d[t]))
            throw std::invalid_argument("neighbor_joining: distance at row " + std::to_string(t / n) +
                                        ", column " + std::to_string(t % n) + " is not finite");
    Joiner joiner(d, n, threads);
    return joiner.run();
}

}  // namespace bioaccel
