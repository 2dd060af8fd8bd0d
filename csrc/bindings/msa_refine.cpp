// pybind11 wrappers of the MSA refinement stage (csrc/msa/refine.cpp): gap-split refinement and
// its sum-of-pairs acceptance score; the GIL released around the C++ work.
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

py::tuple refine_gaps_py(U8Array codes, I64Array offsets, I16Array letter_of, F32Array sub, py::tuple gaps,
                         F64Array weights, int iterations, std::uint64_t seed, int radius, I32Array column_of,
                         std::int64_t n_columns, int threads) {
    const SeqView v = seq_view(codes, offsets);
    const msa::MsaScoring sc = scoring(letter_of, sub, gaps);
    const double* w = weights_for(weights, v.count);
    check_columns(v, column_of, n_columns);
    py::array_t<std::int32_t> out(column_of.size());
    std::copy(column_of.data(), column_of.data() + column_of.size(), out.mutable_data());
    std::int64_t accepted = 0, width;
    {
        StopScope stop;  // Ctrl-C reaches the engine
        py::gil_scoped_release release;
        width = msa::refine_gap_splits(v, sc, w, iterations, seed, radius, out.mutable_data(), n_columns,
                                       &accepted, threads);
    }
    return py::make_tuple(out, width, accepted);
}

double cross_sum_of_pairs_py(U8Array codes, I64Array offsets, I16Array letter_of, F32Array sub,
                             py::tuple gaps, I32Array column_of, std::int64_t n_columns, I64Array rows_a,
                             I64Array rows_b) {
    const SeqView v = seq_view(codes, offsets);
    const msa::MsaScoring sc = scoring(letter_of, sub, gaps);
    check_columns(v, column_of, n_columns);
    check_rows(rows_a, v.count);
    check_rows(rows_b, v.count);
    const std::vector<std::int64_t> a(rows_a.data(), rows_a.data() + rows_a.size());
    const std::vector<std::int64_t> b(rows_b.data(), rows_b.data() + rows_b.size());
    py::gil_scoped_release release;
    return msa::cross_sum_of_pairs(v, sc, a, b, column_of.data(), n_columns);
}

}  // namespace

void bind_msa_refine(py::module_& m) {
    m.def("msa_refine_gaps", &refine_gaps_py, py::arg("codes"), py::arg("offsets"), py::arg("letter_of"),
          py::arg("sub"), py::arg("gaps"), py::arg("weights"), py::arg("iterations"), py::arg("seed"),
          py::arg("radius"), py::arg("column_of"), py::arg("n_columns"), py::arg("threads") = 1,
          "Gap-pattern split refinement: (column_of, number of columns, splits accepted).");
    m.def("msa_cross_sum_of_pairs", &cross_sum_of_pairs_py, py::arg("codes"), py::arg("offsets"),
          py::arg("letter_of"), py::arg("sub"), py::arg("gaps"), py::arg("column_of"), py::arg("n_columns"),
          py::arg("rows_a"), py::arg("rows_b"),
          "Sum-of-pairs score of the pairs across rows_a x rows_b (each pair's own gap runs),\n"
          "the refinement's acceptance score.");
}
