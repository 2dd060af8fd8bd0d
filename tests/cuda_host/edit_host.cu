// Runs the CuPy edit-distance kernel's per-pair function on the CPU (nvcc compiles it as
// host code; no GPU needed). Input on stdin, all little-endian int64 unless said:
//   alpha, mode, max_distance, n_queries, n_targets,
//   query offsets (nq + 1), target offsets (nt + 1), total query words,
//   query word offsets (nq + 1), peq (total words * alpha, uint64),
//   target codes length, target codes (uint8)
// Output: nq * nt distances as text, one per line, queries major.
#include <algorithm>
#include <cstdio>
#include <vector>

#include "host_io.hpp"

#include "../../bioaccel/kernels/edit_distance.cu"

int main() {
    std::vector<long long> head = read_n<long long>(5);
    const int alpha = (int)head[0], mode = (int)head[1], max_distance = (int)head[2];
    const long long nq = head[3], nt = head[4];
    const PairInput in(nq, nt, alpha);
    std::vector<unsigned long long> pv(in.max_words), mv(in.max_words);
    for (long long q = 0; q < nq; ++q)
        for (long long t = 0; t < nt; ++t)
            std::printf("%d\n", edit_distance_pair(
                                    in.t_codes.data() + in.t_off[t], in.t_off[t + 1] - in.t_off[t],
                                    in.q_off[q + 1] - in.q_off[q], in.peq.data() + in.word_off[q] * alpha,
                                    alpha, mode, max_distance, pv.data(), mv.data(), 1));
    return 0;
}
