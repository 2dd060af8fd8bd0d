// Edit distances for the CuPy backend: one (query, target) pair per thread, Myers'
// bit-parallel recurrences with Hyyro's blocks (64 query letters per word), the same as
// csrc/align/edit_distance.cpp. The match masks (Peq) of every query are built once on the
// device by array code (bioaccel/backends/cupy_edit.py, tested with NumPy); the vertical
// delta vectors live in a (word, pair) work array so neighbouring threads touch
// neighbouring words.
//
// `edit_distance_pair` is __host__ __device__: tests/cuda_host/edit_host.cu compiles it
// with nvcc for the CPU and checks it against the C++ core on machines without a GPU.
// Plain C types only: CuPy compiles this with NVRTC, which has no <stdint.h>.

typedef unsigned long long u64;
typedef long long i64;

// mode 0: global (NW); 1: infix (HW, target gaps at both ends free); 2: prefix (SHW, the
// target's end free). max_distance >= 0 reports anything larger as max_distance + 1.
__host__ __device__ inline int edit_distance_pair(const unsigned char* t, i64 n, i64 m, const u64* peq,
                                                  int alpha, int mode, int max_distance, u64* pv, u64* mv,
                                                  i64 stride) {
    if (m == 0 || n == 0) {
        i64 d = m == 0 ? (mode == 0 ? n : 0) : m;
        if (max_distance >= 0 && d > max_distance) d = max_distance + 1;
        return (int)d;
    }
    const i64 words = (m + 63) / 64;
    const u64 last_bit = 1ULL << ((m - 1) % 64);
    const u64 high = 1ULL << 63;
    for (i64 w = 0; w < words; ++w) {
        pv[w * stride] = ~0ULL;
        mv[w * stride] = 0ULL;
    }
    const int top = mode == 1 ? 0 : 1;
    i64 score = m, best = m;
    for (i64 j = 0; j < n; ++j) {
        const int c = t[j];
        int h = top;
        for (i64 w = 0; w < words; ++w) {
            u64 eq = peq[w * alpha + c];
            const u64 p = pv[w * stride];
            const u64 q = mv[w * stride];
            const u64 xv = eq | q;
            if (h < 0) eq |= 1ULL;
            const u64 xh = (((eq & p) + p) ^ p) | eq;
            u64 ph = q | ~(xh | p);
            u64 mh = p & xh;
            const u64 out_bit = w == words - 1 ? last_bit : high;
            const int hout = (ph & out_bit) ? 1 : ((mh & out_bit) ? -1 : 0);
            ph <<= 1;
            mh <<= 1;
            if (h < 0)
                mh |= 1ULL;
            else if (h > 0)
                ph |= 1ULL;
            pv[w * stride] = mh | ~(xv | ph);
            mv[w * stride] = ph & xv;
            h = hout;
        }
        score += h;
        if (score < best) best = score;
        if (max_distance >= 0 && mode == 0 && score - (n - 1 - j) > max_distance) {
            // global: the remaining columns can lower the score by at most one each
            return max_distance + 1;
        }
    }
    i64 d = mode == 0 ? score : best;
    if (max_distance >= 0 && d > max_distance) d = max_distance + 1;
    return (int)d;
}

extern "C" __global__ void edit_distance_pairs(const unsigned char* t_codes, const i64* q_len,
                                               const i64* t_off, const i64* q_word_off, const u64* peq,
                                               int alpha, const i64* pair_q, const i64* pair_t, i64 npairs,
                                               int mode, int max_distance, u64* pv, u64* mv, int* out) {
    const i64 k = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= npairs) return;
    const i64 qi = pair_q[k], ti = pair_t[k];
    out[k] =
        edit_distance_pair(t_codes + t_off[ti], t_off[ti + 1] - t_off[ti], q_len[qi],
                           peq + q_word_off[qi] * alpha, alpha, mode, max_distance, pv + k, mv + k, npairs);
}
