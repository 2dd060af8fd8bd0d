// FASTA amplicons read as swarm reads them; see bioaccel/clusters.hpp.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <string_view>
#include <functional>
#include <utility>
#include <vector>

#include "bioaccel/clusters.hpp"

namespace bioaccel::clusters {

namespace {

bool is_space(char ch) {
    return ch == ' ' || ch == '\t' || ch == '\r';
}
// swarm's header ends at the first space or CR (a tab belongs to the header, as in swarm)
bool ends_header(char ch) {
    return ch == ' ' || ch == '\r';
}

// The first (^|;)size=([0-9]+)(;|$) of the header h: true and the span / value when found;
// `malformed` when `size=` occurs but never as an annotation; `overflow` past 2^63 - 1.
bool find_size(std::string_view h, std::int64_t& start, std::int64_t& end, std::uint64_t& value,
               bool& overflow) {
    overflow = false;
    std::size_t i = 0;
    while ((i = h.find("size=", i)) != std::string_view::npos) {
        const bool lead_ok = i == 0 || h[i - 1] == ';';
        std::size_t k = i + 5;
        while (k < h.size() && h[k] >= '0' && h[k] <= '9') ++k;
        const bool digits = k > i + 5;
        const bool tail_ok = k == h.size() || h[k] == ';';
        if (lead_ok && digits && tail_ok) {
            std::uint64_t v = 0;
            for (std::size_t p = i + 5; p < k; ++p) {
                const std::uint64_t d = static_cast<std::uint64_t>(h[p] - '0');
                if (v > (9223372036854775807ULL - d) / 10) {
                    overflow = true;
                    v = 0;
                    break;
                }
                v = v * 10 + d;
            }
            start = i > 0 ? static_cast<std::int64_t>(i - 1) : 0;
            end = static_cast<std::int64_t>(std::min(k + 1, h.size()));
            value = v;
            return true;
        }
        i += 1;
    }
    return false;
}

// The first repeat among views (in order): (earlier, later) record, or (-1, -1). An open-
// addressing table of record numbers (no allocation a record, as std::unordered_map makes).
std::pair<std::int64_t, std::int64_t> first_repeat(const std::vector<std::string_view>& views) {
    const std::size_t n = views.size();
    std::size_t cap = 16;
    while (cap < 2 * n + 16) cap <<= 1;
    std::vector<std::int64_t> slot(cap, -1);
    std::vector<std::size_t> hashes(n);
    const std::hash<std::string_view> hash;
    for (std::size_t k = 0; k < n; ++k) {
        const std::size_t h = hash(views[k]);
        hashes[k] = h;
        for (std::size_t at = (h * 0x9E3779B97F4A7C15ULL) >> 20 & (cap - 1);; at = (at + 1) & (cap - 1)) {
            const std::int64_t o = slot[at];
            if (o < 0) {
                slot[at] = static_cast<std::int64_t>(k);
                break;
            }
            if (hashes[o] == h && views[o] == views[k]) return {o, static_cast<std::int64_t>(k)};
        }
    }
    return {-1, -1};
}

}  // namespace

ParsedAmplicons parse_amplicons(const char* text, std::int64_t size, const std::uint8_t* table,
                                std::uint64_t default_abundance) {
    ParsedAmplicons out;
    std::vector<std::int64_t> sstart;  // per record: start of its code run in `raw_codes`
    std::vector<std::uint8_t> raw_codes;
    std::vector<std::int64_t> bad_pos;  // first refused letter of each record, -1
    raw_codes.reserve(static_cast<std::size_t>(size));
    std::int64_t p = 0, line = 1;
    // text before the first header: blank lines only
    while (p < size) {
        std::int64_t e = p;
        while (e < size && text[e] != '\n') ++e;
        bool blank = true;
        for (std::int64_t q = p; q < e; ++q)
            if (!is_space(text[q])) blank = false;
        if (!blank) break;
        p = e + 1;
        ++line;
    }
    if (p < size && text[p] != '>') {
        out.error = ParseError::not_fasta;
        out.a = line;
        return out;
    }
    std::int64_t bad_letter_record = -1;
    while (p < size) {
        // header line
        std::int64_t e = p;
        while (e < size && text[e] != '\n') ++e;
        std::int64_t hs = p + 1, he = hs;
        while (he < e && !ends_header(text[he])) ++he;
        out.hstart.push_back(hs);
        out.hend.push_back(he);
        out.line.push_back(line);
        sstart.push_back(static_cast<std::int64_t>(raw_codes.size()));
        bad_pos.push_back(-1);
        p = e + 1;
        ++line;
        // sequence lines up to the next header
        const std::int64_t begin = static_cast<std::int64_t>(raw_codes.size());
        while (p < size && text[p] != '>') {
            const void* nl = std::memchr(text + p, '\n', static_cast<std::size_t>(size - p));
            const std::int64_t q = nl ? static_cast<const char*>(nl) - text : size;
            std::int64_t stop = q;
            if (stop > p && text[stop - 1] == '\r') --stop;  // CRLF
            const std::size_t was = raw_codes.size();
            raw_codes.resize(was + static_cast<std::size_t>(stop - p));
            std::uint8_t* dst = raw_codes.data() + was;
            std::uint8_t worst = 0;
            for (std::int64_t t = p; t < stop; ++t) {
                const std::uint8_t code = table[static_cast<std::uint8_t>(text[t])];
                dst[t - p] = code;
                worst = std::max(worst, code);
            }
            if (worst == 255) {  // CRs inside the line are dropped, the first refused letter kept
                std::size_t w = was;
                for (std::int64_t t = p; t < stop; ++t) {
                    if (text[t] == '\r') continue;
                    const std::uint8_t code = table[static_cast<std::uint8_t>(text[t])];
                    if (code == 255 && bad_pos.back() < 0) {
                        bad_pos.back() = static_cast<std::int64_t>(w) - begin;
                        if (bad_letter_record < 0)
                            bad_letter_record = static_cast<std::int64_t>(bad_pos.size()) - 1;
                    }
                    raw_codes[w++] = code;
                }
                raw_codes.resize(w);
            }
            p = q + 1;
            ++line;
        }
    }
    const std::int64_t n = static_cast<std::int64_t>(out.hstart.size());
    sstart.push_back(static_cast<std::int64_t>(raw_codes.size()));
    out.astart.assign(static_cast<std::size_t>(n), -1);
    out.aend.assign(static_cast<std::size_t>(n), -1);
    out.abundance.assign(static_cast<std::size_t>(n), 0);
    std::int64_t missing = 0, first_missing = -1;
    for (std::int64_t k = 0; k < n; ++k) {
        const std::string_view h(text + out.hstart[k], static_cast<std::size_t>(out.hend[k] - out.hstart[k]));
        if (h.empty()) {
            out.error = ParseError::empty_header;
            out.a = k;
            return out;
        }
        std::int64_t s = 0, en = 0;
        std::uint64_t v = 0;
        bool overflow = false;
        if (find_size(h, s, en, v, overflow)) {
            if (overflow || v == 0) {
                out.error = ParseError::size_range;
                out.a = k;
                return out;
            }
            if (s == 0 && en == static_cast<std::int64_t>(h.size())) {
                out.error = ParseError::empty_header;  // only an annotation
                out.a = k;
                return out;
            }
            out.astart[k] = s;
            out.aend[k] = en;
            out.abundance[k] = v;
        } else if (h.find("size=") != std::string_view::npos) {
            out.error = ParseError::malformed_size;
            out.a = k;
            return out;
        } else if (default_abundance > 0) {
            out.abundance[k] = default_abundance;
        } else {
            if (missing++ == 0) first_missing = k;
        }
    }
    if (missing) {
        out.error = ParseError::missing_size;
        out.a = first_missing;
        out.b = missing;
        return out;
    }
    // ids: the header without its annotation, all in one buffer
    std::string ids;
    std::vector<std::int64_t> at(static_cast<std::size_t>(n) + 1, 0);
    {
        for (std::int64_t k = 0; k < n; ++k) {
            const char* h = text + out.hstart[k];
            const std::int64_t len = out.hend[k] - out.hstart[k];
            if (out.astart[k] < 0) {
                ids.append(h, static_cast<std::size_t>(len));
            } else {
                ids.append(h, static_cast<std::size_t>(out.astart[k]));
                if (out.astart[k] > 0 && out.aend[k] < len) ids += ';';
                ids.append(h + out.aend[k], static_cast<std::size_t>(len - out.aend[k]));
            }
            at[k + 1] = static_cast<std::int64_t>(ids.size());
        }
        std::vector<std::string_view> views(static_cast<std::size_t>(n));
        for (std::int64_t k = 0; k < n; ++k)
            views[k] = std::string_view(ids.data() + at[k], static_cast<std::size_t>(at[k + 1] - at[k]));
        const auto [a, b] = first_repeat(views);
        if (a >= 0) {
            out.error = ParseError::duplicate_id;
            out.a = a;
            out.b = b;
            return out;
        }
    }
    for (std::int64_t k = 0; k < n; ++k) {
        if (sstart[k + 1] == sstart[k]) {
            out.error = ParseError::empty_sequence;
            out.a = k;
            return out;
        }
    }
    if (bad_letter_record >= 0) {
        const std::int64_t k = bad_letter_record;
        // the letter: walk the record's text again to its position
        std::int64_t q = out.hend[k];
        while (q < size && text[q] != '\n') ++q;
        std::int64_t seen_letters = -1;
        char ch = 0;
        while (++q < size) {
            if (text[q] == '\n' || text[q] == '\r') continue;
            if (++seen_letters == bad_pos[k]) {
                ch = text[q];
                break;
            }
        }
        out.error = ParseError::bad_letter;
        out.a = k;
        out.b = bad_pos[k];
        out.c = static_cast<std::uint8_t>(ch);
        return out;
    }
    {
        const char* base = reinterpret_cast<const char*>(raw_codes.data());
        std::vector<std::string_view> views(static_cast<std::size_t>(n));
        for (std::int64_t k = 0; k < n; ++k)
            views[k] =
                std::string_view(base + sstart[k], static_cast<std::size_t>(sstart[k + 1] - sstart[k]));
        const auto [a, b] = first_repeat(views);
        if (a >= 0) {
            out.error = ParseError::duplicate_seq;
            out.a = a;
            out.b = b;
            return out;
        }
    }
    // swarm's order
    out.order.resize(static_cast<std::size_t>(n));
    std::iota(out.order.begin(), out.order.end(), 0);
    std::sort(out.order.begin(), out.order.end(), [&](std::int64_t x, std::int64_t y) {
        if (out.abundance[x] != out.abundance[y]) return out.abundance[x] > out.abundance[y];
        const std::string_view hx(text + out.hstart[x],
                                  static_cast<std::size_t>(out.hend[x] - out.hstart[x]));
        const std::string_view hy(text + out.hstart[y],
                                  static_cast<std::size_t>(out.hend[y] - out.hstart[y]));
        const int c = hx.compare(hy);  // bytes as unsigned char, as strcmp
        return c != 0 ? c < 0 : x < y;
    });
    out.offsets.assign(static_cast<std::size_t>(n) + 1, 0);
    for (std::int64_t k = 0; k < n; ++k) {
        const std::int64_t r = out.order[k];
        out.offsets[k + 1] = out.offsets[k] + (sstart[r + 1] - sstart[r]);
    }
    out.codes.resize(static_cast<std::size_t>(out.offsets[n]));
    for (std::int64_t k = 0; k < n; ++k) {
        const std::int64_t r = out.order[k];
        std::memcpy(out.codes.data() + out.offsets[k], raw_codes.data() + sstart[r],
                    static_cast<std::size_t>(sstart[r + 1] - sstart[r]));
    }
    std::size_t header_bytes = 0;
    for (std::int64_t k = 0; k < n; ++k)
        header_bytes += static_cast<std::size_t>(out.hend[k] - out.hstart[k]);
    out.header_lines.reserve(header_bytes + static_cast<std::size_t>(n));
    out.id_lines.reserve(ids.size() + static_cast<std::size_t>(n));
    for (std::int64_t k = 0; k < n; ++k) {
        const std::int64_t r = out.order[k];
        out.header_lines.append(text + out.hstart[r], static_cast<std::size_t>(out.hend[r] - out.hstart[r]));
        out.header_lines += '\n';
        out.id_lines.append(ids, static_cast<std::size_t>(at[r]),
                            static_cast<std::size_t>(at[r + 1] - at[r]));
        out.id_lines += '\n';
    }
    return out;
}

}  // namespace bioaccel::clusters
