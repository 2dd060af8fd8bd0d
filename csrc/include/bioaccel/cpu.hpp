// The one CPU-feature probe: which SIMD kernels this build has and which this CPU runs,
// read once per process and consulted by every dispatcher (alignment, edit distances,
// MinHash rows, DNA pair counts). BIOACCEL_NO_AVX2=1 in the environment (read at the
// first probe) forces the baseline kernels everywhere; BIOACCEL_NO_AVX512=1 stops at AVX2.
#pragma once

namespace bioaccel {

// Kernel levels, each a superset of the one before.
enum class Isa : int {
    Base = 0,    // the compiler's baseline for the target (SSE2 on x86-64)
    Avx2 = 1,    // AVX2 + POPCNT
    Avx512 = 2,  // AVX-512 F/BW/VL/VBMI/VPOPCNTDQ (Ice Lake, Zen 4 and later)
};

struct CpuFeatures {
    // kernels compiled into this build
    bool built_avx2 = false, built_avx512 = false;
    // what the CPU (and OS) supports
    bool cpu_popcnt = false, cpu_avx2 = false, cpu_avx512f = false, cpu_avx512bw = false,
         cpu_avx512vl = false, cpu_avx512vbmi = false, cpu_avx512vpopcntdq = false;
    // what the environment asked for
    bool no_avx2 = false, no_avx512 = false;
    Isa isa = Isa::Base;  // the level every dispatcher uses
};

// Probed on the first call, then cached (thread-safe).
const CpuFeatures& cpu_features();

inline Isa active_isa() {
    return cpu_features().isa;
}

// "avx512", "avx2", "sse2" (x86-64 baseline) or "generic".
const char* isa_name(Isa isa);

}  // namespace bioaccel
