// Pair-HMM posterior match probabilities for the accurate MSA mode on the CuPy backend: one
// pair per thread, the same five-state model and row-scaled forward-backward as
// csrc/msa/posteriors.cpp (double precision; the posteriors are written as float32 for
// the host to keep the entries above the cut-off). Per pair the work area holds the forward
// match values (lx * ly, the posteriors' own cells), 18 rolling rows of ly + 1 and the row
// scales (lx + 1): bioaccel/backends/posteriors.py sizes it.
//
// `posterior_pair` is __host__ __device__: tests/cuda_host/posterior_host.cu compiles it
// with nvcc for the CPU and checks it against the C++ engine on machines without a GPU.
// Plain C types only: CuPy compiles this with NVRTC, which has no <stdint.h>.

typedef long long i64;

// Letters are already mapped (0..K-1 scored, K unknown: odds 1 in the padded (K+1)^2 table).
// prm: start[5] (M, Ix short, Iy short, Ix long, Iy long), open[2], extend[2].
// Returns 0, or 1 when a row has no probability (odds underflow).
__host__ __device__ inline int posterior_pair(const short* x, i64 lx, const short* y, i64 ly,
                                              const double* odds, int K1, const double* prm, double* fm,
                                              double* rows, double* scale, float* post) {
    if (lx == 0 || ly == 0) return 0;
    const double* st = prm;
    const double o0 = prm[5], o1 = prm[6], e0 = prm[7], e1 = prm[8];
    const double tmm = 1 - 2 * (o0 + o1), tim0 = 1 - e0, tim1 = 1 - e1;
    const i64 W = ly + 1;
    double* fx0[2] = {rows, rows + W};
    double* fx1[2] = {rows + 2 * W, rows + 3 * W};
    double* fy0[2] = {rows + 4 * W, rows + 5 * W};
    double* fy1[2] = {rows + 6 * W, rows + 7 * W};
    double* bM[2] = {rows + 8 * W, rows + 9 * W};
    double* bx0[2] = {rows + 10 * W, rows + 11 * W};
    double* bx1[2] = {rows + 12 * W, rows + 13 * W};
    double* by0[2] = {rows + 14 * W, rows + 15 * W};
    double* by1[2] = {rows + 16 * W, rows + 17 * W};

    // forward, row 0: only the y-insert states
    scale[0] = 1.0;
    fx0[0][0] = fx1[0][0] = fy0[0][0] = fy1[0][0] = 0;
    for (i64 j = 1; j <= ly; ++j) {
        fx0[0][j] = fx1[0][j] = 0;
        fy0[0][j] = (j == 1 ? st[2] : 0.0) + fy0[0][j - 1] * e0;
        fy1[0][j] = (j == 1 ? st[4] : 0.0) + fy1[0][j - 1] * e1;
    }
    // row i from row i - 1 times 1 / s_{i-1}; the stored row is f_i s_i
    double inv_prev = 1.0;
    for (i64 i = 1; i <= lx; ++i) {
        const int c = (int)(i & 1), p = c ^ 1;
        const double* orow = odds + (i64)x[i - 1] * K1;
        const double* pm = fm + (i - 2) * ly;  // fM(i-1, j) = pm[j-1] (i > 1, j > 0)
        double* cm = fm + (i - 1) * ly;        // fM(i, j) = cm[j-1]
        fx0[c][0] = (i == 1 ? st[1] : 0.0) + (0.0 * o0 + fx0[p][0] * e0) * inv_prev;
        fx1[c][0] = (i == 1 ? st[3] : 0.0) + (0.0 * o1 + fx1[p][0] * e1) * inv_prev;
        for (i64 j = 1; j <= ly; ++j) {
            const double pdiag = (i > 1 && j > 1) ? pm[j - 2] : 0.0;
            const double pup = (i > 1) ? pm[j - 1] : 0.0;
            const double from = (pdiag * tmm + (fx0[p][j - 1] + fy0[p][j - 1]) * tim0 +
                                 (fx1[p][j - 1] + fy1[p][j - 1]) * tim1) *
                                inv_prev;
            const double em = orow[y[j - 1]];
            double v = em * from;
            if (i == 1 && j == 1) v += em * st[0];
            cm[j - 1] = v;
            fx0[c][j] = (pup * o0 + fx0[p][j] * e0) * inv_prev;
            fx1[c][j] = (pup * o1 + fx1[p][j] * e1) * inv_prev;
        }
        fy0[c][0] = fy1[c][0] = 0;
        double ya = 0, yb = 0, s0 = fx0[c][0] + fx1[c][0], s1 = 0;
        for (i64 j = 1; j <= ly; ++j) {
            const double left = j > 1 ? cm[j - 2] : 0.0;
            ya = left * o0 + ya * e0;
            yb = left * o1 + yb * e1;
            fy0[c][j] = ya;
            fy1[c][j] = yb;
            s0 += (cm[j - 1] + fx0[c][j]) + ya;
            s1 += fx1[c][j] + yb;
        }
        const double sum = s0 + s1;
        if (!(sum > 0) || sum > 1e300) return 1;
        scale[i] = sum;
        inv_prev = 1.0 / sum;
    }
    const int cl = (int)(lx & 1);
    const double zend = (fm[(lx - 1) * ly + ly - 1] * st[0] + fx0[cl][ly] * st[1] + fy0[cl][ly] * st[2] +
                         fx1[cl][ly] * st[3] + fy1[cl][ly] * st[4]) /
                        scale[lx];
    if (!(zend > 0)) return 1;

    // backward, posteriors of row i as soon as it is known
    const double inv_z = 1.0 / zend;
    for (i64 i = lx; i >= 1; --i) {
        const int c = (int)(i & 1), n = c ^ 1;
        const bool last = (i == lx);
        const double inv_next = last ? 0.0 : 1.0 / scale[i + 1];
        const double* orow = last ? odds : odds + (i64)x[i] * K1;
        double* mn = bM[c];
        double* xn0 = bx0[c];
        double* xn1 = bx1[c];
        for (i64 j = 0; j <= ly; ++j) {
            mn[j] = (last || j == ly) ? 0.0 : orow[y[j]] * bM[n][j + 1] * inv_next;
            xn0[j] = last ? 0.0 : bx0[n][j] * inv_next;
            xn1[j] = last ? 0.0 : bx1[n][j] * inv_next;
        }
        by0[c][ly] = last ? st[2] : (1 - e0) * mn[ly];
        by1[c][ly] = last ? st[4] : (1 - e1) * mn[ly];
        for (i64 j = ly - 1; j >= 0; --j) {
            by0[c][j] = tim0 * mn[j] + e0 * by0[c][j + 1];
            by1[c][j] = tim1 * mn[j] + e1 * by1[c][j + 1];
        }
        for (i64 j = 0; j <= ly; ++j) {
            const double yn0 = (j == ly) ? 0.0 : by0[c][j + 1];
            const double yn1 = (j == ly) ? 0.0 : by1[c][j + 1];
            const double m = mn[j];
            const double bm = tmm * m + o0 * (xn0[j] + yn0) + o1 * (xn1[j] + yn1);
            bx0[c][j] = tim0 * m + e0 * xn0[j];
            bx1[c][j] = tim1 * m + e1 * xn1[j];
            mn[j] = bm;
        }
        if (last) {
            bM[c][ly] = st[0];
            bx0[c][ly] = st[1];
            bx1[c][ly] = st[3];
        }
        const double norm = inv_z / scale[i];
        const double* fr = fm + (i - 1) * ly;
        float* out = post + (i - 1) * ly;
        for (i64 j = 1; j <= ly; ++j) out[j - 1] = (float)(fr[j - 1] * bM[c][j] * norm);
    }
    return 0;
}

// One pair per thread: pair k is (pair_x[k], pair_y[k]); its posteriors go to
// post[out_start[k] ...] (lx * ly float32), its work area starts at work[work_start[k]].
extern "C" __global__ void pair_posteriors(const short* letters, const i64* offsets, const i64* pair_x,
                                           const i64* pair_y, const i64* out_start, const i64* work_start,
                                           const double* odds, int K1, const double* prm, i64 npairs,
                                           double* work, float* post, int* status) {
    const i64 k = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= npairs) return;
    const i64 x = pair_x[k], y = pair_y[k];
    const i64 lx = offsets[x + 1] - offsets[x], ly = offsets[y + 1] - offsets[y];
    double* fm = work + work_start[k];
    double* rows = fm + lx * ly;
    double* scale = rows + 18 * (ly + 1);
    status[k] = posterior_pair(letters + offsets[x], lx, letters + offsets[y], ly, odds, K1, prm, fm, rows,
                               scale, post + out_start[k]);
}
