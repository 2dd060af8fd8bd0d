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

// The tie rule of every NJ backend (documented in bioaccel.trees._tree.nj): Q values within
// kTieRtol x (largest |row sum|) of the minimum Q are ties, and a tie goes to the pair
// with the smallest (lower node id, higher node id). Node ids do not depend on how a
// backend lays out its working matrix, and the window absorbs the last-bit differences
// between backends' sums (incremental or recomputed, fused or not).
constexpr double kTieRtol = 1e-9;

struct Candidate {
    double q = std::numeric_limits<double>::infinity();
    std::int64_t lo = -1, hi = -1;  // slots
    std::int64_t a = -1, b = -1;    // node ids, a < b
    bool key_before(const Candidate& o) const {
        if (o.lo < 0) return true;
        if (a != o.a) return a < o.a;
        return b < o.b;
    }
};

// Candidates within the tie window of the running minimum Q. Adding keeps every
// candidate with q <= min + tol; the window only moves down, so the candidates that end
// within the final window are never dropped. Thread-local lists merge by `merge`.
class TieSet {
public:
    explicit TieSet(double tol) : tol_(tol) {}
    double limit() const { return qmin_ + tol_; }
    void add(double q, std::int64_t i, std::int64_t j, const std::vector<std::int64_t>& node_of_slot) {
        if (!(q <= qmin_ + tol_)) return;
        Candidate c;
        c.q = q;
        c.lo = std::min(i, j);
        c.hi = std::max(i, j);
        c.a = std::min(node_of_slot[i], node_of_slot[j]);
        c.b = std::max(node_of_slot[i], node_of_slot[j]);
        if (q < qmin_) {
            qmin_ = q;
            prune();
        }
        list_.push_back(c);
    }
    void merge(const TieSet& o) {
        if (o.qmin_ < qmin_) qmin_ = o.qmin_;
        for (const Candidate& c : o.list_)
            if (c.q <= qmin_ + tol_) list_.push_back(c);
        prune();
    }
    Candidate best() const {
        Candidate out;
        for (const Candidate& c : list_)
            if (c.q <= qmin_ + tol_ && c.key_before(out)) out = c;
        return out;
    }

private:
    void prune() {
        const double lim = qmin_ + tol_;
        list_.erase(std::remove_if(list_.begin(), list_.end(), [lim](const Candidate& c) { return !(c.q <= lim); }),
                    list_.end());
    }
    double tol_;
    double qmin_ = std::numeric_limits<double>::infinity();
    std::vector<Candidate> list_;
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

// Alive clusters occupy slots 0..m-1 of the working matrix (row stride n): a join puts
// the new cluster in the lower slot and moves the last slot into the freed one, so every
// scan runs over contiguous memory.
class Joiner {
public:
    Joiner(const double* d, std::int64_t n, int threads)
        : n_(n), m_(n), threads_(resolve_threads(threads)), w_(d, d + n * n), r_(n, 0.0),
          node_of_slot_(n), slot_of_node_(2 * n, -1), rows_(n) {
        for (std::int64_t i = 0; i < n; ++i) {
            node_of_slot_[i] = i;
            slot_of_node_[i] = i;
        }
        recompute_sums();
        m_at_rebuild_ = n;
        rebuild_rows();
    }

    EdgeList run() {
        EdgeList out;
        std::int64_t next_node = n_;
        while (m_ > 3) {
            const Candidate best = full_scan_ ? find_min_q_full() : find_min_q();
            join(best.lo, best.hi, next_node++, out);
            if (m_ * 2 <= m_at_rebuild_) {
                recompute_sums();  // sheds the rounding drift of the incremental sums
                m_at_rebuild_ = m_;
                if (!full_scan_) rebuild_rows();
            }
        }
        const double dab = at(0, 1), dac = at(0, 2), dbc = at(1, 2);
        out.root = next_node;
        add_edge(out, next_node, node_of_slot_[0], (dab + dac - dbc) / 2);
        add_edge(out, next_node, node_of_slot_[1], (dab + dbc - dac) / 2);
        add_edge(out, next_node, node_of_slot_[2], (dac + dbc - dab) / 2);
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
        for (std::int64_t i = 0; i < m_; ++i) {
            double s = 0.0;
            const double* wi = &w_[i * n_];
            for (std::int64_t k = 0; k < m_; ++k) s += wi[k];
            r_[i] = s;
        }
    }

    // Row of slot i holds the slots after i: every alive pair then sits in one row.
    // Rows made later by joins hold all alive nodes.
    void rebuild_rows() {
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads_)
#endif
        for (std::int64_t i = 0; i < m_; ++i) fill_row(i, i + 1);
    }

