// The kinds of gap character the rows of a profile get in a gap column inserted at one of
// its boundaries (shared by the DP's gap costs and by merge_profiles). See msa.hpp.
#pragma once

#include <algorithm>

#include "bioaccel/msa.hpp"

namespace bioaccel {
namespace msa {

struct GapKinds {
    float open = 0, ext = 0, topen = 0, text = 0;
};

// The first inserted column at boundary k (0..len): rows in an internal run at k - 1 extend
// it, rows in a terminal run at k - 1 extend that, rows whose trailing run starts at k start
// it here (terminal open), the rest (a residue at k - 1) open an internal run.
inline GapKinds gaps_starting(const Profile& p, int k) {
    GapKinds g;
    if (k == 0) {
        g.topen = 1.0f;
        return g;
    }
    g.ext = p.gopen[k - 1] + p.gext[k - 1];
    g.text = p.gtopen[k - 1] + p.gtext[k - 1];
    if (k == p.len) {
        g.topen = std::max(0.0f, 1.0f - g.ext - g.text);
        g.text += g.ext;  // a gap at the last column is a trailing run
        g.ext = 0.0f;
        return g;
    }
    g.topen = p.gtopen[k];
    g.open = std::max(0.0f, 1.0f - g.ext - g.text - g.topen);
    return g;
}

// Later inserted columns at boundary k: rows in a terminal run extend it, the rest extend
// an internal run.
inline GapKinds gaps_continuing(const Profile& p, int k) {
    GapKinds g;
    if (k == 0 || k == p.len) {
        g.text = 1.0f;
        return g;
    }
    g.text = std::min(1.0f, p.gtopen[k] + p.gtopen[k - 1] + p.gtext[k - 1]);
    g.ext = 1.0f - g.text;
    return g;
}

inline float gap_cost(const GapKinds& g, const MsaScoring& sc) {
    return g.open * sc.gap_open + g.ext * sc.gap_extend + g.topen * sc.term_open + g.text * sc.term_extend;
}

}  // namespace msa
}  // namespace bioaccel
