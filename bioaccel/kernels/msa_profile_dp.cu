// Profile-profile DP of the MSA engine on the GPU (CuPy RawModule): the recurrences of
// csrc/msa/profile_dp.cpp (ProfileDP::fill, PairScores::row, best_state and the traceback of
// align_profiles), reproduced operation by operation so paths and scores are bit-identical
// to the CPU engine.
//
// Layout: one thread block per profile pair of a batch (all ready merges of a tree level in
// one launch). The block sweeps the (n + 1) x (m + 1) DP by anti-diagonals d = i + j: the
// cells of one diagonal are independent (M reads diagonal d - 2, X and Y read d - 1), so the
// block's threads share a diagonal's cells and meet at a barrier before the next. Three
// diagonals of M, X and Y (indexed by the row i) rotate in shared memory when they fit, else
// in a global scratch slice. Each cell's traceback byte goes to global memory (the CPU's
// layout: row i - 1, column j, bits 0-1 the state before M, 2-3 before X, 4-5 before Y; 0 = M,
// 1 = X, 2 = Y); then one thread traces the path back (0 Match, 1 GapInB, 2 GapInA).
//
// Exactness: every float operation is a separately rounded IEEE single operation, in the
// CPU's order: __fadd_rn / __fsub_rn / __fmul_rn on the device (never contracted into FMA,
// whatever --fmad says), plain operators on the host (tests build the host code with
// -ffp-contract=off, as setup.py builds the engine). Ties break as on the CPU: M > X > Y for
// M and X, M > Y > X for Y, and M > X > Y for the final cell. -inf (cells no path reaches)
// propagates through additions as on the CPU.
//
// Inputs per pair (computed on the host by the engine itself: _native.msa_dp_inputs):
// sa (n x K), B's frequencies transposed (K x m) and its used letters, or B's letters when
// B is one gap-free sequence (`single`), and each side's terms of length L:
//   occ [0, L), start [L, 2L + 1), cont [2L + 1, 3L + 2), own [3L + 2, 4L + 2),
//   credit [4L + 2, 5L + 2)  (MSA_TERMS_* below).
// desc holds MSA_DESC int64 fields per pair (MSA_D_* below); offsets index the typed buffers.
//
// msa_dp_diagonal() and msa_dp_traceback() are __host__ __device__:
// tests/cuda_host/msa_dp_host.cu runs them on the CPU, the block's threads in turn between
// diagonals (which is what the barrier guarantees). Plain C types only: NVRTC compiles this.

#define MSA_DESC 11
#define MSA_D_N 0
#define MSA_D_M 1
#define MSA_D_SA 2        // float offset of sa (n x K)
#define MSA_D_FBT 3       // float offset of fbt (K x m), -1 when B is single
#define MSA_D_USED 4      // byte offset of used (K), -1 when B is single
#define MSA_D_SINGLE 5    // int16 offset of B's letters (m), -1 unless B is single
#define MSA_D_TERMS_A 6   // float offset of A's terms (5 n + 2)
#define MSA_D_TERMS_B 7   // float offset of B's terms (5 m + 2)
#define MSA_D_TRACE 8     // byte offset of the traceback (n x (m + 1))
#define MSA_D_PATH 9      // byte offset of the path (n + m)
#define MSA_D_SCRATCH 10  // float offset of the diagonals in global scratch (9 (n + 1))

#ifdef __CUDA_ARCH__
#define MSA_ADD(a, b) __fadd_rn((a), (b))
#define MSA_SUB(a, b) __fsub_rn((a), (b))
#define MSA_MUL(a, b) __fmul_rn((a), (b))
#else
#define MSA_ADD(a, b) ((a) + (b))
#define MSA_SUB(a, b) ((a) - (b))
#define MSA_MUL(a, b) ((a) * (b))
#endif

typedef long long msa_i64;
typedef unsigned char msa_u8;

__host__ __device__ inline float msa_neg_inf() {
    union {
        unsigned int u;
        float f;
    } v;
    v.u = 0xff800000u;
    return v.f;
}

// One side's gap terms (see the header comment).
struct MsaTerms {
    const float* occ;
    const float* start;
    const float* cont;
    const float* own;
    const float* credit;
};

__host__ __device__ inline MsaTerms msa_terms(const float* t, int len) {
    MsaTerms g;
    g.occ = t;
    g.start = t + len;
    g.cont = t + 2 * len + 1;
    g.own = t + 3 * len + 2;
    g.credit = t + 4 * len + 2;
    return g;
}

struct MsaDpPair {
    int n, m, K;
    const float* sa;
    const float* fbt;     // null when B is single
    const msa_u8* used;   // null when B is single
    const short* single;  // null unless B is single
    MsaTerms a, b;
    msa_u8* trace;  // n x (m + 1)
};

