// pybind11 wrappers of the accurate MSA mode (csrc/msa/posteriors.cpp, consistency.cpp):
// shapes checked here, the GIL released around the C++ work.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "bioaccel/msa_accurate.hpp"

#include "stop_scope.hpp"

namespace py = pybind11;
using namespace bioaccel;
using bioaccel::bindings::StopScope;

namespace {

using U8Array = py::array_t<std::uint8_t, py::array::c_style | py::array::forcecast>;
using I16Array = py::array_t<std::int16_t, py::array::c_style | py::array::forcecast>;
using I32Array = py::array_t<std::int32_t, py::array::c_style | py::array::forcecast>;
using I64Array = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>;
using F32Array = py::array_t<float, py::array::c_style | py::array::forcecast>;
using F64Array = py::array_t<double, py::array::c_style | py::array::forcecast>;

msa::PairHmm pair_hmm(const F64Array& odds, const F64Array& start, const F64Array& open,
                      const F64Array& extend) {
    if (odds.ndim() != 2 || odds.shape(0) != odds.shape(1) || odds.shape(0) < 1)
        throw std::invalid_argument("odds must be a square letters x letters matrix");
    if (start.size() != 5 || open.size() != 2 || extend.size() != 2)
        throw std::invalid_argument("pair-HMM: start needs 5 values, open and extend 2 each");
    msa::PairHmm h;
    h.letters = static_cast<int>(odds.shape(0));
    h.odds.assign(odds.data(), odds.data() + odds.size());
    for (int k = 0; k < 5; ++k) h.start[k] = start.data()[k];
    for (int k = 0; k < 2; ++k) {
        h.open[k] = open.data()[k];
        h.extend[k] = extend.data()[k];
    }
    return h;
}

py::tuple pair_posteriors_py(I16Array x, I16Array y, F64Array odds, F64Array start, F64Array open,
                             F64Array extend) {
    const msa::PairHmm h = pair_hmm(odds, start, open, extend);
    const std::int64_t lx = x.size(), ly = y.size();
    py::array_t<double> post({lx, ly});
    double logz;
    {
        py::gil_scoped_release release;
        std::vector<double> work;
        logz = msa::pair_posteriors_dense(x.data(), lx, y.data(), ly, h, post.mutable_data(), work);
    }
    return py::make_tuple(post, logz);
}

py::array_t<std::int64_t> upgma_py(F64Array condensed, std::int64_t n) {
    if (n < 0 || condensed.ndim() != 1 || condensed.shape(0) != n * (n - 1) / 2)
        throw std::invalid_argument("condensed must hold n (n - 1) / 2 distances");
    std::vector<double> d(condensed.data(), condensed.data() + condensed.size());
    std::vector<std::int64_t> m;
    {
        py::gil_scoped_release release;
        m = msa::upgma_merges(d, n);
    }
    py::array_t<std::int64_t> out({std::max<std::int64_t>(n - 1, 0), std::int64_t(2)});
    std::copy(m.begin(), m.end(), out.mutable_data());
    return out;
}

// The posteriors of every pair of a set of sequences, transformed in place by consistency
// rounds, and the alignment that maximises their sum.
class PyPosteriorSet {
public:
    PyPosteriorSet(U8Array codes, I64Array offsets, I16Array letter_of, int letters) {
        if (offsets.ndim() != 1 || offsets.shape(0) < 1)
            throw std::invalid_argument("offsets must be a 1-d array of n + 1 entries");
        if (letter_of.size() != 256) throw std::invalid_argument("letter_of must map all 256 codes");
        if (letters < 1 || letters > 32000) throw std::invalid_argument("letters out of range");
        SeqView v;
        v.codes = codes.data();
        v.offsets = offsets.data();
        v.count = offsets.shape(0) - 1;
        if (v.offsets[0] != 0 || v.offsets[v.count] != codes.size())
            throw std::invalid_argument("offsets do not span the code buffer");
        for (std::int64_t i = 0; i < v.count; ++i) {
            if (v.offsets[i + 1] < v.offsets[i]) throw std::invalid_argument("offsets decrease");
            if (v.offsets[i + 1] - v.offsets[i] > 2000000000)
                throw std::invalid_argument("sequence too long for the accurate mode");
        }
        seqs_ = msa::letter_seqs(v, letter_of.data(), letters);
        letters_ = letters;
        const std::int64_t n = seqs_.count();
        post_.resize(n * (n - 1) / 2);
        accuracy_.assign(post_.size(), 0.0);
    }
    std::int64_t n() const { return seqs_.count(); }

