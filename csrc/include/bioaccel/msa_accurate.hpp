// The accurate (consistency-based) MSA mode: pair-HMM posteriors, the consistency
// transformation, progressive alignment maximising summed posteriors, and refinement that
// keeps that objective. No pybind11 here (csrc/bindings/msa_accurate.cpp wraps it).
//
// The pair-HMM has five states, as ProbCons's (Do et al. 2005): Match (emits x_i and y_j),
// two insert states in x (a short and a long gap kind, each emitting x_i against a gap) and
// the two mirrored states in y. Emissions are odds against the background (a match emits
// odds[x_i][y_j], an insert emits 1): the background product is one factor for a pair and
// leaves every posterior unchanged. Begin and end use the same distribution `start`
// (the model then reads the same forwards and backwards).
//   M -> M   1 - 2 open[0] - 2 open[1]     M -> I*k  open[k]
//   I*k -> I*k  extend[k]                  I*k -> M  1 - extend[k]   (no I -> I of another kind)
// Forward and backward run in probability space with a scale per row of x (the forward row
// sums; the backward reuses them, as Rabiner's scaling): double precision, no logs in the
// inner loop. Posterior P(i ~ j) = F_M(i, j) B_M(i, j) / P(x, y).
#pragma once

#include <cstdint>
#include <vector>

#include "bioaccel/align.hpp"  // SeqView

namespace bioaccel {
namespace msa {

struct PairHmm {
    int letters = 0;                                  // K letters; a letter >= K (unknown) emits odds 1
    std::vector<double> odds;                         // K x K match odds (symmetric)
    double start[5] = {0.6, 0.02, 0.02, 0.18, 0.18};  // M, Ix short, Iy short, Ix long, Iy long
    double open[2] = {0.012, 0.008};
    double extend[2] = {0.4, 0.9};
};

// Posterior match probabilities of a pair (rows: x's residues, columns: y's), entries
// >= cutoff, rows in order, columns increasing within a row.
struct SparsePost {
    std::int32_t rows = 0, cols = 0;
    std::vector<std::uint32_t> row_start;  // rows + 1
    std::vector<std::int32_t> col;
    std::vector<float> p;
    std::size_t bytes() const { return row_start.capacity() * 4 + col.capacity() * 4 + p.capacity() * 4; }
};

// Dense posteriors of one pair (x: lx letters, y: ly letters) into post (lx x ly, row-major);
// returns log P(x, y) (odds scale). Letters are score-letter indices (>= letters: unknown).
double pair_posteriors_dense(const std::int16_t* x, std::int64_t lx, const std::int16_t* y, std::int64_t ly,
                             const PairHmm& hmm, double* post, std::vector<double>& work);

// A dense lx x ly matrix kept >= cutoff.
SparsePost sparsify(const double* post, std::int64_t lx, std::int64_t ly, float cutoff);
SparsePost sparsify(const float* post, std::int64_t lx, std::int64_t ly, float cutoff);

// Expected accuracy of the best alignment of a pair under its posteriors: the maximal sum of
// posteriors over an alignment (no gap costs) divided by min(lx, ly).
double expected_accuracy(const SparsePost& p);

// Letter sequences: codes mapped through letter_of (-1 or >= letters: unknown = letters).
struct LetterSeqs {
    std::vector<std::int16_t> letters;
    std::vector<std::int64_t> offsets;
    std::int64_t count() const { return std::int64_t(offsets.size()) - 1; }
    const std::int16_t* seq(std::int64_t i) const { return letters.data() + offsets[i]; }
    std::int64_t len(std::int64_t i) const { return offsets[i + 1] - offsets[i]; }
};
LetterSeqs letter_seqs(const SeqView& v, const std::int16_t* letter_of, int letters);

// Index of pair (x, y), x < y, among n sequences.
inline std::int64_t pair_index(std::int64_t x, std::int64_t y, std::int64_t n) {
    return x * n - x * (x + 1) / 2 + (y - x - 1);
}

// Posteriors of every pair x < y (OpenMP over pairs; each pair's result depends only on the
// pair) and their expected accuracies (condensed, pair_index order).
std::vector<SparsePost> all_pair_posteriors(const LetterSeqs& s, const PairHmm& hmm, float cutoff,
                                            int threads, std::vector<double>& accuracy);

// One round of the consistency transformation: P'xy = (2 Pxy + sum_{z != x, y} Pxz Pzy) / n
// (ProbCons's 1/|S| sum_z Pxz Pzy with Pxx the identity), kept >= cutoff.
std::vector<SparsePost> consistency_round(const std::vector<SparsePost>& post, std::int64_t n, float cutoff,
                                          int threads);

// UPGMA merges (n - 1 rows of two node ids; tips 0..n-1, merge k makes node n + k) of a
// condensed distance matrix; ties go to the lowest (i, j).
std::vector<std::int64_t> upgma_merges(const std::vector<double>& condensed, std::int64_t n);

// Progressive alignment along merges maximising summed posteriors (no gap costs), then
// `iterations` refinement rounds (random bipartitions from seed; a realignment is kept when
// it raises the summed posteriors of the pairs across it). Returns each residue's column
// (offsets of s) and sets width.
std::vector<std::int32_t> consistency_align(const LetterSeqs& s, const std::vector<SparsePost>& post,
                                            const std::int64_t* merges, int iterations, std::uint64_t seed,
                                            int threads, std::int64_t& width, std::int64_t& accepted);

// Sum of posteriors of every aligned residue pair (the objective) of an alignment given by
// each residue's column.
double alignment_objective(const LetterSeqs& s, const std::vector<SparsePost>& post,
                           const std::int32_t* cols);

}  // namespace msa
}  // namespace bioaccel
