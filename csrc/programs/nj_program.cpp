// bioaccel-nj: the low-memory neighbour joining of `bioaccel tree --low-memory` as a process
// of its own. The bioaccel command checks the input, writes what this program reads (a float32
// or float64 condensed triangle, the Newick labels) and opens the output, then replaces itself
// with this program (exec): the interpreter's memory is given back before the triangle is
// allocated, so the process holds the triangle, the joiner's rows and little else, as
// QuickTree does. Not a user command: its arguments are the caller's, checked by the caller
// (bioaccel/trees/_program.py), and the values it reads are already checked (finite, not
// negative, symmetric). What can still fail here is the system: reading, memory, writing.
//
//   bioaccel-nj MATRIX OFFSET WIDTH LAYOUT N LABELS THREADS CLAMP OUT_FD TMP TARGET SCRATCH SHOWN
//
// MATRIX from byte OFFSET holds N (N - 1) / 2 little-endian values of WIDTH bytes (4 or 8):
// LAYOUT "upper" is the condensed upper triangle row by row (d(i, j), i < j: the .cdist
// order); "lower" is row k's d(k, j), j < k, for k = 1 .. N - 1 (a lower-triangle PHYLIP's
// order). LABELS holds the N Newick labels (quoted as needed), one per line. CLAMP 1 sets
// negative branch lengths to 0. The Newick text is written to file descriptor OUT_FD; when TMP
// is not "-", OUT_FD is the temporary file TMP beside TARGET, synced and renamed over TARGET
// on success, removed on failure. SCRATCH (not "-") is a folder removed at the end either way.
// SHOWN: how messages name the output.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "bioaccel/matrix_text.hpp"
#include "bioaccel/trees.hpp"

namespace {

// A failure of the system (a file, memory): exit status 2 with the caller's "bioaccel: error:".
struct SystemError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

std::string reason(int err) {
    std::string s = std::strerror(err);
    if (!s.empty()) s[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[0])));
    return s;
}

std::int64_t to_int(const char* s, const char* what) {
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(s, &end, 10);
    if (errno || end == s || *end) throw std::invalid_argument(std::string("bad ") + what + ": " + s);
    return v;
}

struct Fd {
    int fd = -1;
    ~Fd() {
        if (fd >= 0) ::close(fd);
    }
};

// Reads `count` values of `width` bytes at `offset`, in blocks, handing each block to `take`
// as floats (float64 values rounded to float32, as NumPy's astype does).
template <class Take>
void read_values(const std::string& path, std::int64_t offset, int width, std::int64_t count, Take take) {
    Fd f;
    f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (f.fd < 0) throw SystemError(path + ": " + reason(errno));
    constexpr std::int64_t kBlock = std::int64_t{1} << 14;  // 64 KiB of floats: small beside the triangle
    std::vector<unsigned char> raw(static_cast<std::size_t>(kBlock * width));
    std::vector<float> block(static_cast<std::size_t>(kBlock));
    std::int64_t done = 0;
    while (done < count) {
        const std::int64_t want = std::min(kBlock, count - done);
        const std::size_t bytes = static_cast<std::size_t>(want * width);
        std::size_t got = 0;
        while (got < bytes) {
            const ssize_t r =
                ::pread(f.fd, raw.data() + got, bytes - got,
                        static_cast<off_t>(offset + done * width + static_cast<std::int64_t>(got)));
            if (r < 0 && errno == EINTR) continue;
            if (r < 0) throw SystemError(path + ": " + reason(errno));
            if (r == 0) throw SystemError(path + ": the file ended early (changed while being read?)");
            got += static_cast<std::size_t>(r);
        }
        if (width == 4) {
            std::memcpy(block.data(), raw.data(), bytes);
        } else {
            for (std::int64_t t = 0; t < want; ++t) {
                double v;
                std::memcpy(&v, raw.data() + t * 8, 8);
                block[static_cast<std::size_t>(t)] = static_cast<float>(v);
            }
        }
        take(block.data(), done, want);
        done += want;
    }
}