__host__ __device__ inline MsaDpPair msa_pair_view(const msa_i64* desc, int pair, int K, const float* fdata,
                                                   const short* single, const msa_u8* used, msa_u8* trace) {
    const msa_i64* d = desc + (msa_i64)pair * MSA_DESC;
    MsaDpPair p;
    p.n = (int)d[MSA_D_N];
    p.m = (int)d[MSA_D_M];
    p.K = K;
    p.sa = fdata + d[MSA_D_SA];
    p.fbt = d[MSA_D_FBT] >= 0 ? fdata + d[MSA_D_FBT] : 0;
    p.used = d[MSA_D_USED] >= 0 ? used + d[MSA_D_USED] : 0;
    p.single = d[MSA_D_SINGLE] >= 0 ? single + d[MSA_D_SINGLE] : 0;
    p.a = msa_terms(fdata + d[MSA_D_TERMS_A], p.n);
    p.b = msa_terms(fdata + d[MSA_D_TERMS_B], p.m);
    p.trace = trace + d[MSA_D_TRACE];
    return p;
}

// t(i, j) for A's column i and B's column j (0-based): PairScores::row / cell.
__host__ __device__ inline float msa_column_score(const MsaDpPair& p, int i, int j) {
    const float* sa = p.sa + (msa_i64)i * p.K;
    if (p.single) return MSA_SUB(sa[p.single[j]], p.a.own[i]);
    float v = 0.0f;
    for (int y = 0; y < p.K; ++y)
        if (p.used[y]) v = MSA_ADD(v, MSA_MUL(sa[y], p.fbt[(msa_i64)y * p.m + j]));
    return MSA_SUB(v, MSA_ADD(MSA_MUL(p.b.occ[j], p.a.own[i]), MSA_MUL(p.a.occ[i], p.b.own[j])));
}

// The diagonals: buf[(slot * 3 + state) * (n + 1) + i], slot = d % 3, state 0 M, 1 X, 2 Y.
__host__ __device__ inline msa_i64 msa_diag_at(int n, int d, int state) {
    return (msa_i64)((d % 3) * 3 + state) * (n + 1);
}

// The cells of diagonal d taken by thread `tid` of `nthreads` (rows i = lo + tid, lo + tid +
// nthreads, ...). Diagonals d - 1 and d - 2 must be complete.
__host__ __device__ inline void msa_dp_diagonal(const MsaDpPair& p, int d, int tid, int nthreads,
                                                float* buf) {
    const int n = p.n, m = p.m;
    const float NEG = msa_neg_inf();
    const int lo = d - m > 0 ? d - m : 0, hi = d < n ? d : n;
    float* M = buf + msa_diag_at(n, d, 0);
    float* X = buf + msa_diag_at(n, d, 1);
    float* Y = buf + msa_diag_at(n, d, 2);
    const float* M1 = buf + msa_diag_at(n, d + 2, 0);  // diagonal d - 1
    const float* X1 = buf + msa_diag_at(n, d + 2, 1);
    const float* Y1 = buf + msa_diag_at(n, d + 2, 2);
    const float* M2 = buf + msa_diag_at(n, d + 1, 0);  // diagonal d - 2
    const float* X2 = buf + msa_diag_at(n, d + 1, 1);
    const float* Y2 = buf + msa_diag_at(n, d + 1, 2);
    for (int i = lo + tid; i <= hi; i += nthreads) {
        const int j = d - i;
        if (i == 0) {  // ProfileDP::first_row
            if (j == 0) {
                M[0] = 0.0f;
                X[0] = NEG;
                Y[0] = NEG;
                continue;
            }
            const float occ = p.b.occ[j - 1];
            const float st = p.a.start[0], ct = p.a.cont[0];
            float best = MSA_SUB(M1[0], MSA_MUL(occ, st));
            if (MSA_SUB(Y1[0], MSA_MUL(occ, ct)) > best) best = MSA_SUB(Y1[0], MSA_MUL(occ, ct));
            if (MSA_SUB(X1[0], MSA_MUL(occ, st)) > best) best = MSA_SUB(X1[0], MSA_MUL(occ, st));
            M[0] = NEG;
            X[0] = NEG;
            Y[0] = best;
            continue;
        }
        msa_u8* t = p.trace + (msa_i64)(i - 1) * (m + 1);
        const float occ_a = p.a.occ[i - 1];
        // (i - 1, j) is diagonal d - 1 at row i - 1
        const float pM = M1[i - 1], pX = X1[i - 1], pY = Y1[i - 1];
        if (j == 0) {  // column 0: only a gap in B
            const float so = MSA_MUL(occ_a, p.b.start[0]), co = MSA_MUL(occ_a, p.b.cont[0]);
            float best = MSA_SUB(pM, so);
            int st = 0;
            if (MSA_SUB(pX, co) > best) {
                best = MSA_SUB(pX, co);
                st = 1;
            }
            if (MSA_SUB(pY, so) > best) {
                best = MSA_SUB(pY, so);
                st = 2;
            }
            M[i] = NEG;
            Y[i] = NEG;
            X[i] = best;
            t[0] = (msa_u8)(st << 2);
            continue;
        }
        const float ob = p.b.occ[j - 1];
        const float credit_a = p.a.credit[i - 1];
        const float start_a = p.a.start[i], cont_a = p.a.cont[i];
        // M: ties go to M, then X, then Y ((i - 1, j - 1) is diagonal d - 2 at row i - 1)
        float dm = M2[i - 1];
        int sm = 0;
        const float dx = MSA_ADD(X2[i - 1], MSA_MUL(occ_a, p.b.credit[j - 1]));
        const float dy = MSA_ADD(Y2[i - 1], MSA_MUL(ob, credit_a));
        if (dx > dm) {
            dm = dx;
            sm = 1;
        }
        if (dy > dm) {
            dm = dy;
            sm = 2;
        }
        M[i] = MSA_ADD(dm, msa_column_score(p, i - 1, j - 1));
        // X (gap in B at boundary j): ties go to M, then X, then Y
        const float sxo = MSA_MUL(occ_a, p.b.start[j]);
        float bx = MSA_SUB(pM, sxo);
        int sx = 0;
        const float cx = MSA_SUB(pX, MSA_MUL(occ_a, p.b.cont[j]));
        if (cx > bx) {
            bx = cx;
            sx = 1;
        }
        if (MSA_SUB(pY, sxo) > bx) {
            bx = MSA_SUB(pY, sxo);
            sx = 2;
        }
        X[i] = bx;
        // Y (gap in A at boundary i): ties go to M, then Y, then X ((i, j - 1) is diagonal
        // d - 1 at row i)
        const float syo = MSA_MUL(ob, start_a);
        float by = MSA_SUB(M1[i], syo);
        int sy = 0;
        const float cy = MSA_SUB(Y1[i], MSA_MUL(ob, cont_a));
        if (cy > by) {
            by = cy;
            sy = 2;
        }
        if (MSA_SUB(X1[i], syo) > by) {
            by = MSA_SUB(X1[i], syo);
            sy = 1;
        }
        Y[i] = by;
        t[j] = (msa_u8)(sm | (sx << 2) | (sy << 4));
    }
}

