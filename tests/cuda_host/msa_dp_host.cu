// Runs the MSA profile DP kernel's per-pair functions on the CPU (nvcc compiles them as host
// code; no GPU needed): for each pair, the diagonals in order, each diagonal's cells by the
// block's `threads` in turn (what the barrier between diagonals guarantees), then the
// traceback. Build with -Xcompiler -ffp-contract=off (as setup.py builds the engine).
// Input on stdin, little-endian (bioaccel.backends.msa_batch.pack_batch's arrays):
//   int64: n_pairs, K, threads, fdata size, single size, used size, trace size, path size
//   int64: desc (n_pairs x MSA_DESC); float32: fdata; int16: single; uint8: used
// Output: one line per pair: the score's bits (uint32), the path length, the path's ops.
#include <cstdio>
#include <vector>

#include "host_io.hpp"

#include "../../bioaccel/kernels/msa_profile_dp.cu"

int main() {
    std::vector<long long> head = read_n<long long>(8);
    const long long n_pairs = head[0];
    const int K = (int)head[1], threads = (int)head[2];
    std::vector<long long> desc = read_n<long long>(n_pairs * MSA_DESC);
    std::vector<float> fdata = read_n<float>(head[3]);
    std::vector<short> single = read_n<short>(head[4]);
    std::vector<unsigned char> used = read_n<unsigned char>(head[5]);
    std::vector<unsigned char> trace(head[6] + 1), path(head[7] + 1);
    for (long long k = 0; k < n_pairs; ++k) {
        const MsaDpPair p =
            msa_pair_view(desc.data(), (int)k, K, fdata.data(), single.data(), used.data(), trace.data());
        std::vector<float> buf(9 * (size_t)(p.n + 1));
        for (int d = 0; d <= p.n + p.m; ++d)
            for (int tid = 0; tid < threads; ++tid) msa_dp_diagonal(p, d, tid, threads, buf.data());
        unsigned char* out = path.data() + desc[k * MSA_DESC + MSA_D_PATH];
        float score;
        const int len = msa_dp_traceback(p, buf.data(), out, &score);
        union {
            float f;
            unsigned int u;
        } bits;
        bits.f = score;
        std::printf("%u %d", bits.u, len);
        for (int c = p.n + p.m - len; c < p.n + p.m; ++c) std::printf(" %d", out[c]);
        std::printf("\n");
    }
    return 0;
}
