#include "bioaccel/common.hpp"
#include "bioaccel/trees.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

#if defined(__linux__)
#include <sys/mman.h>
#endif

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
        list_.erase(
            std::remove_if(list_.begin(), list_.end(), [lim](const Candidate& c) { return !(c.q <= lim); }),
            list_.end());
    }
    double tol_;
    double qmin_ = std::numeric_limits<double>::infinity();
    std::vector<Candidate> list_;
};

// One row of candidates, each a float lower bound of the distance (rounded down) and a
// node id packed in one integer (key_of). Only the first `sorted` entries are in ascending
// order, and every later entry is at least as large as them (a partial sort: most row
// scans stop within a few entries).
struct SortedRow {
    std::vector<std::uint64_t> key;
    std::size_t sorted = 0;
    bool truncated = false;  // only the sorted prefix is kept: the rest is read from the matrix
};

constexpr std::size_t kSortedPrefix = 256;

// Low-memory mode keeps this many candidates per row (8 bytes each): n x 384 bytes, next to
// the n^2 / 2 x 4 bytes of the matrix. A row whose scan runs past them unstopped is scanned
// from the matrix itself. (64 ran 2-4% faster at n = 10,000 and cost 1.3 MiB more there: the
// margin under QuickTree's memory, about 0.9 KiB per taxon, is kept at every n from 5,000.)
constexpr std::size_t kLowMemoryPrefix = 48;

// A step's scan runs on several threads only when it has at least this many Q values to
// look at: below it, waking the team and joining it at the barrier costs more than the
// scan (microseconds on an idle machine, a scheduler time slice when other processes
// share the cores, which turned n = 2,000 from 0.2 s on one thread into 2 s on two).
constexpr std::int64_t kParallelWork = std::int64_t{1} << 20;

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

// (orderable(largest float <= v) << 32) | node: consecutive floats have consecutive
// orderable codes (-0 and +0 too, and both are <= any v that rounded to +0), so rounding
// down is one subtraction.
std::uint64_t key_of(double v, std::int64_t node) {
    const float f = static_cast<float>(v);
    const std::uint32_t code = orderable(f) - static_cast<std::uint32_t>(static_cast<double>(f) > v);
    return (static_cast<std::uint64_t>(code) << 32) | static_cast<std::uint32_t>(node);
}

float bound_of(std::uint64_t key) {
    return from_orderable(static_cast<std::uint32_t>(key >> 32));
}
std::int64_t node_of(std::uint64_t key) {
    return static_cast<std::int64_t>(key & 0xffffffffu);
}

// The working copy of an n x n matrix, on 2 MiB pages where the kernel grants them: every
// join walks a column (one element per row), and on 4 KiB pages each of those is also a TLB
// miss. (NumPy asks the same for its large arrays, so in-place input has them already.)
struct Matrix {
    struct Free {
        void operator()(double* p) const { std::free(p); }
    };
    std::unique_ptr<double[], Free> data;
    static Matrix copy_of(const double* d, std::int64_t count) {
        constexpr std::size_t kHuge = std::size_t{1} << 21;
        const std::size_t bytes =
            (static_cast<std::size_t>(count) * sizeof(double) + kHuge - 1) / kHuge * kHuge;
        Matrix m;
        m.data.reset(static_cast<double*>(std::aligned_alloc(kHuge, bytes)));
        if (!m.data) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
        madvise(m.data.get(), bytes, MADV_HUGEPAGE);  // advice only: failure changes nothing
#endif
        std::memcpy(m.data.get(), d, static_cast<std::size_t>(count) * sizeof(double));
        return m;
    }
};

// The working matrix of the Joiner, indexed by slot. Both give d(i, j) as a double, write a
// joined row, move a slot, sum rows, and expose the part j > i of row i as a pointer.

