// Distance-matrix text (see bioaccel/matrix_text.hpp): the formatter of DistanceMatrix.write
// and the number parser of its PHYLIP and TSV readers.
#include "bioaccel/matrix_text.hpp"

#include <charconv>
#include <cmath>
#include <cstring>

#include "bioaccel/common.hpp"

namespace bioaccel {

int format_float_repr(double x, char* buf) {
    if (std::isnan(x)) {
        std::memcpy(buf, "nan", 3);
        return 3;
    }
    if (std::isinf(x)) {
        if (x < 0) {
            std::memcpy(buf, "-inf", 4);
            return 4;
        }
        std::memcpy(buf, "inf", 3);
        return 3;
    }
    // shortest round-trip digits: d[.ddd]e[+-]XX
    char tmp[40];
    const auto res = std::to_chars(tmp, tmp + sizeof tmp, x, std::chars_format::scientific);
    const char* p = tmp;
    const char* end = res.ptr;
    char* o = buf;
    if (*p == '-') {
        *o++ = '-';
        ++p;
    }
    char digits[24];
    int nd = 0;
    digits[nd++] = *p++;
    if (*p == '.') {
        ++p;
        while (*p != 'e') digits[nd++] = *p++;
    }
    ++p;  // 'e'
    const bool negative_exp = *p == '-';
    ++p;
    int e = 0;
    while (p < end) e = e * 10 + (*p++ - '0');
    if (negative_exp) e = -e;
    if (e < -4 || e >= 16) {
        *o++ = digits[0];
        if (nd > 1) {
            *o++ = '.';
            std::memcpy(o, digits + 1, nd - 1);
            o += nd - 1;
        }
        *o++ = 'e';
        *o++ = e < 0 ? '-' : '+';
        const int a = e < 0 ? -e : e;
        if (a >= 100) *o++ = static_cast<char>('0' + a / 100);
        *o++ = static_cast<char>('0' + a / 10 % 10);
        *o++ = static_cast<char>('0' + a % 10);
    } else if (e >= 0) {
        if (nd <= e + 1) {
            std::memcpy(o, digits, nd);
            o += nd;
            for (int z = nd; z <= e; ++z) *o++ = '0';
            *o++ = '.';
            *o++ = '0';
        } else {
            std::memcpy(o, digits, e + 1);
            o += e + 1;
            *o++ = '.';
            std::memcpy(o, digits + e + 1, nd - e - 1);
            o += nd - e - 1;
        }
    } else {
        *o++ = '0';
        *o++ = '.';
        for (int z = 0; z < -e - 1; ++z) *o++ = '0';
        std::memcpy(o, digits, nd);
        o += nd;
    }
    return static_cast<int>(o - buf);
}

namespace {

// The one row layout of matrix text: rows i0 .. i0 + prefixes.size(), value (k, j) from
// get(k, j), k's values j < k (lower) or j < cols.
template <class Get>
std::string format_rows(Get get, std::int64_t cols, std::int64_t i0, const std::vector<std::string>& prefixes,
                        bool lower, char sep, int threads) {
    const std::int64_t rows = static_cast<std::int64_t>(prefixes.size());
    std::vector<std::string> text(static_cast<std::size_t>(rows));
    const int nt = resolve_threads(threads);
    (void)nt;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
#endif
    for (std::int64_t r = 0; r < rows; ++r) {
        const std::int64_t k = i0 + r;
        const std::int64_t count = lower ? k : cols;
        std::string& s = text[r];
        s.resize(prefixes[r].size() + static_cast<std::size_t>(count) * 25 + 1);
        char* o = s.data();
        std::memcpy(o, prefixes[r].data(), prefixes[r].size());
        o += prefixes[r].size();
        for (std::int64_t j = 0; j < count; ++j) {
            if (j) *o++ = sep;
            o += format_float_repr(get(k, j), o);
        }
        *o++ = '\n';
        s.resize(static_cast<std::size_t>(o - s.data()));
    }
    std::size_t total = 0;
    for (const auto& s : text) total += s.size();
    std::string out;
    out.reserve(total);
    for (const auto& s : text) out += s;
    return out;
}

}  // namespace

std::string format_matrix_rows(const double* data, std::int64_t cols, std::int64_t i0,
                               const std::vector<std::string>& prefixes, bool lower, char sep, int threads) {
    return format_rows([data, cols](std::int64_t k, std::int64_t j) { return data[k * cols + j]; }, cols, i0,
                       prefixes, lower, sep, threads);
}

std::string format_condensed_rows(const double* values, std::int64_t n, std::int64_t i0,
                                  const std::vector<std::string>& prefixes, bool lower, char sep,
                                  int threads) {
    // d(i, j), i < j, at i (2n - i - 1) / 2 + j - i - 1
    const auto get = [values, n](std::int64_t k, std::int64_t j) {
        if (k == j) return 0.0;
        const std::int64_t i = k < j ? k : j, m = k < j ? j : k;
        return values[i * (2 * n - i - 1) / 2 + m - i - 1];
    };
    return format_rows(get, n, i0, prefixes, lower, sep, threads);
}

namespace {

inline bool is_space(unsigned char c) {
    return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f);
}

inline bool same_word(const char* s, std::size_t n, const char* word) {
    if (std::strlen(word) != n) return false;
    for (std::size_t i = 0; i < n; ++i)
        if ((s[i] | 0x20) != word[i]) return false;
    return true;
}

// One field: [-+]?((\d+\.?\d*|\.\d+)([eE][-+]?\d+)?|inf|infinity|nan), any case.
bool parse_number(const char* s, const char* end, double* out) {
    const char* p = s;
    bool negative = false;
    if (p < end && (*p == '+' || *p == '-')) negative = *p++ == '-';
    const char* body = p;
    if (p == end) return false;
    if (!(*p >= '0' && *p <= '9') && *p != '.') {
        const std::size_t n = static_cast<std::size_t>(end - p);
        if (same_word(p, n, "inf") || same_word(p, n, "infinity")) {
            *out = negative ? -HUGE_VAL : HUGE_VAL;
            return true;
        }
        if (same_word(p, n, "nan")) {
            *out = negative ? -std::nan("") : std::nan("");
            return true;
        }
        return false;
    }
    std::size_t int_digits = 0, frac_digits = 0;
    while (p < end && *p >= '0' && *p <= '9') ++p, ++int_digits;
    if (p < end && *p == '.') {
        ++p;
        while (p < end && *p >= '0' && *p <= '9') ++p, ++frac_digits;
    }
    if (int_digits + frac_digits == 0) return false;
    if (p < end && (*p == 'e' || *p == 'E')) {
        ++p;
        if (p < end && (*p == '+' || *p == '-')) ++p;
        std::size_t exp_digits = 0;
        while (p < end && *p >= '0' && *p <= '9') ++p, ++exp_digits;
        if (exp_digits == 0) return false;
    }
    if (p != end) return false;
    double v = 0;
    const auto res = std::from_chars(body, end, v, std::chars_format::general);
    // out of range (1e400, and subnormals where the library says so): from_chars leaves v
    // untouched, so the caller's general path reads the row (Python's float gives inf or 0)
    if (res.ptr != end || res.ec != std::errc()) return false;
    *out = negative ? -v : v;
    return true;
}

}  // namespace

