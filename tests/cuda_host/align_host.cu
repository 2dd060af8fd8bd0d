// Runs the CuPy alignment kernel's per-pair function on the CPU (nvcc compiles it as host
// code; no GPU needed). Input on stdin, little-endian:
//   int64: mode, gap_open, gap_extend, n_queries, n_targets
//   int64: profile offsets (nq + 1), query lengths (nq), target offsets (nt + 1)
//   int16: profiles (profile offsets[nq] values); int64: target code count; uint8: codes
// Output: nq * nt scores as text, queries major.
#include <algorithm>
#include <cstdio>
#include <vector>

#include "host_io.hpp"

#include "../../bioaccel/kernels/align_scores.cu"

int main() {
    std::vector<long long> head = read_n<long long>(5);
    const int mode = (int)head[0], gap_open = (int)head[1], gap_extend = (int)head[2];
    const long long nq = head[3], nt = head[4];
    std::vector<long long> prof_off = read_n<long long>(nq + 1);
    std::vector<long long> q_len = read_n<long long>(nq);
    std::vector<long long> t_off = read_n<long long>(nt + 1);
    std::vector<short> prof = read_n<short>(prof_off[nq]);
    const long long tlen = read_n<long long>(1)[0];
    std::vector<unsigned char> t_codes = read_n<unsigned char>(tlen);
    long long longest = 0;
    for (long long t = 0; t < nt; ++t) longest = std::max(longest, t_off[t + 1] - t_off[t]);
    std::vector<int> bh(longest + 1), bf(longest + 1);
    for (long long q = 0; q < nq; ++q)
        for (long long t = 0; t < nt; ++t)
            std::printf("%d\n", align_pair(prof.data() + prof_off[q], q_len[q], t_codes.data() + t_off[t],
                                           t_off[t + 1] - t_off[t], mode, gap_open, gap_extend,
                                           bh.data(), bf.data(), 1));
    return 0;
}