// Dense n x n float64, row-major (row stride n): exact mode.
struct SquareStore {
    static constexpr bool kSquare = true;
    double* w;
    std::int64_t n;
    double get(std::int64_t i, std::int64_t j) const { return w[i * n + j]; }
    // p[j] = d(i, j) for j > i
    const double* upper(std::int64_t i) const { return w + i * n; }
    // returns the value as stored
    double set(std::int64_t i, std::int64_t k, double v) { return w[i * n + k] = w[k * n + i] = v; }
    void clear_diagonal(std::int64_t i) { w[i * n + i] = 0.0; }
    void move_slot(std::int64_t last, std::int64_t j, std::int64_t m) {
        for (std::int64_t k = 0; k < m; ++k) {
            w[j * n + k] = w[last * n + k];
            w[k * n + j] = w[k * n + last];
        }
        w[j * n + j] = 0.0;
    }
    void row_sums(double* r, std::int64_t m) const {
        for (std::int64_t i = 0; i < m; ++i) {
            double s = 0.0;
            const double* wi = &w[i * n];
            for (std::int64_t k = 0; k < m; ++k) s += wi[k];
            r[i] = s;
        }
    }
};

// Condensed float32 upper triangle (SciPy's and R's dist order, the .cdist layout): d(i, j),
// i < j, at i (2n - i - 1) / 2 + j - i - 1. Low-memory mode: n (n - 1) / 2 x 4 bytes, as
// QuickTree; every value written is rounded to float32.
struct TriangleStore {
    static constexpr bool kSquare = false;
    float* w;
    std::int64_t n;
    std::int64_t base(std::int64_t i) const { return i * (2 * n - i - 1) / 2 - i - 1; }
    double get(std::int64_t i, std::int64_t j) const {
        return i < j ? w[base(i) + j] : w[base(j) + i];  // never i == j
    }
    const float* upper(std::int64_t i) const { return w + base(i); }
    double set(std::int64_t i, std::int64_t k, double v) {
        return (i < k ? w[base(i) + k] : w[base(k) + i]) = static_cast<float>(v);
    }
    void clear_diagonal(std::int64_t) {}
    void move_slot(std::int64_t last, std::int64_t j, std::int64_t m) {
        for (std::int64_t k = 0; k < m; ++k)
            if (k != j && k != last) set(j, k, get(last, k));
    }
    void row_sums(double* r, std::int64_t m) const {
        std::fill(r, r + m, 0.0);
        for (std::int64_t i = 0; i < m; ++i) {
            const float* wi = upper(i);
            double s = 0.0;
            for (std::int64_t k = i + 1; k < m; ++k) {
                s += wi[k];
                r[k] += wi[k];
            }
            r[i] += s;
        }
    }
};

// Alive clusters occupy slots 0..m-1 of the working matrix (row stride n): a join puts
// the new cluster in the lower slot and moves the last slot into the freed one, so every
// scan runs over contiguous memory.
// One Joiner for both stores (exact float64 square, low-memory float32 triangle): the search,
// the tie rule and the join exist once.
template <class Store>
class Joiner {
public:
    // `w`: the working matrix (overwritten); `kept`: candidates kept per row (all of them,
    // or a prefix whose rows are finished from the matrix)
    Joiner(Store w, std::int64_t n, int threads, std::size_t kept)
        : n_(n),
          m_(n),
          threads_(resolve_threads(threads)),
          kept_(kept),
          w_(w),
          r_(n, 0.0),
          node_of_slot_(n),
          slot_of_node_(2 * n, -1),
          rows_(n) {
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
    double at(std::int64_t i, std::int64_t j) const { return w_.get(i, j); }

    static void add_edge(EdgeList& e, std::int64_t p, std::int64_t c, double len) {
        e.parent.push_back(p);
        e.child.push_back(c);
        e.length.push_back(len);
    }

    void recompute_sums() { w_.row_sums(r_.data(), m_); }

    // Row of slot i holds the slots after i: every alive pair then sits in one row.
    // Rows made later by joins hold all alive nodes.
    void rebuild_rows() {
        const bool par = threads_ > 1 && m_ * m_ / 2 >= kParallelWork / 16;  // a sort per row: heavier work
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads_) if (par)
#endif
        for (std::int64_t i = 0; i < m_; ++i) fill_row(i, i + 1);
    }

