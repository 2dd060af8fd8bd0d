// Bindings of csrc/neighbors: the pairs within an edit-distance threshold, and the
// verification of listed candidate pairs.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

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

// A plain FASTA file's records as (letters, offsets, ids joined by newlines), or None when
// the text is not the simple case this reader serves (the general reader then reads it and
// names any fault): text before the first '>', an empty id, a control byte, a tab or a
// non-ASCII byte in a sequence line, a non-ASCII header. Lines starting with ';' are
// comments; spaces and CRs in sequence lines are dropped, as Biopython does; the id is the
// header's first word.
py::object parse_fasta_py(py::bytes raw) {
    char* data = nullptr;
    Py_ssize_t size = 0;
    if (PyBytes_AsStringAndSize(raw.ptr(), &data, &size) != 0) throw py::error_already_set();
    std::string letters, ids;
    std::vector<std::int64_t> offsets, per_letter, per_nuc;
    bool ok = true;
    {
        py::gil_scoped_release release;
        letters.reserve(static_cast<std::size_t>(size));
        const unsigned char* p = reinterpret_cast<const unsigned char*>(data);
        const std::int64_t n = size;
        std::int64_t t = 0;
        bool in_record = false;
        while (t < n && ok) {
            std::int64_t e = t;
            while (e < n && p[e] != '\n') ++e;
            std::int64_t le = e;  // the line without its CR and trailing blanks
            while (le > t && (p[le - 1] == '\r' || p[le - 1] == ' ' || p[le - 1] == '\t')) --le;
            if (t < n && p[t] == '>') {
                std::int64_t a = t + 1;
                while (a < le && (p[a] == ' ' || p[a] == '\t')) ++a;
                std::int64_t b = a;
                while (b < le && p[b] != ' ' && p[b] != '\t' && p[b] != '\r') ++b;
                if (b == a) ok = false;
                for (std::int64_t x = t; x < le && ok; ++x)
                    if (p[x] >= 0x80 || (p[x] < 0x20 && p[x] != '\t' && p[x] != '\r')) ok = false;
                if (!offsets.empty()) ids.push_back('\n');
                ids.append(reinterpret_cast<const char*>(p + a), static_cast<std::size_t>(b - a));
                offsets.push_back(static_cast<std::int64_t>(letters.size()));
                per_letter.push_back(0);
                per_nuc.push_back(0);
                in_record = true;
            } else if (t < n && p[t] == ';') {
                // an old FASTA comment line
            } else {
                for (std::int64_t x = t; x < le; ++x) {
                    const unsigned char c = p[x];
                    if (c == ' ' || c == '\r') continue;
                    if (c < 0x20 || c >= 0x80) {
                        ok = false;
                        break;
                    }
                    if (!in_record) {
                        ok = false;  // text before the first record
                        break;
                    }
                    letters.push_back(static_cast<char>(c));
                    const unsigned char u = c & 0xDF;  // upper case of a letter
                    if (u >= 'A' && u <= 'Z') {
                        ++per_letter.back();
                        if (u == 'A' || u == 'C' || u == 'G' || u == 'T' || u == 'U' || u == 'N')
                            ++per_nuc.back();
                    }
                }
            }
            t = e + 1;
        }
        if (offsets.empty()) ok = false;
        offsets.push_back(static_cast<std::int64_t>(letters.size()));
    }
    if (!ok) return py::none();
    auto arr = [](const std::vector<std::int64_t>& v) {
        py::array_t<std::int64_t> a(static_cast<py::ssize_t>(v.size()));
        std::copy(v.begin(), v.end(), a.mutable_data());
        return a;
    };
    return py::make_tuple(py::bytes(letters), arr(offsets), py::bytes(ids), arr(per_letter), arr(per_nuc));
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
    m.def("parse_fasta", &parse_fasta_py, py::arg("raw"),
          "(letters, offsets, ids joined by newlines, letters a record, A/C/G/T/U/N a record) of a plain "
          "FASTA text, or None when it is not "
          "the simple case (the general reader serves it).");
    m.def("neighbor_segments", &neighbor_segments, py::arg("max_distance"), py::arg("median_length"),
          "Segments the neighbour filter cuts each sequence into for this threshold.");
}
