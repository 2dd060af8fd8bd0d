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

// A header's id: the header without its annotation h[astart, aend) (astart < 0: none), a
// ';' kept between what was before and after it.
void append_id(std::string& ids, std::string_view h, std::int64_t astart, std::int64_t aend) {
    const std::int64_t len = static_cast<std::int64_t>(h.size());
    if (astart < 0) {
        ids.append(h);
        return;
    }
    ids.append(h.substr(0, static_cast<std::size_t>(astart)));
    if (astart > 0 && aend < len) ids += ';';
    ids.append(h.substr(static_cast<std::size_t>(aend)));
}

// The first repeat among records 0..n-1 (in order) by equal(a, b): (earlier, later)
// record, or (-1, -1). An open-addressing table, 8 bytes a slot (a record number and its
// hash's top 32 bits, so most mismatches cost no equal()), no allocation a record;
// hash(r) must agree with equal.
template <class Hash, class Equal>
std::pair<std::int64_t, std::int64_t> first_repeat_of(std::int64_t n, Hash&& hash, Equal&& equal) {
    if (n >= (std::int64_t(1) << 32) - 1) throw std::length_error("amplicons: 2^32 - 1 records or more");
    std::size_t cap = 16;
    while (cap < 2 * static_cast<std::size_t>(n) + 16) cap <<= 1;
    constexpr std::uint64_t kEmpty = ~std::uint64_t(0);
    std::vector<std::uint64_t> slot(cap, kEmpty);
    for (std::int64_t k = 0; k < n; ++k) {
        const std::uint64_t h = static_cast<std::uint64_t>(hash(k)) * 0x9E3779B97F4A7C15ULL;
        const std::uint64_t top = h >> 32;
        for (std::size_t at = (h >> 20) & (cap - 1);; at = (at + 1) & (cap - 1)) {
            const std::uint64_t o = slot[at];
            if (o == kEmpty) {
                slot[at] = top << 32 | static_cast<std::uint64_t>(k);
                break;
            }
            const std::int64_t other = static_cast<std::int64_t>(o & 0xFFFFFFFFULL);
            if ((o >> 32) == top && equal(other, k)) return {other, k};
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
    expected_bytes_ = bytes;
    if (two_bit_) {
        words_.reserve(static_cast<std::size_t>(bytes / 32 + bytes / 256 + 2));
        advise_huge_pages(words_.data(), words_.capacity() * 8);
    } else {
        nibbles_.reserve(static_cast<std::size_t>(bytes / 2 + 1));
        advise_huge_pages(nibbles_.data(), nibbles_.capacity());
    }
}

// The text's size known, the buffers sized once from the first records (what they hold a
// byte of text, a tenth more): growing by doubling would hold the old and the new copy at
// once and leave up to half of the last unused (reserved pages never touched cost no memory).
void AmpliconReader::size_from_start() {
    sized_ = true;
    if (expected_bytes_ <= 0 || consumed_ <= 0) return;
    const double scale = 1.1 * static_cast<double>(expected_bytes_) / static_cast<double>(consumed_);
    auto grow = [&](auto& v, std::size_t now) {
        const std::size_t want = static_cast<std::size_t>(static_cast<double>(now) * scale) + 1024;
        if (want > v.capacity()) v.reserve(want);
    };
    const std::size_t records = sstart_.size();
    for (auto* v : {&out_.hstart, &out_.hend, &out_.line, &sstart_, &send_}) grow(*v, records);
    grow(out_.header_text, out_.header_text.size());
    if (two_bit_) grow(words_, words_.size());
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
    consumed_ += len + 1;
    if (out_.error != ParseError::none) return;
    if (len > 0 && s[0] == '>') {  // a header: its first word, as swarm reads it
        std::int64_t he = 1;
        while (he < len && !ends_header(s[he])) ++he;
        out_.hstart.push_back(static_cast<std::int64_t>(out_.header_text.size()));
        out_.header_text.append(s + 1, static_cast<std::size_t>(he - 1));
        out_.hend.push_back(static_cast<std::int64_t>(out_.header_text.size()));
        out_.line.push_back(line_no_);
        if (!sized_ && sstart_.size() == kSizingRecords) size_from_start();
        if (!sstart_.empty()) send_.push_back(letters_);
        if (two_bit_) letters_ = (letters_ + 31) / 32 * 32;  // each record from a word boundary
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
    std::int64_t t = 0;
    if (two_bit_) {
        t = two_bit_line(s, stop);
        if (t == stop) return;
        to_nibbles();  // an IUPAC code at s[t]: 4 bits a letter from here on
    }
    nibbles_.resize(static_cast<std::size_t>((letters_ + stop - t + 1) / 2), 0);
    std::uint8_t* nib = nibbles_.data();
    std::int64_t w = letters_;
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
            refused(w, s[t]);
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

void AmpliconReader::refused(std::int64_t w, char byte) {
    if (bad_record_ >= 0) return;
    bad_record_ = static_cast<std::int64_t>(sstart_.size()) - 1;
    bad_pos_ = w - sstart_.back();
    bad_byte_ = static_cast<std::uint8_t>(byte);
}

std::int64_t AmpliconReader::two_bit_line(const char* s, std::int64_t stop) {
    words_.resize(static_cast<std::size_t>((letters_ + stop + 31) / 32 + 1), 0);  // a spare word
    std::uint64_t* q = words_.data();
    std::int64_t w = letters_, t = 0;
    for (; t < stop; ++t) {
        const std::uint8_t code = table_[static_cast<std::uint8_t>(s[t])];
        if (code > 3) {
            if (code != 255) break;  // an IUPAC code: the caller goes on 4 bits a letter
            if (s[t] == '\r') continue;
            refused(w, s[t]);  // the parse fails: the letter is never read
            ++w;
            continue;
        }
        q[w >> 5] |= static_cast<std::uint64_t>(code) << (2 * (w & 31));
        ++w;
    }
    letters_ = w;
    words_.resize(static_cast<std::size_t>((letters_ + 31) / 32 + 1));
    return t;
}

void AmpliconReader::to_nibbles() {
    nibbles_.assign(static_cast<std::size_t>((letters_ + 1) / 2), 0);
    for (std::int64_t w = 0; w < letters_; ++w) {
        const std::uint8_t code = static_cast<std::uint8_t>(words_[w >> 5] >> (2 * (w & 31)) & 3);
        nibbles_[w >> 1] = static_cast<std::uint8_t>(nibbles_[w >> 1] | code << (4 * (w & 1)));
    }
    std::vector<std::uint64_t>().swap(words_);
    two_bit_ = false;
}

// The letters 2 bits each in swarm's order: the parse's words as they are (each record
// from a word boundary), each amplicon's first word and length in that order.
void AmpliconReader::packed_letters(ParsedAmplicons& out) {
    const std::int64_t n = static_cast<std::int64_t>(out.order.size());
    if (letters_ / 32 + 1 > edit::Packed::kMaxLength)
        throw std::length_error("amplicons: more than 2^32 words of letters (128 GiB)");
    std::vector<std::uint32_t> start(static_cast<std::size_t>(n)), len(static_cast<std::size_t>(n));
    for (std::int64_t k = 0; k < n; ++k) {
        const std::int64_t r = out.order[k];
        if (send_[r] - sstart_[r] > edit::Packed::kMaxLength)
            throw std::length_error("amplicons: a sequence of more than 2^32 - 1 letters");
        start[k] = static_cast<std::uint32_t>(sstart_[r] / 32);
        len[k] = static_cast<std::uint32_t>(send_[r] - sstart_[r]);
    }
    std::vector<std::int64_t>().swap(sstart_);
    std::vector<std::int64_t>().swap(send_);
    if (words_.empty()) words_.assign(1, 0);  // the spare word
    out.offsets.assign(1, 0);
    out.packed = std::make_shared<edit::Packed>(std::move(words_), std::move(start), std::move(len));
}

// The letters a byte each in swarm's order (then the 4-bit copy is let go).
void AmpliconReader::byte_letters(ParsedAmplicons& out) {
    const std::int64_t n = static_cast<std::int64_t>(out.order.size());
    out.offsets.assign(static_cast<std::size_t>(n) + 1, 0);
    for (std::int64_t k = 0; k < n; ++k) {
        const std::int64_t r = out.order[k];
        out.offsets[k + 1] = out.offsets[k] + (send_[r] - sstart_[r]);
    }
    assign_huge(out.codes, static_cast<std::size_t>(out.offsets[n]), std::uint8_t(0));
    const std::uint8_t* nib = nibbles_.data();
    for (std::int64_t k = 0; k < n; ++k) {
        const std::int64_t r = out.order[k];
        std::uint8_t* dst = out.codes.data() + out.offsets[k];
        std::int64_t t = sstart_[r];
        const std::int64_t end = send_[r];
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
    std::vector<std::int64_t>().swap(send_);
}

// A repeated sequence (the first repeat in input order) set as the parse's error: true then.
bool AmpliconReader::repeated_sequence(ParsedAmplicons& out) const {
    const std::int64_t n = static_cast<std::int64_t>(out.order.size());
    std::vector<std::int64_t> place(static_cast<std::size_t>(n));
    for (std::int64_t k = 0; k < n; ++k) place[out.order[k]] = k;
    std::pair<std::int64_t, std::int64_t> rep;
    if (out.packed) {  // equal words and equal lengths (letters past the end are zero)
        const edit::Packed& p = *out.packed;
        auto bytes_of = [&](std::int64_t r) {
            const std::int64_t k = place[r];
            return std::string_view(reinterpret_cast<const char*>(p.words(k)),
                                    static_cast<std::size_t>(p.word_count(k)) * 8);
        };
        const std::hash<std::string_view> hash;
        rep = first_repeat_of(
            n,
            [&](std::int64_t r) { return hash(bytes_of(r)) ^ static_cast<std::size_t>(p.length(place[r])); },
            [&](std::int64_t a, std::int64_t b) {
                return p.length(place[a]) == p.length(place[b]) && bytes_of(a) == bytes_of(b);
            });
    } else {
        const char* base = reinterpret_cast<const char*>(out.codes.data());
        auto view = [&](std::int64_t r) {
            const std::int64_t k = place[r];
            return std::string_view(base + out.offsets[k],
                                    static_cast<std::size_t>(out.offsets[k + 1] - out.offsets[k]));
        };
        const std::hash<std::string_view> hash;
        rep = first_repeat_of(
            n, [&](std::int64_t r) { return hash(view(r)); },
            [&](std::int64_t a, std::int64_t b) { return view(a) == view(b); });
    }
    if (rep.first < 0) return false;
    out.error = ParseError::duplicate_seq;
    out.a = rep.first;
    out.b = rep.second;
    return true;
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
    send_.push_back(letters_);
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
    {  // ids (the header without its annotation) repeated: each made in a buffer when needed
        std::string ia, ib;
        auto id_of = [&](std::int64_t k, std::string& buf) {
            buf.clear();
            append_id(
                buf,
                std::string_view(text + out.hstart[k], static_cast<std::size_t>(out.hend[k] - out.hstart[k])),
                out.astart[k], out.aend[k]);
            return std::string_view(buf);
        };
        const std::hash<std::string_view> hash;
        const auto [a, b] = first_repeat_of(
            n, [&](std::int64_t k) { return hash(id_of(k, ia)); },
            [&](std::int64_t x, std::int64_t y) { return id_of(x, ia) == id_of(y, ib); });
        if (a >= 0) {
            out.error = ParseError::duplicate_id;
            out.a = a;
            out.b = b;
            return out;
        }
    }
    for (std::int64_t k = 0; k < n; ++k) {
        if (send_[k] == sstart_[k]) {
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
    if (two_bit_)
        packed_letters(out);
    else
        byte_letters(out);
    throw_if_stopped();
    if (repeated_sequence(out)) return out;
    throw_if_stopped();
    // no error: what only the messages read is let go before the lines are built (at 10^6
    // amplicons the per-record arrays are 40 MB), astart kept in swarm's order (where a
    // default abundance was given: which headers had none)
    std::vector<std::int64_t>().swap(out.line);
    std::vector<std::int64_t>().swap(out.aend);
    if (default_abundance_ > 0) {
        std::vector<std::int64_t> annotated(static_cast<std::size_t>(n));
        for (std::int64_t k = 0; k < n; ++k) annotated[k] = out.astart[out.order[k]];
        out.astart.swap(annotated);
    } else {
        std::vector<std::int64_t>().swap(out.astart);
    }
    out.header_lines.reserve(out.header_text.size() + static_cast<std::size_t>(n));
    for (std::int64_t k = 0; k < n; ++k) {
        const std::int64_t r = out.order[k];
        out.header_lines.append(text + out.hstart[r], static_cast<std::size_t>(out.hend[r] - out.hstart[r]));
        out.header_lines += '\n';
    }
    std::vector<std::int64_t>().swap(out.hstart);
    std::vector<std::int64_t>().swap(out.hend);
    std::string().swap(out.header_text);
    return out;
}

std::string amplicon_ids(std::string_view header_lines, bool underscore) {
    std::string ids;
    ids.reserve(header_lines.size());
    std::size_t p = 0;
    while (p < header_lines.size()) {
        std::size_t e = header_lines.find('\n', p);
        if (e == std::string_view::npos) e = header_lines.size();
        const std::string_view h = header_lines.substr(p, e - p);
        std::int64_t a = -1, b = -1;
        std::uint64_t v = 0;
        bool overflow = false;
        if (!(underscore ? find_underscore(h, a, b, v, overflow) : find_size(h, a, b, v, overflow)))
            a = b = -1;
        append_id(ids, h, a, b);
        ids += '\n';
        p = e + 1;
    }
    return ids;
}

}  // namespace bioaccel::clusters
