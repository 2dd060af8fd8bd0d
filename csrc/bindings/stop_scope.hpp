// Ctrl-C reaching a long C++ stage (the MSA engine, the clustering, the neighbour search)
// while it runs without the GIL: Python's own SIGINT handler only sets a flag the interpreter
// reads between bytecodes, which it does not reach until the C++ work returns. A StopScope,
// made (holding the GIL) before the GIL is released around a long stage, installs a C handler
// that sets the stop flag (bioaccel/stop.hpp), so the stage stops at its next check;
// Interrupted becomes KeyboardInterrupt (the translator registered in module.cpp). When the scope ends the
// previous handler is back; a SIGINT the stage did not see (it had just finished) is handed to Python's
// handler. A SIGINT ignored when the scope begins stays ignored.
#pragma once

#include <pybind11/pybind11.h>

#include <csignal>
#include <exception>

#include "bioaccel/stop.hpp"

namespace bioaccel::bindings {

class StopScope {
public:
    StopScope() {
        namespace py = pybind11;
        // signals reach Python's handler on the main thread only: elsewhere, leave them be
        owner_ = py::module_::import("threading")
                     .attr("current_thread")()
                     .is(py::module_::import("threading").attr("main_thread")());
        if (!owner_) return;
        // a process started with SIGINT ignored (a script's `cmd &`, which a terminal's
        // Ctrl-C must not stop; Python then installs no handler either) keeps ignoring it
        struct sigaction now {};
        if (sigaction(SIGINT, nullptr, &now) != 0 || now.sa_handler == SIG_IGN) return;
        stop_flag().store(false);
        struct sigaction sa {};
        sa.sa_handler = &StopScope::on_sigint;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = 0;
        installed_ = sigaction(SIGINT, &sa, &previous_) == 0;
    }
    ~StopScope() {
        if (!installed_) return;
        sigaction(SIGINT, &previous_, nullptr);
        const bool seen = stop_flag().exchange(false);
        // the stage stopped (an exception in flight) or finished first: then Python's
        // handler takes the signal as if it had come now
        if (seen && std::uncaught_exceptions() == 0) PyErr_SetInterrupt();
    }
    StopScope(const StopScope&) = delete;
    StopScope& operator=(const StopScope&) = delete;

private:
    static void on_sigint(int) { stop_flag().store(true); }
    bool owner_ = false, installed_ = false;
    struct sigaction previous_ {};
};

}  // namespace bioaccel::bindings
