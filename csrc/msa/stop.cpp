// The MSA engine's stop flag (bioaccel/msa_stop.hpp).
#include "bioaccel/msa_stop.hpp"

namespace bioaccel {
namespace msa {

std::atomic<bool>& stop_flag() {
    static std::atomic<bool> flag{false};
    return flag;
}

}  // namespace msa
}  // namespace bioaccel
