// The alignment kernel compiled for AVX2 (32 int8 / 16 int16 / 8 int32 lanes per vector).
// Called only after __builtin_cpu_supports("avx2") said yes.
#include "bioaccel/align_kernel.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#pragma GCC target("avx2")
#define KERNEL_NS simd_avx2
#include "align_kernel.inc"
#else
namespace bioaccel {
namespace simd_avx2 {
void run_group(const GroupJob& job, void* work, std::int32_t* result, std::uint8_t* overflow) {
    simd_base::run_group(job, work, result, overflow);
}
}  // namespace simd_avx2
}  // namespace bioaccel
#endif
