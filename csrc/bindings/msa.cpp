// pybind11 wrappers of the MSA engine (csrc/msa/): shapes checked here, GIL released
// around the C++ work, C++ exceptions translated by pybind11.
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bioaccel/common.hpp"
#include "bioaccel/msa.hpp"
#include "bioaccel/msa_add.hpp"

#include "arrays.hpp"

namespace py = pybind11;
using namespace bioaccel;
using namespace bioaccel::bindings;

namespace {

void check_columns(const SeqView& v, const I32Array& column_of, std::int64_t n_columns);

msa::MsaScoring scoring(const I16Array& letter_of, const F32Array& sub, py::tuple gaps) {
    if (letter_of.ndim() != 1 || letter_of.shape(0) != 256)
        throw std::invalid_argument("letter_of must map all 256 codes");
    if (sub.ndim() != 2 || sub.shape(0) != sub.shape(1) || sub.shape(0) > msa::kMaxLetters ||
        sub.shape(0) < 1)
        throw std::invalid_argument("sub must be a square matrix of at most 32 letters");
    if (gaps.size() != 4)
        throw std::invalid_argument("gaps must be (gap_open, gap_extend, term_open, term_extend)");
    msa::MsaScoring sc;
    sc.letters = static_cast<int>(sub.shape(0));
    sc.sub.assign(sub.data(), sub.data() + sub.size());
    sc.letter_of.assign(letter_of.data(), letter_of.data() + 256);
    for (std::int16_t x : sc.letter_of)
        if (x >= sc.letters) throw std::invalid_argument("letter_of names a letter outside sub");
    sc.gap_open = gaps[0].cast<float>();
    sc.gap_extend = gaps[1].cast<float>();
    sc.term_open = gaps[2].cast<float>();
    sc.term_extend = gaps[3].cast<float>();
    return sc;
}

const double* weights_for(const F64Array& weights, std::int64_t n) {
    if (weights.ndim() != 1 || weights.shape(0) != n)
        throw std::invalid_argument("weights must hold one value per sequence");
    return weights.data();
}

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
        py::gil_scoped_release release;
        width = msa::progressive_align(v, sc, merges.data(), merges.shape(0), w, threads,
                                       column_of.mutable_data(), progress.is_none() ? nullptr : call_progress,
                                       &call);
    }
    return py::make_tuple(column_of, width);
}

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
        py::gil_scoped_release release;
        width = msa::refine_gap_splits(v, sc, w, iterations, seed, radius, out.mutable_data(), n_columns,
                                       &accepted, threads);
    }
    return py::make_tuple(out, width, accepted);
}

