// FASTA amplicons read as swarm reads them; see bioaccel/clusters.hpp.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <string_view>
#include <functional>
#include <utility>
#include <vector>

#include "bioaccel/clusters.hpp"
#include "bioaccel/huge_pages.hpp"
#include "bioaccel/stop.hpp"

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

// swarm's default annotation: a header ending in `_` and digits (`a_12`): true and the span
// (from the `_` to the end) / value when found; `overflow` past 2^63 - 1.
bool find_underscore(std::string_view h, std::int64_t& start, std::int64_t& end, std::uint64_t& value,
                     bool& overflow) {
    overflow = false;
    const std::size_t u = h.rfind('_');
    if (u == std::string_view::npos || u + 1 == h.size()) return false;
    std::uint64_t v = 0;
    for (std::size_t p = u + 1; p < h.size(); ++p) {
        if (h[p] < '0' || h[p] > '9') return false;
        const std::uint64_t d = static_cast<std::uint64_t>(h[p] - '0');
        if (v > (9223372036854775807ULL - d) / 10) overflow = true;
        if (!overflow) v = v * 10 + d;
    }
    start = static_cast<std::int64_t>(u);
    end = static_cast<std::int64_t>(h.size());
    value = overflow ? 0 : v;
    return true;
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

AmpliconReader::AmpliconReader(const std::uint8_t* table, std::uint64_t default_abundance, bool underscore)
    : default_abundance_(default_abundance), underscore_(underscore) {
    std::memcpy(table_, table, sizeof table_);
}

void AmpliconReader::reserve(std::int64_t bytes) {
    if (bytes <= 0) return;
    nibbles_.reserve(static_cast<std::size_t>(bytes / 2 + 1));
    advise_huge_pages(nibbles_.data(), nibbles_.capacity());
}

void AmpliconReader::feed(const char* data, std::int64_t size) {
    if (finished_) throw std::logic_error("AmpliconReader: feed after finish");
    std::int64_t p = 0;
    if (!carry_.empty()) {  // complete the line the last piece cut
        const void* nl = std::memchr(data, '\n', static_cast<std::size_t>(size));
        if (!nl) {
            carry_.append(data, static_cast<std::size_t>(size));
            return;
        }
        const std::int64_t q = static_cast<const char*>(nl) - data;
        carry_.append(data, static_cast<std::size_t>(q));
        line(carry_.data(), static_cast<std::int64_t>(carry_.size()));
        carry_.clear();
        p = q + 1;
    }
    while (p < size) {
        const void* nl = std::memchr(data + p, '\n', static_cast<std::size_t>(size - p));
        if (!nl) {
            carry_.assign(data + p, static_cast<std::size_t>(size - p));
            return;
        }
        const std::int64_t q = static_cast<const char*>(nl) - data;
        line(data + p, q - p);
        p = q + 1;
    }
}

void AmpliconReader::line(const char* s, std::int64_t len) {
    ++line_no_;
    if (out_.error != ParseError::none) return;
    if (len > 0 && s[0] == '>') {  // a header: its first word, as swarm reads it
        std::int64_t he = 1;
        while (he < len && !ends_header(s[he])) ++he;
        out_.hstart.push_back(static_cast<std::int64_t>(out_.header_text.size()));
        out_.header_text.append(s + 1, static_cast<std::size_t>(he - 1));
        out_.hend.push_back(static_cast<std::int64_t>(out_.header_text.size()));
        out_.line.push_back(line_no_);
        sstart_.push_back(letters_);
        return;
    }
    if (out_.hstart.empty()) {  // before the first header: blank lines only
        for (std::int64_t q = 0; q < len; ++q)
            if (!is_space(s[q]) && s[q] != '\n') {
                out_.error = ParseError::not_fasta;
                out_.a = line_no_;
                out_.bad_line.assign(s, static_cast<std::size_t>(std::min<std::int64_t>(len, 40)));
                return;
            }
        return;
    }
    std::int64_t stop = len;
    if (stop > 0 && s[stop - 1] == '\r') --stop;  // CRLF
    nibbles_.resize(static_cast<std::size_t>((letters_ + stop + 1) / 2), 0);
    std::uint8_t* nib = nibbles_.data();
    std::int64_t w = letters_, t = 0;
    // two letters a step while both are letters (the loop below takes the rest, and any
    // refused byte or CR from there on)
    if ((w & 1) && t < stop) {
        const std::uint8_t code = table_[static_cast<std::uint8_t>(s[t])];
        if (code != 255) {
            nib[w >> 1] |= static_cast<std::uint8_t>(code << 4);
            ++w;
            ++t;
        }
    }
    if (!(w & 1))
        for (; t + 1 < stop; t += 2, w += 2) {
            const std::uint8_t a = table_[static_cast<std::uint8_t>(s[t])],
                               b = table_[static_cast<std::uint8_t>(s[t + 1])];
            if ((a | b) > 15) break;  // a refused byte or CR (255): the loop below
            nib[w >> 1] = static_cast<std::uint8_t>(a | b << 4);
        }
    for (; t < stop; ++t) {
        std::uint8_t code = table_[static_cast<std::uint8_t>(s[t])];
        if (code == 255) {  // CRs inside the line are dropped, the first refused letter kept
            if (s[t] == '\r') continue;
            if (bad_record_ < 0) {
                bad_record_ = static_cast<std::int64_t>(sstart_.size()) - 1;
                bad_pos_ = w - sstart_.back();
                bad_byte_ = static_cast<std::uint8_t>(s[t]);
            }
            code = 15;
        }
        if (w & 1)
            nib[w >> 1] |= static_cast<std::uint8_t>(code << 4);
        else
            nib[w >> 1] = code;
        ++w;
    }
    letters_ = w;
    nibbles_.resize(static_cast<std::size_t>((letters_ + 1) / 2));
}

ParsedAmplicons AmpliconReader::finish() {
    if (finished_) throw std::logic_error("AmpliconReader: finish called twice");
    finished_ = true;
    if (!carry_.empty()) {
        line(carry_.data(), static_cast<std::int64_t>(carry_.size()));
        carry_.clear();
    }
    ParsedAmplicons out = std::move(out_);
    if (out.error != ParseError::none) return out;
    const char* text = out.header_text.data();
    const std::int64_t n = static_cast<std::int64_t>(out.hstart.size());
    sstart_.push_back(letters_);
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
        if (underscore_ ? find_underscore(h, s, en, v, overflow) : find_size(h, s, en, v, overflow)) {
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
        } else if (!underscore_ && h.find("size=") != std::string_view::npos) {
            out.error = ParseError::malformed_size;
            out.a = k;
            return out;
        } else if (default_abundance_ > 0) {
            out.abundance[k] = default_abundance_;
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
    throw_if_stopped();
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
        if (sstart_[k + 1] == sstart_[k]) {
            out.error = ParseError::empty_sequence;
            out.a = k;
            return out;
        }
    }
    if (bad_record_ >= 0) {
        out.error = ParseError::bad_letter;
        out.a = bad_record_;
        out.b = bad_pos_;
        out.c = bad_byte_;
        return out;
    }
    // swarm's order: abundance decreasing, then the header's bytes (as strcmp), then input
    // order. Sorted on (abundance, the header's first 8 bytes big-endian, record), the
    // headers compared in full only when those 8 bytes tie (no random reads for most pairs).
    struct SortKey {
        std::uint64_t abundance, prefix;
        std::int64_t record;
    };
    std::vector<SortKey> keys(static_cast<std::size_t>(n));
    for (std::int64_t k = 0; k < n; ++k) {
        const std::int64_t len = out.hend[k] - out.hstart[k];
        std::uint64_t prefix = 0;
        for (std::int64_t t = 0; t < 8; ++t)
            prefix = prefix << 8 | (t < len ? static_cast<std::uint8_t>(text[out.hstart[k] + t]) : 0u);
        keys[k] = {out.abundance[k], prefix, k};
    }
    throw_if_stopped();
    std::sort(keys.begin(), keys.end(), [&](const SortKey& x, const SortKey& y) {
        if (x.abundance != y.abundance) return x.abundance > y.abundance;
        if (x.prefix != y.prefix) return x.prefix < y.prefix;
        const std::string_view hx(text + out.hstart[x.record],
                                  static_cast<std::size_t>(out.hend[x.record] - out.hstart[x.record]));
        const std::string_view hy(text + out.hstart[y.record],
                                  static_cast<std::size_t>(out.hend[y.record] - out.hstart[y.record]));
        const int c = hx.compare(hy);  // bytes as unsigned char, as strcmp
        return c != 0 ? c < 0 : x.record < y.record;
    });
    out.order.resize(static_cast<std::size_t>(n));
    for (std::int64_t k = 0; k < n; ++k) out.order[k] = keys[k].record;
    std::vector<SortKey>().swap(keys);
    throw_if_stopped();
    // the letters a byte each in that order (then the 4-bit copy is let go)
    out.offsets.assign(static_cast<std::size_t>(n) + 1, 0);
    for (std::int64_t k = 0; k < n; ++k) {
        const std::int64_t r = out.order[k];
        out.offsets[k + 1] = out.offsets[k] + (sstart_[r + 1] - sstart_[r]);
    }
    assign_huge(out.codes, static_cast<std::size_t>(out.offsets[n]), std::uint8_t(0));
    {
        const std::uint8_t* nib = nibbles_.data();
        for (std::int64_t k = 0; k < n; ++k) {
            const std::int64_t r = out.order[k];
            std::uint8_t* dst = out.codes.data() + out.offsets[k];
            std::int64_t t = sstart_[r];
            const std::int64_t end = sstart_[r + 1];
            if ((t & 1) && t < end) *dst++ = static_cast<std::uint8_t>(nib[t++ >> 1] >> 4);
            for (; t + 1 < end; t += 2) {  // a byte's two letters
                const std::uint8_t b = nib[t >> 1];
                dst[0] = static_cast<std::uint8_t>(b & 0x0F);
                dst[1] = static_cast<std::uint8_t>(b >> 4);
                dst += 2;
            }
            if (t < end) *dst = static_cast<std::uint8_t>(nib[t >> 1] & 0x0F);
        }
        std::vector<std::uint8_t>().swap(nibbles_);
        std::vector<std::int64_t>().swap(sstart_);
    }
    throw_if_stopped();
    {  // a repeated sequence: the first repeat in input order
        std::vector<std::int64_t> place(static_cast<std::size_t>(n));
        for (std::int64_t k = 0; k < n; ++k) place[out.order[k]] = k;
        const char* base = reinterpret_cast<const char*>(out.codes.data());
        std::vector<std::string_view> views(static_cast<std::size_t>(n));
        for (std::int64_t r = 0; r < n; ++r) {
            const std::int64_t k = place[r];
            views[r] = std::string_view(base + out.offsets[k],
                                        static_cast<std::size_t>(out.offsets[k + 1] - out.offsets[k]));
        }
        const auto [a, b] = first_repeat(views);
        if (a >= 0) {
            out.error = ParseError::duplicate_seq;
            out.a = a;
            out.b = b;
            return out;
        }
    }
    throw_if_stopped();
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
