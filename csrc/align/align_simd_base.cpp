// The alignment kernel for the baseline instruction set of the target (SSE2 on x86-64;
// whatever the compiler vectorises to elsewhere). Always built: the fallback.
#include "bioaccel/align_kernel.hpp"

#define KERNEL_NS simd_base
#define KERNEL_VECTOR_BYTES 32
#include "align_kernel.inc"
