// pybind11 wrappers of the MSA guide-tree stage (csrc/msa/lcs.cpp, guide_tree.cpp): LCS distances
// and single linkage; shapes checked here, the GIL released around the C++ work.
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

py::array_t<float> lcs_distances_py(U8Array codes, I64Array offsets, int letters, I64Array rows_a,
                                    py::object rows_b, int threads) {
    const SeqView v = seq_view(codes, offsets);
    check_rows(rows_a, v.count);
    const std::int64_t na = rows_a.size();
    if (rows_b.is_none()) {
        py::array_t<float> out(na * (na - 1) / 2);
        StopScope stop;  // Ctrl-C reaches the engine
        py::gil_scoped_release release;
        msa::lcs_distances(v, letters, rows_a.data(), na, nullptr, 0, true, out.mutable_data(), threads);
        return out;
    }
    const I64Array rb = rows_b.cast<I64Array>();
    check_rows(rb, v.count);
    py::array_t<float> out({na, static_cast<std::int64_t>(rb.size())});
    StopScope stop;  // Ctrl-C reaches the engine
    py::gil_scoped_release release;
    msa::lcs_distances(v, letters, rows_a.data(), na, rb.data(), rb.size(), false, out.mutable_data(),
                       threads);
    return out;
}

py::tuple single_linkage_py(F32Array condensed, std::int64_t n) {
    if (n < 1 || condensed.ndim() != 1 || condensed.size() != n * (n - 1) / 2)
        throw std::invalid_argument("condensed must hold n * (n - 1) / 2 distances");
    py::array_t<std::int64_t> merges({std::max<std::int64_t>(n - 1, 0), std::int64_t(2)});
    py::array_t<double> heights(std::max<std::int64_t>(n - 1, 0));
    {
        StopScope stop;  // Ctrl-C reaches the engine
        py::gil_scoped_release release;
        msa::single_linkage(condensed.data(), n, merges.mutable_data(), heights.mutable_data());
    }
    return py::make_tuple(merges, heights);
}

py::array_t<std::int32_t> lcs_lengths_py(U8Array codes, I64Array offsets, int letters, I64Array rows_a,
                                         I64Array rows_b, int threads) {
    const SeqView v = seq_view(codes, offsets);
    check_rows(rows_a, v.count);
    check_rows(rows_b, v.count);
    py::array_t<std::int32_t> out(
        {static_cast<std::int64_t>(rows_a.size()), static_cast<std::int64_t>(rows_b.size())});
    py::gil_scoped_release release;
    msa::lcs_lengths(v, letters, rows_a.data(), rows_a.size(), rows_b.data(), rows_b.size(),
                     out.mutable_data(), threads);
    return out;
}

py::array_t<float> lcs_distance_of_lengths_py(I64Array la, I64Array lb, I64Array lcs) {
    if (la.size() != lb.size() || la.size() != lcs.size())
        throw std::invalid_argument("la, lb and lcs must have the same size");
    py::array_t<float> out(la.size());
    for (py::ssize_t k = 0; k < la.size(); ++k) {
        const std::int64_t a = la.data()[k], b = lb.data()[k], l = lcs.data()[k];
        if (l < 0 || l > std::min(a, b))
            throw std::invalid_argument("LCS length " + std::to_string(l) + " impossible for lengths " +
                                        std::to_string(a) + " and " + std::to_string(b));
        out.mutable_data()[k] = static_cast<float>(msa::lcs_distance(a, b, l));
    }
    return out;
}

// SLINK fed from Python a block of rows at a time (the GPU distance stage).
class PySlink {
public:
    explicit PySlink(std::int64_t n) : slink_(n) {
        if (n < 1) throw std::invalid_argument("SLINK needs at least one point");
    }
    // rows[r, j] = distance of point added() + r to point j, for j < added() + r.
    void add_rows(F32Array rows) {
        const std::int64_t n = slink_.size();
        if (rows.ndim() != 2 || rows.shape(1) < slink_.added() + rows.shape(0) - 1)
            throw std::invalid_argument("rows must be (r, at least added + r - 1) float32");
        if (slink_.added() + rows.shape(0) > n) throw std::invalid_argument("more rows than points");
        const std::int64_t width = rows.shape(1);
        py::gil_scoped_release release;
        for (py::ssize_t r = 0; r < rows.shape(0); ++r) slink_.add(rows.data() + r * width);
    }
    std::int64_t added() const { return slink_.added(); }
    py::tuple merges() const {
        const std::int64_t n = slink_.size();
        if (slink_.added() != n)
            throw std::invalid_argument("SLINK: " + std::to_string(slink_.added()) + " of " +
                                        std::to_string(n) + " points added");
        py::array_t<std::int64_t> merges({n - 1, std::int64_t(2)});
        py::array_t<double> heights(n - 1);
        slink_.merges(merges.mutable_data(), heights.mutable_data());
        return py::make_tuple(merges, heights);
    }

private:
    msa::Slink slink_;
};

py::tuple single_linkage_lcs_py(U8Array codes, I64Array offsets, int letters, I64Array rows, int threads) {
    const SeqView v = seq_view(codes, offsets);
    const std::int64_t n = rows.size();
    check_rows(rows, v.count);
    py::array_t<std::int64_t> merges({std::max<std::int64_t>(n - 1, 0), std::int64_t(2)});
    py::array_t<double> heights(std::max<std::int64_t>(n - 1, 0));
    {
        StopScope stop;  // Ctrl-C reaches the engine
        py::gil_scoped_release release;
        msa::single_linkage_lcs(v, letters, rows.data(), n, threads, merges.mutable_data(),
                                heights.mutable_data());
    }
    return py::make_tuple(merges, heights);
}

}  // namespace

void bind_msa_guide(py::module_& m) {
    m.def("msa_lcs_distances", &lcs_distances_py, py::arg("codes"), py::arg("offsets"), py::arg("letters"),
          py::arg("rows_a"), py::arg("rows_b") = py::none(), py::arg("threads") = 0,
          "LCS guide-tree distances: condensed over rows_a, or rows_a x rows_b.");
    m.def("msa_single_linkage", &single_linkage_py, py::arg("condensed"), py::arg("n"),
          "Single-linkage merges (n - 1, 2) and heights of a condensed float32 matrix.");
    m.def("msa_lcs_lengths", &lcs_lengths_py, py::arg("codes"), py::arg("offsets"), py::arg("letters"),
          py::arg("rows_a"), py::arg("rows_b"), py::arg("threads") = 0,
          "LCS lengths of rows_a x rows_b (int32).");
    m.def("msa_lcs_distance_of_lengths", &lcs_distance_of_lengths_py, py::arg("la"), py::arg("lb"),
          py::arg("lcs"), "Guide-tree distances (la + lb - 2 lcs)^0.75 / lcs (float32; FLT_MAX for lcs 0).");
    py::class_<PySlink>(m, "MsaSlink", "Single linkage fed a block of distance rows at a time.")
        .def(py::init<std::int64_t>(), py::arg("n"))
        .def("add_rows", &PySlink::add_rows, py::arg("rows"))
        .def_property_readonly("added", &PySlink::added)
        .def("merges", &PySlink::merges);
    m.def("msa_single_linkage_lcs", &single_linkage_lcs_py, py::arg("codes"), py::arg("offsets"),
          py::arg("letters"), py::arg("rows"), py::arg("threads") = 0,
          "Single-linkage merges and heights over the LCS distances of rows, streamed\n"
          "(O(n) memory): what msa_single_linkage gives for msa_lcs_distances(rows).");
}
