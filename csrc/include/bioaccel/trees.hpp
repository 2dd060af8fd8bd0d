// Distance-based tree building: neighbour joining and UPGMA.
//
// Both take a dense, symmetric n x n float64 matrix (row-major) and return the tree
// as an edge list over node ids: tips are 0..n-1 (the matrix order), internal nodes
// are numbered from n upwards in the order they are created.
#pragma once

#include <cstdint>
#include <vector>

namespace bioaccel {

struct EdgeList {
    std::vector<std::int64_t> parent;
    std::vector<std::int64_t> child;
    std::vector<double> length;
    std::int64_t root = -1;
};

// Saitou & Nei (1987) neighbour joining with the pair criterion and branch-length
// formulas of ape::nj. Unrooted result: the last three clusters hang off `root`.
// The Q-matrix minimum is found RapidNJ-style (Simonsen et al. 2008): each row keeps
// its distances sorted, and a row scan stops as soon as a lower bound exceeds the best
// value found, so the result is exactly canonical NJ at far less than O(n^3) work.
// Ties: Q values within 1e-9 x (largest |row sum|) of the minimum are ties, won by the
// pair with the smallest (lower node id, higher node id); the rule of every NJ backend
// (see bioaccel.trees._tree.nj), the same for any thread count. Requires n >= 3, finite entries.
EdgeList neighbor_joining(const double* d, std::int64_t n, int threads);

// The same tree, with d itself as the working matrix (no n x n copy): d is overwritten.
EdgeList neighbor_joining_in_place(double* d, std::int64_t n, int threads);

// Low-memory NJ (the same search, tie rule and joins): d is the condensed upper triangle in
// float32 (d(i, j), i < j, row by row: SciPy's and R's dist order), n (n - 1) / 2 values,
// used as the working matrix and overwritten. Joined distances are stored rounded to float32
// (row sums and Q stay double), so Q values closer than that rounding may resolve
// differently from the float64 functions above. Memory: the triangle, 8 x 48 bytes of
// sorted candidates per row and O(n) doubles.
EdgeList neighbor_joining_condensed(float* d, std::int64_t n, int threads);

// UPGMA (average linkage) by the nearest-neighbour-chain algorithm, O(n^2) time.
// Rooted, ultrametric: a merge at distance h puts its node at height h / 2.
EdgeList upgma(const double* d, std::int64_t n);

}  // namespace bioaccel
