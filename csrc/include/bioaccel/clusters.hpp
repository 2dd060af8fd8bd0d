// Amplicon clustering on a sparse graph of pairs (bioaccel.clusters): swarm's growth from
// abundance peaks, centroid (greedy) clustering, and swarm's count of differences of its
// optimal global alignment. No pybind11 here.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "bioaccel/align.hpp"        // SeqView
#include "bioaccel/packed_edit.hpp"  // edit::Letters, edit::Packed

namespace bioaccel::clusters {

// A directed graph in CSR form over nodes 0..n-1 (the amplicons in swarm's order: abundance
// decreasing, then header in byte order). Row u lists (nbr[k], dist[k]) for k in
// indptr[u]..indptr[u+1], neighbours in increasing order: the edge u -> v is usable when
// u grows into v (dist is the difference count with u as swarm's query).
struct Graph {
    std::int64_t n = 0;
    const std::int64_t* indptr = nullptr;
    const std::int64_t* nbr = nullptr;
    const std::int32_t* dist = nullptr;
};

struct Growth {
    // nodes are below 2^32 (4 bytes each: at 10^6 amplicons 8 MB less at the growth's peak)
    std::vector<std::uint32_t> order;      // members, swarm by swarm, generation by generation
    std::vector<std::uint32_t> found;      // the same members in the order they were found
    std::vector<std::int64_t> starts;      // swarm s is order[starts[s]:starts[s+1]]
    std::vector<std::int32_t> generation;  // per node
    std::vector<std::int64_t> radius;      // per node: summed differences along the parents
    std::vector<std::int64_t> parent;      // per node, -1 for a seed (swarm_grow only)
};

// swarm's clustering: every node not yet in a swarm, in order, seeds a new one, which grows
// generation by generation: each member of generation g (in order) takes every free node
// it links to (with breaking: only nodes of abundance <= its own), and generation g + 1 is
// sorted by node index. Exactly algod1.cc / algo.cc of swarm 3 on the same graph.
Growth swarm_grow(const Graph& g, const std::uint64_t* abundance, bool breaking);

// The directed CSR graph of m pairs (i[k], j[k]) sorted by (i, j) with i < j: the edge
// i -> j, count dij[k], where keep_ij[k] != 0, and j -> i, count dji[k], where keep_ji[k] !=
// 0. Row u lists its lower neighbours, then its higher ones, each ascending. directed_rows
// fills indptr (n + 1 slots; indptr[n] edges), directed_fill then nbr and dist (indptr[n]
// each): no other buffer than two of n (the rows' cursors), at millions of pairs.
void directed_rows(std::int64_t n, std::int64_t m, const std::int64_t* i, const std::int64_t* j,
                   const std::uint8_t* keep_ij, const std::uint8_t* keep_ji, std::int64_t* indptr);
void directed_fill(std::int64_t n, std::int64_t m, const std::int64_t* i, const std::int64_t* j,
                   const std::int32_t* dij, const std::int32_t* dji, const std::uint8_t* keep_ij,
                   const std::uint8_t* keep_ji, const std::int64_t* indptr, std::int64_t* nbr,
                   std::int32_t* dist);

// The same growth with each member's neighbours searched when the growth reaches it, among
// the free nodes only (csrc/clusters/growth.cpp: a Pass-Join index that drops taken nodes),
// so no pair list is built: the links are the pairs within Levenshtein distance d or, with
// swarm_differences, within d differences of swarm's alignment (the member as its query).
// Equal to swarm_grow on the graph of those pairs (parent left empty). Codes: any
// (swarm_differences: 0..3).
// gram_test (d >= 2: the q-gram test before Landau-Vishkin, see growth.cpp): -1 (default)
// or 1 on, 0 off; the result is the same either way.
// Letters: codes a byte each, or the amplicon reader's 2 bits a letter (edit::Packed).
Growth swarm_grow_search(const edit::Letters& seqs, const std::uint64_t* abundance, std::int64_t d,
                         bool breaking, bool swarm_differences, int gram_test = -1);

// For every node outside the set (in_set[node] == 0), the smallest node of the set within
// Levenshtein distance d, or -1 (swarm's fastidious candidates: light amplicons, heavy set).
std::vector<std::int64_t> nearest_in_set(const edit::Letters& seqs, const std::uint8_t* in_set,
                                         std::int64_t d, int threads, int gram_test = -1);

// Centroid clustering: nodes in order; a node joins the centroid among its earlier
// neighbours with the highest identity (max_len - dist) / max_len at or above num/den
// (ties: the earlier centroid), or becomes a centroid. Returns each node's centroid.
std::vector<std::int64_t> greedy_centroids(const Graph& g, const std::int64_t* lengths, std::int64_t num,
                                           std::int64_t den);

// The same centroid clustering searched as it goes, with no pair list (growth.cpp): each
// amplicon's centroid among the centroids before it, by Levenshtein distance; equal to
// greedy_centroids on the graph of every pair within the threshold's distance. Memory
// O(n L); time grows with the amplicons that no centroid lies within 2 edits of, times the
// centroids. Returns each node's centroid and its distance to it (0 for a centroid).
struct GreedyCentroids {
    std::vector<std::int64_t> centroid;
    std::vector<std::int64_t> distance;
};
// overhangs_free: identity over the shorter length L_s, (L_s - e) / L_s, e the fewest edits
// that align the whole shorter sequence to a stretch of the longer (its overhangs free, as
// cd-hit-est's and vsearch's terminal gaps; on equal lengths the fewer of the two ways);
// every centroid is then tried (overhangs bound nothing), through one-sided q-gram bounds.
GreedyCentroids greedy_search(const edit::Letters& seqs, std::int64_t num, std::int64_t den, int threads,
                              bool overhangs_free = false);

// The fewest edits that align all of p (length m) to a stretch of t (length n): the start
// and end in t are free (an infix alignment, edlib's HW mode); k + 1 when more than k.
std::int64_t infix_distance(const std::uint8_t* p, std::int64_t m, const std::uint8_t* t, std::int64_t n,
                            std::int64_t k);

// swarm's global alignment (nw.cc: mismatch 18, gap open 24, gap extend 13 after its
// conversion of match 5, mismatch -4, gap open 12, gap extend 4; backtrack from the end
// preferring a gap in the query, then the diagonal, then a gap in the target). `query`
// is swarm's query (the seed or subseed). Codes are 0..3 (A C G T).
struct SwarmAlignment {
    std::int64_t score = 0;
    std::int64_t diffs = 0;   // alignment columns minus matches
    std::int64_t length = 0;  // alignment columns
    std::string cigar;        // run-length M/I/D from the start (only when asked)
};

// max_diffs >= 0: the dynamic programme runs in the band that any alignment of at most
// max_diffs differences stays in, and a pair whose score shows more differences gets
// diffs = max_diffs + 1 (no backtrack). max_diffs < 0: the full matrix. edits >= 0: the
// pair's Levenshtein distance, known exactly, which (with max_diffs >= 0) narrows the band to
// the one every optimal alignment stays in, and (without want_cigar) counts a pair of
// unequal lengths that one gap run reaches it with without the programme: the same result.
SwarmAlignment swarm_align(const std::uint8_t* query, std::int64_t qlen, const std::uint8_t* target,
                           std::int64_t tlen, std::int64_t max_diffs, bool want_cigar,
                           std::vector<std::int64_t>& work_h, std::vector<std::int64_t>& work_e,
                           std::vector<std::uint8_t>& work_dir, std::int64_t edits = -1);

}  // namespace bioaccel::clusters