    void compute(F64Array odds, F64Array start, F64Array open, F64Array extend, float cutoff, int threads) {
        const msa::PairHmm h = pair_hmm(odds, start, open, extend);
        if (h.letters != letters_)
            throw std::invalid_argument("odds has " + std::to_string(h.letters) + " letters, the sequences " +
                                        std::to_string(letters_));
        StopScope stop;  // Ctrl-C reaches the engine
        py::gil_scoped_release release;
        post_ = msa::all_pair_posteriors(seqs_, h, cutoff, threads, accuracy_);
    }

    // Dense posteriors of pairs computed elsewhere (a GPU): pairs (k, 2) x < y, dense[k]
    // the (len x, len y) block at offsets[k] of a flat float32 buffer.
    void set_pairs(I64Array pairs, F32Array flat, I64Array starts, float cutoff) {
        if (pairs.ndim() != 2 || pairs.shape(1) != 2 || starts.size() != pairs.shape(0))
            throw std::invalid_argument("pairs must be (k, 2) with one start each");
        if (!(cutoff > 0 && cutoff <= 1)) throw std::invalid_argument("cut-off must be in (0, 1]");
        const std::int64_t n = seqs_.count();
        for (py::ssize_t k = 0; k < pairs.shape(0); ++k) {
            const std::int64_t x = pairs.data()[2 * k], y = pairs.data()[2 * k + 1];
            if (x < 0 || y <= x || y >= n)
                throw std::invalid_argument("pair " + std::to_string(k) + " (" + std::to_string(x) + ", " +
                                            std::to_string(y) + ") is not x < y < n");
            const std::int64_t st = starts.data()[k];
            if (st < 0 || st + seqs_.len(x) * seqs_.len(y) > flat.size())
                throw std::invalid_argument("pair " + std::to_string(k) + " runs past the buffer");
        }
        py::gil_scoped_release release;
        for (py::ssize_t k = 0; k < pairs.shape(0); ++k) {
            const std::int64_t x = pairs.data()[2 * k], y = pairs.data()[2 * k + 1];
            const std::int64_t idx = msa::pair_index(x, y, n);
            post_[idx] = msa::sparsify(flat.data() + starts.data()[k], seqs_.len(x), seqs_.len(y), cutoff);
            accuracy_[idx] = msa::expected_accuracy(post_[idx]);
        }
    }

    py::tuple pair(std::int64_t x, std::int64_t y) const {
        const std::int64_t n = seqs_.count();
        if (x < 0 || y <= x || y >= n) throw std::out_of_range("pair must be x < y < n");
        const msa::SparsePost& p = post_[msa::pair_index(x, y, n)];
        py::array_t<std::int64_t> rs(p.row_start.size());
        py::array_t<std::int32_t> col(p.col.size());
        py::array_t<float> val(p.p.size());
        std::copy(p.row_start.begin(), p.row_start.end(), rs.mutable_data());
        std::copy(p.col.begin(), p.col.end(), col.mutable_data());
        std::copy(p.p.begin(), p.p.end(), val.mutable_data());
        return py::make_tuple(rs, col, val, p.rows, p.cols);
    }

    py::array_t<double> accuracy() const {
        py::array_t<double> out(accuracy_.size());
        std::copy(accuracy_.begin(), accuracy_.end(), out.mutable_data());
        return out;
    }

    void consistency(int rounds, float cutoff, int threads) {
        if (rounds < 0) throw std::invalid_argument("consistency rounds must be >= 0");
        StopScope stop;  // Ctrl-C reaches the engine
        py::gil_scoped_release release;
        for (int r = 0; r < rounds; ++r)
            post_ = msa::consistency_round(post_, seqs_.count(), cutoff, threads);
    }

