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