namespace bioaccel::clusters {

// Amplicons parsed from FASTA text as swarm reads them (see bioaccel/clusters/_amplicons.py):
// header = the first word after '>', abundance = the first `size=N` at the start or after
// ';' and followed by ';' or the end; sequences translated through `table` (255 = refused).
// Records end up in swarm's order (abundance decreasing, then header bytes): `order[k]` is
// the input record of amplicon k. The first problem found stops the parse, in this order
// of checks: format, headers, annotations, ids, sequences, duplicates.
enum class ParseError : int {
    none = 0,
    not_fasta = 1,       // a = line of the text before the first '>'
    empty_header = 2,    // a = record
    malformed_size = 3,  // a = record
    size_range = 4,      // a = record
    missing_size = 5,    // a = first record, b = count
    duplicate_id = 6,    // a, b = records
    empty_sequence = 7,  // a = record
    bad_letter = 8,      // a = record, b = 0-based position in the sequence, c = byte
    duplicate_seq = 9,   // a, b = records
};

// On success the per-record arrays only error messages read (hstart, hend, line, aend,
// header_text) are empty, and astart is in swarm's order where a default abundance was given
// (else empty).
struct ParsedAmplicons {
    // the headers as read, one after another in input order, and per record its span in
    // that text and its line in the input
    std::string header_text;
    std::vector<std::int64_t> hstart, hend, line;
    std::vector<std::int64_t> astart, aend;  // annotation span in the header (-1: none)
    std::vector<std::uint64_t> abundance;    // per record (default where none)
    std::vector<std::int64_t> order;         // swarm's order of the records
    // the sequences in swarm's order: 2 bits a letter (`packed`) when every letter is A, C, G,
    // T or U, else codes a byte each (`codes` and `offsets`; offsets is {0} when packed)
    std::shared_ptr<edit::Packed> packed;
    std::vector<std::uint8_t> codes;
    std::vector<std::int64_t> offsets;
    // in swarm's order, each record's text and a '\n' after it: the headers as written, and
    // the ids (the headers without their annotation); Python splits them in one call
    std::string header_lines, id_lines;  // id_lines: empty (amplicon_ids() makes them)
    std::string bad_line;                // not_fasta: the start of the refused line (at most 40 bytes)
    ParseError error = ParseError::none;
    std::int64_t a = -1, b = -1, c = -1;
};

// The ids of header lines (each followed by '\n', as ParsedAmplicons::header_lines): each
// header without its abundance annotation (`;size=N` or, with underscore, `_N`), a line each.
std::string amplicon_ids(std::string_view header_lines, bool underscore);

// Reads FASTA amplicons from text fed in pieces cut anywhere (a file read in chunks, a
// gzip stream), so the whole text is never held: headers are kept, the letters 2 bits each
// in input order (4 bits each from the first IUPAC code on) until finish() puts them in
// swarm's order, packed (edit::Packed) or a byte each.
// default_abundance 0: a record without annotation is an error (swarm without -a).
// underscore: the abundance is a header's `_N` suffix (swarm's default annotation), not its
// `;size=N` (swarm -z, vsearch).
class AmpliconReader {
public:
    AmpliconReader(const std::uint8_t* table, std::uint64_t default_abundance, bool underscore = false);
    // The text's size when known (a plain file): the letters' buffer is sized once for it
    // (they are at most that many) instead of growing by copies
    void reserve(std::int64_t bytes);
    void feed(const char* data, std::int64_t size);
    ParsedAmplicons finish();  // once

private:
    void line(const char* s, std::int64_t len);  // one line without its '\n'
    // A sequence line's letters 2 bits each from s[0] on: where it stopped (an IUPAC code,
    // which needs 4 bits, or stop).
    std::int64_t two_bit_line(const char* s, std::int64_t stop);
    void to_nibbles();                        // the letters so far, 4 bits each from now on
    void refused(std::int64_t w, char byte);  // letter w is a refused byte (the first is kept)
    void size_from_start();
    static constexpr std::size_t kSizingRecords = 4096;  // records read before size_from_start
    void packed_letters(ParsedAmplicons& out);
    void byte_letters(ParsedAmplicons& out);
    bool repeated_sequence(ParsedAmplicons& out) const;
    std::uint8_t table_[256];
    std::uint64_t default_abundance_;
    bool underscore_;
    ParsedAmplicons out_;
    std::string carry_;    // a line cut by the end of a piece
    bool two_bit_ = true;  // letters in words_ (else nibbles_)
    // letter codes, 32 a word, each record from a word boundary, a spare word at the end
    std::vector<std::uint64_t> words_;
    std::vector<std::uint8_t> nibbles_;  // letter codes, two a byte (15: refused)
    std::int64_t letters_ = 0;
    std::vector<std::int64_t> sstart_, send_;  // per record: its first letter, and past its last
    std::int64_t line_no_ = 0, bad_record_ = -1, bad_pos_ = -1;
    std::int64_t expected_bytes_ = 0, consumed_ = 0;  // the text's size (reserve), bytes parsed
    bool sized_ = false;
    int bad_byte_ = 0;
    bool finished_ = false;
};

}  // namespace bioaccel::clusters
