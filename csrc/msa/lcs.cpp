// Guide-tree distances: bit-parallel LCS (Allison-Dix / Hyyro's recurrence
// V' = (V + (V & M)) | (V & ~M), the LCS being the number of zero bits of V at the end),
// eight query sequences at once, one per 64-bit lane. The eight queries' match masks are
// interleaved (letter, word, lane), so one target residue selects one contiguous vector per
// word for all lanes: no gathers. All lanes walk the same target, so they finish together.
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "bioaccel/stop.hpp"
#include "bioaccel/common.hpp"
#include "bioaccel/cpu.hpp"
#include "bioaccel/msa.hpp"

namespace bioaccel {
namespace msa {

namespace lcs_detail {

using Word = std::uint64_t;
typedef Word V8 __attribute__((vector_size(64)));
constexpr int kLanes = LcsRowKernel::kLanes;
// Vector types lose their attributes as template arguments: wrap them for std::vector.
struct alignas(64) Lane8 {
    V8 v;
};

}  // namespace lcs_detail

using namespace lcs_detail;

// Eight queries' match masks, interleaved: mask[(letter * words + w)] lane l has bit i set
// where query l's residue 64 w + i is `letter` (letter < letters: other codes never match).
// Lanes past the end of a short group stay all zero.
struct LcsQueryGroup {
    int letters = 0;
    std::int64_t words = 0;
    int lanes = 0;
    std::vector<Lane8> mask;