// The triangle in the joiner's layout (d(i, j), i < j, at i (2n - i - 1) / 2 + j - i - 1).
std::unique_ptr<float[]> load_triangle(const std::string& path, std::int64_t offset, int width, bool lower,
                                       std::int64_t n) {
    const std::int64_t count = n * (n - 1) / 2;
    std::unique_ptr<float[]> w(new (std::nothrow) float[static_cast<std::size_t>(count > 0 ? count : 1)]);
    if (!w) throw std::bad_alloc();
    float* out = w.get();
    if (!lower) {
        read_values(path, offset, width, count, [out](const float* v, std::int64_t at, std::int64_t m) {
            std::memcpy(out + at, v, m * 4);
        });
        return w;
    }
    // row k of the file (k values d(k, 0 .. k - 1)) starts at k (k - 1) / 2: walk (k, j) along
    std::int64_t k = 1, j = 0;
    read_values(path, offset, width, count, [&](const float* v, std::int64_t, std::int64_t m) {
        for (std::int64_t t = 0; t < m; ++t) {
            out[j * (2 * n - j - 1) / 2 + k - j - 1] = v[t];
            if (++j == k) {
                ++k;
                j = 0;
            }
        }
    });
    return w;
}

std::vector<std::string> read_labels(const std::string& path, std::int64_t n) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) throw SystemError(path + ": " + reason(errno));
    std::string text;
    char buf[1 << 16];
    std::size_t r;
    while ((r = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, r);
    const bool failed = std::ferror(f);
    std::fclose(f);
    if (failed) throw SystemError(path + ": read error");
    std::vector<std::string> labels;
    labels.reserve(static_cast<std::size_t>(n));
    std::size_t start = 0;
    while (start < text.size()) {
        const std::size_t end = text.find('\n', start);
        if (end == std::string::npos) break;
        labels.emplace_back(text, start, end - start);
        start = end + 1;
    }
    if (static_cast<std::int64_t>(labels.size()) != n)
        throw SystemError(path + ": " + std::to_string(labels.size()) + " labels for " + std::to_string(n) +
                          " taxa");
    return labels;
}

// Newick of the edge list, as bioaccel.trees.Tree.to_newick writes it: children in edge
// order, lengths as Python's repr, -0.0 as 0.0.
std::string newick(const bioaccel::EdgeList& e, const std::vector<std::string>& labels, bool clamp) {
    const std::int64_t n_tips = static_cast<std::int64_t>(labels.size());
    std::int64_t nodes = e.root + 1;
    for (std::size_t k = 0; k < e.parent.size(); ++k)
        nodes = std::max({nodes, e.parent[k] + 1, e.child[k] + 1});
    std::vector<std::vector<std::int64_t>> kids(static_cast<std::size_t>(nodes));
    for (std::size_t k = 0; k < e.parent.size(); ++k)
        kids[static_cast<std::size_t>(e.parent[k])].push_back(static_cast<std::int64_t>(k));
    std::string out;
    char num[32];
    struct Frame {
        std::int64_t node, edge;
        std::size_t next;
    };
    std::vector<Frame> stack{{e.root, -1, 0}};
    while (!stack.empty()) {
        Frame f = stack.back();
        stack.pop_back();
        const auto& ks = kids[static_cast<std::size_t>(f.node)];
        if (ks.empty()) {
            if (f.node < n_tips) out += labels[static_cast<std::size_t>(f.node)];
        } else if (f.next == 0) {
            out += '(';
        }
        if (!ks.empty() && f.next < ks.size()) {
            if (f.next > 0) out += ',';
            stack.push_back({f.node, f.edge, f.next + 1});
            const std::int64_t edge = ks[f.next];
            stack.push_back({e.child[static_cast<std::size_t>(edge)], edge, 0});
            continue;
        }
        if (!ks.empty()) out += ')';
        if (f.edge >= 0) {
            double v = e.length[static_cast<std::size_t>(f.edge)];
            if (clamp && v < 0) v = 0.0;
            if (v == 0) v = 0.0;
            out += ':';
            out.append(num, static_cast<std::size_t>(bioaccel::format_float_repr(v, num)));
        }
    }
    out += ";\n";
    return out;
}

void write_all(int fd, const std::string& text, const std::string& name) {
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t w = ::write(fd, text.data() + done, text.size() - done);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) throw SystemError("cannot write '" + name + "': " + reason(errno));
        done += static_cast<std::size_t>(w);
    }
}

// Ctrl-C (SIGINT), SIGTERM and SIGHUP end the program as they end the bioaccel command:
// "interrupted; nothing written", exit 130, the temporary output and the scratch folder
// removed. The handler only calls unlink, rmdir, write and _exit (async-signal-safe), on
// paths listed before the handler was installed.
struct CleanUp {
    std::vector<std::string> files;  // the temporary output, then the scratch folder's files
    std::string folder;              // the scratch folder ("" for none)
    std::vector<const char*> file_ptrs;
};
CleanUp* clean_up = nullptr;

