// pybind11 wrappers of the MSA progressive stage (csrc/msa/progressive.cpp): the whole run, or
// one merge at a time for the GPU stage; the GIL released around the C++ work.
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bioaccel/common.hpp"
#include "bioaccel/msa.hpp"
#include "bioaccel/msa_add.hpp"  // banded_merge_path

#include "arrays.hpp"
#include "msa_common.hpp"

namespace py = pybind11;
using namespace bioaccel;
using namespace bioaccel::bindings;

namespace {

struct ProgressCall {
    py::object fn;
};

void call_progress(void* ctx, std::int64_t done) {
    py::gil_scoped_acquire acquire;
    static_cast<ProgressCall*>(ctx)->fn(done);
}

py::tuple progressive_py(U8Array codes, I64Array offsets, I16Array letter_of, F32Array sub, py::tuple gaps,
                         I64Array merges, F64Array weights, int threads, py::object progress) {
    const SeqView v = seq_view(codes, offsets);
    const msa::MsaScoring sc = scoring(letter_of, sub, gaps);
    const double* w = weights_for(weights, v.count);
    if (merges.ndim() != 2 || merges.shape(1) != 2)
        throw std::invalid_argument("merges must have shape (n - 1, 2)");
    py::array_t<std::int32_t> column_of(codes.size());
    ProgressCall call{progress};
    std::int64_t width;
    {
        StopScope stop;  // Ctrl-C reaches the engine
        py::gil_scoped_release release;
        width = msa::progressive_align(v, sc, merges.data(), merges.shape(0), w, threads,
                                       column_of.mutable_data(), progress.is_none() ? nullptr : call_progress,
                                       &call);
    }
    return py::make_tuple(column_of, width);
}

// The progressive stage driven from Python one merge at a time (the GPU stage batches the
// ready merges of each guide-tree level); holds its arrays so the C++ run can point at them.
class PyProgressiveRun {
public:
    PyProgressiveRun(U8Array codes, I64Array offsets, I16Array letter_of, F32Array sub, py::tuple gaps,
                     I64Array merges, F64Array weights)
        : codes_(codes),
          offsets_(offsets),
          merges_(merges),
          weights_(weights),
          sc_(scoring(letter_of, sub, gaps)) {
        const SeqView v = seq_view(codes_, offsets_);
        weights_for(weights_, v.count);
        if (merges_.ndim() != 2 || merges_.shape(1) != 2)
            throw std::invalid_argument("merges must have shape (n - 1, 2)");
        run_ =
            std::make_unique<msa::ProgressiveRun>(v, sc_, merges_.data(), merges_.shape(0), weights_.data());
    }
    py::dict dp_inputs(std::int64_t k) {
        msa::DpInputs in;
        {
            py::gil_scoped_release release;
            const auto ops = run_->operands(k);
            in = msa::dp_inputs(*ops.first, *ops.second, sc_);
        }
        return dp_inputs_dict(in);
    }
    // The CPU's path for merge k when the CPU engine bands it (a long pair), else None: the
    // GPU stage takes it instead of a full DP, so both give the same alignment.
    py::object banded_path(std::int64_t k) {
        msa::Path path;
        bool banded;
        {
            py::gil_scoped_release release;
            const auto ops = run_->operands(k);
            banded = msa::banded_merge_path(*ops.first, *ops.second, sc_, path);
        }
        if (!banded) return py::none();
        return to_array(path);
    }
    void merge(std::int64_t k, U8Array path) {
        if (path.ndim() != 1) throw std::invalid_argument("path must be a 1-d array of ops");
        msa::Path p(path.data(), path.data() + path.size());
        py::gil_scoped_release release;
        run_->merge(k, p);  // the core checks the path against merge k's two profiles
    }
    py::tuple finish() {
        py::array_t<std::int32_t> out(codes_.size());
        std::int64_t width;
        {
            py::gil_scoped_release release;
            width = run_->finish(out.mutable_data());
        }
        return py::make_tuple(out, width);
    }

private:
    U8Array codes_;
    I64Array offsets_, merges_;
    F64Array weights_;
    msa::MsaScoring sc_;
    std::unique_ptr<msa::ProgressiveRun> run_;
};

}  // namespace

void bind_msa_progressive(py::module_& m) {
    m.def("msa_progressive", &progressive_py, py::arg("codes"), py::arg("offsets"), py::arg("letter_of"),
          py::arg("sub"), py::arg("gaps"), py::arg("merges"), py::arg("weights"), py::arg("threads"),
          py::arg("progress") = py::none(),
          "Progressive MSA up a guide tree: (column of every residue, number of columns).");
    py::class_<PyProgressiveRun>(m, "MsaProgressiveRun",
                                 "The progressive stage one merge at a time (for the GPU stage).")
        .def(py::init<U8Array, I64Array, I16Array, F32Array, py::tuple, I64Array, F64Array>(),
             py::arg("codes"), py::arg("offsets"), py::arg("letter_of"), py::arg("sub"), py::arg("gaps"),
             py::arg("merges"), py::arg("weights"))
        .def("dp_inputs", &PyProgressiveRun::dp_inputs, py::arg("k"),
             "The DP arrays of merge k's two profiles (as msa_dp_inputs).")
        .def("banded_path", &PyProgressiveRun::banded_path, py::arg("k"),
             "The CPU's banded path of merge k (a long pair), or None.")
        .def("merge", &PyProgressiveRun::merge, py::arg("k"), py::arg("path"),
             "Merge k along a DP path (uint8 ops 0/1/2).")
        .def("finish", &PyProgressiveRun::finish, "(column of every residue, number of columns).");
}