    // Candidates of slot i: the slots from `first` on, except i itself. The row's storage
    // is reused when it fits (a join rewrites one row per step).
    // Rows longer than `kept_` are built in a per-thread scratch row and keep their sorted
    // prefix only (`truncated`).
    void fill_row(std::int64_t i, std::int64_t first) {
        const std::size_t need = static_cast<std::size_t>(m_ - first - (i >= first ? 1 : 0));
        const bool truncate = need > kept_;
        thread_local std::vector<std::uint64_t> scratch;
        std::vector<std::uint64_t>& keys = truncate ? scratch : rows_[i].key;
        if (!truncate && (keys.capacity() < need || keys.capacity() > 2 * need + 64))
            std::vector<std::uint64_t>().swap(keys);
        keys.resize(need);
        const std::int64_t* node = node_of_slot_.data();
        std::size_t t = 0;
        for (std::int64_t k = first; k < m_; ++k)
            if (k != i) keys[t++] = key_of(w_.get(i, k), node[k]);
        const std::size_t prefix = std::min({keys.size(), kSortedPrefix, kept_});
        if (prefix < keys.size()) std::nth_element(keys.begin(), keys.begin() + prefix, keys.end());
        std::sort(keys.begin(), keys.begin() + prefix);
        rows_[i].sorted = prefix;
        rows_[i].truncated = truncate;
        if (truncate) {
            std::vector<std::uint64_t>& kept = rows_[i].key;
            if (kept.capacity() != prefix) std::vector<std::uint64_t>(prefix).swap(kept);
            std::copy(keys.begin(), keys.begin() + prefix, kept.begin());
        }
    }

    // Tie window of this step: kTieRtol x the largest |row sum|.
    double tie_tolerance() const {
        double big = 0.0;
        for (std::int64_t i = 0; i < m_; ++i) big = std::max(big, std::fabs(r_[i]));
        return kTieRtol * big;
    }

    // Plain scan of every alive pair in memory order: used once the bounds stop pruning
    // (near-star data, where many Q values are close). One pass: each block of a row is
    // computed into a small buffer with its minimum (vectorised); only a block whose
    // minimum lies within the tie window of the running minimum is looked at pair by pair.
    Candidate find_min_q_full() const {
        const double scale = static_cast<double>(m_ - 2);
        const double* r = r_.data();
        const double tol = tie_tolerance();
        const bool par = threads_ > 1 && m_ * (m_ - 1) / 2 >= kParallelWork;
        TieSet ties(tol);
#ifdef _OPENMP
#pragma omp parallel num_threads(threads_) if (par)
#endif
        {
            TieSet local(tol);
            constexpr std::int64_t kBlock = 256;
            alignas(64) double q[kBlock];
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 16) nowait
#endif
            for (std::int64_t i = 0; i < m_ - 1; ++i) {
                const auto* wi = w_.upper(i);
                const double ri = r[i];
                for (std::int64_t j0 = i + 1; j0 < m_; j0 += kBlock) {
                    const std::int64_t len = std::min(kBlock, m_ - j0);
                    double block_min = std::numeric_limits<double>::infinity();
#ifdef _OPENMP
#pragma omp simd reduction(min : block_min)
#endif
                    for (std::int64_t t = 0; t < len; ++t) {
                        q[t] = scale * static_cast<double>(wi[j0 + t]) - ri - r[j0 + t];
                        block_min = std::min(block_min, q[t]);
                    }
                    if (!(block_min <= local.limit())) continue;
                    for (std::int64_t t = 0; t < len; ++t) local.add(q[t], i, j0 + t, node_of_slot_);
                }
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
        // the last step's visits predict this one's (rows change little between joins)
        const bool par = threads_ > 1 && last_visits_ + m_ >= kParallelWork;
#ifdef _OPENMP
#pragma omp parallel num_threads(threads_) reduction(+ : visits) if (par)
#endif
        {
            TieSet local(tol);
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 32) nowait
#endif
            for (std::int64_t i = 0; i < m_; ++i) {
                const SortedRow& row = rows_[i];
                const double ri = r_[i];
                const std::size_t len = row.key.size();
                bool stopped = false;
                for (std::size_t t = 0; t < len; ++t) {
                    // fl() is monotone, so this bound never exceeds any q computed below
                    if (scale * static_cast<double>(bound_of(row.key[t])) - ri - rmax > local.limit()) {
                        if (t < row.sorted) {  // everything after is at least as large
                            stopped = true;
                            break;
                        }
                        continue;  // unsorted tail: skip just this one
                    }
                    ++visits;
                    const std::int64_t j = slot_of_node_[node_of(row.key[t])];
                    if (j < 0) continue;  // that node has been joined since this row was made
                    local.add(scale * at(i, j) - ri - r_[j], i, j, node_of_slot_);
                }
                // a kept prefix that did not stop the scan: the rest of the row is not kept,
                // so every alive pair of slot i is looked at in the matrix (a superset of the
                // row's candidates: the answer is the same)
                if (row.truncated && !stopped) {
                    visits += m_ - 1;
                    for (std::int64_t j = 0; j < m_; ++j)
                        if (j != i) local.add(scale * at(i, j) - ri - r_[j], i, j, node_of_slot_);
                }
            }
#ifdef _OPENMP
#pragma omp critical
#endif
            ties.merge(local);
        }
        const Candidate best = ties.best();
        if (best.lo < 0) throw std::runtime_error("neighbor_joining: no finite Q value (NaN distances?)");
        last_visits_ = visits;
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
            const double duk = w_.set(i, k, (dik + djk - dij) / 2);  // as stored
            r_[k] += duk - dik - djk;
            ru += duk;
        }
        w_.clear_diagonal(i);
        r_[i] = ru;
        node_of_slot_[i] = u;
        slot_of_node_[u] = i;

