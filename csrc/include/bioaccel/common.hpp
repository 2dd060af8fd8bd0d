// Shared helpers for the bioaccel C++ core. No pybind11 in this header tree.
#pragma once

#include <atomic>
#include <cstdint>
#include <utility>
#include <stdexcept>
#include <string>
#include <thread>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace bioaccel {

// At most this many threads per logical CPU (the same rule as bioaccel._core.threads in Python).
constexpr int kMaxThreadsPerCpu = 4;

// Number of worker threads for a `threads` argument: 0 means all cores, 1 .. 4 x the
// logical CPUs as given; anything else throws std::invalid_argument (never handed to
// OpenMP: a huge team crashes the process). Without OpenMP every call runs on one thread.
// The condensed upper triangle of an n x n pair matrix (scipy's layout): the number of pairs
// (i', j > i') before row i, and the slot of the pair (i, j), i != j, in either order.
inline std::int64_t condensed_row_start(std::int64_t i, std::int64_t n) {
    return i * n - i * (i + 1) / 2;
}
inline std::int64_t condensed_index(std::int64_t i, std::int64_t j, std::int64_t n) {
    if (i > j) std::swap(i, j);
    return condensed_row_start(i, n) + (j - i - 1);
}

// The team that threads=0 (all cores) means. Python decides it, affinity-aware
// (bioaccel._core.threads.all_cores, the one meaning of threads=0), and passes it here when
// it loads the module and whenever it changes (set_all_cores_threads): C++ never decides it
// on its own, so Python's memory checks size the team that C++ starts. 1 until set.
inline std::atomic<int>& all_cores_team() {
    static std::atomic<int> team{1};
    return team;
}

inline int resolve_threads(int threads) {
    const unsigned cpus = std::thread::hardware_concurrency();
    const long cap = static_cast<long>(kMaxThreadsPerCpu) * (cpus > 0 ? cpus : 1);
    if (threads < 0 || threads > cap)
        throw std::invalid_argument("threads=" + std::to_string(threads) +
                                    " is out of range: expected 0 (all cores) to " + std::to_string(cap));
#ifdef _OPENMP
    return threads > 0 ? threads : all_cores_team().load();
#else
    (void)threads;
    return 1;
#endif
}

inline bool openmp_enabled() {
#ifdef _OPENMP
    return true;
#else
    return false;
#endif
}

}  // namespace bioaccel
