// Binary stdin reading shared by the host harnesses of the CUDA kernels.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <vector>

template <typename T>
static std::vector<T> read_n(long long count) {
    std::vector<T> v(static_cast<size_t>(count));
    if (count && std::fread(v.data(), sizeof(T), v.size(), stdin) != v.size()) {
        std::fprintf(stderr, "short input: expected %lld values\n", count);
        std::exit(2);
    }
    return v;
}

// The input both pair harnesses read after their own header: query offsets (nq + 1), target
// offsets (nt + 1), total query words, query word offsets (nq + 1), peq (total words * alpha,
// uint64), target codes length, target codes (uint8); and the longest query's word count.
struct PairInput {
    std::vector<long long> q_off, t_off, word_off;
    std::vector<unsigned long long> peq;
    std::vector<unsigned char> t_codes;
    long long max_words = 1;

    PairInput(long long nq, long long nt, int alpha)
        : q_off(read_n<long long>(nq + 1)), t_off(read_n<long long>(nt + 1)) {
        const long long total_words = read_n<long long>(1)[0];
        word_off = read_n<long long>(nq + 1);
        peq = read_n<unsigned long long>(total_words * alpha);
        t_codes = read_n<unsigned char>(read_n<long long>(1)[0]);
        for (long long q = 0; q < nq; ++q)
            if (word_off[q + 1] - word_off[q] > max_words) max_words = word_off[q + 1] - word_off[q];
    }
};
