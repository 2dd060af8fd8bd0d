// pybind11 wrappers of the clustering core (csrc/clusters/): shapes checked here, GIL
// released around the C++ work.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bioaccel/clusters.hpp"
#include "bioaccel/common.hpp"

#include "arrays.hpp"
#include "stop_scope.hpp"

namespace py = pybind11;
using namespace bioaccel;
using namespace bioaccel::bindings;

namespace {

clusters::Graph graph_of(const I64Array& indptr, const I64Array& nbr, const I32Array& dist) {
    if (indptr.ndim() != 1 || indptr.shape(0) < 1 || nbr.ndim() != 1 || dist.ndim() != 1 ||
        nbr.shape(0) != dist.shape(0))
        throw std::invalid_argument("graph: indptr (n + 1), nbr and dist (edges) must be 1-d");
    clusters::Graph g;
    g.n = indptr.shape(0) - 1;
    g.indptr = indptr.data();
    g.nbr = nbr.data();
    g.dist = dist.data();
    const std::int64_t m = nbr.shape(0);
    if (g.indptr[0] != 0 || g.indptr[g.n] != m)
        throw std::invalid_argument("graph: indptr does not span the edges");
    for (std::int64_t u = 0; u < g.n; ++u) {
        if (g.indptr[u + 1] < g.indptr[u]) throw std::invalid_argument("graph: indptr decreases");
    }
    for (std::int64_t e = 0; e < m; ++e)
        if (g.nbr[e] < 0 || g.nbr[e] >= g.n) throw std::invalid_argument("graph: neighbour out of range");
    return g;
}

// The vector's buffer handed to NumPy without a copy (the sequences of a sequencing run).
template <typename T>
py::array_t<T> moved_to_array(std::vector<T>&& v) {
    auto* owner = new std::vector<T>(std::move(v));
    py::capsule free_it(owner, [](void* p) { delete static_cast<std::vector<T>*>(p); });
    return py::array_t<T>(static_cast<py::ssize_t>(owner->size()), owner->data(), free_it);
}

template <typename T>
py::array_t<T> to_array(const std::vector<T>& v) {
    py::array_t<T> a(static_cast<py::ssize_t>(v.size()));
    std::copy(v.begin(), v.end(), a.mutable_data());
    return a;
}

py::tuple swarm_grow_py(I64Array indptr, I64Array nbr, I32Array dist, U64Array abundance, bool breaking) {
    const clusters::Graph g = graph_of(indptr, nbr, dist);
    if (abundance.ndim() != 1 || abundance.shape(0) != g.n)
        throw std::invalid_argument("abundance must hold one value per node");
    clusters::Growth out;
    {
        py::gil_scoped_release release;
        out = clusters::swarm_grow(g, abundance.data(), breaking);
    }
    return py::make_tuple(to_array(out.order), to_array(out.found), to_array(out.starts),
                          to_array(out.generation), to_array(out.radius), to_array(out.parent));
}

// The directed CSR graph of pairs sorted by (i, j), i < j (clusters::directed_rows/fill).
py::tuple directed_graph_py(std::int64_t n, I64Array i, I64Array j, I32Array dij, I32Array dji,
                            U8Array keep_ij, U8Array keep_ji) {
    const std::int64_t m = i.shape(0);
    for (const py::array* a :
         {static_cast<const py::array*>(&i), static_cast<const py::array*>(&j),
          static_cast<const py::array*>(&dij), static_cast<const py::array*>(&dji),
          static_cast<const py::array*>(&keep_ij), static_cast<const py::array*>(&keep_ji)})
        if (a->ndim() != 1 || a->shape(0) != m)
            throw std::invalid_argument("graph: the pair arrays must be 1-d of one length");
    if (n < 0) throw std::invalid_argument("graph: n must be >= 0");
    const std::int64_t* pi = i.data();
    const std::int64_t* pj = j.data();
    for (std::int64_t k = 0; k < m; ++k) {
        if (pi[k] < 0 || pi[k] >= pj[k] || pj[k] >= n)
            throw std::invalid_argument("graph: pair " + std::to_string(k) + " is not 0 <= i < j < n");
        if (k && (pi[k] < pi[k - 1] || (pi[k] == pi[k - 1] && pj[k] <= pj[k - 1])))
            throw std::invalid_argument("graph: pairs must be sorted by (i, j), each once");
    }
    py::array_t<std::int64_t> indptr(n + 1);
    {
        py::gil_scoped_release release;
        clusters::directed_rows(n, m, pi, pj, keep_ij.data(), keep_ji.data(), indptr.mutable_data());
    }
    const std::int64_t edges = indptr.data()[n];
    py::array_t<std::int64_t> nbr(edges);
    py::array_t<std::int32_t> dist(edges);
    {
        py::gil_scoped_release release;
        clusters::directed_fill(n, m, pi, pj, dij.data(), dji.data(), keep_ij.data(), keep_ji.data(),
                                indptr.data(), nbr.mutable_data(), dist.mutable_data());
    }
    return py::make_tuple(indptr, nbr, dist);
}

py::tuple swarm_grow_search_py(U8Array codes, I64Array offsets, U64Array abundance, std::int64_t d,
                               bool breaking, bool swarm_differences, int gram_test) {
    const SeqView v = seq_view(codes, offsets, "amplicons");
    if (abundance.ndim() != 1 || abundance.shape(0) != v.count)
        throw std::invalid_argument("abundance must hold one value per amplicon");
    if (swarm_differences)
        for (std::int64_t p = 0; p < codes.shape(0); ++p)
            if (v.codes[p] > 3) throw std::invalid_argument("swarm's differences need codes 0..3 (A C G T)");
    clusters::Growth out;
    {
        StopScope stop;  // Ctrl-C reaches the growth
        py::gil_scoped_release release;
        out = clusters::swarm_grow_search(v, abundance.data(), d, breaking, swarm_differences, gram_test);
    }
    return py::make_tuple(to_array(out.order), to_array(out.found), to_array(out.starts),
                          to_array(out.generation), to_array(out.radius), to_array(out.parent));
}

// The same growth on the amplicon reader's 2-bit letters (no byte copy of the sequences).
py::tuple swarm_grow_search_packed_py(const std::shared_ptr<edit::Packed>& letters, U64Array abundance,
                                      std::int64_t d, bool breaking, bool swarm_differences, int gram_test) {
    if (!letters) throw std::invalid_argument("letters must be PackedLetters");
    if (abundance.ndim() != 1 || abundance.shape(0) != letters->count())
        throw std::invalid_argument("abundance must hold one value per amplicon");
    clusters::Growth out;
    {
        StopScope stop;  // Ctrl-C reaches the growth
        py::gil_scoped_release release;
        out = clusters::swarm_grow_search(edit::Letters(*letters), abundance.data(), d, breaking,
                                          swarm_differences, gram_test);
    }
#ifdef __GLIBC__
    malloc_trim(0);  // the index's blocks back to the system before Python widens the nodes
#endif
    return py::make_tuple(moved_to_array(std::move(out.order)), moved_to_array(std::move(out.found)),
                          moved_to_array(std::move(out.starts)), moved_to_array(std::move(out.generation)),
                          moved_to_array(std::move(out.radius)), moved_to_array(std::move(out.parent)));
}

py::array_t<std::int64_t> nearest_in_set_packed_py(const std::shared_ptr<edit::Packed>& letters,
                                                   U8Array in_set, std::int64_t d, int threads,
                                                   int gram_test) {
    if (!letters) throw std::invalid_argument("letters must be PackedLetters");
    if (in_set.ndim() != 1 || in_set.shape(0) != letters->count())
        throw std::invalid_argument("in_set must hold one flag per sequence");
    std::vector<std::int64_t> out;
    {
        StopScope stop;  // Ctrl-C reaches the search
        py::gil_scoped_release release;
        out = clusters::nearest_in_set(edit::Letters(*letters), in_set.data(), d, threads, gram_test);
    }
    return moved_to_array(std::move(out));
}

// Sequences k of the packed letters, a code a byte each (all when k is None: (codes, offsets)).
py::object packed_codes(const edit::Packed& p, const py::object& which) {
    if (!which.is_none()) {
        std::int64_t k = which.cast<std::int64_t>();
        const std::int64_t n = p.count();
        if (k < -n || k >= n)
            throw py::index_error("sequence " + std::to_string(k) + " of " + std::to_string(n));
        if (k < 0) k += n;
        py::array_t<std::uint8_t> a(p.length(k));
        p.decode(k, a.mutable_data());
        return std::move(a);
    }
    const std::int64_t n = p.count();
    py::array_t<std::int64_t> offsets(n + 1);
    std::int64_t* o = offsets.mutable_data();
    o[0] = 0;
    for (std::int64_t k = 0; k < n; ++k) o[k + 1] = o[k] + p.length(k);
    py::array_t<std::uint8_t> codes(o[n]);
    {
        py::gil_scoped_release release;
        std::uint8_t* c = codes.mutable_data();
        for (std::int64_t k = 0; k < n; ++k) p.decode(k, c + o[k]);
    }
    return py::make_tuple(codes, offsets);
}

py::array_t<std::int64_t> nearest_in_set_py(U8Array codes, I64Array offsets, U8Array in_set, std::int64_t d,
                                            int threads, int gram_test) {
    const SeqView v = seq_view(codes, offsets, "amplicons");
    if (in_set.ndim() != 1 || in_set.shape(0) != v.count)
        throw std::invalid_argument("in_set must hold one flag per sequence");
    std::vector<std::int64_t> out;
    {
        StopScope stop;  // Ctrl-C reaches the search
        py::gil_scoped_release release;
        out = clusters::nearest_in_set(v, in_set.data(), d, threads, gram_test);
    }
    return to_array(out);
}

py::array_t<std::int64_t> greedy_centroids_py(I64Array indptr, I64Array nbr, I32Array dist, I64Array lengths,
                                              std::int64_t num, std::int64_t den) {
    const clusters::Graph g = graph_of(indptr, nbr, dist);
    if (lengths.ndim() != 1 || lengths.shape(0) != g.n)
        throw std::invalid_argument("lengths must hold one value per node");
    std::vector<std::int64_t> out;
    {
        py::gil_scoped_release release;
        out = clusters::greedy_centroids(g, lengths.data(), num, den);
    }
    return to_array(out);
}

py::tuple greedy_search_py(U8Array codes, I64Array offsets, std::int64_t num, std::int64_t den, int threads,
                           bool overhangs_free) {
    const SeqView v = seq_view(codes, offsets, "amplicons");
    clusters::GreedyCentroids out;
    {
        StopScope stop;  // Ctrl-C reaches the search
        py::gil_scoped_release release;
        out = clusters::greedy_search(v, num, den, threads, overhangs_free);
    }
    return py::make_tuple(to_array(out.centroid), to_array(out.distance));
}

// The same search on the amplicon reader's 2-bit letters.
py::tuple greedy_search_packed_py(const std::shared_ptr<edit::Packed>& letters, std::int64_t num,
                                  std::int64_t den, int threads, bool overhangs_free) {
    if (!letters) throw std::invalid_argument("letters must be PackedLetters");
    clusters::GreedyCentroids out;
    {
        StopScope stop;  // Ctrl-C reaches the search
        py::gil_scoped_release release;
        out = clusters::greedy_search(edit::Letters(*letters), num, den, threads, overhangs_free);
    }
    return py::make_tuple(moved_to_array(std::move(out.centroid)), moved_to_array(std::move(out.distance)));
}

// Swarm's alignment of the pairs (queries[k], targets[k]) of one code buffer.
// edits (one per pair, or empty): each pair's Levenshtein distance, when the caller knows it
// exactly (as the growth does), else -1: it narrows the band and lets single-run pairs skip
// the dynamic programme, with the same result.
py::tuple swarm_align_py(U8Array codes, I64Array offsets, I64Array queries, I64Array targets,
                         std::int64_t max_diffs, bool want_cigar, int threads, I64Array edits) {
    const SeqView v = seq_view(codes, offsets);
    if (queries.ndim() != 1 || targets.ndim() != 1 || queries.shape(0) != targets.shape(0))
        throw std::invalid_argument("queries and targets must be 1-d of one length");
    const std::int64_t m = queries.shape(0);
    if (edits.ndim() != 1 || (edits.shape(0) != 0 && edits.shape(0) != m))
        throw std::invalid_argument("edits must be empty or one per pair");
    const std::int64_t* qi = queries.data();
    const std::int64_t* ti = targets.data();
    const std::int64_t* ei = edits.shape(0) ? edits.data() : nullptr;
    for (std::int64_t k = 0; k < m; ++k)
        if (qi[k] < 0 || qi[k] >= v.count || ti[k] < 0 || ti[k] >= v.count)
            throw std::invalid_argument(
                "pair " + std::to_string(k) + " (" + std::to_string(qi[k]) + ", " + std::to_string(ti[k]) +
                ") names a sequence out of range: expected 0 to " + std::to_string(v.count - 1));
    for (std::int64_t s = 0; s < v.count; ++s) {
        if (v.offsets[s + 1] == v.offsets[s]) throw std::invalid_argument("swarm_align: empty sequence");
        for (std::int64_t p = v.offsets[s]; p < v.offsets[s + 1]; ++p)
            if (v.codes[p] > 14) throw std::invalid_argument("swarm_align: codes must be nucleotides");
    }
    py::array_t<std::int32_t> diffs(m), lengths(m);
    std::vector<std::string> cigars(want_cigar ? static_cast<std::size_t>(m) : 0);
    std::int32_t* dp = diffs.mutable_data();
    std::int32_t* lp = lengths.mutable_data();
    const int nthreads = resolve_threads(threads);
    {
        StopScope stop;  // Ctrl-C reaches the alignments
        py::gil_scoped_release release;
#pragma omp parallel num_threads(nthreads)
        {
            std::vector<std::int64_t> H, E;
            std::vector<std::uint8_t> dir;
#pragma omp for schedule(dynamic, 64)
            for (std::int64_t k = 0; k < m; ++k) {
                if (stop_requested()) continue;  // the rest skipped; thrown below
                const std::uint8_t* q = v.codes + v.offsets[qi[k]];
                const std::uint8_t* t = v.codes + v.offsets[ti[k]];
                clusters::SwarmAlignment a = clusters::swarm_align(
                    q, v.offsets[qi[k] + 1] - v.offsets[qi[k]], t, v.offsets[ti[k] + 1] - v.offsets[ti[k]],
                    max_diffs, want_cigar, H, E, dir, ei ? ei[k] : -1);
                dp[k] = static_cast<std::int32_t>(std::min<std::int64_t>(a.diffs, 1 << 30));
                lp[k] = static_cast<std::int32_t>(a.length);
                if (want_cigar) cigars[static_cast<std::size_t>(k)] = std::move(a.cigar);
            }
        }
        throw_if_stopped();
    }
    (void)threads;
    return py::make_tuple(diffs, lengths, py::cast(cigars));
}

// A string's bytes as a Python bytes object, the string let go (one copy alive at a time).
py::bytes moved_to_bytes(std::string& s) {
    py::bytes b(s);
    std::string().swap(s);
    return b;
}

py::tuple parsed_tuple(clusters::ParsedAmplicons&& out) {
    py::tuple err = py::make_tuple(static_cast<int>(out.error), out.a, out.b, out.c);
    py::bytes header_lines = moved_to_bytes(out.header_lines);
    py::bytes id_lines = moved_to_bytes(out.id_lines);
    py::bytes header_text = moved_to_bytes(out.header_text);
    return py::make_tuple(err, moved_to_array(std::move(out.hstart)), moved_to_array(std::move(out.hend)),
                          moved_to_array(std::move(out.line)), moved_to_array(std::move(out.astart)),
                          moved_to_array(std::move(out.aend)), moved_to_array(std::move(out.abundance)),
                          moved_to_array(std::move(out.order)), moved_to_array(std::move(out.codes)),
                          moved_to_array(std::move(out.offsets)),
                          out.packed ? py::cast(out.packed) : py::object(py::none()), header_lines, id_lines,
                          header_text, py::bytes(out.bad_line));
}

clusters::AmpliconReader make_reader(U8Array table, std::uint64_t default_abundance, bool underscore) {
    if (table.ndim() != 1 || table.shape(0) != 256)
        throw std::invalid_argument("table must map all 256 bytes");
    return clusters::AmpliconReader(table.data(), default_abundance, underscore);
}

void reader_feed(clusters::AmpliconReader& reader, const py::buffer& piece) {
    const py::buffer_info info = piece.request();
    if (info.ndim != 1 || info.itemsize != 1 || info.strides[0] != 1)
        throw std::invalid_argument("feed takes a contiguous bytes-like piece");
    const auto* data = static_cast<const char*>(info.ptr);
    const std::int64_t size = static_cast<std::int64_t>(info.size);
    py::gil_scoped_release release;
    reader.feed(data, size);
}

py::tuple reader_finish(clusters::AmpliconReader& reader) {
    py::tuple parsed;
    {
        clusters::ParsedAmplicons out;
        {
            StopScope stop;  // Ctrl-C reaches the sort and the repeat checks (a second at 10^6)
            py::gil_scoped_release release;
            out = reader.finish();
        }
        parsed = parsed_tuple(std::move(out));
    }
#ifdef __GLIBC__
    // the parse's scratch (the 4-bit letters, its tables) came from the heap in blocks
    // glibc keeps after free: hand them back, or they stay in the process's RSS
    malloc_trim(0);
#endif
    return parsed;
}

}  // namespace

