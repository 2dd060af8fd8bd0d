// Runs the CuPy posterior kernel's per-pair function on the CPU (nvcc compiles it as host
// code; no GPU needed). Input on stdin, little-endian: K1 (int64), lx, ly (int64),
// x letters (lx int16), y letters (ly int16), odds (K1 * K1 float64), prm (9 float64).
// Output: the status, then lx * ly posteriors as text, one per line, rows of x major.
#include <cstdio>
#include <vector>

#include "host_io.hpp"

#include "../../bioaccel/kernels/posterior.cu"

int main() {
    std::vector<long long> head = read_n<long long>(3);
    const int K1 = (int)head[0];
    const long long lx = head[1], ly = head[2];
    std::vector<short> x = read_n<short>(lx), y = read_n<short>(ly);
    std::vector<double> odds = read_n<double>((long long)K1 * K1), prm = read_n<double>(9);
    std::vector<double> fm(lx * ly + 1), rows(18 * (ly + 1)), scale(lx + 1);
    std::vector<float> post(lx * ly + 1);
    const int status = posterior_pair(x.data(), lx, y.data(), ly, odds.data(), K1, prm.data(), fm.data(),
                                      rows.data(), scale.data(), post.data());
    std::printf("%d\n", status);
    for (long long k = 0; k < lx * ly; ++k) std::printf("%.9g\n", post[k]);
    return 0;
}