    void build(const SeqView& seqs, const std::int64_t* rows, int count, int n_letters) {
        letters = n_letters;
        lanes = count;
        std::int64_t longest = 0;
        for (int l = 0; l < count; ++l) longest = std::max(longest, seqs.length(rows[l]));
        words = std::max<std::int64_t>((longest + 63) / 64, 1);
        mask.assign(static_cast<std::size_t>(letters * words), Lane8{});
        for (int l = 0; l < count; ++l) {
            const std::uint8_t* s = seqs.seq(rows[l]);
            const std::int64_t len = seqs.length(rows[l]);
            for (std::int64_t k = 0; k < len; ++k)
                if (s[k] < letters)
                    mask[static_cast<std::size_t>(s[k] * words + k / 64)].v[l] |= Word(1) << (k % 64);
        }
    }
};

namespace {

// The eight lanes as `Parts` vectors of type V (one 512-bit, two 256-bit or four 128-bit
// vectors): GCC splits a wider vector than the target has clumsily, so each build names its
// own width.
typedef Word V2 __attribute__((vector_size(16), may_alias));
typedef Word V4 __attribute__((vector_size(32), may_alias));
typedef Word V8a __attribute__((vector_size(64), may_alias));

// LCS lengths of the group's queries against target b, into lcs[0..7]. Bits of V past a
// query's end never see a match, stay 1 and count for nothing. (References only: vector
// values passed by value would change the ABI between the builds.)
template <typename V, int Parts>
__attribute__((always_inline)) inline void lcs8_body(const LcsQueryGroup& g, const std::uint8_t* b,
                                                     std::int64_t lb, Lane8* state, std::int64_t* lcs) {
    const std::int64_t W = g.words;
    const std::uint8_t none = static_cast<std::uint8_t>(g.letters);
    V* v = reinterpret_cast<V*>(state);
    const V* mask = reinterpret_cast<const V*>(g.mask.data());
    V ones = V{} - 1;
    for (std::int64_t w = 0; w < W * Parts; ++w) v[w] = ones;
    for (std::int64_t k = 0; k < lb; ++k) {
        const std::uint8_t c = b[k];
        if (c >= none) continue;  // a letter that never matches leaves V as it is
        const V* m = mask + static_cast<std::size_t>(c) * W * Parts;
        V carry[Parts] = {};  // 0 or 1 per lane
        for (std::int64_t w = 0; w < W; ++w) {
            for (int p = 0; p < Parts; ++p) {
                const V x = v[w * Parts + p];
                const V u = x & m[w * Parts + p];
                const V s = x + u + carry[p];
                // carry out of x + u + carry: the top bit of maj(x, u, carry in), which with
                // u a subset of x is u | (x & ~s) (no unsigned vector compares: GCC
                // scalarises them)
                carry[p] = (u | (x & ~s)) >> 63;
                v[w * Parts + p] = s | (x - u);  // x - u == x & ~m
            }
        }
    }
    for (int l = 0; l < kLanes; ++l) {
        std::int64_t ones_count = 0;
        for (std::int64_t w = 0; w < W; ++w) ones_count += __builtin_popcountll(state[w].v[l]);
        lcs[l] = W * 64 - ones_count;
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx512f,avx512bw,avx512vl,avx2,popcnt"))) void lcs8_avx512(const LcsQueryGroup& g,
                                                                                  const std::uint8_t* b,
                                                                                  std::int64_t lb, Lane8* v,
                                                                                  std::int64_t* lcs) {
    lcs8_body<V8a, 1>(g, b, lb, v, lcs);
}
__attribute__((target("avx2,popcnt"))) void lcs8_avx2(const LcsQueryGroup& g, const std::uint8_t* b,
                                                      std::int64_t lb, Lane8* v, std::int64_t* lcs) {
    lcs8_body<V4, 2>(g, b, lb, v, lcs);
}
#endif

void lcs8_base(const LcsQueryGroup& g, const std::uint8_t* b, std::int64_t lb, Lane8* v, std::int64_t* lcs) {
    lcs8_body<V2, 4>(g, b, lb, v, lcs);
}

using Lcs8Fn = void (*)(const LcsQueryGroup&, const std::uint8_t*, std::int64_t, Lane8*, std::int64_t*);

Lcs8Fn pick_lcs8() {
#if defined(__x86_64__) && defined(__GNUC__)
    switch (active_isa()) {
        case Isa::Avx512:
            return lcs8_avx512;
        case Isa::Avx2:
            return lcs8_avx2;
        default:
            break;
    }
#endif
    return lcs8_base;
}

}  // namespace

// The DP state of one group's walk, reused from target to target.
struct LcsScratch {
    std::vector<Lane8> v;
};

LcsRowKernel::LcsRowKernel() : scratch_(new LcsScratch), group_(new LcsQueryGroup) {}
LcsRowKernel::~LcsRowKernel() = default;

void LcsRowKernel::set_queries(const SeqView& seqs, const std::int64_t* rows, int count, int letters) {
    if (count < 1 || count > kLanes) throw std::invalid_argument("an LCS query group holds 1 to 8 rows");
    seqs_ = &seqs;
    for (int l = 0; l < count; ++l) rows_[l] = rows[l];
    group_->build(seqs, rows, count, letters);
    if (scratch_->v.size() < static_cast<std::size_t>(group_->words))
        scratch_->v.resize(static_cast<std::size_t>(group_->words));
}

void LcsRowKernel::lengths_to(std::int64_t target, std::int64_t* lcs) {
    static const Lcs8Fn lcs8 = pick_lcs8();
    lcs8(*group_, seqs_->seq(target), seqs_->length(target), scratch_->v.data(), lcs);
}

void LcsRowKernel::distances_to(std::int64_t target, float* out) {
    std::int64_t lcs[kLanes];
    lengths_to(target, lcs);
    const std::int64_t lb = seqs_->length(target);
    for (int l = 0; l < group_->lanes; ++l)
        out[l] = static_cast<float>(lcs_distance(seqs_->length(rows_[l]), lb, lcs[l]));
}

double lcs_distance(std::int64_t la, std::int64_t lb, std::int64_t lcs) {
    if (lcs == 0) return std::numeric_limits<float>::max();
    return std::pow(static_cast<double>(la + lb - 2 * lcs), 0.75) / static_cast<double>(lcs);
}

namespace {

// visit(kernel, i0, count) for each group of up to eight rows_a[i0..i0 + count) on all
// threads, the kernel holding the group's queries.
template <typename Visit>
void over_query_groups(const SeqView& seqs, int letters, const std::int64_t* rows_a, std::int64_t na,
                       int threads, Visit visit) {
    if (letters < 1 || letters > 255) throw std::invalid_argument("letters must be in [1, 255]");
    const int workers = resolve_threads(threads);
    (void)workers;  // unused when built without OpenMP
    const std::int64_t groups = (na + kLanes - 1) / kLanes;
#pragma omp parallel num_threads(workers)
    {
        LcsRowKernel kernel;
#pragma omp for schedule(dynamic, 1)
        for (std::int64_t gi = 0; gi < groups; ++gi) {
            if (stop_requested()) continue;  // the rest skipped; thrown below
            const std::int64_t i0 = gi * kLanes;
            const int count = static_cast<int>(std::min<std::int64_t>(kLanes, na - i0));
            kernel.set_queries(seqs, rows_a + i0, count, letters);
            visit(kernel, i0, count);
        }
    }
    throw_if_stopped();
}

}  // namespace

void lcs_distances(const SeqView& seqs, int letters, const std::int64_t* rows_a, std::int64_t na,
                   const std::int64_t* rows_b, std::int64_t nb, bool condensed, float* out, int threads) {
    over_query_groups(seqs, letters, rows_a, na, threads,
                      [&](LcsRowKernel& kernel, std::int64_t i0, int count) {
                          // condensed: pairs (i, j > i) of rows_a, row i of the upper triangle starting after
                          // the pairs of rows 0..i-1
                          float d[kLanes];
                          const std::int64_t j0 = condensed ? i0 + 1 : 0;
                          const std::int64_t jn = condensed ? na : nb;
                          for (std::int64_t j = j0; j < jn; ++j) {
                              kernel.distances_to(condensed ? rows_a[j] : rows_b[j], d);
                              for (int l = 0; l < count; ++l) {
                                  const std::int64_t i = i0 + l;
                                  if (!condensed) {
                                      out[i * nb + j] = d[l];
                                  } else if (j > i) {
                                      out[i * na - i * (i + 1) / 2 + j - i - 1] = d[l];
                                  }
                              }
                          }
                      });
}

void lcs_lengths(const SeqView& seqs, int letters, const std::int64_t* rows_a, std::int64_t na,
                 const std::int64_t* rows_b, std::int64_t nb, std::int32_t* out, int threads) {
    over_query_groups(seqs, letters, rows_a, na, threads,
                      [&](LcsRowKernel& kernel, std::int64_t i0, int count) {
                          std::int64_t lcs[kLanes];
                          for (std::int64_t j = 0; j < nb; ++j) {
                              kernel.lengths_to(rows_b[j], lcs);
                              for (int l = 0; l < count; ++l)
                                  out[(i0 + l) * nb + j] = static_cast<std::int32_t>(lcs[l]);
                          }
                      });
}

}  // namespace msa
}  // namespace bioaccel
