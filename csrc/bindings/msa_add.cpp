// pybind11 wrapper of the MSA add stage (csrc/msa/add.cpp): new sequences aligned to the fixed
// profile of an existing alignment; the GIL released around the C++ work.
#include <pybind11/pybind11.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "bioaccel/common.hpp"
#include "bioaccel/msa.hpp"
#include "bioaccel/msa_add.hpp"

#include "arrays.hpp"
#include "msa_common.hpp"

namespace py = pybind11;
using namespace bioaccel;
using namespace bioaccel::bindings;

namespace {

// New sequences aligned to the fixed profile of an existing alignment (csrc/msa/add.cpp):
// (kept columns, list of paths (uint8 ops, A = the profile), scores, banded flags).
py::tuple add_to_alignment_py(U8Array codes, I64Array offsets, I32Array column_of, std::int64_t n_columns,
                              U8Array new_codes, I64Array new_offsets, I16Array letter_of, F32Array sub,
                              py::tuple gaps, F64Array weights, bool fragments, int band_radius,
                              std::int64_t band_from_cells, int threads) {
    const SeqView v = seq_view(codes, offsets);
    const SeqView added = seq_view(new_codes, new_offsets);
    const msa::MsaScoring sc = scoring(letter_of, sub, gaps);
    const double* w = weights_for(weights, v.count);
    check_columns(v, column_of, n_columns);
    if (band_radius < 0) throw std::invalid_argument("band_radius must be >= 0");
    msa::AddOptions opt;
    opt.fragments = fragments;
    opt.band_radius = band_radius;
    opt.band_from_cells = band_from_cells;
    msa::AddResult res;
    {
        StopScope stop;  // Ctrl-C reaches the engine
        py::gil_scoped_release release;
        res = msa::align_to_alignment(v, column_of.data(), w, added, sc, opt, threads);
    }
    py::list paths;
    for (const msa::Path& p : res.paths) paths.append(to_array(p));
    py::array_t<std::uint8_t> banded(static_cast<py::ssize_t>(res.banded.size()));
    std::copy(res.banded.begin(), res.banded.end(), banded.mutable_data());
    return py::make_tuple(to_array(res.kept_columns), paths, to_array(res.scores), banded);
}

}  // namespace

void bind_msa_add(py::module_& m) {
    m.def("msa_add_to_alignment", &add_to_alignment_py, py::arg("codes"), py::arg("offsets"),
          py::arg("column_of"), py::arg("n_columns"), py::arg("new_codes"), py::arg("new_offsets"),
          py::arg("letter_of"), py::arg("sub"), py::arg("gaps"), py::arg("weights"),
          py::arg("fragments") = false, py::arg("band_radius") = 100,
          py::arg("band_from_cells") = std::int64_t(1) << 24, py::arg("threads") = 0,
          "Each new sequence aligned to the fixed profile of an existing alignment:\n"
          "(kept columns, paths, scores, banded).");
}
