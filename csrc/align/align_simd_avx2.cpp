// The alignment kernel compiled for AVX2 (32 int8 / 16 int16 / 8 int32 lanes per vector).
// Called only when the CPU probe (cpu.hpp) chose Isa::Avx2.
#include "bioaccel/align_kernel.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#pragma GCC target("avx2")
#define KERNEL_NS simd_avx2
#define KERNEL_VECTOR_BYTES 32
#define KERNEL_SATURATING 1
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
