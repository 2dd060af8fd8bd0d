// Distance-matrix text: the values of rows written as Python's repr of a float (shortest
// round-trip digits, Python's layout), and rows of such numbers parsed back. No pybind11.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace bioaccel {

// repr(x) of a Python float into buf (32 chars are enough); returns the length. Fixed
// notation when the decimal exponent e of x is -4 <= e < 16 (with ".0" when x is whole),
// else d[.ddd]e+XX / e-XX; "inf", "-inf", "nan" as Python writes them.
int format_float_repr(double x, char* buf);

// Rows i0 .. i0 + prefixes.size() of a row-major matrix with `cols` columns, each written as
// prefix + the row's values (all `cols`, or the k values left of the diagonal of row k when
// `lower`) joined by `sep` + "\n", concatenated. Rows are formatted in parallel.
std::string format_matrix_rows(const double* data, std::int64_t cols, std::int64_t i0,
                               const std::vector<std::string>& prefixes, bool lower, char sep, int threads);

// The same rows of the n x n matrix held as its condensed upper triangle (d(i, j), i < j, row
// by row: SciPy's and R's dist order), 0 on the diagonal: no square needed to write text.
std::string format_condensed_rows(const double* values, std::int64_t n, std::int64_t i0,
                                  const std::vector<std::string>& prefixes, bool lower, char sep,
                                  int threads);

// One line of a matrix file, the numbers at its end. Whitespace mode (tab = false): the last
// `want` whitespace-separated fields of s[start, len) are numbers, written to out[0, want);
// returns the offset of the first of them (s[0, offset) holds the name), or -1 when a field is
// not a number as a matrix file writes one (sign, digits, '.', exponent, inf, infinity, nan,
// any case) or there are fewer fields. Tab mode: s[start, len) is exactly `want` fields
// separated by single tabs, all numbers; returns start, or -1. A byte >= 0x80 gives -1 (the
// caller's general path then reads the line).
std::int64_t parse_matrix_row(const char* s, std::int64_t len, std::int64_t start, std::int64_t want,
                              bool tab, double* out);

// The number of whitespace-separated fields of s[start, len) (Python's str.split() on ASCII
// text).
std::int64_t count_fields(const char* s, std::int64_t len, std::int64_t start);

}  // namespace bioaccel
