// Profiles: from one sequence, from rows of an alignment, and merged along a path.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "bioaccel/msa.hpp"
#include "gap_kinds.hpp"

namespace bioaccel {
namespace msa {

namespace {

void resize_profile(Profile& p, int len, int letters) {
    p.len = len;
    p.letters = letters;
    p.freq.assign(static_cast<std::size_t>(len) * letters, 0.0f);
    p.occ.assign(len, 0.0f);
    p.gopen.assign(len, 0.0f);
    p.gext.assign(len, 0.0f);
    p.gtopen.assign(len, 0.0f);
    p.gtext.assign(len, 0.0f);
    p.single.clear();
}

}  // namespace

Profile sequence_profile(const std::uint8_t* codes, std::int64_t len, const MsaScoring& sc, double weight) {
    Profile p;
    resize_profile(p, static_cast<int>(len), sc.letters);
    p.weight = weight;
    p.rows = 1;
    p.single.resize(len);
    for (std::int64_t c = 0; c < len; ++c) {
        const int x = sc.letter_of[codes[c]];
        if (x < 0)
            throw std::invalid_argument("sequence_profile: gap or unscored code " + std::to_string(codes[c]) +
                                        " at position " + std::to_string(c + 1));
        p.freq[static_cast<std::size_t>(c) * sc.letters + x] = 1.0f;
        p.occ[c] = 1.0f;
        p.single[c] = static_cast<std::int16_t>(x);
    }
    return p;
}

Profile rows_profile(const SeqView& seqs, const std::int32_t* cols, const std::int64_t* rows,
                     std::int64_t n_rows, const double* weights, const MsaScoring& sc,
                     std::vector<std::int32_t>& kept_columns) {
    // columns used by these rows, in order (marked in a map over the columns)
    kept_columns.clear();
    std::int32_t top = -1;
    for (std::int64_t r = 0; r < n_rows; ++r)
        for (std::int64_t k = seqs.offsets[rows[r]]; k < seqs.offsets[rows[r] + 1]; ++k)
            top = std::max(top, cols[k]);
    std::vector<int> compact(static_cast<std::size_t>(top + 1), -1);
    for (std::int64_t r = 0; r < n_rows; ++r)
        for (std::int64_t k = seqs.offsets[rows[r]]; k < seqs.offsets[rows[r] + 1]; ++k) compact[cols[k]] = 0;
    for (std::int32_t c = 0; c <= top; ++c)
        if (compact[c] == 0) {
            compact[c] = static_cast<int>(kept_columns.size());
            kept_columns.push_back(c);
        }
    const int len = static_cast<int>(kept_columns.size());
    Profile p;
    resize_profile(p, len, sc.letters);
    double total = 0;
    for (std::int64_t r = 0; r < n_rows; ++r) total += weights[rows[r]];
    p.weight = total;
    p.rows = n_rows;
    if (len == 0 || total <= 0) return p;
    std::vector<double> freq(static_cast<std::size_t>(len) * sc.letters, 0.0), occ(len, 0.0);
    // gap kinds as difference arrays: a run [c0, c1) adds w at c0 to its opening kind and w
    // over (c0, c1) to its extending kind
    std::vector<double> gopen(len, 0.0), gtopen(len, 0.0), ext_diff(len + 1, 0.0), text_diff(len + 1, 0.0);
    auto run = [&](int c0, int c1, double w, bool terminal) {
        if (c0 >= c1) return;
        (terminal ? gtopen : gopen)[c0] += w;
        std::vector<double>& d = terminal ? text_diff : ext_diff;
        d[c0 + 1] += w;
        d[c1] -= w;
    };
    for (std::int64_t r = 0; r < n_rows; ++r) {
        const std::int64_t s = rows[r];
        const double w = weights[s] / total;
        const std::int64_t k0 = seqs.offsets[s], k1 = seqs.offsets[s + 1];
        int prev = -1;
        for (std::int64_t k = k0; k < k1; ++k) {
            const int c = compact[cols[k]];
            const int x = sc.letter_of[seqs.codes[k]];
            if (x < 0)
                throw std::invalid_argument("rows_profile: gap or unscored code in row " + std::to_string(s));
            freq[static_cast<std::size_t>(c) * sc.letters + x] += w;
            occ[c] += w;
            run(prev + 1, c, w, prev < 0);  // leading run when no residue came before
            prev = c;
        }
        run(prev + 1, len, w, true);
    }
    double ext = 0, text = 0;
    for (int c = 0; c < len; ++c) {
        ext += ext_diff[c];
        text += text_diff[c];
        p.occ[c] = static_cast<float>(occ[c]);
        p.gopen[c] = static_cast<float>(gopen[c]);
        p.gtopen[c] = static_cast<float>(gtopen[c]);
        p.gext[c] = static_cast<float>(ext);
        p.gtext[c] = static_cast<float>(text);
        for (int x = 0; x < sc.letters; ++x)
            p.freq[static_cast<std::size_t>(c) * sc.letters + x] =
                static_cast<float>(freq[static_cast<std::size_t>(c) * sc.letters + x]);
    }
    return p;
}

void check_path(const Profile& a, const Profile& b, const Path& path) {
    std::int64_t ia = 0, ib = 0;
    for (std::uint8_t op : path) {
        if (op > GapInA) throw std::invalid_argument("path ops must be 0, 1 or 2, got " + std::to_string(op));
        ia += op != GapInA;
        ib += op != GapInB;
    }
    if (ia != a.len || ib != b.len)
        throw std::invalid_argument("the path covers " + std::to_string(ia) + " x " + std::to_string(ib) +
                                    " columns, not its two profiles' " + std::to_string(a.len) + " x " +
                                    std::to_string(b.len));
}

Profile merge_profiles(const Profile& a, const Profile& b, const Path& path) {
    const int K = a.letters;
    if (b.letters != K) throw std::invalid_argument("merge_profiles: profiles of different alphabets");
    check_path(a, b, path);
    Profile p;
    resize_profile(p, static_cast<int>(path.size()), K);
    p.weight = a.weight + b.weight;
    p.rows = a.rows + b.rows;
    const double total = a.weight + b.weight;
    const float wa = total > 0 ? static_cast<float>(a.weight / total) : 0.5f;
    const float wb = total > 0 ? static_cast<float>(b.weight / total) : 0.5f;
    int i = 0, j = 0;
    std::uint8_t prev = 255;
    // one side's contribution to merged column c: its own column, or an inserted gap column
    auto side = [&](const Profile& q, float w, int col, bool own, bool after_insert, bool first_inserted,
                    float* f, std::size_t c) {
        if (own) {
            const float* fq = q.freq.data() + static_cast<std::size_t>(col) * K;
            for (int x = 0; x < K; ++x) f[x] += w * fq[x];
            p.occ[c] += w * q.occ[col];
            if (after_insert) {  // runs that opened at col now continue an inserted run
                p.gext[c] += w * (q.gopen[col] + q.gext[col]);
                p.gtext[c] += w * (q.gtopen[col] + q.gtext[col]);
            } else {
                p.gopen[c] += w * q.gopen[col];
                p.gext[c] += w * q.gext[col];
                p.gtopen[c] += w * q.gtopen[col];
                p.gtext[c] += w * q.gtext[col];
            }
        } else {
            const GapKinds g = first_inserted ? gaps_starting(q, col) : gaps_continuing(q, col);
            p.gopen[c] += w * g.open;
            p.gext[c] += w * g.ext;
            p.gtopen[c] += w * g.topen;
            p.gtext[c] += w * g.text;
        }
    };
    for (std::size_t c = 0; c < path.size(); ++c) {
        const std::uint8_t op = path[c];
        float* f = p.freq.data() + c * K;
        side(a, wa, i, op != GapInA, prev == GapInA, prev != GapInA, f, c);
        side(b, wb, j, op != GapInB, prev == GapInB, prev != GapInB, f, c);
        if (op != GapInA) ++i;
        if (op != GapInB) ++j;
        prev = op;
    }
    if (i != a.len || j != b.len)
        throw std::logic_error("merge_profiles: the path does not cover both profiles");
    return p;
}

}  // namespace msa
}  // namespace bioaccel
