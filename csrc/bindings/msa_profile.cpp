// pybind11 wrappers of the MSA profile-profile DP (csrc/msa/profile.cpp, profile_dp.cpp): one
// pair of sub-alignments aligned, or the arrays its DP reads; the GIL released around the work.
#include <pybind11/pybind11.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "bioaccel/common.hpp"
#include "bioaccel/msa.hpp"

#include "arrays.hpp"
#include "msa_common.hpp"

namespace py = pybind11;
using namespace bioaccel;
using namespace bioaccel::bindings;

namespace {

// The profile of sub-alignment `rows`; with as_sequence and one row, the profile of that
// sequence alone (as the progressive stage builds a tip's: its `single` letters set).
msa::Profile pair_profile(const SeqView& v, const I32Array& column_of, const I64Array& rows, const double* w,
                          const msa::MsaScoring& sc, bool as_sequence) {
    if (as_sequence && rows.size() == 1) {
        const std::int64_t s = rows.data()[0];
        return msa::sequence_profile(v.seq(s), v.length(s), sc, w[s]);
    }
    std::vector<std::int32_t> kept;
    return msa::rows_profile(v, column_of.data(), rows.data(), rows.size(), w, sc, kept);
}

// The profiles of two sub-alignments (rows_a and rows_b of an alignment given by column_of),
// arguments checked; built without the GIL.
std::pair<msa::Profile, msa::Profile> two_profiles(const U8Array& codes, const I64Array& offsets,
                                                   const msa::MsaScoring& sc, const F64Array& weights,
                                                   const I32Array& column_of, const I64Array& rows_a,
                                                   const I64Array& rows_b, bool as_sequences) {
    const SeqView v = seq_view(codes, offsets);
    const double* w = weights_for(weights, v.count);
    check_rows(rows_a, v.count);
    check_rows(rows_b, v.count);
    check_columns(v, column_of, -1);
    py::gil_scoped_release release;
    return {pair_profile(v, column_of, rows_a, w, sc, as_sequences),
            pair_profile(v, column_of, rows_b, w, sc, as_sequences)};
}

// Aligns two sub-alignments (rows_a and rows_b of an alignment given by column_of) as
// profiles: (path, DP score, path_score of that path).
py::tuple profile_pair_py(U8Array codes, I64Array offsets, I16Array letter_of, F32Array sub, py::tuple gaps,
                          F64Array weights, I32Array column_of, I64Array rows_a, I64Array rows_b,
                          std::int64_t full_limit, bool as_sequences, int threads) {
    const msa::MsaScoring sc = scoring(letter_of, sub, gaps);
    msa::Path path;
    double score, rescored;
    {
        const auto [a, b] =
            two_profiles(codes, offsets, sc, weights, column_of, rows_a, rows_b, as_sequences);
        py::gil_scoped_release release;
        score = msa::align_profiles(a, b, sc, path, full_limit, nullptr, nullptr, resolve_threads(threads));
        rescored = msa::path_score(a, b, sc, path);
    }
    py::array_t<std::uint8_t> p(path.size());
    std::copy(path.begin(), path.end(), p.mutable_data());
    return py::make_tuple(p, score, rescored);
}

// The arrays the profile-profile DP of msa_profile_pair (same arguments) reads, as a dict:
// letters (K); sa (n, K); fbt (K, m) and used (K,) uint8, or single (m,) int16 when B is one gap-free
// sequence (the others None); occ_a, occ_b; start_a, cont_a (n + 1), own_a, credit_a (n);
// start_b, cont_b (m + 1), own_b, credit_b (m). For the GPU stage (backends/cupy_msa.py).
py::dict dp_inputs_py(U8Array codes, I64Array offsets, I16Array letter_of, F32Array sub, py::tuple gaps,
                      F64Array weights, I32Array column_of, I64Array rows_a, I64Array rows_b,
                      bool as_sequences) {
    const msa::MsaScoring sc = scoring(letter_of, sub, gaps);
    msa::DpInputs in;
    {
        const auto [a, b] =
            two_profiles(codes, offsets, sc, weights, column_of, rows_a, rows_b, as_sequences);
        py::gil_scoped_release release;
        in = msa::dp_inputs(a, b, sc);
    }
    return dp_inputs_dict(in);
}

}  // namespace

void bind_msa_profile(py::module_& m) {
    m.def("msa_profile_pair", &profile_pair_py, py::arg("codes"), py::arg("offsets"), py::arg("letter_of"),
          py::arg("sub"), py::arg("gaps"), py::arg("weights"), py::arg("column_of"), py::arg("rows_a"),
          py::arg("rows_b"), py::arg("full_limit") = std::int64_t(1) << 26, py::arg("as_sequences") = false,
          py::arg("threads") = 1,
          "Profile-profile DP of two sub-alignments: (path, score, path score). With\n"
          "as_sequences, a one-row side is profiled as its sequence alone (as tips are);\n"
          "threads > 1: a large DP as a wavefront of rows (the same result).");
    m.def("msa_dp_inputs", &dp_inputs_py, py::arg("codes"), py::arg("offsets"), py::arg("letter_of"),
          py::arg("sub"), py::arg("gaps"), py::arg("weights"), py::arg("column_of"), py::arg("rows_a"),
          py::arg("rows_b"), py::arg("as_sequences") = false,
          "The arrays the profile-profile DP of msa_profile_pair reads (a dict).");
}
