#include "bioaccel/align.hpp"
#include "bioaccel/align_kernel.hpp"
#include "bioaccel/common.hpp"
#include "bioaccel/cpu.hpp"
#include "bioaccel/stop.hpp"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace bioaccel {
namespace {

using KernelFn = void (*)(const GroupJob&, void*, std::int32_t*, std::uint8_t*);

struct Kernel {
    KernelFn fn;
    int vector_bytes;
};

Kernel pick_kernel() {
    switch (active_isa()) {
        case Isa::Avx512:
            return {simd_avx512::run_group, 64};
        case Isa::Avx2:
            return {simd_avx2::run_group, 32};
        default:
            return {simd_base::run_group, 32};
    }
}

struct Limits {
    std::int64_t lo, hi;
};
constexpr Limits kLimits[3] = {{-128, 127}, {-32768, 32767}, {-2147483648LL, 2147483647LL}};
constexpr int kWidthBytes[3] = {1, 2, 4};

// Every value the global/semi-global recurrences can produce for an m x n problem lies in
// [lo, hi]: paths through gaps bound it below, all-matches above. Generous on purpose.
Limits value_range(const ScoreScheme& s, std::int64_t m, std::int64_t n) {
    const std::int64_t o = s.gap_open, e = s.gap_extend;
    const std::int64_t neg = std::max<std::int64_t>(0, -std::int64_t(s.min_score));
    const std::int64_t pos = std::max<std::int64_t>(0, s.max_score);
    const std::int64_t lo = -(3 * o + (m + n + 2) * e + neg + 2);
    const std::int64_t hi = std::min(m, n) * pos + pos + 2;
    return {lo, hi};
}

// Local alignment: H >= 0 and E, F >= -o, so the low side only needs o + e and the most
// negative score to fit; the high side is watched lane by lane while running.
bool local_fits(const ScoreScheme& s, int w) {
    const Limits lim = kLimits[w];
    return -(std::int64_t(s.gap_open) + s.gap_extend) > lim.lo && s.min_score > lim.lo &&
           s.max_score < lim.hi / 2;
}

// Global alignment in score differences (run_group_global_diff, align_kernel.inc): every
// value it computes lies in [-3o, max + o] whatever the lengths, given o >= e; a margin of e
// on each side.
bool diff_fits(const ScoreScheme& s, int w) {
    const Limits lim = kLimits[w];
    const std::int64_t o = s.gap_open, e = s.gap_extend;
    return o >= e && -(3 * o + e) > lim.lo && s.min_score > lim.lo &&
           std::int64_t(s.max_score) + o + e < lim.hi;
}

// Score of aligning the empty sequence to one of length len.
std::int64_t empty_score(const ScoreScheme& s, std::int64_t len) {
    if (s.mode != AlignMode::Global || len == 0) return 0;
    return -(std::int64_t(s.gap_open) + (len - 1) * s.gap_extend);
}

struct Worker {
    std::vector<std::uint64_t> work;  // 8-byte aligned; vectors are read unaligned-safe below
    void* workspace(std::int64_t bytes) {
        const std::size_t words = static_cast<std::size_t>((bytes + 64 + 7) / 8);
        if (work.size() < words) work.resize(words);
        // align to 64 bytes for the vector loads
        auto p = reinterpret_cast<std::uintptr_t>(work.data());
        p = (p + 63) & ~std::uintptr_t(63);
        return reinterpret_cast<void*>(p);
    }
};

}  // namespace

std::int64_t align_score_scalar(const std::uint8_t* a, std::int64_t m, const std::uint8_t* b, std::int64_t n,
                                const ScoreScheme& s) {
    if (m == 0) return empty_score(s, n);
    if (n == 0) return empty_score(s, m);
    const std::int64_t o = s.gap_open, e = s.gap_extend;
    const std::int64_t NEG = std::numeric_limits<std::int64_t>::min() / 4;
    const bool global = s.mode == AlignMode::Global, local = s.mode == AlignMode::Local;
    std::vector<std::int64_t> H(n + 1), E(n + 1, NEG);
    for (std::int64_t j = 0; j <= n; ++j) H[j] = (global && j) ? -(o + (j - 1) * e) : 0;
    std::int64_t best = local ? 0 : std::numeric_limits<std::int64_t>::min();
    if (s.mode == AlignMode::SemiGlobal) best = H[n];  // row 0, last column
    for (std::int64_t i = 1; i <= m; ++i) {
        std::int64_t diag = H[0];
        H[0] = global ? -(o + (i - 1) * e) : 0;
        std::int64_t f = NEG;
        const std::int32_t* row = s.table + std::int64_t(a[i - 1]) * s.alphabet;
        for (std::int64_t j = 1; j <= n; ++j) {
            f = std::max(f - e, H[j - 1] - o);    // horizontal gap (from the left)
            E[j] = std::max(E[j] - e, H[j] - o);  // vertical gap (from above)
            std::int64_t h = std::max({diag + row[b[j - 1]], E[j], f});
            if (local) h = std::max<std::int64_t>(h, 0);
            diag = H[j];
            H[j] = h;
            if (local) best = std::max(best, h);
        }
        if (s.mode == AlignMode::SemiGlobal) best = std::max(best, H[n]);
    }
    if (global) return H[n];
    if (s.mode == AlignMode::SemiGlobal)
        for (std::int64_t j = 0; j <= n; ++j) best = std::max(best, H[j]);
    return best;
}

