#include "bioaccel/cpu.hpp"

#include <cstdlib>
#include <cstring>

namespace bioaccel {
namespace {

bool env_set(const char* name) {
    const char* v = std::getenv(name);
    return v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0;
}

CpuFeatures probe() {
    CpuFeatures f;
#if defined(__x86_64__) && defined(__GNUC__)
    f.built_avx2 = true;
    f.built_avx512 = true;
    __builtin_cpu_init();
    f.cpu_popcnt = __builtin_cpu_supports("popcnt");
    f.cpu_avx2 = __builtin_cpu_supports("avx2");
    f.cpu_avx512f = __builtin_cpu_supports("avx512f");
    f.cpu_avx512bw = __builtin_cpu_supports("avx512bw");
    f.cpu_avx512vl = __builtin_cpu_supports("avx512vl");
    f.cpu_avx512vbmi = __builtin_cpu_supports("avx512vbmi");
    f.cpu_avx512vpopcntdq = __builtin_cpu_supports("avx512vpopcntdq");
#endif
    f.no_avx2 = env_set("BIOACCEL_NO_AVX2");
    f.no_avx512 = env_set("BIOACCEL_NO_AVX512");
    if (f.built_avx2 && f.cpu_avx2 && f.cpu_popcnt && !f.no_avx2) {
        f.isa = Isa::Avx2;
        if (f.built_avx512 && f.cpu_avx512f && f.cpu_avx512bw && f.cpu_avx512vl && f.cpu_avx512vbmi &&
            f.cpu_avx512vpopcntdq && !f.no_avx512)
            f.isa = Isa::Avx512;
    }
    return f;
}

}  // namespace

const CpuFeatures& cpu_features() {
    static const CpuFeatures features = probe();
    return features;
}

const char* isa_name(Isa isa) {
    switch (isa) {
        case Isa::Avx512:
            return "avx512";
        case Isa::Avx2:
            return "avx2";
        default:
#if defined(__x86_64__)
            return "sse2";
#else
            return "generic";
#endif
    }
}

}  // namespace bioaccel
