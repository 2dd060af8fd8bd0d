// Adding sequences to an existing alignment (csrc/msa/add.cpp). No pybind11 here.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "bioaccel/msa.hpp"

namespace bioaccel {
namespace msa {

// Exact k-mer anchors between a fixed letter string (a profile's consensus) and sequences:
// 12-mers for alphabets of at most 16 letters (nucleotides), else 5-mers; k-mers that occur
// more than once in the fixed string are not anchors.
class AnchorIndex {
public:
    AnchorIndex(const std::vector<std::int16_t>& letters, int n_letters);
    int k() const { return k_; }
    // (fixed position, sequence position) of the k-mers s shares with the fixed string, the
    // longest chain increasing in both
    std::vector<std::pair<std::int64_t, std::int64_t>> chain(const std::int16_t* s, std::int64_t len) const;

private:
    int k_ = 12, bits_ = 4;
    std::unordered_map<std::uint64_t, std::int64_t> index_;
};

// A DP band (lo[r] <= j <= hi[r], r = 0..n, both non-decreasing, lo[0] = 0, hi[n] = m, each
// row reachable from the one above) around a chain of k-long anchors: the line through them
// (from (0, 0) to (n, m), or with free_ends along the end anchors' diagonals), widened by
// `radius` plus the difference of the two sides' lengths between consecutive anchors (the
// indels the band must hold). False (lo, hi untouched) without anchors.
bool anchor_band(const std::vector<std::pair<std::int64_t, std::int64_t>>& anchors, int k, int n, int m,
                 int radius, bool free_ends, std::vector<int>& lo, std::vector<int>& hi);

// anchor_band for profiles a (rows) and b (columns): anchors between their consensus
// letters (b's own letters when it is one sequence); false, with no band, when the chain
// covers less than a tenth of the shorter one.
bool profile_band(const Profile& a, const Profile& b, int radius, bool free_ends, std::vector<int>& lo,
                  std::vector<int>& hi);

// The progressive stage aligns profile pairs of at least this many cells (where the DP needs
// checkpointed rows: about 8 kb x 8 kb) in an anchor band of this radius, when one is found.
constexpr std::int64_t kProgressiveBandCells = std::int64_t(1) << 26;
// Nucleotide profiles (fewer than 20 letters) from this many cells (about 1 kb x 1 kb): real
// gene sets (influenza HA/NA) are long and close, and their anchors cover nearly all of them.
constexpr std::int64_t kProgressiveBandCellsNucleotide = std::int64_t(1) << 20;
constexpr int kProgressiveBandRadius = 100;

// The path of a progressive merge of a and b: banded (profile_band) past
// kProgressiveBandCells when a band is found, else false (the caller runs the full DP).
bool banded_merge_path(const Profile& a, const Profile& b, const MsaScoring& sc, Path& path);

struct AddOptions {
    bool fragments = false;  // free end gaps in the new sequences (semiglobal placement)
    int band_radius = 100;   // 0: never banded
    std::int64_t band_from_cells = std::int64_t(1) << 24;  // DPs this large get a band
};

struct AddResult {
    std::vector<std::int32_t> kept_columns;  // profile column -> column of the alignment
    std::vector<Path> paths;                 // per new sequence: A = the existing rows' profile, B = it
    std::vector<double> scores;
    std::vector<char> banded;  // whether its DP ran in an anchor band
};

// Each sequence of `added` aligned to the profile of all rows of `existing` (each residue's
// column in `cols`; columns no row occupies are left out of the profile, see kept_columns),
// independently, on `threads` threads: the result does not depend on them. An empty new
// sequence gets an empty path.
AddResult align_to_alignment(const SeqView& existing, const std::int32_t* cols, const double* weights,
                             const SeqView& added, const MsaScoring& sc, const AddOptions& opt, int threads);

}  // namespace msa
}  // namespace bioaccel
