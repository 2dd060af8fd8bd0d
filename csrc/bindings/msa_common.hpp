// What the MSA binding files (csrc/bindings/msa_*.cpp, one per stage) share: the scoring and
// weight arguments, the row and column checks, and NumPy conversions of C++ vectors.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "bioaccel/common.hpp"
#include "bioaccel/msa.hpp"

#include "arrays.hpp"
#include "stop_scope.hpp"

namespace bioaccel::bindings {

namespace py = pybind11;

inline msa::MsaScoring scoring(const I16Array& letter_of, const F32Array& sub, py::tuple gaps) {
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

inline const double* weights_for(const F64Array& weights, std::int64_t n) {
    if (weights.ndim() != 1 || weights.shape(0) != n)
        throw std::invalid_argument("weights must hold one value per sequence");
    return weights.data();
}

inline void check_rows(const I64Array& rows, std::int64_t count) {
    for (py::ssize_t k = 0; k < rows.size(); ++k)
        if (rows.data()[k] < 0 || rows.data()[k] >= count)
            throw std::invalid_argument("row index " + std::to_string(rows.data()[k]) + " out of range (" +
                                        std::to_string(count) + " sequences)");
}

// column_of holds a column per residue, increasing along each sequence and (when n_columns
// >= 0) below n_columns.
inline void check_columns(const SeqView& v, const I32Array& column_of, std::int64_t n_columns) {
    if (column_of.ndim() != 1 || column_of.shape(0) != v.offsets[v.count])
        throw std::invalid_argument("column_of must hold one column per residue");
    const std::int32_t* c = column_of.data();
    for (std::int64_t s = 0; s < v.count; ++s)
        for (std::int64_t k = v.offsets[s]; k < v.offsets[s + 1]; ++k)
            if (c[k] < 0 || (n_columns >= 0 && c[k] >= n_columns) || (k > v.offsets[s] && c[k] <= c[k - 1]))
                throw std::invalid_argument("column_of: sequence " + std::to_string(s) + " has column " +
                                            std::to_string(c[k]) + " out of order or out of range");
}

template <typename T>
inline py::array_t<T> to_array(const std::vector<T>& v) {
    py::array_t<T> out(static_cast<py::ssize_t>(v.size()));
    std::copy(v.begin(), v.end(), out.mutable_data());
    return out;
}

template <typename T>
inline py::array_t<T> to_matrix(const std::vector<T>& v, std::int64_t rows, std::int64_t cols) {
    if (static_cast<std::int64_t>(v.size()) != rows * cols)
        throw std::logic_error("msa_dp_inputs: array of unexpected size");
    py::array_t<T> out({rows, cols});
    std::copy(v.begin(), v.end(), out.mutable_data());
    return out;
}

// The arrays the profile-profile DP reads, as a dict (see msa_dp_inputs in msa_profile.cpp).
inline py::dict dp_inputs_dict(const msa::DpInputs& in) {
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

}  // namespace bioaccel::bindings
