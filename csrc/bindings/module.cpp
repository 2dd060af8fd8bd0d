// The only pybind11 code: thin wrappers that check shapes, release the GIL and
// translate C++ exceptions (pybind11 maps std::invalid_argument -> ValueError,
// std::overflow_error -> OverflowError, std::bad_alloc -> MemoryError).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <exception>
#include <limits>
#include <stdexcept>
#include <vector>
#include <string>

#include "bioaccel/align.hpp"
#include "bioaccel/common.hpp"
#include "bioaccel/cpu.hpp"
#include "bioaccel/dna_counts.hpp"
#include "bioaccel/dna_models.hpp"
#include "bioaccel/edit_distance.hpp"
#include "bioaccel/kmers.hpp"
#include "bioaccel/matrix_text.hpp"
#include "bioaccel/stop.hpp"
#include "bioaccel/trees.hpp"

#include "arrays.hpp"
#include "stop_scope.hpp"

namespace py = pybind11;
using namespace bioaccel;
using namespace bioaccel::bindings;

namespace {

py::dict cpu_features_py() {
    const CpuFeatures& f = cpu_features();
    py::dict built, cpu, forced, out;
    built["avx2"] = f.built_avx2;
    built["avx512"] = f.built_avx512;
    cpu["popcnt"] = f.cpu_popcnt;
    cpu["avx2"] = f.cpu_avx2;
    cpu["avx512f"] = f.cpu_avx512f;
    cpu["avx512bw"] = f.cpu_avx512bw;
    cpu["avx512vl"] = f.cpu_avx512vl;
    cpu["avx512vbmi"] = f.cpu_avx512vbmi;
    cpu["avx512vpopcntdq"] = f.cpu_avx512vpopcntdq;
    forced["BIOACCEL_NO_AVX2"] = f.no_avx2;
    forced["BIOACCEL_NO_AVX512"] = f.no_avx512;
    out["isa"] = isa_name(f.isa);
    out["built"] = built;
    out["cpu"] = cpu;
    out["forced"] = forced;
    return out;
}

py::array_t<std::int32_t> dna_pair_counts_py(U64Array planes, std::int64_t i0, std::int64_t i1,
                                             std::int64_t j0, std::int64_t j1, bool table, bool upper_only,
                                             int threads) {
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

const double* freqs_ptr(const F64Array& freqs) {
    if (freqs.ndim() != 1 || freqs.shape(0) != 4)
        throw std::invalid_argument("freqs must hold 4 base frequencies (A, C, G, T)");
    return freqs.data();
}

py::array_t<double> dna_distances_from_counts_py(int model, I32Array counts, F64Array freqs, int threads) {
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

void dna_distance_rows_py(U64Array planes, int model, F64Array freqs, std::int64_t i0, std::int64_t i1,
                          py::array_t<double, py::array::c_style> out, int threads) {
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

py::tuple nj_py(py::array d_any, int threads, bool in_place) {
    EdgeList e;
    if (in_place) {
        // the caller's own buffer, as it is: no conversion may copy it behind our back
        if (!py::isinstance<py::array_t<double>>(d_any) || !(d_any.flags() & py::array::c_style) ||
            !d_any.writeable())
            throw std::invalid_argument(
                "neighbor_joining in place needs a writeable C-contiguous float64 array");
        auto d = py::array_t<double, py::array::c_style>::ensure(d_any);
        if (d.ndim() != 2 || d.shape(0) != d.shape(1))
            throw std::invalid_argument("distance matrix must be square");
        double* data = d.mutable_data();
        const std::int64_t n = d.shape(0);
        py::gil_scoped_release release;
        e = neighbor_joining_in_place(data, n, threads);
    } else {
        F64Array d = F64Array::ensure(d_any);
        if (!d) throw std::invalid_argument("distance matrix must be a float64 array");
        check_square(d);
        py::gil_scoped_release release;
        e = neighbor_joining(d.data(), d.shape(0), threads);
    }
    return edges_to_tuple(e);
}

py::tuple nj_condensed_py(py::array d_any, std::int64_t n, int threads) {
    // the caller's own buffer, as it is: it is the working matrix
    if (!py::isinstance<py::array_t<float>>(d_any) || !(d_any.flags() & py::array::c_style) ||
        !d_any.writeable() || d_any.ndim() != 1)
        throw std::invalid_argument(
            "neighbor_joining_condensed needs a writeable one-dimensional C-contiguous float32 array");
    if (n < 0 || d_any.shape(0) != n * (n - 1) / 2)
        throw std::invalid_argument(std::to_string(d_any.shape(0)) + " condensed values do not fit " +
                                    std::to_string(n) + " taxa (n (n - 1) / 2 are needed)");
    auto d = py::array_t<float, py::array::c_style>::ensure(d_any);
    float* data = d.mutable_data();
    EdgeList e;
    {
        py::gil_scoped_release release;
        e = neighbor_joining_condensed(data, n, threads);
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

int max_threads() {
    return resolve_threads(0);
}

void set_all_cores_threads(int team) {
    const unsigned cpus = std::thread::hardware_concurrency();
    if (team < 1 || team > kMaxThreadsPerCpu * static_cast<long>(cpus > 0 ? cpus : 1))
        throw std::invalid_argument("set_all_cores_threads: team=" + std::to_string(team) +
                                    " is out of range");
    all_cores_team().store(team);
}

ScoreScheme scheme(const I32Array& table, int mode, int gap_open, int gap_extend, std::int64_t max_code) {
    if (table.ndim() != 2 || table.shape(0) != table.shape(1) || table.shape(0) < 1 || table.shape(0) > 255)
        throw std::invalid_argument("score table must be a square int32 matrix of at most 255 letters");
    if (mode < 0 || mode > 2)
        throw std::invalid_argument("mode must be 0 (global), 1 (local) or 2 (semi-global)");
    if (gap_open < 0 || gap_extend < 0) throw std::invalid_argument("gap penalties must be >= 0");
    ScoreScheme s;
    s.table = table.data();
    s.alphabet = static_cast<int>(table.shape(0));
    if (max_code >= s.alphabet)
        throw std::invalid_argument("a sequence code (" + std::to_string(max_code) +
                                    ") is outside the score table of " + std::to_string(s.alphabet) +
                                    " letters");
    s.gap_open = gap_open;
    s.gap_extend = gap_extend;
    s.mode = static_cast<AlignMode>(mode);
    s.max_score = *std::max_element(s.table, s.table + s.alphabet * s.alphabet);
    s.min_score = *std::min_element(s.table, s.table + s.alphabet * s.alphabet);
    return s;
}

std::int64_t max_code_of(const U8Array& a) {
    const std::uint8_t* p = a.data();
    std::uint8_t mx = 0;
    for (py::ssize_t i = 0; i < a.shape(0); ++i) mx = std::max(mx, p[i]);
    return a.shape(0) ? mx : -1;
}

py::tuple align_scores_py(U8Array q_codes, I64Array q_offsets, U8Array t_codes, I64Array t_offsets,
                          I32Array table, int mode, int gap_open, int gap_extend, bool symmetric,
                          int threads) {
    const SeqView q = seq_view(q_codes, q_offsets, "queries");
    const SeqView t = seq_view(t_codes, t_offsets, "targets");
    const ScoreScheme s =
        scheme(table, mode, gap_open, gap_extend, std::max(max_code_of(q_codes), max_code_of(t_codes)));
    py::array_t<std::int32_t> out({static_cast<py::ssize_t>(q.count), static_cast<py::ssize_t>(t.count)});
    std::int32_t* dst = out.mutable_data();
    WidthStats st;
    {
        StopScope stop;  // Ctrl-C reaches the alignments
        py::gil_scoped_release release;
        st = align_scores(q, t, s, symmetric, dst, threads);
    }
    py::dict stats;
    stats["cells_int8"] = st.cells8;
    stats["cells_int16"] = st.cells16;
    stats["cells_int32"] = st.cells32;
    stats["reruns"] = st.reruns;
    return py::make_tuple(out, stats);
}

std::int64_t align_score_scalar_py(U8Array a, U8Array b, I32Array table, int mode, int gap_open,
                                   int gap_extend) {
    const ScoreScheme s = scheme(table, mode, gap_open, gap_extend, std::max(max_code_of(a), max_code_of(b)));
    const std::uint8_t *pa = a.data(), *pb = b.data();
    const std::int64_t m = a.shape(0), n = b.shape(0);
    py::gil_scoped_release release;
    return align_score_scalar(pa, m, pb, n, s);
}

py::array_t<std::int32_t> edit_distances_py(U8Array q_codes, I64Array q_offsets, U8Array t_codes,
                                            I64Array t_offsets, int mode, std::int64_t max_distance,
                                            int alphabet, bool symmetric, int threads) {
    const SeqView q = seq_view(q_codes, q_offsets, "queries");
    const SeqView t = seq_view(t_codes, t_offsets, "targets");
    if (mode < 0 || mode > 2) throw std::invalid_argument("mode must be 0 (global), 1 (infix) or 2 (prefix)");
    const std::int64_t top = std::max(max_code_of(q_codes), max_code_of(t_codes));
    if (top >= alphabet)
        throw std::invalid_argument("a sequence code (" + std::to_string(top) +
                                    ") is outside the alphabet of " + std::to_string(alphabet) + " letters");
    for (std::int64_t i = 0; i < std::max(q.count, t.count); ++i)
        if ((i < q.count && q.length(i) > std::numeric_limits<std::int32_t>::max()) ||
            (i < t.count && t.length(i) > std::numeric_limits<std::int32_t>::max()))
            throw std::overflow_error("sequences longer than 2^31 letters");
    py::array_t<std::int32_t> out({static_cast<py::ssize_t>(q.count), static_cast<py::ssize_t>(t.count)});
    std::int32_t* dst = out.mutable_data();
    {
        StopScope stop;  // Ctrl-C reaches the distances
        py::gil_scoped_release release;
        edit_distances(q, t, static_cast<EditMode>(mode), max_distance, alphabet, symmetric, dst, threads);
    }
    return out;
}

using U64Flat = py::array_t<std::uint64_t, py::array::c_style | py::array::forcecast>;

py::tuple kmer_sketch_py(U8Array codes, I64Array offsets, I8Array digit, int radix, int k, bool canonical,
                         bool hashed, std::uint64_t seed, std::int64_t sketch_size, bool with_counts,
                         int threads) {
    const SeqView v = seq_view(codes, offsets, "sequences");
    if (digit.ndim() != 1 || digit.shape(0) <= max_code_of(codes))
        throw std::invalid_argument("digit map must cover every sequence code");
    KmerTable t;
    {
        py::gil_scoped_release release;
        t = kmer_table(v, digit.data(), radix, k, canonical, hashed, seed, sketch_size, with_counts, threads);
    }
    py::array_t<std::uint64_t> values(static_cast<py::ssize_t>(t.values.size()));
    std::copy(t.values.begin(), t.values.end(), values.mutable_data());
    py::array_t<std::int64_t> offs(static_cast<py::ssize_t>(t.offsets.size()));
    std::copy(t.offsets.begin(), t.offsets.end(), offs.mutable_data());
    py::array_t<std::uint32_t> counts(static_cast<py::ssize_t>(t.counts.size()));
    std::copy(t.counts.begin(), t.counts.end(), counts.mutable_data());
    return py::make_tuple(values, offs, counts);
}

py::tuple kmer_ranks_py(U64Flat values) {
    if (values.ndim() != 1) throw std::invalid_argument("sketch values must be one-dimensional");
    const std::size_t m = static_cast<std::size_t>(values.shape(0));
    py::array_t<std::uint32_t> rank(static_cast<py::ssize_t>(m));
    std::uint32_t* dst = rank.mutable_data();
    const std::uint64_t* src = values.data();
    std::size_t universe;
    {
        py::gil_scoped_release release;
        universe = value_ranks(src, m, dst);
    }
    return py::make_tuple(rank, universe);
}

py::array kmer_rows_py(U64Flat values, I64Array offsets,
                       py::array_t<std::uint32_t, py::array::c_style | py::array::forcecast> counts,
                       py::array_t<std::uint32_t, py::array::c_style | py::array::forcecast> rank,
                       std::int64_t universe, int metric, std::int64_t sketch_size, I64Array lengths, int k,
                       std::int64_t i0, std::int64_t i1, bool single, int threads) {
    const std::int64_t n = offsets.shape(0) - 1;
    if (n < 0 || offsets.data()[n] != values.shape(0))
        throw std::invalid_argument("offsets do not span the values");
    if (lengths.shape(0) != n) throw std::invalid_argument("one length per sequence is needed");
    if (metric < 0 || metric > 2)
        throw std::invalid_argument("metric must be 0 (jaccard), 1 (minhash) or 2 (count fraction)");
    if (counts.shape(0) != 0 && counts.shape(0) != values.shape(0))
        throw std::invalid_argument("one count per value is needed");
    if (rank.shape(0) != 0 && rank.shape(0) != values.shape(0))
        throw std::invalid_argument("one rank per value is needed");
    if (!(0 <= i0 && i0 <= i1 && i1 <= n)) throw std::invalid_argument("rows [i0, i1) outside the table");
    KmerView t;
    t.values = values.data();
    t.counts = counts.shape(0) ? counts.data() : nullptr;
    t.offsets = offsets.data();
    t.n = n;
    t.rank = rank.shape(0) ? rank.data() : nullptr;
    t.universe = static_cast<std::size_t>(universe);
    const auto first = [n](std::int64_t i) { return condensed_row_start(i, n); };
    const py::ssize_t m = static_cast<py::ssize_t>(first(i1) - first(i0));
    const std::int64_t* lens = lengths.data();
    const auto kind = static_cast<KmerMetric>(metric);
    if (single) {
        py::array_t<float> out(m);
        float* dst = out.mutable_data();
        py::gil_scoped_release release;
        kmer_rows(t, kind, sketch_size, lens, k, i0, i1, dst, threads);
        return std::move(out);
    }
    py::array_t<double> out(m);
    double* dst = out.mutable_data();
    py::gil_scoped_release release;
    kmer_rows(t, kind, sketch_size, lens, k, i0, i1, dst, threads);
    return std::move(out);
}

py::list align_pairs_py(U8Array q_codes, I64Array q_offsets, U8Array t_codes, I64Array t_offsets,
                        I64Array pairs, I32Array table, int mode, int gap_open, int gap_extend, int threads) {
    const SeqView q = seq_view(q_codes, q_offsets, "queries");
    const SeqView t = seq_view(t_codes, t_offsets, "targets");
    const ScoreScheme s =
        scheme(table, mode, gap_open, gap_extend, std::max(max_code_of(q_codes), max_code_of(t_codes)));
    if (pairs.ndim() != 2 || pairs.shape(1) != 2) throw std::invalid_argument("pairs must have shape (k, 2)");
    const std::int64_t k = pairs.shape(0);
    const std::int64_t* pp = pairs.data();
    for (std::int64_t r = 0; r < k; ++r)
        if (pp[2 * r] < 0 || pp[2 * r] >= q.count || pp[2 * r + 1] < 0 || pp[2 * r + 1] >= t.count)
            throw std::invalid_argument("pair " + std::to_string(r) + " (" + std::to_string(pp[2 * r]) +
                                        ", " + std::to_string(pp[2 * r + 1]) + ") is out of range");
    std::vector<AlignmentResult> res(static_cast<std::size_t>(k));
    {
        StopScope stop;  // Ctrl-C reaches the alignments
        py::gil_scoped_release release;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(resolve_threads(threads))
#endif
        for (std::int64_t r = 0; r < k; ++r) {
            if (stop_requested()) continue;  // the rest skipped; thrown below
            const std::int64_t qi = pp[2 * r], ti = pp[2 * r + 1];
            res[r] = align_traceback(q.seq(qi), q.length(qi), t.seq(ti), t.length(ti), s);
        }
        throw_if_stopped();
    }
    py::list out;
    for (const auto& r : res)
        out.append(
            py::make_tuple(r.score, r.query_start, r.query_end, r.target_start, r.target_end, r.cigar));
    return out;
}

py::bytes format_matrix_rows_py(const F64Array& data, std::int64_t i0, const py::list& prefixes, bool lower,
                                const std::string& sep, int threads, std::int64_t n) {
    // data: a 2-d matrix (n = -1), or the condensed upper triangle of an n x n matrix
    if (sep.size() != 1) throw std::invalid_argument("sep must be one character");
    const bool condensed = n >= 0;
    if (condensed ? data.ndim() != 1 || data.shape(0) != n * (n - 1) / 2 : data.ndim() != 2)
        throw std::invalid_argument(condensed ? "condensed data must hold n (n - 1) / 2 values"
                                              : "data must be 2-d, or give n for a condensed triangle");
    const std::int64_t rows = static_cast<std::int64_t>(prefixes.size());
    const std::int64_t total = condensed ? n : data.shape(0);
    if (i0 < 0 || i0 + rows > total)
        throw std::invalid_argument("rows " + std::to_string(i0) + " .. " + std::to_string(i0 + rows) +
                                    " outside a matrix of " + std::to_string(total) + " rows");
    if (!condensed && lower && data.shape(0) > data.shape(1))
        throw std::invalid_argument("lower needs a square matrix");
    std::vector<std::string> pre;
    pre.reserve(static_cast<std::size_t>(rows));
    for (const auto& p : prefixes) pre.push_back(p.cast<std::string>());
    std::string out;
    {
        py::gil_scoped_release release;
        out = condensed ? format_condensed_rows(data.data(), n, i0, pre, lower, sep[0], threads)
                        : format_matrix_rows(data.data(), data.shape(1), i0, pre, lower, sep[0], threads);
    }
    return py::bytes(out);
}

I64Array parse_matrix_rows_py(const py::list& lines, const I64Array& starts, const I64Array& want,
                              py::array_t<double, py::array::c_style> out, bool tab, bool lower,
                              int threads) {
    const std::int64_t rows = static_cast<std::int64_t>(lines.size());
    if (starts.ndim() != 1 || want.ndim() != 1 || starts.shape(0) != rows || want.shape(0) != rows)
        throw std::invalid_argument("starts and want need one entry per line");
    if (out.ndim() != 2 || out.shape(0) < rows || !out.writeable())
        throw std::invalid_argument("out must be a writable 2-d array with a row per line");
    const std::int64_t cols = out.shape(1);
    if (lower && cols < rows) throw std::invalid_argument("lower needs a square out");
    std::vector<const char*> text(static_cast<std::size_t>(rows), nullptr);
    std::vector<std::int64_t> len(static_cast<std::size_t>(rows), 0);
    const std::int64_t* st = starts.data();
    const std::int64_t* wa = want.data();
    for (std::int64_t k = 0; k < rows; ++k) {
        PyObject* o = lines[static_cast<std::size_t>(k)].ptr();
        if (!PyUnicode_Check(o)) throw std::invalid_argument("lines must be str");
        if (wa[k] < 0 || wa[k] > cols || st[k] < 0) throw std::invalid_argument("want or start out of range");
        if (PyUnicode_IS_ASCII(o)) {  // else -1: the caller reads the line
            text[k] = static_cast<const char*>(PyUnicode_DATA(o));
            len[k] = PyUnicode_GET_LENGTH(o);
        }
    }
    I64Array ends(rows);
    std::int64_t* en = ends.mutable_data();
    double* d = out.mutable_data();
    {
        py::gil_scoped_release release;
        const int nt = resolve_threads(threads);
        (void)nt;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 16) num_threads(nt)
#endif
        for (std::int64_t k = 0; k < rows; ++k)
            en[k] = text[k] == nullptr || st[k] > len[k]
                        ? -1
                        : parse_matrix_row(text[k], len[k], st[k], wa[k], tab, d + k * cols);
        if (lower) {  // row k holds d[k, :k]: mirror the rows read into d[:k, k], in tiles
            constexpr std::int64_t T = 64;
            for (std::int64_t kb = 0; kb < rows; kb += T)
                for (std::int64_t jb = 0; jb <= kb; jb += T)
                    for (std::int64_t k = kb; k < std::min(kb + T, rows); ++k) {
                        if (en[k] < 0) continue;
                        for (std::int64_t j = jb; j < std::min({jb + T, k}); ++j)
                            d[j * cols + k] = d[k * cols + j];
                    }
        }
    }
    return ends;
}

I64Array count_matrix_fields_py(const py::list& lines, std::int64_t start) {
    const std::int64_t rows = static_cast<std::int64_t>(lines.size());
    std::vector<const char*> text(static_cast<std::size_t>(rows), nullptr);
    std::vector<std::int64_t> len(static_cast<std::size_t>(rows), 0);
    for (std::int64_t k = 0; k < rows; ++k) {
        PyObject* o = lines[static_cast<std::size_t>(k)].ptr();
        if (!PyUnicode_Check(o)) throw std::invalid_argument("lines must be str");
        if (PyUnicode_IS_ASCII(o)) {  // else -1: the caller counts the line
            text[k] = static_cast<const char*>(PyUnicode_DATA(o));
            len[k] = PyUnicode_GET_LENGTH(o);
        }
    }
    I64Array counts(rows);
    std::int64_t* c = counts.mutable_data();
    {
        py::gil_scoped_release release;  // the list (and so its strings) is held by the caller
        for (std::int64_t k = 0; k < rows; ++k) c[k] = text[k] ? count_fields(text[k], len[k], start) : -1;
    }
    return counts;
}

}  // namespace

void bind_msa_guide(py::module_& m);        // csrc/bindings/msa_guide.cpp
void bind_msa_progressive(py::module_& m);  // csrc/bindings/msa_progressive.cpp
void bind_msa_profile(py::module_& m);      // csrc/bindings/msa_profile.cpp
void bind_msa_refine(py::module_& m);       // csrc/bindings/msa_refine.cpp
void bind_msa_add(py::module_& m);          // csrc/bindings/msa_add.cpp
void bind_msa_accurate(py::module_& m);     // csrc/bindings/msa_accurate.cpp
void bind_neighbors(py::module_& m);        // csrc/bindings/neighbors.cpp
void bind_clusters(py::module_& m);         // csrc/bindings/clusters.cpp

PYBIND11_MODULE(_native, m) {
    // a stage stopped by Ctrl-C (StopScope): KeyboardInterrupt, as Python's own handler gives
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const Interrupted&) {
            PyErr_SetNone(PyExc_KeyboardInterrupt);
        }
    });
    bind_msa_add(m);
    bind_msa_progressive(m);
    bind_msa_refine(m);
    bind_msa_guide(m);
    bind_msa_profile(m);
    bind_msa_accurate(m);
    bind_neighbors(m);
    bind_clusters(m);
    m.doc() = "bioaccel's compiled core (C++, OpenMP when built with it)";
    m.def("dna_pair_counts", &dna_pair_counts_py, py::arg("planes"), py::arg("i0"), py::arg("i1"),
          py::arg("j0"), py::arg("j1"), py::arg("table"), py::arg("upper_only"), py::arg("threads"),
          "Pair counts (sites, purine ts, pyrimidine ts, tv) or the 4x4 table for a tile.");
    m.def(
        "dna_distances_from_counts", &dna_distances_from_counts_py, py::arg("model"), py::arg("counts"),
        py::arg("freqs"), py::arg("threads"),
        "Distances (rows, cols) from a (4 or 16, rows, cols) count tile; model ids follow bioaccel.MODELS.");
    m.def("dna_distance_rows", &dna_distance_rows_py, py::arg("planes"), py::arg("model"), py::arg("freqs"),
          py::arg("i0"), py::arg("i1"), py::arg("out"), py::arg("threads"),
          "Fused counts + distances for rows [i0, i1), j > i, into the square `out` (both triangles).");
    m.def("neighbor_joining", &nj_py, py::arg("d"), py::arg("threads"), py::arg("in_place") = false,
          "Neighbour joining: (parent, child, length, root) edge arrays; in_place: d (writeable, "
          "C-contiguous float64) is the working matrix and is overwritten.");
    m.def("neighbor_joining_condensed", &nj_condensed_py, py::arg("d"), py::arg("n"), py::arg("threads"),
          "Low-memory neighbour joining on a condensed float32 upper triangle (n (n - 1) / 2 values, "
          "overwritten): (parent, child, length, root) edge arrays.");
    m.def("upgma", &upgma_py, py::arg("d"), "UPGMA: (parent, child, length, root) edge arrays.");
    m.def("align_scores", &align_scores_py, py::arg("q_codes"), py::arg("q_offsets"), py::arg("t_codes"),
          py::arg("t_offsets"), py::arg("table"), py::arg("mode"), py::arg("gap_open"), py::arg("gap_extend"),
          py::arg("symmetric"), py::arg("threads"),
          "Alignment scores (queries x targets) int32 and width statistics; inter-sequence SIMD.");
    m.def("align_score_scalar", &align_score_scalar_py, py::arg("a"), py::arg("b"), py::arg("table"),
          py::arg("mode"), py::arg("gap_open"), py::arg("gap_extend"), "Scalar Gotoh score of one pair.");
    m.def("align_pairs", &align_pairs_py, py::arg("q_codes"), py::arg("q_offsets"), py::arg("t_codes"),
          py::arg("t_offsets"), py::arg("pairs"), py::arg("table"), py::arg("mode"), py::arg("gap_open"),
          py::arg("gap_extend"), py::arg("threads"),
          "Tracebacks: list of (score, q_start, q_end, t_start, t_end, cigar).");
    m.def("edit_distances", &edit_distances_py, py::arg("q_codes"), py::arg("q_offsets"), py::arg("t_codes"),
          py::arg("t_offsets"), py::arg("mode"), py::arg("max_distance"), py::arg("alphabet"),
          py::arg("symmetric"), py::arg("threads"),
          "Edit distances (queries x targets) int32, Myers/Hyyro bit-parallel; max_distance < 0: none.");
    m.def("kmer_sketch", &kmer_sketch_py, py::arg("codes"), py::arg("offsets"), py::arg("digit"),
          py::arg("radix"), py::arg("k"), py::arg("canonical"), py::arg("hashed"), py::arg("seed"),
          py::arg("sketch_size"), py::arg("with_counts"), py::arg("threads"),
          "Sorted k-mer codes or hashes per sequence: (values, offsets, counts).");
    m.def("kmer_rows", &kmer_rows_py, py::arg("values"), py::arg("offsets"), py::arg("counts"),
          py::arg("rank"), py::arg("universe"), py::arg("metric"), py::arg("sketch_size"), py::arg("lengths"),
          py::arg("k"), py::arg("i0"), py::arg("i1"), py::arg("single"), py::arg("threads"),
          "Distances (1 - Jaccard / Mash distance of the MinHash estimate / 1 - shared k-mer "
          "count fraction) of rows [i0, i1) against every later row, condensed; float32 when "
          "single, else float64.");
    m.def("kmer_ranks", &kmer_ranks_py, py::arg("values"),
          "(rank, universe): each value's rank among the distinct values, uint32.");
    m.def("align_isa", &align_isa, "Instruction set the alignment kernels dispatch to.");
    m.def("cpu_features", &cpu_features_py,
          "The one CPU probe every SIMD dispatcher uses, read once per process: {'isa': level "
          "in use, 'built': kernels in this build, 'cpu': what the CPU supports, 'forced': "
          "BIOACCEL_NO_AVX2 / BIOACCEL_NO_AVX512 as read}.");
    m.def("format_matrix_rows", &format_matrix_rows_py, py::arg("data"), py::arg("i0"), py::arg("prefixes"),
          py::arg("lower"), py::arg("sep"), py::arg("threads"), py::arg("n") = -1,
          "Rows i0 .. i0 + len(prefixes) of a distance matrix as text: prefix, the values (repr of "
          "each float) joined by sep, a line end. data: the matrix (2-d), or with n its condensed "
          "upper triangle (1-d, n (n - 1) / 2 values).");
    m.def("parse_matrix_rows", &parse_matrix_rows_py, py::arg("lines"), py::arg("starts"), py::arg("want"),
          py::arg("out"), py::arg("tab"), py::arg("lower"), py::arg("threads"),
          "Numbers at the end of matrix lines into out's rows: where each line's values begin, -1 where "
          "the line is for the general reader (a field that is not a number, non-ASCII text).");
    m.def("count_matrix_fields", &count_matrix_fields_py, py::arg("lines"), py::arg("start"),
          "Whitespace-separated fields of each line from character start on; -1 for a non-ASCII line.");
    m.def("openmp_enabled", &openmp_enabled);
    m.def("max_threads", &max_threads, "The team threads=0 starts (the value Python set).");
    m.def("set_all_cores_threads", &set_all_cores_threads, py::arg("team"),
          "The team threads=0 means, decided by bioaccel._core.threads.all_cores (affinity-aware).");
}
