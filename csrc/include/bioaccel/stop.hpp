// Stopping a long C++ stage early (Ctrl-C): one process-wide flag, set by the bindings' SIGINT
// handler (csrc/bindings/stop_scope.hpp) while the stage runs without the GIL, and checked by
// the stage at its natural steps: the MSA engine between merges, between pairs of the
// posterior and consistency loops, between refinement iterations and between added
// sequences; the clustering between seeds and between amplicons; the neighbour search between
// probes; the all-vs-all edit distances and alignment scores between queries, and the
// tracebacks between pairs. A parallel loop that sees it skips its remaining items and throws
// Interrupted once outside the parallel region (exceptions never cross OpenMP).
#pragma once

#include <atomic>
#include <stdexcept>

namespace bioaccel {

struct Interrupted : std::runtime_error {
    Interrupted() : std::runtime_error("interrupted") {}
};

// The flag (defined in csrc/core/stop.cpp).
std::atomic<bool>& stop_flag();

inline bool stop_requested() {
    return stop_flag().load(std::memory_order_relaxed);
}

inline void throw_if_stopped() {
    if (stop_requested()) throw Interrupted();
}

}  // namespace bioaccel
