// One-hot expansion of aligned DNA codes on the device, for the GEMM pair counts.
//
// codes:  (n, sites) uint8, bioaccel DNA codes (0..3 = A, C, G, T; anything else missing)
// onehot: (n, 4, sites) float, onehot[i][b][s] = 1 when sequence i has base b at site s
//
// One thread per (sequence, site). Loaded through cupy.RawModule; compiled with nvcc
// for sm_80 and sm_90 in the test suite.
extern "C" __global__ void dna_onehot(const unsigned char* __restrict__ codes, float* __restrict__ onehot,
                                      long long n, long long sites) {
    const long long idx = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (idx >= n * sites) return;
    const long long i = idx / sites;
    const long long s = idx - i * sites;
    const unsigned char c = codes[idx];
    float* row = onehot + i * 4 * sites + s;
#pragma unroll
    for (int b = 0; b < 4; ++b) row[b * sites] = (c == b) ? 1.0f : 0.0f;
}