std::string align_isa() {
    return isa_name(active_isa());
}

WidthStats align_scores(const SeqView& queries, const SeqView& targets, const ScoreScheme& s, bool symmetric,
                        std::int32_t* out, int threads) {
    if (s.gap_open < 0 || s.gap_extend < 0) throw std::invalid_argument("gap penalties must be >= 0");
    if (symmetric && queries.count != targets.count)
        throw std::invalid_argument("symmetric alignment needs queries == targets");
    const Kernel kernel = pick_kernel();
    const auto lanes_for = [&kernel](int w) { return kernel.vector_bytes / kWidthBytes[w]; };
    // query rows per strip: fewer strips rebuild fewer column profiles; the row state
    // (2 vectors a row) streams from L2 well enough (measured: 1,024 rows beat 256 on
    // 1-6 kb DNA with 32- and 64-byte vectors)
    std::int64_t strip_rows = 1024;
    if (const char* env = std::getenv("BIOACCEL_ALIGN_STRIP")) strip_rows = std::max(1L, std::atol(env));
    // BIOACCEL_ALIGN_NO_DIFF=1: global scores with the absolute-score kernels only (the
    // comparison in tests and benchmarks)
    const char* no_diff = std::getenv("BIOACCEL_ALIGN_NO_DIFF");
    const bool use_diff = !(no_diff && *no_diff && std::string(no_diff) != "0");
    const std::int64_t nq = queries.count, nt = targets.count;
    // targets sorted by length, so the lanes of a group finish together
    std::vector<std::int64_t> order(nt);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::int64_t x, std::int64_t y) { return targets.length(x) < targets.length(y); });
    std::int32_t max_len_target = 0;
    for (std::int64_t t = 0; t < nt; ++t)
        max_len_target = std::max<std::int32_t>(max_len_target, targets.length(t));
    // padding residue: the letter with the lowest best score (irrelevant for results)
    std::uint8_t pad = 0;
    {
        std::int64_t lowest = std::numeric_limits<std::int64_t>::max();
        for (int c = 0; c < s.alphabet; ++c) {
            std::int64_t top = std::numeric_limits<std::int64_t>::min();
            for (int x = 0; x < s.alphabet; ++x)
                top = std::max<std::int64_t>(top, s.table[x * s.alphabet + c]);
            if (top < lowest) {
                lowest = top;
                pad = static_cast<std::uint8_t>(c);
            }
        }
    }
    // int8 score rows for the shuffle-built column profile (see GroupJob::table8)
    alignas(64) std::int8_t table8[32 * kTable8Stride] = {};
    bool use_table8 = s.alphabet <= 32 && s.min_score >= -128 && s.max_score <= 127;
    if (use_table8)
        for (int x = 0; x < s.alphabet; ++x)
            for (int c = 0; c < kTable8Stride; ++c)
                table8[x * kTable8Stride + c] =
                    c % 32 < s.alphabet ? static_cast<std::int8_t>(s.table[x * s.alphabet + c % 32]) : 0;
    WidthStats stats;
    std::int64_t c8 = 0, c16 = 0, c32 = 0, reruns = 0;
    bool overflowed = false;
    std::string overflow_msg;
    auto record_overflow = [&](const std::string& msg) {
#ifdef _OPENMP
#pragma omp critical
#endif
        {
            overflowed = true;
            overflow_msg = msg;
        }
    };

