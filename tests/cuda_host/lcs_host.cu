// Runs the CuPy LCS kernel's per-pair function on the CPU (nvcc compiles it as host code; no
// GPU needed). Input on stdin, all little-endian int64 unless said:
//   alpha, letters, n_queries, n_targets,
//   query offsets (nq + 1), target offsets (nt + 1), total query words,
//   query word offsets (nq + 1), peq (total words * alpha, uint64),
//   target codes length, target codes (uint8)
// Output: nq * nt LCS lengths as text, one per line, queries major.
#include <cstdio>
#include <vector>

#include "host_io.hpp"

#include "../../bioaccel/kernels/lcs_lengths.cu"

int main() {
    std::vector<long long> head = read_n<long long>(4);
    const int alpha = (int)head[0], letters = (int)head[1];
    const long long nq = head[2], nt = head[3];
    const PairInput in(nq, nt, alpha);
    std::vector<unsigned long long> v(in.max_words);
    for (long long q = 0; q < nq; ++q)
        for (long long t = 0; t < nt; ++t)
            std::printf("%d\n",
                        lcs_length_pair(in.t_codes.data() + in.t_off[t], in.t_off[t + 1] - in.t_off[t],
                                        in.q_off[q + 1] - in.q_off[q], in.peq.data() + in.word_off[q] * alpha,
                                        alpha, letters, v.data(), 1));
    return 0;
}
