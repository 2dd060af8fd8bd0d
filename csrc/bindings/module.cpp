// The only pybind11 code: thin wrappers that check shapes, release the GIL and
// translate C++ exceptions (pybind11 maps std::invalid_argument -> ValueError,
// std::overflow_error -> OverflowError, std::bad_alloc -> MemoryError).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <stdexcept>
#include <string>

#include "bioaccel/common.hpp"
#include "bioaccel/dna_counts.hpp"
#include "bioaccel/dna_models.hpp"
#include "bioaccel/trees.hpp"

namespace py = pybind11;
using namespace bioaccel;

namespace {

using U64Array = py::array_t<std::uint64_t, py::array::c_style | py::array::forcecast>;
using F64Array = py::array_t<double, py::array::c_style | py::array::forcecast>;

py::array_t<std::int32_t> dna_pair_counts_py(U64Array planes, std::int64_t i0, std::int64_t i1,
                                             std::int64_t j0, std::int64_t j1, bool table,
                                             bool upper_only, int threads) {
    if (planes.ndim() != 3 || planes.shape(1) != 3)
        throw std::invalid_argument("planes must have shape (n, 3, words), got ndim " +
                                    std::to_string(planes.ndim()));
    const std::int64_t n = planes.shape(0), words = planes.shape(2);
    if (i0 < 0 || i0 > i1 || i1 > n || j0 < 0 || j0 > j1 || j1 > n)
        throw std::invalid_argument("tile [" + std::to_string(i0) + ":" + std::to_string(i1) + ", " +
                                    std::to_string(j0) + ":" + std::to_string(j1) +
                                    "] is outside a matrix of " + std::to_string(n) + " sequences");
    const py::ssize_t k = table ? kNumTableCounts : kNumPairCounts;
    py::array_t<std::int32_t> out({k, static_cast<py::ssize_t>(i1 - i0), static_cast<py::ssize_t>(j1 - j0)});
    const std::uint64_t* src = planes.data();
    std::int32_t* dst = out.mutable_data();
    {
        py::gil_scoped_release release;
        dna_pair_counts(src, n, words, i0, i1, j0, j1, table, upper_only, dst, threads);
    }
    return out;
}

using I32Array = py::array_t<std::int32_t, py::array::c_style | py::array::forcecast>;

const double* freqs_ptr(const F64Array& freqs) {
    if (freqs.ndim() != 1 || freqs.shape(0) != 4)
        throw std::invalid_argument("freqs must hold 4 base frequencies (A, C, G, T)");
    return freqs.data();
}

py::array_t<double> dna_distances_from_counts_py(int model, I32Array counts, F64Array freqs,
                                                 int threads) {
    const DnaModel m = dna_model_from_int(model);
    const py::ssize_t k = m == DnaModel::LogDet ? kNumTableCounts : kNumPairCounts;
    if (counts.ndim() != 3 || counts.shape(0) != k)
        throw std::invalid_argument("counts must have shape (" + std::to_string(k) + ", rows, cols)");
    const py::ssize_t rows = counts.shape(1), cols = counts.shape(2);
    py::array_t<double> out({rows, cols});
    const std::int32_t* src = counts.data();
    const double* f = freqs_ptr(freqs);
    double* dst = out.mutable_data();
    {
        py::gil_scoped_release release;
        dna_distances_from_counts(m, src, rows, cols, f, dst, threads);
    }
    return out;
}

void dna_distance_rows_py(U64Array planes, int model, F64Array freqs, std::int64_t i0,
                          std::int64_t i1, py::array_t<double, py::array::c_style> out, int threads) {
    if (planes.ndim() != 3 || planes.shape(1) != 3)
        throw std::invalid_argument("planes must have shape (n, 3, words)");
    const std::int64_t n = planes.shape(0);
    if (out.ndim() != 2 || out.shape(0) != n || out.shape(1) != n)
        throw std::invalid_argument("out must be a C-contiguous float64 (n, n) array");
    const DnaModel m = dna_model_from_int(model);
    const std::uint64_t* src = planes.data();
    const double* f = freqs_ptr(freqs);
    double* dst = out.mutable_data();
    const std::int64_t words = planes.shape(2);
    py::gil_scoped_release release;
    dna_distance_rows(src, n, words, m, f, i0, i1, dst, threads);
}

py::tuple edges_to_tuple(const EdgeList& e) {
    auto as_i64 = [](const std::vector<std::int64_t>& v) {
        py::array_t<std::int64_t> a(static_cast<py::ssize_t>(v.size()));
        std::copy(v.begin(), v.end(), a.mutable_data());
        return a;
    };
    py::array_t<double> len(static_cast<py::ssize_t>(e.length.size()));
    std::copy(e.length.begin(), e.length.end(), len.mutable_data());
    return py::make_tuple(as_i64(e.parent), as_i64(e.child), len, e.root);
}

void check_square(const F64Array& d) {
    if (d.ndim() != 2 || d.shape(0) != d.shape(1))
        throw std::invalid_argument("distance matrix must be square");
}

py::tuple nj_py(F64Array d, int threads) {
    check_square(d);
    EdgeList e;
    {
        py::gil_scoped_release release;
        e = neighbor_joining(d.data(), d.shape(0), threads);
    }
    return edges_to_tuple(e);
}

py::tuple upgma_py(F64Array d) {
    check_square(d);
    EdgeList e;
    {
        py::gil_scoped_release release;
        e = upgma(d.data(), d.shape(0));
    }
    return edges_to_tuple(e);
}

int max_threads() { return resolve_threads(0); }

}  // namespace

PYBIND11_MODULE(_native, m) {
    m.doc() = "bioaccel's compiled core (C++, OpenMP when built with it)";
    m.def("dna_pair_counts", &dna_pair_counts_py, py::arg("planes"), py::arg("i0"), py::arg("i1"),
          py::arg("j0"), py::arg("j1"), py::arg("table"), py::arg("upper_only"), py::arg("threads"),
          "Pair counts (sites, purine ts, pyrimidine ts, tv) or the 4x4 table for a tile.");
    m.def("dna_distances_from_counts", &dna_distances_from_counts_py, py::arg("model"),
          py::arg("counts"), py::arg("freqs"), py::arg("threads"),
          "Distances (rows, cols) from a (4 or 16, rows, cols) count tile; model ids follow bioaccel.MODELS.");
    m.def("dna_distance_rows", &dna_distance_rows_py, py::arg("planes"), py::arg("model"),
          py::arg("freqs"), py::arg("i0"), py::arg("i1"), py::arg("out"), py::arg("threads"),
          "Fused counts + distances for rows [i0, i1), j > i, into the square `out` (both triangles).");
    m.def("neighbor_joining", &nj_py, py::arg("d"), py::arg("threads"),
          "Neighbour joining: (parent, child, length, root) edge arrays.");
    m.def("upgma", &upgma_py, py::arg("d"), "UPGMA: (parent, child, length, root) edge arrays.");
    m.def("openmp_enabled", &openmp_enabled);
    m.def("max_threads", &max_threads);
}