void check_rows(const I64Array& rows, std::int64_t count) {
    for (py::ssize_t k = 0; k < rows.size(); ++k)
        if (rows.data()[k] < 0 || rows.data()[k] >= count)
            throw std::invalid_argument("row index " + std::to_string(rows.data()[k]) + " out of range (" +
                                        std::to_string(count) + " sequences)");
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

// column_of holds a column per residue, increasing along each sequence and (when n_columns
// >= 0) below n_columns.
void check_columns(const SeqView& v, const I32Array& column_of, std::int64_t n_columns) {
    if (column_of.ndim() != 1 || column_of.shape(0) != v.offsets[v.count])
        throw std::invalid_argument("column_of must hold one column per residue");
    const std::int32_t* c = column_of.data();
    for (std::int64_t s = 0; s < v.count; ++s)
        for (std::int64_t k = v.offsets[s]; k < v.offsets[s + 1]; ++k)
            if (c[k] < 0 || (n_columns >= 0 && c[k] >= n_columns) || (k > v.offsets[s] && c[k] <= c[k - 1]))
                throw std::invalid_argument("column_of: sequence " + std::to_string(s) + " has column " +
                                            std::to_string(c[k]) + " out of order or out of range");
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

template <typename T>
py::array_t<T> to_array(const std::vector<T>& v) {
    py::array_t<T> out(static_cast<py::ssize_t>(v.size()));
    std::copy(v.begin(), v.end(), out.mutable_data());
    return out;
}

template <typename T>
py::array_t<T> to_matrix(const std::vector<T>& v, std::int64_t rows, std::int64_t cols) {
    if (static_cast<std::int64_t>(v.size()) != rows * cols)
        throw std::logic_error("msa_dp_inputs: array of unexpected size");
    py::array_t<T> out({rows, cols});
    std::copy(v.begin(), v.end(), out.mutable_data());
    return out;
}

// The arrays the profile-profile DP of msa_profile_pair (same arguments) reads, as a dict:
// letters (K); sa (n, K); fbt (K, m) and used (K,) uint8, or single (m,) int16 when B is one gap-free
// sequence (the others None); occ_a, occ_b; start_a, cont_a (n + 1), own_a, credit_a (n);
// start_b, cont_b (m + 1), own_b, credit_b (m). For the GPU stage (backends/cupy_msa.py).
py::dict dp_inputs_dict(const msa::DpInputs& in);

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

py::dict dp_inputs_dict(const msa::DpInputs& in) {
    py::dict d;
    d["letters"] = in.letters;
    d["sa"] = to_matrix(in.sa, in.n, in.letters);
    const bool single = !in.single_b.empty();
    d["fbt"] = single ? py::object(py::none()) : py::object(to_matrix(in.fbt, in.letters, in.m));
    d["used"] = single ? py::object(py::none()) : py::object(to_array(in.used));
    d["single"] = single ? py::object(to_array(in.single_b)) : py::object(py::none());
    d["occ_a"] = to_array(in.occ_a);
    d["occ_b"] = to_array(in.occ_b);
    for (auto [g, side] : {std::make_pair(&in.gaps_a, "_a"), std::make_pair(&in.gaps_b, "_b")}) {
        d[py::str(std::string("start") + side)] = to_array(g->start);
        d[py::str(std::string("cont") + side)] = to_array(g->cont);
        d[py::str(std::string("own") + side)] = to_array(g->own);
        d[py::str(std::string("credit") + side)] = to_array(g->credit);
    }
    return d;
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

py::array_t<float> lcs_distances_py(U8Array codes, I64Array offsets, int letters, I64Array rows_a,
                                    py::object rows_b, int threads) {
    const SeqView v = seq_view(codes, offsets);
    check_rows(rows_a, v.count);
    const std::int64_t na = rows_a.size();
    if (rows_b.is_none()) {
        py::array_t<float> out(na * (na - 1) / 2);
        py::gil_scoped_release release;
        msa::lcs_distances(v, letters, rows_a.data(), na, nullptr, 0, true, out.mutable_data(), threads);
        return out;
    }
    const I64Array rb = rows_b.cast<I64Array>();
    check_rows(rb, v.count);
    py::array_t<float> out({na, static_cast<std::int64_t>(rb.size())});
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
        py::gil_scoped_release release;
        msa::single_linkage_lcs(v, letters, rows.data(), n, threads, merges.mutable_data(),
                                heights.mutable_data());
    }
    return py::make_tuple(merges, heights);
}

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

void bind_msa(py::module_& m) {
    m.def("msa_add_to_alignment", &add_to_alignment_py, py::arg("codes"), py::arg("offsets"),
          py::arg("column_of"), py::arg("n_columns"), py::arg("new_codes"), py::arg("new_offsets"),
          py::arg("letter_of"), py::arg("sub"), py::arg("gaps"), py::arg("weights"),
          py::arg("fragments") = false, py::arg("band_radius") = 100,
          py::arg("band_from_cells") = std::int64_t(1) << 24, py::arg("threads") = 0,
          "Each new sequence aligned to the fixed profile of an existing alignment:\n"
          "(kept columns, paths, scores, banded).");

    m.def("msa_progressive", &progressive_py, py::arg("codes"), py::arg("offsets"), py::arg("letter_of"),
          py::arg("sub"), py::arg("gaps"), py::arg("merges"), py::arg("weights"), py::arg("threads"),
          py::arg("progress") = py::none(),
          "Progressive MSA up a guide tree: (column of every residue, number of columns).");
    m.def("msa_refine_gaps", &refine_gaps_py, py::arg("codes"), py::arg("offsets"), py::arg("letter_of"),
          py::arg("sub"), py::arg("gaps"), py::arg("weights"), py::arg("iterations"), py::arg("seed"),
          py::arg("radius"), py::arg("column_of"), py::arg("n_columns"), py::arg("threads") = 1,
          "Gap-pattern split refinement: (column_of, number of columns, splits accepted).");
    m.def("msa_cross_sum_of_pairs", &cross_sum_of_pairs_py, py::arg("codes"), py::arg("offsets"),
          py::arg("letter_of"), py::arg("sub"), py::arg("gaps"), py::arg("column_of"), py::arg("n_columns"),
          py::arg("rows_a"), py::arg("rows_b"),
          "Sum-of-pairs score of the pairs across rows_a x rows_b (each pair's own gap runs),\n"
          "the refinement's acceptance score.");
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
    m.def("msa_profile_pair", &profile_pair_py, py::arg("codes"), py::arg("offsets"), py::arg("letter_of"),
          py::arg("sub"), py::arg("gaps"), py::arg("weights"), py::arg("column_of"), py::arg("rows_a"),
          py::arg("rows_b"), py::arg("full_limit") = std::int64_t(1) << 26, py::arg("as_sequences") = false,
          py::arg("threads") = 1,
          "Profile-profile DP of two sub-alignments: (path, score, path score). With\n"
          "as_sequences, a one-row side is profiled as its sequence alone (as tips are);\n"
          "threads > 1: a large DP as a wavefront of rows (the same result).");
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
    m.def("msa_dp_inputs", &dp_inputs_py, py::arg("codes"), py::arg("offsets"), py::arg("letter_of"),
          py::arg("sub"), py::arg("gaps"), py::arg("weights"), py::arg("column_of"), py::arg("rows_a"),
          py::arg("rows_b"), py::arg("as_sequences") = false,
          "The arrays the profile-profile DP of msa_profile_pair reads (a dict).");
}
