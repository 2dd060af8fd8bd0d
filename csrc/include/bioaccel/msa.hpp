// Progressive multiple sequence alignment: profiles, profile-profile DP, the merge schedule
// and tree-split refinement. No pybind11 here (csrc/bindings/msa.cpp wraps it).
//
// A profile summarises weighted rows of an alignment column by column. Row weights are
// normalised within a profile, so every per-column quantity is a fraction in [0, 1]:
//   freq[c][x]  weight of rows holding score letter x in column c
//   occ[c]      weight of rows holding a residue in column c (= sum over x of freq[c][x])
//   and, for the rows holding a gap in c, the kind of gap character it is in its own row:
//   gopen[c]    the first column of an internal gap run      (costs gap_open per residue pair)
//   gext[c]     a later column of an internal gap run        (gap_extend)
//   gtopen[c]   the first column of a leading or trailing run (term_open)
//   gtext[c]    a later column of a leading or trailing run   (term_extend)
// occ + gopen + gext + gtopen + gtext = 1 in every column.
//
// The objective is the sum of pairs (SP) of the merged alignment, each row pair (a in A,
// b in B) scored as FAMSA does: residue pairs by the substitution matrix, a residue facing
// a gap by the penalty of that gap character's kind, gap-gap pairs 0. Scores are bilinear
// in A's and B's fractions, so normalising the rows of each profile scales all of them
// by one positive factor and leaves the optimum unchanged.
//   aligned columns:   t(i, j) = sum_xy fA[i][x] S[x][y] fB[j][y] - occB[j] GA[i] - occA[i] GB[j]
//                      with G[c] = gap_open gopen[c] + gap_extend gext[c] + term_open gtopen[c]
//                               + term_extend gtext[c]
//   a gap column inserted into A at A's boundary k (between A's columns k-1 and k, 0-based;
//   0 and n are the ends) facing B's column j costs occB[j] * start_A(k) for the first
//   column of the run and occB[j] * cont_A(k) for the others, where start/cont weigh the
//   penalties by the kind of gap character each row of A gets there. After such a run, A's
//   column k's rows whose run opened at k now continue a run: the match that follows is
//   credited occB[j] * (gopen[k] (gap_open - gap_extend) + gtopen[k] (term_open - term_extend)).
// merge_profiles updates every fraction exactly along the path, so the progressive stage
// needs no row data. The DP maximises (Gotoh's three states, any state after any other).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "bioaccel/align.hpp"  // SeqView

