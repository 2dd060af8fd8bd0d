// Bindings of csrc/neighbors: the pairs within an edit-distance threshold, and the
// verification of listed candidate pairs.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "arrays.hpp"
#include "bioaccel/neighbors.hpp"

namespace py = pybind11;
using namespace bioaccel;
using namespace bioaccel::bindings;

namespace {

template <typename T>
py::array_t<T> to_array(const std::vector<T>& v) {
    py::array_t<T> a(static_cast<py::ssize_t>(v.size()));
    std::copy(v.begin(), v.end(), a.mutable_data());
    return a;
}

py::tuple edit_neighbors_py(U8Array codes, I64Array offsets, int alphabet, std::int64_t max_distance,
                            bool symmetric, std::int64_t first, std::int64_t last, bool verify, int method,
                            int segments, int threads) {
    const SeqView v = seq_view(codes, offsets, "sequences");
    NeighborOptions o;
    o.max_distance = max_distance;
    o.symmetric = symmetric;
    o.first = first;
    o.last = last;
    o.verify = verify;
    o.method = method;
    o.segments = segments;
    NeighborEdges e;
    {
        py::gil_scoped_release release;
        e = edit_neighbors(v, alphabet, o, threads);
    }
    return py::make_tuple(to_array(e.i), to_array(e.j), to_array(e.d), e.candidates);
}

py::array_t<std::int32_t> edit_verify_pairs_py(U8Array codes, I64Array offsets, int alphabet, I64Array pi,
                                               I64Array pj, std::int64_t max_distance, int threads) {
    const SeqView v = seq_view(codes, offsets, "sequences");
    if (pi.ndim() != 1 || pj.ndim() != 1 || pi.shape(0) != pj.shape(0))
        throw std::invalid_argument("pair index arrays must be 1-d and of one length");
    const std::int64_t k = pi.shape(0);
    py::array_t<std::int32_t> out(static_cast<py::ssize_t>(k));
    const std::int64_t *a = pi.data(), *b = pj.data();
    std::int32_t* dst = out.mutable_data();
    {
        py::gil_scoped_release release;
        edit_verify_pairs(v, alphabet, a, b, k, max_distance, dst, threads);
    }
    return out;
}

py::bytes format_neighbor_lines_py(U8Array ids, I64Array id_offsets, I64Array i, I64Array j, F64Array d,
                                   bool integer, int threads) {
    if (id_offsets.ndim() != 1 || id_offsets.shape(0) < 1 ||
        id_offsets.data()[id_offsets.shape(0) - 1] != ids.shape(0))
        throw std::invalid_argument("id offsets do not span the id buffer");
    if (i.shape(0) != j.shape(0) || i.shape(0) != d.shape(0))
        throw std::invalid_argument("i, j and distances need one entry per pair");
    const char* text = reinterpret_cast<const char*>(ids.data());
    const std::int64_t *off = id_offsets.data(), *pi = i.data(), *pj = j.data();
    const double* pd = d.data();
    const std::int64_t n_ids = id_offsets.shape(0) - 1, k = i.shape(0);
    std::string out;
    {
        py::gil_scoped_release release;
        out = format_neighbor_lines(text, off, n_ids, pi, pj, pd, k, integer, threads);
    }
    return py::bytes(out);
}

}  // namespace

void bind_neighbors(py::module_& m) {
    m.def("edit_neighbors", &edit_neighbors_py, py::arg("codes"), py::arg("offsets"), py::arg("alphabet"),
          py::arg("max_distance"), py::arg("symmetric") = false, py::arg("first") = 0, py::arg("last") = -1,
          py::arg("verify") = true, py::arg("method") = 0, py::arg("segments") = 0, py::arg("threads") = 0,
          "Pairs (i, j, distance, candidates) with global edit distance <= max_distance, i < j sorted; "
          "verify=False: the filter's candidate pairs (distance -1).");
    m.def("edit_verify_pairs", &edit_verify_pairs_py, py::arg("codes"), py::arg("offsets"),
          py::arg("alphabet"), py::arg("i"), py::arg("j"), py::arg("max_distance"), py::arg("threads") = 0,
          "Global edit distances of the listed pairs; above max_distance: max_distance + 1.");
    m.def("format_neighbor_lines", &format_neighbor_lines_py, py::arg("ids"), py::arg("id_offsets"),
          py::arg("i"), py::arg("j"), py::arg("distance"), py::arg("integer"), py::arg("threads") = 0,
          "TSV lines id1<TAB>id2<TAB>distance of the pairs (integers, or Python's repr of a float).");
    m.def("neighbor_segments", &neighbor_segments, py::arg("max_distance"), py::arg("median_length"),
          "Segments the neighbour filter cuts each sequence into for this threshold.");
}