// After the last diagonal (n + m): the score of the best final state (ties M > X > Y) and
// the path, written backwards to end at path + n + m; returns the path's length.
__host__ __device__ inline int msa_dp_traceback(const MsaDpPair& p, const float* buf, msa_u8* path,
                                                float* score) {
    const int n = p.n, m = p.m;
    float best = buf[msa_diag_at(n, n + m, 0) + n];
    int state = 0;
    const float x = buf[msa_diag_at(n, n + m, 1) + n], y = buf[msa_diag_at(n, n + m, 2) + n];
    if (x > best) {
        best = x;
        state = 1;
    }
    if (y > best) {
        best = y;
        state = 2;
    }
    *score = best;
    int i = n, j = m, pos = n + m;
    while (i > 0) {
        msa_u8 op;
        if (j == 0) {
            op = 1;
            --i;
        } else {
            const msa_u8 t = p.trace[(msa_i64)(i - 1) * (m + 1) + j];
            if (state == 0) {
                op = 0;
                state = t & 3;
                --i;
                --j;
            } else if (state == 1) {
                op = 1;
                state = (t >> 2) & 3;
                --i;
            } else {
                op = 2;
                state = (t >> 4) & 3;
                --j;
            }
        }
        path[--pos] = op;
    }
    while (j > 0) {
        path[--pos] = 2;
        --j;
    }
    return n + m - pos;
}

// grid: one block per pair. Shared memory: 9 (max n + 1) floats when use_shared, else the
// diagonals live in scratch. Outputs per pair: score, path_len, the path at the end of its
// n + m bytes, the traceback bytes.
extern "C" __global__ void msa_profile_dp(const msa_i64* desc, int n_pairs, int K, const float* fdata,
                                          const short* single, const msa_u8* used, msa_u8* trace,
                                          msa_u8* path, float* scratch, int use_shared, float* score,
                                          int* path_len) {
    extern __shared__ float msa_shared[];
    const int pair = blockIdx.x;
    if (pair >= n_pairs) return;
    const MsaDpPair p = msa_pair_view(desc, pair, K, fdata, single, used, trace);
    const msa_i64* d = desc + (msa_i64)pair * MSA_DESC;
    float* buf = use_shared ? msa_shared : scratch + d[MSA_D_SCRATCH];
    for (int diag = 0; diag <= p.n + p.m; ++diag) {
        msa_dp_diagonal(p, diag, threadIdx.x, blockDim.x, buf);
        __syncthreads();
    }
    if (threadIdx.x == 0) path_len[pair] = msa_dp_traceback(p, buf, path + d[MSA_D_PATH], score + pair);
}