namespace bioaccel {
namespace msa {

constexpr int kMaxLetters = 32;

struct MsaScoring {
    int letters = 0;                      // K score letters
    std::vector<float> sub;               // K x K substitution scores (row-major)
    std::vector<std::int16_t> letter_of;  // 256 entries: input code -> score letter, -1 = gap
    float gap_open = 0, gap_extend = 0, term_open = 0, term_extend = 0;
};

struct Profile {
    int len = 0;
    int letters = 0;
    double weight = 0;  // total raw weight of the rows (for merging)
    std::int64_t rows = 0;
    std::vector<float> freq;                             // len x letters
    std::vector<float> occ, gopen, gext, gtopen, gtext;  // len each
    std::vector<std::int16_t> single;                    // one letter per column when the profile is one
                                                         // gap-free sequence (fast scoring), else empty
};

// One op per output column: both columns (Match), A's column against a gap (GapInB),
// B's column against a gap (GapInA).
enum PathOp : std::uint8_t { Match = 0, GapInB = 1, GapInA = 2 };
using Path = std::vector<std::uint8_t>;

// Profile of one ungapped sequence of score letters (codes mapped through sc.letter_of;
// a gap code throws std::invalid_argument).
Profile sequence_profile(const std::uint8_t* codes, std::int64_t len, const MsaScoring& sc, double weight);

// Profile of rows of an alignment given by each residue's column: row r has residues
// codes[offsets[r]..offsets[r+1]) at columns cols[...] (strictly increasing); columns
// present in no row are dropped (their original indices go to kept_columns).
Profile rows_profile(const SeqView& seqs, const std::int32_t* cols, const std::int64_t* rows,
                     std::int64_t n_rows, const double* weights, const MsaScoring& sc,
                     std::vector<std::int32_t>& kept_columns);

// Optimal alignment of two profiles; returns its score and the path. Memory: a traceback
// byte per cell when (n + 1) * (m + 1) <= full_limit cells, else checkpointed rows
// (O((n / k + k) * m), k ~ sqrt(n)) with a second pass over the cells. With a band, only
// cells (i, j) with band_lo[i] <= j <= band_hi[i] are computed (arrays of n + 1 entries,
// non-decreasing, band_lo[0] = 0 and band_hi[n] = m): the optimum within the band.
// threads > 1: a large unbanded DP runs as a wavefront of rows over that many threads
// (std::thread; the same cells, so the same result). sc_b, when given, prices the gaps
// inserted into B instead of sc (adding fragments: B's end gaps free).
double align_profiles(const Profile& a, const Profile& b, const MsaScoring& sc, Path& path,
                      std::int64_t full_limit = std::int64_t(1) << 26, const int* band_lo = nullptr,
                      const int* band_hi = nullptr, int threads = 1, const MsaScoring* sc_b = nullptr);

// The arrays align_profiles' DP reads, as it computes them (for the GPU stage, which must
// reproduce its arithmetic): sa (n x K: A's columns times the matrix), B's frequencies
// transposed (K x m) and the letters present in B (`used`), or, when B is one gap-free
// sequence, fbt and used empty and B's letters in single_b; each side's occ and gap terms:
// the cost of the first (start) and of a later (cont) gap column inserted at each boundary
// (len + 1), the penalty of each column's own gaps facing a residue (own) and the credit
// when a run inserted just before a column makes its opening gaps extensions (len).
struct DpGapTerms {
    std::vector<float> start, cont, own, credit;
};
struct DpInputs {
    int n = 0, m = 0, letters = 0;
    std::vector<float> sa, fbt;
    std::vector<std::uint8_t> used;
    std::vector<std::int16_t> single_b;
    std::vector<float> occ_a, occ_b;
    DpGapTerms gaps_a, gaps_b;
};
DpInputs dp_inputs(const Profile& a, const Profile& b, const MsaScoring& sc);

// The score align_profiles gives to `path` (equal to its optimum for the optimal path).
double path_score(const Profile& a, const Profile& b, const MsaScoring& sc, const Path& path);

// A path that uses every column of `a` and of `b` once, in ops 0/1/2 (else invalid_argument).
void check_path(const Profile& a, const Profile& b, const Path& path);

// The profile of the merged alignment (the path checked first).
Profile merge_profiles(const Profile& a, const Profile& b, const Path& path);

// The progressive stage one merge at a time, for a caller that schedules the merges (the
// engine's own thread pool below, or the GPU stage: all ready merges of a level in one
// batch). Merge k may run once both its children are done; merges of different k may run
// concurrently. The arrays behind `seqs`, `merges` and `weights` must outlive it.
class ProgressiveRun {
public:
    ProgressiveRun(const SeqView& seqs, const MsaScoring& sc, const std::int64_t* merges,
                   std::int64_t n_merges, const double* weights);
    std::int64_t n_merges() const { return n_merges_; }
    // the children of merge k (node ids: tips 0..n-1, merge j is node n + j)
    std::int64_t left(std::int64_t k) const { return merges_[2 * k]; }
    std::int64_t right(std::int64_t k) const { return merges_[2 * k + 1]; }
    // the profiles merge k joins (a tip's built on first use); throws std::logic_error
    // when a child is not done
    std::pair<const Profile*, const Profile*> operands(std::int64_t k);
    // merge k along `path` (the DP of its operands); frees the children's profiles
    void merge(std::int64_t k, const Path& path);
    bool done(std::int64_t node) const { return done_[node] != 0; }
    // the node a node is merged into (-1 for the root)
    std::int64_t parent(std::int64_t node) const { return parent_[node]; }
    // every residue's column (in the order of seqs.codes); all merges must be done
    std::int64_t finish(std::int32_t* column_of);

private:
    SeqView seqs_;
    const MsaScoring& sc_;
    const std::int64_t* merges_;
    std::int64_t n_merges_, n_;
    const double* weights_;
    std::vector<Profile> profile_;
    std::vector<std::vector<std::int32_t>> to_parent_;  // node column -> parent column
    std::vector<char> done_;
    std::vector<std::int64_t> parent_;
};

// Progressive alignment of `seqs` up a guide tree given as merges: merge k joins nodes
// merges[2k] and merges[2k+1] into node n + k (tips are 0..n-1; children come before
// parents). Independent merges run in parallel; the result does not depend on `threads`.
// Writes each residue's column (in the order of seqs.codes) and returns the column count.
std::int64_t progressive_align(const SeqView& seqs, const MsaScoring& sc, const std::int64_t* merges,
                               std::int64_t n_merges, const double* weights, int threads,
                               std::int32_t* column_of, void (*progress)(void*, std::int64_t) = nullptr,
                               void* progress_ctx = nullptr);

// The sum-of-pairs score of the pairs (a, b), a in rows_a and b in rows_b, of the alignment
// `col` (each residue's column, `width` columns), as FAMSA's total score counts them: the
// substitution score of every column where both have a residue, and for each pair its own
// gap runs (columns where both have a gap do not exist for the pair): the first residue a
// run faces costs an opening, the others an extension, terminal runs (before a row's first
// residue or after its last) at the terminal rates. O(gap cells log n + width K^2).
double cross_sum_of_pairs(const SeqView& seqs, const MsaScoring& sc, const std::vector<std::int64_t>& rows_a,
                          const std::vector<std::int64_t>& rows_b, const std::int32_t* col,
                          std::int64_t width);

// Refinement by gap-pattern splits (as FAMSA): each iteration picks, with a seeded
// generator, one not yet tried split of the rows made by a column's gaps (rows with a gap
// there against the rest; a column drawn uniformly among those of untried splits), realigns
// the two sub-alignments (all-gap columns dropped) as profiles within `radius` columns of
// their current placement (0: unbanded), and keeps the result when the exact sum-of-pairs
// score of the pairs across the split (each pair with its own gap runs; the pairs within a
// side do not change) beats the current one by a relative 1e-9. The score counts every row
// with weight 1 (`weights` shape the profiles only). With several threads, that many splits
// are realigned at once and taken in draw order up to the first accepted one (the later
// draws undone), so the result does not depend on `threads`. Updates column_of and returns
// the new column count.
std::int64_t refine_gap_splits(const SeqView& seqs, const MsaScoring& sc, const double* weights,
                               int iterations, std::uint64_t seed, int radius, std::int32_t* column_of,
                               std::int64_t n_columns, std::int64_t* accepted, int threads = 1);

// Guide-tree distance of two sequences from their longest common subsequence (FAMSA 2.4):
// (la + lb - 2 lcs)^0.75 / lcs, or FLT_MAX when they share no letter.
double lcs_distance(std::int64_t la, std::int64_t lb, std::int64_t lcs);

// LCS distances (bit-parallel, 64 cells per word, eight pairs per vector; only codes below
// `letters` can match): condensed = true: all pairs of rows_a (n_a * (n_a - 1) / 2 values,
// row-major upper triangle); else rows_a x rows_b (row-major). OpenMP over groups of rows.
void lcs_distances(const SeqView& seqs, int letters, const std::int64_t* rows_a, std::int64_t na,
                   const std::int64_t* rows_b, std::int64_t nb, bool condensed, float* out, int threads);

struct LcsQueryGroup;
struct LcsScratch;

// LCS distances of up to eight query sequences (one per 64-bit lane) to one target at a
// time. Not thread-safe: one per thread.
class LcsRowKernel {
public:
    static constexpr int kLanes = 8;
    LcsRowKernel();
    ~LcsRowKernel();
    LcsRowKernel(const LcsRowKernel&) = delete;
    LcsRowKernel& operator=(const LcsRowKernel&) = delete;
    // The queries (1 to 8 sequence indices); `seqs` must outlive the kernel's use.
    void set_queries(const SeqView& seqs, const std::int64_t* rows, int count, int letters);
    // lcs[l] = LCS length of query l and the target, for each query l of the group.
    void lengths_to(std::int64_t target, std::int64_t* lcs);
    // out[l] = lcs_distance(query l, target), for each query l of the group.
    void distances_to(std::int64_t target, float* out);

private:
    const SeqView* seqs_ = nullptr;
    std::int64_t rows_[kLanes] = {};
    std::unique_ptr<LcsScratch> scratch_;
    std::unique_ptr<LcsQueryGroup> group_;
};

// LCS lengths of rows_a x rows_b (row-major int32), for backends that return lengths (the
// GPU distance stage) and the CPU engine's side of their comparison.
void lcs_lengths(const SeqView& seqs, int letters, const std::int64_t* rows_a, std::int64_t na,
                 const std::int64_t* rows_b, std::int64_t nb, std::int32_t* out, int threads);

// Sibson's SLINK (1973), fed one row of distances at a time: after point i is added,
// pi[j] / lambda[j] (j <= i) say that j joins the cluster of pi[j] > j at height lambda[j].
// O(n) memory; the points must come in order 0, 1, ..., n - 1.
class Slink {
public:
    explicit Slink(std::int64_t n);
    std::int64_t size() const { return static_cast<std::int64_t>(pi_.size()); }
    std::int64_t added() const { return added_; }
    // Point added() with d[j] its distance to point j < added().
    void add(const float* d);
    // Once all n points are in: the merges in height order (ties: the lower point first)
    // as for progressive_align, and their heights.
    void merges(std::int64_t* merges, double* heights) const;

private:
    std::vector<std::int64_t> pi_;
    std::vector<float> lambda_, m_;
    std::int64_t added_ = 0;
};

// Single linkage (SLINK's pointer representation, O(n) memory) of a condensed distance
// matrix: merges as for progressive_align (ties: the lower tip index first), and the merge
// heights.
void single_linkage(const float* condensed, std::int64_t n, std::int64_t* merges, double* heights);

// Single linkage over the LCS distances of rows[0..n) (tip t is sequence rows[t]), computed
// a block of rows at a time on all threads and never stored whole: O(n) memory beyond a
// block. The same merges as single_linkage of lcs_distances' condensed matrix.
void single_linkage_lcs(const SeqView& seqs, int letters, const std::int64_t* rows, std::int64_t n,
                        int threads, std::int64_t* merges, double* heights);

}  // namespace msa
}  // namespace bioaccel