    py::tuple align(I64Array merges, int iterations, std::uint64_t seed, int threads) {
        const std::int64_t n = seqs_.count();
        if (n > 0 && (merges.ndim() != 2 || merges.shape(0) != n - 1 || merges.shape(1) != 2))
            throw std::invalid_argument("merges must be (n - 1, 2)");
        if (iterations < 0) throw std::invalid_argument("iterations must be >= 0");
        std::vector<std::int32_t> cols;
        std::int64_t width = 0, accepted = 0;
        {
            StopScope stop;  // Ctrl-C reaches the engine
            py::gil_scoped_release release;
            cols = msa::consistency_align(seqs_, post_, merges.data(), iterations, seed, threads, width,
                                          accepted);
        }
        py::array_t<std::int32_t> out(cols.size());
        std::copy(cols.begin(), cols.end(), out.mutable_data());
        return py::make_tuple(out, width, accepted);
    }

    double objective(I32Array cols) const {
        if (cols.size() != py::ssize_t(seqs_.letters.size()))
            throw std::invalid_argument("cols must give every residue's column");
        return msa::alignment_objective(seqs_, post_, cols.data());
    }

    std::int64_t nbytes() const {
        std::int64_t b = 0;
        for (const auto& p : post_) b += std::int64_t(p.bytes()) + std::int64_t(sizeof(p));
        return b;
    }
    std::int64_t entries() const {
        std::int64_t e = 0;
        for (const auto& p : post_) e += std::int64_t(p.p.size());
        return e;
    }

private:
    msa::LetterSeqs seqs_;
    int letters_ = 0;
    std::vector<msa::SparsePost> post_;
    std::vector<double> accuracy_;
};

}  // namespace

void bind_msa_accurate(py::module_& m) {
    m.def("msa_pair_posteriors", &pair_posteriors_py, py::arg("x"), py::arg("y"), py::arg("odds"),
          py::arg("start"), py::arg("open"), py::arg("extend"),
          "Pair-HMM posterior match probabilities of two letter sequences (dense, float64)\n"
          "and log P(x, y) on the odds scale.");
    m.def("msa_upgma", &upgma_py, py::arg("condensed"), py::arg("n"),
          "UPGMA merges (n - 1, 2) of a condensed float64 distance matrix (ties: lowest pair).");
    py::class_<PyPosteriorSet>(m, "MsaPosteriorSet",
                               "Sparse posteriors of every pair, consistency, and alignment.")
        .def(py::init<U8Array, I64Array, I16Array, int>(), py::arg("codes"), py::arg("offsets"),
             py::arg("letter_of"), py::arg("letters"))
        .def_property_readonly("n", &PyPosteriorSet::n)
        .def("compute", &PyPosteriorSet::compute, py::arg("odds"), py::arg("start"), py::arg("open"),
             py::arg("extend"), py::arg("cutoff"), py::arg("threads"))
        .def("set_pairs", &PyPosteriorSet::set_pairs, py::arg("pairs"), py::arg("flat"), py::arg("starts"),
             py::arg("cutoff"))
        .def("pair", &PyPosteriorSet::pair, py::arg("x"), py::arg("y"),
             "(row_start, col, p, rows, cols) of pair x < y.")
        .def("accuracy", &PyPosteriorSet::accuracy)
        .def("consistency", &PyPosteriorSet::consistency, py::arg("rounds"), py::arg("cutoff"),
             py::arg("threads"))
        .def("align", &PyPosteriorSet::align, py::arg("merges"), py::arg("iterations"), py::arg("seed"),
             py::arg("threads"), "(column of every residue, width, refinements accepted).")
        .def("objective", &PyPosteriorSet::objective, py::arg("cols"))
        .def_property_readonly("nbytes", &PyPosteriorSet::nbytes)
        .def_property_readonly("entries", &PyPosteriorSet::entries);
}
