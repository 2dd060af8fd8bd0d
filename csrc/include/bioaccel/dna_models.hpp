// Evolutionary distances from pair counts, with ape::dist.dna's formulas and edge
// cases (see bioaccel/distances/_dna.py for the table of formulas). Shared by every backend
// when the native module is present, so all backends agree bit for bit.
#pragma once

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace bioaccel {

enum class DnaModel : int { Raw = 0, JC69 = 1, K80 = 2, F81 = 3, TN93 = 4, LogDet = 5 };

inline DnaModel dna_model_from_int(int m) {
    if (m < 0 || m > 5) throw std::invalid_argument("unknown DNA model id " + std::to_string(m));
    return static_cast<DnaModel>(m);
}

// Constants derived from the base frequencies (A, C, G, T) once per matrix.
struct ModelConstants {
    double e = 0;                                     // F81
    double g_r = 0, g_y = 0, k1 = 0, k2 = 0, k3 = 0;  // TN93
    explicit ModelConstants(const double* f) {
        const double a = f[0], c = f[1], g = f[2], t = f[3];
        e = 1 - a * a - c * c - g * g - t * t;
        g_r = a + g;
        g_y = c + t;
        k1 = 2 * a * g / g_r;
        k2 = 2 * c * t / g_y;
        k3 = 2 * (g_r * g_y - a * g * g_y / g_r - c * t * g_r / g_y);
    }
};

// counts: sites, purine transitions, pyrimidine transitions, transversions
inline double distance_from_summary(DnaModel model, double sites, double ts_r, double ts_y, double tv,
                                    const ModelConstants& k) {
    const double p = (ts_r + ts_y + tv) / sites;
    switch (model) {
        case DnaModel::Raw:
            return p;
        case DnaModel::JC69:
            return -0.75 * std::log(1 - 4 * p / 3);
        case DnaModel::K80: {
            const double P = (ts_r + ts_y) / sites, Q = tv / sites;
            return -0.5 * std::log((1 - 2 * P - Q) * std::sqrt(1 - 2 * Q));
        }
        case DnaModel::F81:
            return -k.e * std::log(1 - p / k.e);
        case DnaModel::TN93: {
            const double p1 = ts_r / sites, p2 = ts_y / sites, q = tv / sites;
            const double w1 = 1 - p1 / k.k1 - q / (2 * k.g_r);
            const double w2 = 1 - p2 / k.k2 - q / (2 * k.g_y);
            const double w3 = 1 - q / (2 * k.g_r * k.g_y);
            return -k.k1 * std::log(w1) - k.k2 * std::log(w2) - k.k3 * std::log(w3);
        }
        default:
            throw std::invalid_argument("distance_from_summary: LogDet needs the 4x4 table");
    }
}

// LogDet: -ln(det F)/4 - ln 4, F = table / sites. `cell` holds the 16 counts row-major in
// A, C, G, T order. The determinant is summed in the order ape's detFourByFour uses, on
// ape's (column-major, A G C T) layout, so singular tables give exactly 0 as in ape.
inline double logdet_from_table(const double* cell) {
    static const int kApeToOurs[16] = {0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15};
    double sites = 0;
    for (int t = 0; t < 16; ++t) sites += cell[t];
    double x[16];
    for (int t = 0; t < 16; ++t) x[t] = cell[kApeToOurs[t]] / sites;
    const double m1 = x[10] * x[15] - x[14] * x[11], m2 = x[14] * x[7] - x[6] * x[15];
    const double m3 = x[6] * x[11] - x[10] * x[7], m4 = x[2] * x[15] - x[14] * x[3];
    const double m5 = x[10] * x[3] - x[2] * x[11], m6 = x[14] * x[11] - x[10] * x[15];
    const double m7 = x[2] * x[7] - x[6] * x[3], m8 = x[6] * x[15] - x[14] * x[7];
    const double m9 = x[14] * x[3] - x[2] * x[15], m10 = x[10] * x[7] - x[6] * x[11];
    const double m11 = x[2] * x[11] - x[10] * x[3], m12 = x[6] * x[3] - x[2] * x[7];
    const double det = x[0] * x[5] * m1 + x[0] * x[9] * m2 + x[0] * x[13] * m3 + x[4] * x[9] * m4 +
                       x[4] * x[13] * m5 + x[4] * x[1] * m6 + x[8] * x[13] * m7 + x[8] * x[1] * m8 +
                       x[8] * x[5] * m9 + x[12] * x[1] * m10 + x[12] * x[5] * m11 + x[12] * x[9] * m12;
    return -std::log(det) / 4 - 1.386294361119890572454;  // ln 4
}

// Distances for a tile of counts laid out (k, rows, cols) -> out (rows, cols).
void dna_distances_from_counts(DnaModel model, const std::int32_t* counts, std::int64_t rows,
                               std::int64_t cols, const double* freqs, double* out, int threads);

// Fused: counts and distances for rows [i0, i1), columns j > i, written into the full
// n x n matrix `out` at (i, j) and (j, i). No count buffer is materialised.
void dna_distance_rows(const std::uint64_t* planes, std::int64_t n, std::int64_t words, DnaModel model,
                       const double* freqs, std::int64_t i0, std::int64_t i1, double* out, int threads);

}  // namespace bioaccel