extern "C" void on_stop_signal(int sig) {
    if (clean_up != nullptr) {
        for (const char* f : clean_up->file_ptrs) ::unlink(f);
        if (!clean_up->folder.empty()) ::rmdir(clean_up->folder.c_str());
    }
    static const char line[] = "bioaccel: interrupted; nothing written\n";
    const ssize_t ignored = ::write(2, line, sizeof line - 1);
    (void)ignored;
    ::_exit(sig == SIGINT ? 130 : 128 + sig);
}

void stop_cleanly_on_signals(const char* tmp, const char* scratch) {
    static CleanUp c;
    if (std::strcmp(tmp, "-") != 0) c.files.emplace_back(tmp);
    if (std::strcmp(scratch, "-") != 0) {
        c.folder = scratch;
        std::error_code ec;
        for (const auto& entry : std::filesystem::directory_iterator(scratch, ec))
            c.files.push_back(entry.path().string());
    }
    for (const auto& f : c.files) c.file_ptrs.push_back(f.c_str());
    clean_up = &c;
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
        // a signal ignored when the program starts stays ignored (nohup's SIGHUP, a
        // script's `cmd &` SIGINT): the run goes on, as the bioaccel command's would
        struct sigaction now {};
        if (::sigaction(sig, nullptr, &now) == 0 && now.sa_handler == SIG_IGN) continue;
        ::sigaction(sig, &sa, nullptr);
    }
}

void remove_scratch(const char* scratch) {
    if (std::strcmp(scratch, "-") != 0) {
        std::error_code ec;
        std::filesystem::remove_all(scratch, ec);
    }
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 14) {
        std::fprintf(stderr,
                     "bioaccel-nj: run by `bioaccel tree --low-memory`, not by hand (got %d arguments, "
                     "expected 13)\n",
                     argc - 1);
        return 2;
    }
    // Python ignores SIGPIPE and exec keeps that: a reader of stdout that went away
    // (`... -o - | head`) stops this program quietly, as it stops the bioaccel command
    ::signal(SIGPIPE, SIG_DFL);
    const char* tmp = argv[10];
    const std::string target = argv[11];
    const char* scratch = argv[12];
    const std::string shown = argv[13];
    const bool renames = std::strcmp(tmp, "-") != 0;
    stop_cleanly_on_signals(tmp, scratch);
    int status = 0;
    try {
        const std::string matrix = argv[1];
        const std::int64_t offset = to_int(argv[2], "offset");
        const int width = static_cast<int>(to_int(argv[3], "width"));
        const std::string layout = argv[4];
        const std::int64_t n = to_int(argv[5], "taxa");
        const int threads = static_cast<int>(to_int(argv[7], "threads"));
        const bool clamp = to_int(argv[8], "clamp") != 0;
        const int out_fd = static_cast<int>(to_int(argv[9], "output descriptor"));
        if ((width != 4 && width != 8) || (layout != "upper" && layout != "lower") || n < 3)
            throw std::invalid_argument("bad width, layout or taxon count");
        const std::vector<std::string> labels = read_labels(argv[6], n);
        bioaccel::EdgeList edges;
        {
            auto w = load_triangle(matrix, offset, width, layout == "lower", n);
            edges = bioaccel::neighbor_joining_condensed(w.get(), n, threads);
        }  // the triangle is freed before the text is made
        const std::string text = newick(edges, labels, clamp);
        write_all(out_fd, text, shown);
        {  // from here the output is (being) written: a stop signal waits for the end
            sigset_t block;
            sigemptyset(&block);
            for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&block, sig);
            ::sigprocmask(SIG_BLOCK, &block, nullptr);
        }
        if (renames) {
            if (::fsync(out_fd) != 0) throw SystemError("cannot write '" + shown + "': " + reason(errno));
            if (::close(out_fd) != 0) throw SystemError("cannot write '" + shown + "': " + reason(errno));
            if (std::rename(tmp, target.c_str()) != 0)
                throw SystemError("cannot write '" + shown + "': " + reason(errno));
        }
        std::fprintf(stderr, "wrote nj tree of %lld tips to %s\n", static_cast<long long>(n), shown.c_str());
    } catch (const SystemError& e) {
        std::fprintf(stderr, "bioaccel: error: %s\n", e.what());
        status = 2;
    } catch (const std::bad_alloc&) {
        std::fprintf(
            stderr,
            "bioaccel: internal error: out of memory (the float32 triangle of the low-memory tree did "
            "not fit)\n");
        status = 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr,
                     "bioaccel: internal error: bioaccel-nj: %s (a bug in bioaccel: please report it)\n",
                     e.what());
        status = 1;
    }
    if (status != 0 && renames) ::unlink(tmp);
    remove_scratch(scratch);
    return status;
}
