// Alignment scores for the CuPy backend (global / local / semiglobal, affine gaps: a gap of
// length L costs open + (L - 1) * extend), Gotoh's recurrences on int32.
//
// Layout (inter-sequence, as CUDASW++'s SIMT kernels): blockIdx.y picks a query, each
// thread of the block aligns it to one target. The block's query profile (score of every
// letter against every query position) sits in shared memory when it fits, else it is
// read from global memory. The query is swept in chunks of R rows whose DP cells (H, E)
// stay in registers; only the boundary row between chunks (H and F per target column) goes
// through memory, in a (column, thread) layout so a warp's accesses coalesce: R = 16 times
// less traffic than a kernel that keeps whole DP rows in memory (about 1 byte per cell). On sm_90 the
// max-plus steps use DPX instructions (__viaddmax_s32, __vimax3_s32); elsewhere, plain max.
//
// For long pairs, and for calls with too few pairs to fill the GPU with one thread each,
// align_scores_warp is intra-sequence (as CUDASW++4's long-sequence kernels): a warp per
// pair, each lane owns BIOACCEL_WARP_ROWS consecutive query rows of a 32 x that row strip
// with their DP cells in registers, the lanes sweep the target as a wavefront one column
// apart, and each lane hands its last row's H and F (and the target letter) down to the
// next lane by warp shuffles. Only the strip's last row goes through memory, read 32
// columns ahead with one coalesced load and passed to lane 0 by shuffles.
//
// align_pair() and align_pair_warp() are __host__ __device__: tests/cuda_host/align_host.cu
// compiles them with nvcc for the CPU (align_pair_warp with its lanes as coroutines that
// meet where the device's lanes shuffle, through the same member functions as DeviceWarp)
// and checks them against the C++ core on machines without a GPU. Plain C types only: CuPy compiles this with
// NVRTC.

#define BIOACCEL_ALIGN_ROWS 16
#define BIOACCEL_NEG (-(1 << 28))

typedef long long i64;

