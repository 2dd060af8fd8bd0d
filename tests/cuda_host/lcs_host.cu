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
    std::vector<long long> q_off = read_n<long long>(nq + 1);
    std::vector<long long> t_off = read_n<long long>(nt + 1);
    const long long total_words = read_n<long long>(1)[0];
    std::vector<long long> word_off = read_n<long long>(nq + 1);
    std::vector<unsigned long long> peq = read_n<unsigned long long>(total_words * alpha);
    const long long tlen = read_n<long long>(1)[0];
    std::vector<unsigned char> t_codes = read_n<unsigned char>(tlen);
    long long max_words = 1;
    for (long long q = 0; q < nq; ++q) {
        const long long w = word_off[q + 1] - word_off[q];
        if (w > max_words) max_words = w;
    }
    std::vector<unsigned long long> v(max_words);
    for (long long q = 0; q < nq; ++q)
        for (long long t = 0; t < nt; ++t)
            std::printf("%d\n", lcs_length_pair(t_codes.data() + t_off[t], t_off[t + 1] - t_off[t],
                                                q_off[q + 1] - q_off[q], peq.data() + word_off[q] * alpha,
                                                alpha, letters, v.data(), 1));
    return 0;
}
