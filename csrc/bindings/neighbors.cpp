// Bindings of csrc/neighbors: the pairs within an edit-distance threshold, and the
// verification of listed candidate pairs.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "arrays.hpp"
#include "stop_scope.hpp"
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
        StopScope stop;  // Ctrl-C reaches the search
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
        StopScope stop;  // Ctrl-C reaches the verification
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

// The simple FASTA reader, line by line: letters into dst, offsets, ids joined by newlines,
// per-record counts of letters and of A/C/G/T/U/N; ok turns false on anything the general
// reader must see (text before the first '>', an empty id, a control byte, a tab or a
// non-ASCII byte in a sequence line, a non-ASCII header). Lines starting with ';' are
// comments; spaces and CRs in sequence lines are dropped, as Biopython does; the id is the
// header's first word.
struct FastaLines {
    std::uint8_t* dst = nullptr;
    std::int64_t count = 0, capacity = 0;
    std::string ids;
    std::vector<std::int64_t> offsets, per_letter, per_nuc;
    bool ok = true, in_record = false;

    void line(const unsigned char* p, std::int64_t t, std::int64_t e) {  // [t, e), no '\n'
        std::int64_t le = e;  // the line without its CR and trailing blanks
        while (le > t && (p[le - 1] == '\r' || p[le - 1] == ' ' || p[le - 1] == '\t')) --le;
        if (t < e && p[t] == '>') {
            std::int64_t a = t + 1;
            while (a < le && (p[a] == ' ' || p[a] == '\t')) ++a;
            std::int64_t b = a;
            while (b < le && p[b] != ' ' && p[b] != '\t' && p[b] != '\r') ++b;
            if (b == a) ok = false;
            for (std::int64_t x = t; x < le && ok; ++x)
                if (p[x] >= 0x80 || (p[x] < 0x20 && p[x] != '\t' && p[x] != '\r')) ok = false;
            if (!offsets.empty()) ids.push_back('\n');
            ids.append(reinterpret_cast<const char*>(p + a), static_cast<std::size_t>(b - a));
            offsets.push_back(count);
            per_letter.push_back(0);
            per_nuc.push_back(0);
            in_record = true;
            return;
        }
        if (t < e && p[t] == ';') return;  // an old FASTA comment line
        for (std::int64_t x = t; x < le; ++x) {
            const unsigned char c = p[x];
            if (c == ' ' || c == '\r') continue;
            if (c < 0x20 || c >= 0x80 || !in_record || count >= capacity) {
                ok = false;  // a control or non-ASCII byte, or text before the first record
                return;
            }
            dst[count++] = c;
            const unsigned char u = c & 0xDF;  // upper case of a letter
            if (u >= 'A' && u <= 'Z') {
                ++per_letter.back();
                if (u == 'A' || u == 'C' || u == 'G' || u == 'T' || u == 'U' || u == 'N') ++per_nuc.back();
            }
        }
    }

    py::object result(py::array_t<std::uint8_t>& buffer) {
        if (offsets.empty()) ok = false;
        if (!ok) return py::none();
        offsets.push_back(count);
        auto arr = [](const std::vector<std::int64_t>& v) {
            py::array_t<std::int64_t> a(static_cast<py::ssize_t>(v.size()));
            std::copy(v.begin(), v.end(), a.mutable_data());
            return a;
        };
        py::object letters = buffer[py::slice(0, count, 1)];
        return py::make_tuple(letters, arr(offsets), py::bytes(ids), arr(per_letter), arr(per_nuc));
    }
};

// (letters, offsets, ids, letters a record, A/C/G/T/U/N a record) of FASTA text, or None.
// The letters go straight into one array as long as the text (a view of its first `count`
// bytes is returned): no second copy of the residues.
py::object parse_fasta_py(py::bytes raw) {
    char* data = nullptr;
    Py_ssize_t size = 0;
    if (PyBytes_AsStringAndSize(raw.ptr(), &data, &size) != 0) throw py::error_already_set();
    py::array_t<std::uint8_t> buffer(static_cast<py::ssize_t>(std::max<Py_ssize_t>(size, 1)));
    FastaLines f;
    f.dst = buffer.mutable_data();
    f.capacity = size;
    {
        py::gil_scoped_release release;
        const unsigned char* p = reinterpret_cast<const unsigned char*>(data);
        for (std::int64_t t = 0; t < size && f.ok;) {
            const void* nl = std::memchr(p + t, '\n', static_cast<std::size_t>(size - t));
            const std::int64_t e = nl ? static_cast<const unsigned char*>(nl) - p : size;
            f.line(p, t, e);
            t = e + 1;
        }
    }
    return f.result(buffer);
}