__host__ __device__ inline int bx_max(int a, int b) {
    return a > b ? a : b;
}

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
__host__ __device__ inline int align_pair(const short* prof, i64 m, const unsigned char* t, i64 n, int mode,
                                          int gap_open, int gap_extend, int* bound_h, int* bound_f,
                                          i64 stride) {
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
            const i64 i = i0 + r + 1;                                                   // DP row
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
                up = hj;  // H[i+1][j]: the next row's up
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
extern "C" __global__ void align_scores_batch(const short* profiles, const i64* prof_off, const i64* q_len,
                                              i64 q_first, const unsigned char* t_codes, const i64* t_off,
                                              const i64* targets, i64 n_targets, int mode, int gap_open,
                                              int gap_extend, i64 shared_limit, int* bound_h, int* bound_f,
                                              int* out) {
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
        align_pair(prof, m, t_codes + t_off[t], t_off[t + 1] - t_off[t], mode, gap_open, gap_extend,
                   bound_h + slot, bound_f + slot, stride);
}

#define BIOACCEL_WARP_ROWS 16
#define BIOACCEL_WARP 32

// The warp's neighbour exchange on the device. A host stand-in needs the same members:
// lane(), shfl(v, src), shfl_up(v, delta) (lanes below delta keep v), max_all(v) (the
// maximum over the lanes, to every lane), sync().
struct DeviceWarp {
    __device__ int lane() const { return (int)(threadIdx.x & 31u); }
    __device__ int shfl(int v, int src) const { return __shfl_sync(0xffffffffu, v, src); }
    __device__ int shfl_up(int v, int delta) const { return __shfl_up_sync(0xffffffffu, v, delta); }
    __device__ int max_all(int v) const {
        for (int o = 16; o > 0; o >>= 1) v = bx_max(v, __shfl_xor_sync(0xffffffffu, v, o));
        return v;
    }
    __device__ void sync() const { __syncwarp(); }
};

// One pair on one warp of W lanes, R rows per lane (the kernel: W = 32, R =
// BIOACCEL_WARP_ROWS; the host tests also run small W and R, so short sequences cross many
// strips and loads). Every lane calls it with the same arguments and returns the score.
// bound_h, bound_f: n + 1 ints each, this warp's own. Warp-uniform control flow: every lane
// runs every step and every shuffle.
#pragma nv_exec_check_disable
template <int W, int R, class Warp>
__host__ __device__ inline int align_pair_warp(const Warp& w, const short* prof, i64 m,
                                               const unsigned char* t, i64 n, int mode, int gap_open,
                                               int gap_extend, int* bound_h, int* bound_f) {
    const int NEG = BIOACCEL_NEG;
    const bool global = mode == 0, local = mode == 1;
    const int lane = w.lane();
    if (m == 0 || n == 0) {
        if (!global || (m == 0 && n == 0)) return 0;
        const i64 len = m == 0 ? n : m;
        return -(gap_open + (int)(len - 1) * gap_extend);
    }
    for (i64 j = lane; j <= n; j += W) {  // row 0
        bound_h[j] = global ? (j == 0 ? 0 : -(gap_open + (int)(j - 1) * gap_extend)) : 0;
        bound_f[j] = NEG;
    }
    w.sync();
    int best = local ? 0 : NEG;
    for (i64 p0 = 0; p0 < m; p0 += (i64)W * R) {
        const i64 top = p0 + (i64)lane * R;  // DP row above this lane's first row
        const int rows = top >= m ? 0 : (int)(m - top < R ? m - top : R);
        const bool last_rows = rows > 0 && top + rows == m;  // owns DP row m
        int h[R], e[R];                                      // H[i][j-1] and E[i][j-1]
        for (int r = 0; r < R; ++r) {
            const i64 i = top + r + 1;
            h[r] = (global && r < rows) ? -(gap_open + (int)(i - 1) * gap_extend) : 0;
            e[r] = NEG;
        }
        int diag = (global && top > 0) ? -(gap_open + (int)(top - 1) * gap_extend) : 0;  // H[top][0]
        // the strip's top boundary (columns 1.., 32 per load) and target letters, one load
        // ahead: lane x of a load holds column base + x
        i64 base = 1;
        int cur_h = base + lane <= n ? bound_h[base + lane] : NEG;
        int cur_f = base + lane <= n ? bound_f[base + lane] : NEG;
        int cur_c = base + lane <= n ? (int)t[base + lane - 1] : 0;
        int nxt_h = base + W + lane <= n ? bound_h[base + W + lane] : NEG;
        int nxt_f = base + W + lane <= n ? bound_f[base + W + lane] : NEG;
        int nxt_c = base + W + lane <= n ? (int)t[base + W + lane - 1] : 0;
        int in_h = NEG, in_f = NEG, in_c = 0;  // from the lane above, for this step's column
        const i64 steps = n + W - 1;
        for (i64 step = 0; step < steps; ++step) {
            const int x = (int)(step % W);
            const int top_h = w.shfl(cur_h, x), top_f = w.shfl(cur_f, x), top_c = w.shfl(cur_c, x);
            if (x == W - 1) {  // this load is used up: move on, fetch the one after
                base += W;
                cur_h = nxt_h;
                cur_f = nxt_f;
                cur_c = nxt_c;
                const i64 col = base + W + lane;
                nxt_h = col <= n ? bound_h[col] : NEG;
                nxt_f = col <= n ? bound_f[col] : NEG;
                nxt_c = col <= n ? (int)t[col - 1] : 0;
            }
            const i64 j = step - lane + 1;      // this lane's column
            int up = lane == 0 ? top_h : in_h;  // H[top][j]
            int f = lane == 0 ? top_f : in_f;   // F[top][j]
            const int c = lane == 0 ? top_c : in_c;
            if (j >= 1 && j <= n && rows > 0) {
                int d = diag;  // H[top][j-1]
                diag = up;
                const short* pc = prof + (i64)c * m + top;
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
                for (int r = 0; r < R; ++r) {
                    if (r >= rows) break;
                    const int left = h[r];
                    const int ej = BX_ADDMAX(e[r], -gap_extend, left - gap_open);
                    const int fj = BX_ADDMAX(f, -gap_extend, up - gap_open);
                    int hj = BX_MAX3(d + pc[r], ej, fj);
                    if (local) {
                        hj = bx_max(hj, 0);
                        best = bx_max(best, hj);
                    }
                    e[r] = ej;
                    f = fj;
                    d = left;
                    h[r] = hj;
                    up = hj;
                }
                if (last_rows) {
                    if (mode == 2) best = bx_max(best, up);  // last row
                    if (global && j == n) best = up;         // H[m][n]
                }
                if (mode == 2 && j == n) {
                    for (int r = 0; r < rows; ++r) best = bx_max(best, h[r]);  // last column
                }
            }
            if (lane == W - 1 && j >= 1 && j <= n) {  // the strip's last row, for the next strip
                bound_h[j] = up;
                bound_f[j] = f;
            }
            in_h = w.shfl_up(up, 1);
            in_f = w.shfl_up(f, 1);
            in_c = w.shfl_up(c, 1);
        }
        w.sync();  // lane 31's boundary row before the next strip's loads
    }
    best = w.max_all(best);
    if (mode == 2) best = bx_max(best, 0);
    return best;
}

// One launch: queries q_first .. q_first + gridDim.y - 1 (blockIdx.y) against the listed
// targets, one target per warp. Boundary rows: (n + 1) ints of H and of F per (query, warp),
// row_len apart.
extern "C" __global__ void align_scores_warp(const short* profiles, const i64* prof_off, const i64* q_len,
                                             i64 q_first, const unsigned char* t_codes, const i64* t_off,
                                             const i64* targets, i64 n_targets, int mode, int gap_open,
                                             int gap_extend, i64 shared_limit, i64 row_len, int* bound_h,
                                             int* bound_f, int* out) {
    extern __shared__ short shared_prof[];
    const i64 q = q_first + blockIdx.y;
    const i64 m = q_len[q];
    const short* prof = profiles + prof_off[q];
    const i64 words = prof_off[q + 1] - prof_off[q];
    if (words <= shared_limit) {
        for (i64 x = threadIdx.x; x < words; x += blockDim.x) shared_prof[x] = prof[x];
        __syncthreads();
        prof = shared_prof;
    }
    const i64 warps = blockDim.x / BIOACCEL_WARP;
    const i64 k = (i64)blockIdx.x * warps + threadIdx.x / BIOACCEL_WARP;
    if (k >= n_targets) return;  // whole warps leave together
    const i64 t = targets[k];
    const i64 slot = (i64)blockIdx.y * gridDim.x * warps + k;
    DeviceWarp w;
    const int score = align_pair_warp<BIOACCEL_WARP, BIOACCEL_WARP_ROWS>(
        w, prof, m, t_codes + t_off[t], t_off[t + 1] - t_off[t], mode, gap_open, gap_extend,
        bound_h + slot * row_len, bound_f + slot * row_len);
    if (w.lane() == 0) out[(i64)blockIdx.y * n_targets + k] = score;
}