    // Candidates of slot i: the slots from `first` on, except i itself.
    void fill_row(std::int64_t i, std::int64_t first) {
        // sort (rounded-down distance, node id) packed in one integer: no indirection
        std::vector<std::uint64_t> keys;
        keys.reserve(static_cast<std::size_t>(m_ - first));
        for (std::int64_t k = first; k < m_; ++k)
            if (k != i)
                keys.push_back((static_cast<std::uint64_t>(orderable(round_down(at(i, k)))) << 32) |
                               static_cast<std::uint32_t>(node_of_slot_[k]));
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

    // Tie window of this step: kTieRtol x the largest |row sum|.
    double tie_tolerance() const {
        double big = 0.0;
        for (std::int64_t i = 0; i < m_; ++i) big = std::max(big, std::fabs(r_[i]));
        return kTieRtol * big;
    }

    // Plain scan of every alive pair in memory order: used once the bounds stop pruning
    // (near-star data, where many Q values are close). A vectorisable pass finds each
    // row's minimum; the row's pairs are looked at only when that minimum can be a tie.
    Candidate find_min_q_full() const {
        const double scale = static_cast<double>(m_ - 2);
        const double* r = r_.data();
        const double tol = tie_tolerance();
        TieSet ties(tol);
#ifdef _OPENMP
#pragma omp parallel num_threads(threads_)
#endif
        {
            TieSet local(tol);
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 16) nowait
#endif
            for (std::int64_t i = 0; i < m_ - 1; ++i) {
                const double* wi = &w_[i * n_];
                const double ri = r[i];
                double row_min = std::numeric_limits<double>::infinity();
#ifdef _OPENMP
#pragma omp simd reduction(min : row_min)
#endif
                for (std::int64_t j = i + 1; j < m_; ++j) row_min = std::min(row_min, scale * wi[j] - ri - r[j]);
                if (!(row_min <= local.limit())) continue;
                for (std::int64_t j = i + 1; j < m_; ++j) local.add(scale * wi[j] - ri - r[j], i, j, node_of_slot_);
            }
#ifdef _OPENMP
#pragma omp critical
#endif
            ties.merge(local);
        }
        const Candidate best = ties.best();
        if (best.lo < 0) throw std::runtime_error("neighbor_joining: no finite Q value (NaN distances?)");
        return best;
    }

    Candidate find_min_q() {
        const double scale = static_cast<double>(m_ - 2);
        double rmax = -std::numeric_limits<double>::infinity();
        for (std::int64_t i = 0; i < m_; ++i) rmax = std::max(rmax, r_[i]);
        const double tol = tie_tolerance();
        TieSet ties(tol);
        std::int64_t visits = 0;
#ifdef _OPENMP
#pragma omp parallel num_threads(threads_) reduction(+ : visits)
#endif
        {
            TieSet local(tol);
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 32) nowait
#endif
            for (std::int64_t i = 0; i < m_; ++i) {
                const SortedRow& row = rows_[i];
                const double ri = r_[i];
                const std::size_t len = row.bound.size();
                for (std::size_t t = 0; t < len; ++t) {
                    // fl() is monotone, so this bound never exceeds any q computed below
                    if (scale * static_cast<double>(row.bound[t]) - ri - rmax > local.limit()) {
                        if (t < row.sorted) break;  // everything after is at least as large
                        continue;                   // unsorted tail: skip just this one
                    }
                    ++visits;
                    const std::int64_t j = slot_of_node_[row.node[t]];
                    if (j < 0) continue;  // that node has been joined since this row was made
                    local.add(scale * at(i, j) - ri - r_[j], i, j, node_of_slot_);
                }
            }
#ifdef _OPENMP
#pragma omp critical
#endif
            ties.merge(local);
        }
        const Candidate best = ties.best();
        if (best.lo < 0) throw std::runtime_error("neighbor_joining: no finite Q value (NaN distances?)");
        // Bounds that let through more than a quarter of all pairs no longer pay for the
        // sorted rows: switch to plain scans for the rest of the run (same answer either way).
        if (visits * 4 > m_ * (m_ - 1) / 2 && m_ > 64) {
            full_scan_ = true;
            rows_.clear();
            rows_.shrink_to_fit();
        }
        return best;
    }

    // Join slots i < j into node u: u takes slot i, the last slot moves into slot j.
    void join(std::int64_t i, std::int64_t j, std::int64_t u, EdgeList& out) {
        const double m = static_cast<double>(m_);
        const double dij = at(i, j);
        const double li = (dij + (r_[i] - r_[j]) / (m - 2)) / 2;
        add_edge(out, u, node_of_slot_[i], li);
        add_edge(out, u, node_of_slot_[j], dij - li);
        slot_of_node_[node_of_slot_[i]] = -1;
        slot_of_node_[node_of_slot_[j]] = -1;

        double ru = 0.0;
        for (std::int64_t k = 0; k < m_; ++k) {
            if (k == i || k == j) continue;
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

        const std::int64_t last = m_ - 1;
        if (j != last) {  // move the last slot into j
            for (std::int64_t k = 0; k < m_; ++k) {
                w_[j * n_ + k] = w_[last * n_ + k];
                w_[k * n_ + j] = w_[k * n_ + last];
            }
            w_[j * n_ + j] = 0.0;
            r_[j] = r_[last];
            node_of_slot_[j] = node_of_slot_[last];
            slot_of_node_[node_of_slot_[j]] = j;
            if (!full_scan_) rows_[j] = std::move(rows_[last]);
        }
        if (!full_scan_) rows_[last] = SortedRow();
        --m_;
        if (!full_scan_) fill_row(i, 0);
    }

    std::int64_t n_;  // row stride of w_
    std::int64_t m_;  // alive clusters, in slots 0..m_-1
    int threads_;
    std::vector<double> w_;                   // working distances, indexed by slot
    std::vector<double> r_;                   // row sums over alive slots
    std::vector<std::int64_t> node_of_slot_;
    std::vector<std::int64_t> slot_of_node_;  // -1 once a node has been joined
    std::vector<SortedRow> rows_;
    std::int64_t m_at_rebuild_ = 0;
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
