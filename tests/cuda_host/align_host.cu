// Runs the CuPy alignment kernels' per-pair functions on the CPU (nvcc compiles them as host
// code; no GPU needed). First argument: "thread" (align_pair), "warp" (align_pair_warp as
// the kernel runs it: 32 lanes of 16 rows) or "warp4" (4 lanes of 3 rows, so short
// sequences cross many strips and boundary loads). The lanes of a warp run as coroutines
// (ucontext) in one thread: each exchange posts the lane's value and passes control to the
// next lane, round the ring, so every lane has posted before any reads, as in a warp shuffle.
// Input on stdin, little-endian:
//   int64: mode, gap_open, gap_extend, n_queries, n_targets
//   int64: profile offsets (nq + 1), query lengths (nq), target offsets (nt + 1)
//   int16: profiles (profile offsets[nq] values); int64: target code count; uint8: codes
// Output: nq * nt scores as text, queries major.
#include <ucontext.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "host_io.hpp"

#include "../../bioaccel/kernels/align_scores.cu"

// The lanes of one warp and the context that started them.
struct LaneRing {
    int width = 0;
    std::vector<ucontext_t> lanes;
    std::vector<std::vector<char>> stacks;
    std::vector<int> slots, results;
    ucontext_t caller;
};

struct HostWarp {
    int id;
    LaneRing* ring;
    int lane() const { return id; }
    void sync() const {  // run the other lanes up to this point
        swapcontext(&ring->lanes[id], &ring->lanes[(id + 1) % ring->width]);
    }
    int exchange(int v, int src) const {
        ring->slots[id] = v;
        sync();
        const int got = ring->slots[src];
        sync();
        return got;
    }
    int shfl(int v, int src) const { return exchange(v, src); }
    int shfl_up(int v, int delta) const {
        const int got = exchange(v, id >= delta ? id - delta : id);
        return id >= delta ? got : v;
    }
    int max_all(int v) const {
        int best = v;
        for (int x = 0; x < ring->width; ++x) best = std::max(best, exchange(v, x));
        return best;
    }
};

struct PairJob {
    const short* prof;
    long long m;
    const unsigned char* t;
    long long n;
    int mode, gap_open, gap_extend;
    int* bh;
    int* bf;
};

static LaneRing* g_ring;
static const PairJob* g_job;

template <int W, int R>
static void lane_main(int id) {
    HostWarp w{id, g_ring};
    const PairJob& j = *g_job;
    g_ring->results[id] =
        align_pair_warp<W, R>(w, j.prof, j.m, j.t, j.n, j.mode, j.gap_open, j.gap_extend, j.bh, j.bf);
    // lanes finish in ring order; the last one returns to the caller
    swapcontext(&g_ring->lanes[id], id + 1 < W ? &g_ring->lanes[id + 1] : &g_ring->caller);
}

template <int W, int R>
static int run_warp(const PairJob& job) {
    LaneRing ring;
    ring.width = W;
    ring.lanes.resize(W);
    ring.stacks.assign(W, std::vector<char>(256 * 1024));
    ring.slots.assign(W, 0);
    ring.results.assign(W, 0);
    g_ring = &ring;
    g_job = &job;
    for (int x = 0; x < W; ++x) {
        getcontext(&ring.lanes[x]);
        ring.lanes[x].uc_stack.ss_sp = ring.stacks[x].data();
        ring.lanes[x].uc_stack.ss_size = ring.stacks[x].size();
        ring.lanes[x].uc_link = nullptr;
        makecontext(&ring.lanes[x], (void (*)())lane_main<W, R>, 1, x);
    }
    swapcontext(&ring.caller, &ring.lanes[0]);
    for (int x = 1; x < W; ++x)
        if (ring.results[x] != ring.results[0]) {
            std::fprintf(stderr, "lanes disagree: lane 0 %d, lane %d %d\n", ring.results[0], x,
                         ring.results[x]);
            std::exit(3);
        }
    return ring.results[0];
}

int main(int argc, char** argv) {
    const std::string kind = argc > 1 ? argv[1] : "thread";
    if (kind != "thread" && kind != "warp" && kind != "warp4") {
        std::fprintf(stderr, "unknown kernel %s (thread, warp or warp4)\n", kind.c_str());
        return 2;
    }
    std::vector<long long> head = read_n<long long>(5);
    const int mode = (int)head[0], gap_open = (int)head[1], gap_extend = (int)head[2];
    const long long nq = head[3], nt = head[4];
    std::vector<long long> prof_off = read_n<long long>(nq + 1);
    std::vector<long long> q_len = read_n<long long>(nq);
    std::vector<long long> t_off = read_n<long long>(nt + 1);
    std::vector<short> prof = read_n<short>(prof_off[nq]);
    const long long tlen = read_n<long long>(1)[0];
    std::vector<unsigned char> t_codes = read_n<unsigned char>(tlen);
    long long longest = 0;
    for (long long t = 0; t < nt; ++t) longest = std::max(longest, t_off[t + 1] - t_off[t]);
    std::vector<int> bh(longest + 1), bf(longest + 1);
    for (long long q = 0; q < nq; ++q) {
        for (long long t = 0; t < nt; ++t) {
            const PairJob job{prof.data() + prof_off[q],
                              q_len[q],
                              t_codes.data() + t_off[t],
                              t_off[t + 1] - t_off[t],
                              mode,
                              gap_open,
                              gap_extend,
                              bh.data(),
                              bf.data()};
            int score;
            if (kind == "thread")
                score =
                    align_pair(job.prof, job.m, job.t, job.n, mode, gap_open, gap_extend, job.bh, job.bf, 1);
            else if (kind == "warp")
                score = run_warp<BIOACCEL_WARP, BIOACCEL_WARP_ROWS>(job);
            else
                score = run_warp<4, 3>(job);
            std::printf("%d\n", score);
        }
    }
    return 0;
}