#ifdef _OPENMP
#pragma omp parallel num_threads(resolve_threads(threads)) reduction(+ : c8, c16, c32, reruns)
#endif
    {
        Worker worker;
        std::vector<std::int64_t> todo, next;
        std::vector<std::int32_t> res(kMaxLanes);
        std::vector<std::uint8_t> ovf(kMaxLanes);
        // Local scores past int8 for most targets (long similar sequences, e.g. DNA): after
        // a query whose first int8 group mostly overflowed, this thread's next queries start
        // at int16, trying int8 again every kNarrowRetry queries. Speed only: every lane
        // is checked for overflow whatever width it starts at.
        constexpr int kNarrowRetry = 8;
        int skip_narrow = 0;
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 1)
#endif
        for (std::int64_t qi = 0; qi < nq; ++qi) {
            if (stop_requested()) continue;  // Ctrl-C: the rest skipped; thrown below
            const std::uint8_t* q = queries.seq(qi);
            const std::int64_t m = queries.length(qi);
            todo.clear();
            for (std::int64_t t : order) {
                if (symmetric && t < qi) continue;
                const std::int64_t n = targets.length(t);
                if (m == 0 || n == 0) {
                    out[qi * nt + t] = static_cast<std::int32_t>(empty_score(s, m == 0 ? n : m));
                    continue;
                }
                todo.push_back(t);
            }
            // widths to try, narrowest first
            int w;
            bool diff = false;  // global in score differences, at width w
            if (s.mode == AlignMode::Local) {
                w = local_fits(s, 0) ? 0 : (local_fits(s, 1) ? 1 : 2);
                if (w == 0 && skip_narrow > 0) {
                    w = 1;
                    --skip_narrow;
                }
            } else {
                const Limits r = value_range(s, m, max_len_target);
                w = 0;
                while (w < 2 && (r.lo <= kLimits[w].lo || r.hi >= kLimits[w].hi)) ++w;
                if (r.lo <= kLimits[2].lo || r.hi >= kLimits[2].hi) {
                    record_overflow("alignment scores of query " + std::to_string(qi) +
                                    " could exceed the int32 range");
                    continue;
                }
                // Global scores of long sequences leave int8 (gaps), their differences need
                // not: twice the lanes for a few more operations a cell. Exact, no re-runs.
                if (s.mode == AlignMode::Global && w > 0 && use_diff)
                    for (int dw = 0; dw < w; ++dw)
                        if (diff_fits(s, dw)) {
                            w = dw;
                            diff = true;
                            break;
                        }
            }
            if (s.mode == AlignMode::Local &&
                std::int64_t(s.max_score) * std::min<std::int64_t>(m, max_len_target) >= kLimits[2].hi) {
                record_overflow("local alignment scores of query " + std::to_string(qi) +
                                " could exceed the int32 range");
                continue;
            }
            while (!todo.empty()) {
                next.clear();
                const int L = lanes_for(w);
                for (std::size_t g = 0; g < todo.size(); g += L) {
                    // Most lanes of the last narrow group overflowed (similar sequences):
                    // send the rest straight to the next width instead of computing twice.
                    if (w < 2 && g > 0 && next.size() * 2 > g) {
                        next.insert(next.end(), todo.begin() + g, todo.end());
                        break;
                    }
                    GroupJob job;
                    job.q = q;
                    job.m = m;
                    job.lanes = static_cast<int>(std::min<std::size_t>(L, todo.size() - g));
                    job.nmax = 0;
                    for (int l = 0; l < L; ++l) {
                        if (l < job.lanes) {
                            const std::int64_t t = todo[g + l];
                            job.t[l] = targets.seq(t);
                            job.tlen[l] = targets.length(t);
                            job.nmax = std::max(job.nmax, job.tlen[l]);
                        } else {  // unused lane: a copy of lane 0, result ignored
                            job.t[l] = job.t[0];
                            job.tlen[l] = job.tlen[0];
                        }
                    }
                    job.table = s.table;
                    job.alphabet = s.alphabet;
                    job.mode = static_cast<int>(s.mode);
                    job.gap_open = s.gap_open;
                    job.gap_extend = s.gap_extend;
                    job.width = kWidthBytes[w];
                    job.overflow_threshold = kLimits[w].hi - std::max<std::int64_t>(s.max_score, 0) - 1;
                    job.pad_code = pad;
                    job.table8 = use_table8 ? table8 : nullptr;
                    job.strip = m <= 2 * strip_rows ? m : strip_rows;
                    job.diff = diff;
                    kernel.fn(job,
                              worker.workspace(group_workspace_bytes(job.strip, s.alphabet, job.nmax,
                                                                     kernel.vector_bytes)),
                              res.data(), ovf.data());
                    const std::int64_t cells = m * job.nmax * job.lanes;
                    (w == 0 ? c8 : w == 1 ? c16 : c32) += cells;
                    for (int l = 0; l < job.lanes; ++l) {
                        const std::int64_t t = todo[g + l];
                        if (ovf[l]) {
                            next.push_back(t);
                        } else {
                            out[qi * nt + t] = res[l];
                        }
                    }
                    if (s.mode == AlignMode::Local && w == 0 && g == 0 &&
                        next.size() * 2 > std::size_t(job.lanes))
                        skip_narrow = kNarrowRetry - 1;
                }
                if (!next.empty()) {
                    reruns += static_cast<std::int64_t>(next.size());
                    if (w == 2) {  // cannot happen given the bound checked above
                        record_overflow("int32 overflow in local alignment of query " + std::to_string(qi));
                        break;
                    }
                    ++w;
                }
                todo.swap(next);
            }
        }
    }
    throw_if_stopped();  // outside the parallel region
    if (overflowed) throw std::overflow_error(overflow_msg);
    if (symmetric)
        for (std::int64_t i = 0; i < nq; ++i)
            for (std::int64_t j = 0; j < i; ++j) out[i * nt + j] = out[j * nt + i];
    stats.cells8 = c8;
    stats.cells16 = c16;
    stats.cells32 = c32;
    stats.reruns = reruns;
    return stats;
}

}  // namespace bioaccel
