// The progressive stage: merges of the guide tree run as soon as both children are done
// (a queue of ready merges, lowest merge index first), on `threads` workers. Each merge
// depends only on its children, so the alignment is the same for any thread count.
#include <algorithm>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <queue>
#include <stdexcept>
#include <string>

#include "bioaccel/stop.hpp"
#include "bioaccel/common.hpp"
#include "bioaccel/msa.hpp"
#include "bioaccel/msa_add.hpp"

namespace bioaccel {
namespace msa {

namespace {

struct Merge {
    std::int64_t left, right;
};

void check_merges(const std::int64_t* merges, std::int64_t n_merges, std::int64_t n,
                  std::vector<std::int64_t>& parent) {
    if (n_merges != n - 1)
        throw std::invalid_argument("a guide tree of " + std::to_string(n) + " sequences needs " +
                                    std::to_string(n - 1) + " merges, got " + std::to_string(n_merges));
    parent.assign(2 * n - 1, -1);
    for (std::int64_t k = 0; k < n_merges; ++k) {
        for (int side = 0; side < 2; ++side) {
            const std::int64_t c = merges[2 * k + side];
            if (c < 0 || c >= n + k)
                throw std::invalid_argument("merge " + std::to_string(k) + " joins node " +
                                            std::to_string(c) + ", which does not exist yet");
            if (parent[c] >= 0) throw std::invalid_argument("node " + std::to_string(c) + " is merged twice");
            parent[c] = n + k;
        }
    }
}

}  // namespace

ProgressiveRun::ProgressiveRun(const SeqView& seqs, const MsaScoring& sc, const std::int64_t* merges,
                               std::int64_t n_merges, const double* weights)
    : seqs_(seqs), sc_(sc), merges_(merges), n_merges_(n_merges), n_(seqs.count), weights_(weights) {
    if (n_ > 1)
        check_merges(merges, n_merges, n_, parent_);
    else if (n_merges != 0)
        throw std::invalid_argument("one sequence needs no merges");
    const std::int64_t nodes = std::max<std::int64_t>(2 * n_ - 1, 0);
    profile_.resize(nodes);
    to_parent_.resize(nodes);
    done_.assign(nodes, 0);
    for (std::int64_t t = 0; t < n_; ++t) done_[t] = 1;
}

std::pair<const Profile*, const Profile*> ProgressiveRun::operands(std::int64_t k) {
    if (k < 0 || k >= n_merges_) throw std::out_of_range("merge " + std::to_string(k) + " does not exist");
    const std::int64_t l = left(k), r = right(k);
    for (std::int64_t c : {l, r}) {
        if (!done_[c] || (c >= n_ && profile_[c].len == 0 && profile_[c].rows == 0))
            throw std::logic_error("merge " + std::to_string(k) + " runs before its child " +
                                   std::to_string(c) + " is done (or after it was merged)");
        if (c < n_ && profile_[c].rows == 0)
            profile_[c] = sequence_profile(seqs_.seq(c), seqs_.length(c), sc_, weights_[c]);
    }
    return {&profile_[l], &profile_[r]};
}

void ProgressiveRun::merge(std::int64_t k, const Path& path) {
    const std::int64_t l = left(k), r = right(k);
    if (done_[n_ + k]) throw std::logic_error("merge " + std::to_string(k) + " is done already");
    Profile merged = merge_profiles(profile_[l], profile_[r], path);
    std::vector<std::int32_t>& ml = to_parent_[l];
    std::vector<std::int32_t>& mr = to_parent_[r];
    ml.resize(profile_[l].len);
    mr.resize(profile_[r].len);
    std::int32_t i = 0, j = 0;
    for (std::size_t c = 0; c < path.size(); ++c) {
        if (path[c] != GapInA) ml[i++] = static_cast<std::int32_t>(c);
        if (path[c] != GapInB) mr[j++] = static_cast<std::int32_t>(c);
    }
    profile_[l] = Profile();
    profile_[r] = Profile();
    profile_[n_ + k] = std::move(merged);
    done_[n_ + k] = 1;
}

std::int64_t ProgressiveRun::finish(std::int32_t* column_of) {
    if (n_ == 0) return 0;
    if (n_ == 1) {
        for (std::int64_t c = 0; c < seqs_.length(0); ++c) column_of[c] = static_cast<std::int32_t>(c);
        return seqs_.length(0);
    }
    const std::int64_t nodes = 2 * n_ - 1, root = nodes - 1;
    for (std::int64_t k = 0; k < n_merges_; ++k)
        if (!done_[n_ + k]) throw std::logic_error("finish: merge " + std::to_string(k) + " is not done");
    // final columns, from the root down
    const std::int64_t width = profile_[root].len;
    std::vector<std::vector<std::int32_t>> final_cols(nodes);
    final_cols[root].resize(width);
    for (std::int64_t c = 0; c < width; ++c) final_cols[root][c] = static_cast<std::int32_t>(c);
    for (std::int64_t k = n_merges_ - 1; k >= 0; --k) {
        const std::int64_t node = n_ + k;
        for (std::int64_t c : {left(k), right(k)}) {
            std::vector<std::int32_t>& out = final_cols[c];
            const std::vector<std::int32_t>& map = to_parent_[c];
            out.resize(map.size());
            for (std::size_t x = 0; x < map.size(); ++x) out[x] = final_cols[node][map[x]];
            std::vector<std::int32_t>().swap(to_parent_[c]);
        }
        if (node != root) std::vector<std::int32_t>().swap(final_cols[node]);
    }
    for (std::int64_t t = 0; t < n_; ++t)
        std::copy(final_cols[t].begin(), final_cols[t].end(), column_of + seqs_.offsets[t]);
    return width;
}

std::int64_t progressive_align(const SeqView& seqs, const MsaScoring& sc, const std::int64_t* merges,
                               std::int64_t n_merges, const double* weights, int threads,
                               std::int32_t* column_of, void (*progress)(void*, std::int64_t),
                               void* progress_ctx) {
    const std::int64_t n = seqs.count;
    ProgressiveRun run(seqs, sc, merges, n_merges, weights);
    if (n <= 1) return run.finish(column_of);
    std::vector<int> waiting(n_merges, 0);
    for (std::int64_t k = 0; k < n_merges; ++k)
        for (int side = 0; side < 2; ++side)
            if (merges[2 * k + side] >= n) ++waiting[k];

    auto run_merge = [&](std::int64_t k, int dp_threads) {
        const auto ops = run.operands(k);
        Path path;
        // long pairs (genomes): in a band around k-mer anchors when one is found
        if (!banded_merge_path(*ops.first, *ops.second, sc, path))
            align_profiles(*ops.first, *ops.second, sc, path, std::int64_t(1) << 26, nullptr, nullptr,
                           dp_threads);
        run.merge(k, path);
    };

    const int workers = std::max(1, std::min<int>(resolve_threads(threads), static_cast<int>(n_merges)));
    std::priority_queue<std::int64_t, std::vector<std::int64_t>, std::greater<>> ready;
    for (std::int64_t k = 0; k < n_merges; ++k)
        if (waiting[k] == 0) ready.push(k);
    std::int64_t done = 0;
    if (workers == 1) {
        // merges are listed children first, so the listed order is a valid schedule; a lone
        // merge (two sequences) takes the threads as a wavefront
        const int lone = n_merges == 1 ? resolve_threads(threads) : 1;
        for (std::int64_t k = 0; k < n_merges; ++k) {
            throw_if_stopped();
            run_merge(k, lone);
            ++done;
            if (progress) progress(progress_ctx, done);
        }
    } else {
        std::mutex mu;
        std::condition_variable cv;
        std::exception_ptr failure;
        int active = 0;  // workers inside a merge
#pragma omp parallel num_threads(workers)
        {
            for (;;) {
                std::int64_t k = -1;
                int dp_threads = 1;
                {
                    std::unique_lock<std::mutex> lock(mu);
                    cv.wait(lock, [&] { return !ready.empty() || done == n_merges || failure; });
                    if (done == n_merges || failure) break;
                    k = ready.top();
                    ready.pop();
                    // alone with nothing else ready (the top of the tree): the other workers
                    // would idle, so a large DP takes them as a wavefront
                    if (ready.empty() && active == 0) dp_threads = workers;
                    ++active;
                }
                try {
                    throw_if_stopped();
                    run_merge(k, dp_threads);
                } catch (...) {
                    std::lock_guard<std::mutex> lock(mu);
                    if (!failure) failure = std::current_exception();
                    cv.notify_all();
                    break;
                }
                {
                    std::lock_guard<std::mutex> lock(mu);
                    ++done;
                    --active;
                    const std::int64_t p = run.parent(n + k);
                    if (p >= 0 && --waiting[p - n] == 0) ready.push(p - n);
                    if (progress) progress(progress_ctx, done);
                }
                cv.notify_all();
            }
        }
        if (failure) std::rethrow_exception(failure);
    }
    return run.finish(column_of);
}

}  // namespace msa
}  // namespace bioaccel
