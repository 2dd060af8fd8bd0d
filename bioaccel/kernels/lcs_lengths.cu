// LCS lengths for the MSA guide tree's distance stage on the CuPy backend: one (query,
// target) pair per thread, the bit-parallel recurrence V' = (V + (V & M)) | (V & ~M) of
// csrc/msa/lcs.cpp (Allison-Dix / Hyyro), 64 query letters per word; the LCS is the number
// of zero bits of V at the end. The match masks (Peq) of every query are built once on the
// device by the array code the edit distances use (bioaccel/backends/cupy_edit.py); V
// lives in a (word, pair) work array so neighbouring threads touch neighbouring words.
//
// `lcs_length_pair` is __host__ __device__: tests/cuda_host/lcs_host.cu compiles it with
// nvcc for the CPU and checks it against the C++ engine on machines without a GPU.
// Plain C types only: CuPy compiles this with NVRTC, which has no <stdint.h>.

typedef unsigned long long u64;
typedef long long i64;

__host__ __device__ inline int popcount64(u64 x) {
#ifdef __CUDA_ARCH__
    return __popcll(x);
#else
    return __builtin_popcountll(x);
#endif
}

// Codes >= letters never match (X, B, Z, N ...); bits of V past the query's end see no
// match, stay 1 and count for nothing.
__host__ __device__ inline int lcs_length_pair(const unsigned char* t, i64 n, i64 m, const u64* peq,
                                               int alpha, int letters, u64* v, i64 stride) {
    if (m == 0 || n == 0) return 0;
    const i64 words = (m + 63) / 64;
    for (i64 w = 0; w < words; ++w) v[w * stride] = ~0ULL;
    for (i64 j = 0; j < n; ++j) {
        const int c = t[j];
        if (c >= letters) continue;
        u64 carry = 0ULL;
        for (i64 w = 0; w < words; ++w) {
            const u64 x = v[w * stride];
            const u64 u = x & peq[w * alpha + c];
            const u64 s = x + u + carry;
            carry = (u | (x & ~s)) >> 63;  // the top bit of maj(x, u, carry in); u within x
            v[w * stride] = s | (x - u);   // x - u == x & ~mask
        }
    }
    i64 ones = 0;
    for (i64 w = 0; w < words; ++w) ones += popcount64(v[w * stride]);
    return (int)(words * 64 - ones);
}

extern "C" __global__ void lcs_length_pairs(const unsigned char* t_codes, const i64* q_len, const i64* t_off,
                                            const i64* q_word_off, const u64* peq, int alpha, int letters,
                                            const i64* pair_q, const i64* pair_t, i64 npairs, u64* v,
                                            int* out) {
    const i64 k = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= npairs) return;
    const i64 qi = pair_q[k], ti = pair_t[k];
    out[k] = lcs_length_pair(t_codes + t_off[ti], t_off[ti + 1] - t_off[ti], q_len[qi],
                             peq + q_word_off[qi] * alpha, alpha, letters, v + k, npairs);
}