        const std::int64_t last = m_ - 1;
        if (j != last) {  // move the last slot into j
            w_.move_slot(last, j, m_);
            r_[j] = r_[last];
            node_of_slot_[j] = node_of_slot_[last];
            slot_of_node_[node_of_slot_[j]] = j;
            if (!full_scan_) rows_[j] = std::move(rows_[last]);
        }
        if (!full_scan_) rows_[last] = SortedRow();
        --m_;
        if (!full_scan_) fill_row(i, 0);
    }

    std::int64_t n_;  // taxa
    std::int64_t m_;  // alive clusters, in slots 0..m_-1
    int threads_;
    std::size_t kept_;       // candidates kept per row
    Store w_;                // working distances, indexed by slot
    std::vector<double> r_;  // row sums over alive slots
    std::vector<std::int64_t> node_of_slot_;
    std::vector<std::int64_t> slot_of_node_;  // -1 once a node has been joined
    std::vector<SortedRow> rows_;
    std::int64_t m_at_rebuild_ = 0;
    std::int64_t last_visits_ = 0;  // pairs looked at by the last bounded scan
    bool full_scan_ = false;
};

}  // namespace

namespace {

void check_taxa(std::int64_t n) {
    if (n < 3)
        throw std::invalid_argument("neighbor_joining needs at least 3 taxa, got " + std::to_string(n));
    if (n > std::numeric_limits<std::int32_t>::max() / 2)
        throw std::invalid_argument("neighbor_joining: too many taxa (" + std::to_string(n) + ")");
}

EdgeList run_nj(const double* d, double* work, std::int64_t n, int threads) {
    check_taxa(n);
    for (std::int64_t t = 0; t < n * n; ++t)
        if (!std::isfinite(d[t]))
            throw std::invalid_argument("neighbor_joining: distance at row " + std::to_string(t / n) +
                                        ", column " + std::to_string(t % n) + " is not finite");
    Matrix own = work != nullptr ? Matrix() : Matrix::copy_of(d, n * n);
    Joiner<SquareStore> joiner(SquareStore{work != nullptr ? work : own.data.get(), n}, n, threads,
                               std::numeric_limits<std::size_t>::max());
    return joiner.run();
}

}  // namespace

EdgeList neighbor_joining(const double* d, std::int64_t n, int threads) {
    return run_nj(d, nullptr, n, threads);
}

EdgeList neighbor_joining_in_place(double* d, std::int64_t n, int threads) {
    return run_nj(d, d, n, threads);
}

EdgeList neighbor_joining_condensed(float* d, std::int64_t n, int threads) {
    check_taxa(n);
    const TriangleStore w{d, n};
    for (std::int64_t i = 0; i < n - 1; ++i) {
        const float* wi = w.upper(i);
        for (std::int64_t j = i + 1; j < n; ++j)
            if (!std::isfinite(wi[j]))
                throw std::invalid_argument("neighbor_joining: distance at row " + std::to_string(i) +
                                            ", column " + std::to_string(j) + " is not finite");
    }
    Joiner<TriangleStore> joiner(w, n, threads, kLowMemoryPrefix);
    return joiner.run();
}

}  // namespace bioaccel
