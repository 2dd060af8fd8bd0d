// Shared helpers for the bioaccel C++ core. No pybind11 in this header tree.
#pragma once

#include <cstdint>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace bioaccel {

// Number of worker threads for a `threads` argument: 0 means all cores.
// Without OpenMP every call runs on one thread.
inline int resolve_threads(int threads) {
#ifdef _OPENMP
    return threads > 0 ? threads : omp_get_max_threads();
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
