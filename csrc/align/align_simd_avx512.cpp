// The alignment kernel compiled for AVX-512 (64 int8 / 32 int16 / 16 int32 lanes per
// vector). Called only when the CPU probe (cpu.hpp) chose Isa::Avx512.
#include "bioaccel/align_kernel.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#pragma GCC target("avx2,avx512f,avx512bw,avx512vl,avx512vbmi")
#define KERNEL_NS simd_avx512
#define KERNEL_VECTOR_BYTES 64
#define KERNEL_SATURATING 1
#include "align_kernel.inc"
#else
namespace bioaccel {
namespace simd_avx512 {
void run_group(const GroupJob& job, void* work, std::int32_t* result, std::uint8_t* overflow) {
    simd_base::run_group(job, work, result, overflow);
}
}  // namespace simd_avx512
}  // namespace bioaccel
#endif