std::int64_t parse_matrix_row(const char* s, std::int64_t len, std::int64_t start, std::int64_t want,
                              bool tab, double* out) {
    for (std::int64_t i = start; i < len; ++i)
        if (static_cast<unsigned char>(s[i]) >= 0x80) return -1;
    if (tab) {
        const char* p = s + start;
        const char* end = s + len;
        for (std::int64_t j = 0; j < want; ++j) {
            const char* q = static_cast<const char*>(std::memchr(p, '\t', static_cast<std::size_t>(end - p)));
            if (q == nullptr) q = end;
            if (j + 1 < want && q == end) return -1;
            if (j + 1 == want && q != end) return -1;
            if (!parse_number(p, q, out + j)) return -1;
            p = q + 1;
        }
        if (want == 0 && start != len) return -1;
        return start;
    }
    std::int64_t e = len;
    for (std::int64_t j = want - 1; j >= 0; --j) {
        while (e > start && is_space(static_cast<unsigned char>(s[e - 1]))) --e;
        std::int64_t b = e;
        while (b > start && !is_space(static_cast<unsigned char>(s[b - 1]))) --b;
        if (b == e) return -1;
        if (!parse_number(s + b, s + e, out + j)) return -1;
        e = b;
    }
    if (want == 0) {
        while (e > start && is_space(static_cast<unsigned char>(s[e - 1]))) --e;
        return e;
    }
    return e;
}

std::int64_t count_fields(const char* s, std::int64_t len, std::int64_t start) {
    std::int64_t count = 0;
    bool in_field = false;
    for (std::int64_t i = start; i < len; ++i) {
        const bool space = is_space(static_cast<unsigned char>(s[i]));
        count += !space && !in_field;
        in_field = !space;
    }
    return count;
}

}  // namespace bioaccel
