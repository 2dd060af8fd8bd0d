// Alignment scores for the CuPy backend (global / local / semiglobal, affine gaps: a gap of
// length L costs open + (L - 1) * extend), Gotoh's recurrences on int32.
//
// Layout (inter-sequence, as CUDASW++'s SIMT kernels): blockIdx.y picks a query, each
// thread of the block aligns it to one target. The block's query profile (score of every
// letter against every query position) sits in shared memory when it fits, else it is
// read from global memory. The query is swept in chunks of R rows whose DP cells (H, E)
// stay in registers; only the boundary row between chunks (H and F per target column) goes
// through memory, in a (column, thread) layout so a warp's accesses coalesce: R = 16 times
// less traffic than a kernel that keeps whole DP rows in memory (about 1 byte per cell). On sm_90 the max-plus steps use
// DPX instructions (__viaddmax_s32, __vimax3_s32); elsewhere, plain max.
//
// align_pair() is __host__ __device__: tests/cuda_host/align_host.cu compiles it with nvcc
// for the CPU and checks it against the C++ core on machines without a GPU. Plain C types
// only: CuPy compiles this with NVRTC.

#define BIOACCEL_ALIGN_ROWS 16
#define BIOACCEL_NEG (-(1 << 28))

typedef long long i64;

__host__ __device__ inline int bx_max(int a, int b) { return a > b ? a : b; }

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define BX_ADDMAX(a, b, c) __viaddmax_s32((a), (b), (c))  // max(a + b, c)
#define BX_MAX3(a, b, c) __vimax3_s32((a), (b), (c))
#else
#define BX_ADDMAX(a, b, c) bx_max((a) + (b), (c))
#define BX_MAX3(a, b, c) bx_max(bx_max((a), (b)), (c))
#endif

// mode 0 global, 1 local, 2 semiglobal (end gaps free on both sequences).
// prof: prof[c * m + i] = score of letter c against query position i.
// bound_h, bound_f: n + 1 ints each for this pair, element j at [j * stride].
__host__ __device__ inline int align_pair(const short* prof, i64 m, const unsigned char* t, i64 n,
                                          int mode, int gap_open, int gap_extend, int* bound_h,
                                          int* bound_f, i64 stride) {
    const int R = BIOACCEL_ALIGN_ROWS;
    const int NEG = BIOACCEL_NEG;
    const bool global = mode == 0, local = mode == 1;
    if (m == 0 || n == 0) {
        if (!global || (m == 0 && n == 0)) return 0;
        const i64 len = m == 0 ? n : m;
        return -(gap_open + (int)(len - 1) * gap_extend);
    }
    // row 0: H[0][j], F[0][j] = -inf (no vertical gap yet)
    for (i64 j = 0; j <= n; ++j) {
        bound_h[j * stride] = global ? (j == 0 ? 0 : -(gap_open + (int)(j - 1) * gap_extend)) : 0;
        bound_f[j * stride] = NEG;
    }
    int best = local ? 0 : NEG;
    for (i64 i0 = 0; i0 < m; i0 += R) {
        const int rows = (int)(m - i0 < R ? m - i0 : R);
        int h[BIOACCEL_ALIGN_ROWS], e[BIOACCEL_ALIGN_ROWS];  // H[i][j-1] and E[i][j-1]
        for (int r = 0; r < R; ++r) {
            const i64 i = i0 + r + 1;  // DP row
            h[r] = (global && r < rows) ? -(gap_open + (int)(i - 1) * gap_extend) : 0;  // H[i][0]
            e[r] = NEG;
        }
        // H[i0][0]
        int diag = (global && i0 > 0) ? -(gap_open + (int)(i0 - 1) * gap_extend) : 0;
        for (i64 j = 1; j <= n; ++j) {
            const int c = t[j - 1];
            int up = bound_h[j * stride];  // H[i0][j]
            int f = bound_f[j * stride];   // F[i0][j]
            int d = diag;                  // H[i0][j-1]
            diag = up;
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
            for (int r = 0; r < R; ++r) {  // unrolled on the device: h[] and e[] stay in registers
                if (r >= rows) break;
                const i64 i = i0 + r;  // query position of DP row i + 1
                const int left = h[r];
                const int ej = BX_ADDMAX(e[r], -gap_extend, left - gap_open);  // E[i+1][j]
                const int fj = BX_ADDMAX(f, -gap_extend, up - gap_open);       // F[i+1][j]
                int hj = BX_MAX3(d + prof[(i64)c * m + i], ej, fj);
                if (local) {
                    hj = bx_max(hj, 0);
                    best = bx_max(best, hj);
                }
                e[r] = ej;
                f = fj;
                d = left;  // H[i+1][j-1]: the next row's diagonal
                h[r] = hj;
                up = hj;   // H[i+1][j]: the next row's up
            }
            bound_h[j * stride] = up;  // last row of the chunk, for the next chunk
            bound_f[j * stride] = f;
            if (!global && !local && i0 + rows == m) best = bx_max(best, up);  // last row
        }
        if (mode == 2) {
            for (int r = 0; r < rows; ++r) best = bx_max(best, h[r]);  // last column
        }
    }
    if (global) return bound_h[n * stride];
    if (mode == 2) best = bx_max(best, 0);  // H[m][0] and H[0][n]: all-gap ends are free
    return best;
}

// One launch: queries q_first .. q_first + gridDim.y - 1 (blockIdx.y) against the listed
// targets (one per thread). Boundary rows: one (n + 1)-column pair of rows per (query,
// thread), column j at [j * stride + slot].
extern "C" __global__ void align_scores_batch(
    const short* profiles, const i64* prof_off, const i64* q_len, i64 q_first,
    const unsigned char* t_codes, const i64* t_off, const i64* targets, i64 n_targets, int mode,
    int gap_open, int gap_extend, i64 shared_limit, int* bound_h, int* bound_f, int* out) {
    extern __shared__ short shared_prof[];
    const i64 q = q_first + blockIdx.y;
    const i64 m = q_len[q];
    const short* prof = profiles + prof_off[q];
    const i64 words = prof_off[q + 1] - prof_off[q];
    if (words <= shared_limit) {  // the whole block shares the query profile
        for (i64 x = threadIdx.x; x < words; x += blockDim.x) shared_prof[x] = prof[x];
        __syncthreads();
        prof = shared_prof;
    }
    const i64 k = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n_targets) return;
    const i64 t = targets[k];
    const i64 per_query = (i64)gridDim.x * blockDim.x;
    const i64 slot = (i64)blockIdx.y * per_query + k;
    const i64 stride = per_query * gridDim.y;
    out[(i64)blockIdx.y * n_targets + k] =
        align_pair(prof, m, t_codes + t_off[t], t_off[t + 1] - t_off[t], mode, gap_open,
                   gap_extend, bound_h + slot, bound_f + slot, stride);
}