// The same from a plain file read in blocks: no copy of the whole text in memory (the
// letters array has the file's size, its untouched tail never becomes resident). None also
// when the file cannot be read or starts with gzip's magic bytes.
py::object parse_fasta_file_py(const std::string& path, std::int64_t size) {
    py::array_t<std::uint8_t> buffer(static_cast<py::ssize_t>(std::max<std::int64_t>(size, 1)));
    FastaLines f;
    f.dst = buffer.mutable_data();
    f.capacity = size;
    {
        py::gil_scoped_release release;
        std::FILE* file = std::fopen(path.c_str(), "rb");
        if (!file) {
            f.ok = false;
        } else {
            std::vector<unsigned char> block;
            std::vector<unsigned char> chunk(std::size_t(1) << 22);
            bool first = true;
            while (f.ok) {
                const std::size_t got = std::fread(chunk.data(), 1, chunk.size(), file);
                if (first && got >= 2 && chunk[0] == 0x1f && chunk[1] == 0x8b) f.ok = false;
                first = false;
                block.insert(block.end(), chunk.begin(), chunk.begin() + static_cast<std::ptrdiff_t>(got));
                const bool end = got < chunk.size();
                std::int64_t t = 0;
                const std::int64_t n = static_cast<std::int64_t>(block.size());
                while (f.ok && t < n) {
                    const void* nl = std::memchr(block.data() + t, '\n', static_cast<std::size_t>(n - t));
                    if (!nl && !end) break;  // a partial line: the next block ends it
                    const std::int64_t e = nl ? static_cast<const unsigned char*>(nl) - block.data() : n;
                    f.line(block.data(), t, e);
                    t = e + 1;
                }
                block.erase(block.begin(), block.begin() + std::min<std::int64_t>(t, n));
                if (end) break;
            }
            if (std::ferror(file)) f.ok = false;
            std::fclose(file);
        }
    }
    return f.result(buffer);
}

// Newline-separated ASCII names without their first ";size=DIGITS" annotation followed by ';'
// or the name's end (the separator ';' kept when more text follows): strip_size in bulk.
py::bytes strip_size_lines_py(py::bytes blob) {
    char* data = nullptr;
    Py_ssize_t size = 0;
    if (PyBytes_AsStringAndSize(blob.ptr(), &data, &size) != 0) throw py::error_already_set();
    std::string out;
    {
        py::gil_scoped_release release;
        out.reserve(static_cast<std::size_t>(size));
        const char* p = data;
        const char* end = data + size;
        static const char kTag[] = ";size=";
        while (p <= end) {
            const char* e = p;
            while (e < end && *e != '\n') ++e;
            const char* cut = nullptr;
            const char* after = nullptr;
            for (const char* q = p; q + 6 <= e && !cut; ++q) {
                if (std::memcmp(q, kTag, 6) != 0) continue;
                const char* x = q + 6;
                while (x < e && *x >= '0' && *x <= '9') ++x;
                if (x == q + 6) continue;
                if (x == e) {
                    cut = q, after = e;
                } else if (*x == ';') {
                    cut = q;
                    after = x + 1 == e ? e : x;  // keep the ';' before more text
                }
            }
            if (cut) {
                out.append(p, static_cast<std::size_t>(cut - p));
                out.append(after, static_cast<std::size_t>(e - after));
            } else {
                out.append(p, static_cast<std::size_t>(e - p));
            }
            if (e < end) out.push_back('\n');
            p = e + 1;
        }
    }
    return py::bytes(out);
}

// codes[t] = table[codes[t]] in place; the index of the first code table maps to >= limit, or -1.
std::int64_t encode_in_place_py(py::array_t<std::uint8_t> codes, U8Array table, int limit) {
    if (codes.ndim() != 1 || !codes.writeable())
        throw std::invalid_argument("codes must be a writable 1-d array");
    if (table.ndim() != 1 || table.shape(0) != 256) throw std::invalid_argument("table must hold 256 codes");
    const std::int64_t n = codes.shape(0), stride = codes.strides(0);
    std::uint8_t* p = codes.mutable_data();
    const std::uint8_t* t = table.data();
    std::int64_t bad = -1;
    py::gil_scoped_release release;
    for (std::int64_t k = 0; k < n; ++k) {
        std::uint8_t& c = p[k * stride];
        c = t[c];
        if (c >= limit && bad < 0) bad = k;
    }
    return bad;
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
    m.def("parse_fasta_file", &parse_fasta_file_py, py::arg("path"), py::arg("size"),
          "parse_fasta of a plain file of `size` bytes, read in blocks; None also for gzip or a read error.");
    m.def("encode_in_place", &encode_in_place_py, py::arg("codes"), py::arg("table"), py::arg("limit"),
          "codes = table[codes] in place; the first index whose code is >= limit, or -1.");
    m.def(
        "strip_size_lines", &strip_size_lines_py, py::arg("blob"),
        "Newline-separated ASCII names without their ';size=N' annotation (bioaccel.neighbors.strip_size).");
    m.def("neighbor_segments", &neighbor_segments, py::arg("max_distance"), py::arg("median_length"),
          "Segments the neighbour filter cuts each sequence into for this threshold.");
}
