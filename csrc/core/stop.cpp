// The process-wide stop flag (bioaccel/stop.hpp).
#include "bioaccel/stop.hpp"

namespace bioaccel {

std::atomic<bool>& stop_flag() {
    static std::atomic<bool> flag{false};
    return flag;
}

}  // namespace bioaccel