void bind_clusters(py::module_& m) {
    m.def("swarm_grow", &swarm_grow_py, py::arg("indptr"), py::arg("nbr"), py::arg("dist"),
          py::arg("abundance"), py::arg("breaking"),
          "swarm's growth on a CSR graph of nodes in swarm's order: (order, found, starts, "
          "generation, radius, parent).");
    m.def("directed_graph", &directed_graph_py, py::arg("n"), py::arg("i"), py::arg("j"), py::arg("dij"),
          py::arg("dji"), py::arg("keep_ij"), py::arg("keep_ji"),
          "The directed CSR graph (indptr, nbr, dist) of pairs sorted by (i, j), i < j: i -> j "
          "(dij) where keep_ij, j -> i (dji) where keep_ji; rows' neighbours ascending.");
    m.def("swarm_grow_search", &swarm_grow_search_py, py::arg("codes"), py::arg("offsets"),
          py::arg("abundance"), py::arg("d"), py::arg("breaking"), py::arg("swarm_differences"),
          py::arg("gram_test") = -1,
          "swarm's growth with each member's free neighbours within d searched as it grows: "
          "(order, found (uint32), starts, generation, radius, parent (empty)).");
    py::class_<edit::Packed, std::shared_ptr<edit::Packed>>(
        m, "PackedLetters",
        "Sequences 2 bits a letter (codes 0-3: A C G T), as the amplicon reader keeps them: "
        "len(), lengths(), codes(k) (one sequence's codes, a byte each), codes() ((codes, "
        "offsets) of all), nbytes.")
        .def("__len__", &edit::Packed::count)
        .def("lengths",
             [](const edit::Packed& p) {
                 py::array_t<std::int64_t> a(p.count());
                 for (std::int64_t k = 0; k < p.count(); ++k) a.mutable_data()[k] = p.length(k);
                 return a;
             })
        .def("codes", &packed_codes, py::arg("k") = py::none())
        .def_property_readonly("nbytes", &edit::Packed::bytes)
        .def(py::pickle([](const edit::Packed& p) { return packed_codes(p, py::none()); },
                        [](const py::tuple& state) {  // (codes, offsets), packed again
                            if (state.size() != 2)
                                throw std::invalid_argument("PackedLetters: bad pickle state");
                            const auto codes = state[0].cast<U8Array>();
                            const auto offsets = state[1].cast<I64Array>();
                            const SeqView v = seq_view(codes, offsets, "PackedLetters");
                            for (std::int64_t k = 0; k < codes.shape(0); ++k)
                                if (v.codes[k] > 3)
                                    throw std::invalid_argument("PackedLetters: codes past 3");
                            return std::make_shared<edit::Packed>(v, 2, 1);
                        }));
    m.def("swarm_grow_search_packed", &swarm_grow_search_packed_py, py::arg("letters"), py::arg("abundance"),
          py::arg("d"), py::arg("breaking"), py::arg("swarm_differences"), py::arg("gram_test") = -1,
          "swarm_grow_search on PackedLetters.");
    m.def("nearest_in_set_packed", &nearest_in_set_packed_py, py::arg("letters"), py::arg("in_set"),
          py::arg("d"), py::arg("threads"), py::arg("gram_test") = -1, "nearest_in_set on PackedLetters.");
    m.def("nearest_in_set", &nearest_in_set_py, py::arg("codes"), py::arg("offsets"), py::arg("in_set"),
          py::arg("d"), py::arg("threads"), py::arg("gram_test") = -1,
          "For each sequence outside the set, the smallest set member within edit distance d (-1: none).");
    m.def("greedy_centroids", &greedy_centroids_py, py::arg("indptr"), py::arg("nbr"), py::arg("dist"),
          py::arg("lengths"), py::arg("num"), py::arg("den"),
          "Centroid clustering in node order at identity >= num/den: each node's centroid.");
    m.def("greedy_search_packed", &greedy_search_packed_py, py::arg("letters"), py::arg("num"),
          py::arg("den"), py::arg("threads"), py::arg("overhangs_free") = false,
          "greedy_search on PackedLetters.");
    m.def("greedy_search", &greedy_search_py, py::arg("codes"), py::arg("offsets"), py::arg("num"),
          py::arg("den"), py::arg("threads"), py::arg("overhangs_free") = false,
          "greedy_centroids searched as it goes, with no pair list: (centroid, distance to it) per node. "
          "overhangs_free: identity over the shorter length, the shorter aligned within the longer.");
    m.def(
        "infix_distance",
        [](U8Array p, U8Array t, std::int64_t k) {
            if (p.ndim() != 1 || t.ndim() != 1) throw std::invalid_argument("p and t must be 1-D");
            if (k < 0) throw std::invalid_argument("k must be >= 0");
            return clusters::infix_distance(p.data(), p.shape(0), t.data(), t.shape(0), k);
        },
        py::arg("p"), py::arg("t"), py::arg("k"),
        "The fewest edits aligning all of p to a stretch of t (k + 1 when more than k).");
    py::class_<clusters::AmpliconReader>(
        m, "AmpliconReader",
        "FASTA amplicons as swarm reads them, fed in pieces cut anywhere (feed), then "
        "finish(): (error, hstart, hend, line, astart, aend, abundance, order, codes, offsets, "
        "packed, header_lines, id_lines, header_text, bad_line); the sequences in swarm's order "
        "are packed (PackedLetters) when all are A C G T U (codes empty, offsets [0]), else "
        "codes and offsets (packed None); hstart/hend index header_text (the "
        "headers in input order); header_lines (and id_lines: empty, see amplicon_ids) in swarm's order, "
        "each record "
        "followed by a newline. underscore: abundances as swarm's default `_N` header suffix, "
        "not `;size=N`.")
        .def(py::init(&make_reader), py::arg("table"), py::arg("default_abundance"),
             py::arg("underscore") = false)
        .def("reserve", &clusters::AmpliconReader::reserve, py::arg("bytes"))
        .def("feed", &reader_feed, py::arg("piece"))
        .def("finish", &reader_finish);
    m.def(
        "amplicon_ids",
        [](const py::bytes& header_lines, bool underscore) {
            const std::string_view h(header_lines);
            std::string ids;
            {
                py::gil_scoped_release release;
                ids = clusters::amplicon_ids(h, underscore);
            }
            return moved_to_bytes(ids);
        },
        py::arg("header_lines"), py::arg("underscore") = false,
        "The ids of header lines (each followed by a newline): each header without its abundance "
        "annotation (`;size=N`, or `_N` with underscore), a line each.");
    m.def("swarm_align", &swarm_align_py, py::arg("codes"), py::arg("offsets"), py::arg("queries"),
          py::arg("targets"), py::arg("max_diffs"), py::arg("want_cigar"), py::arg("threads"),
          py::arg("edits"),
          "swarm's global alignment of each (query, target) pair: (diffs, lengths, cigars).");
}
