// What both binding files share: the NumPy array types the wrappers take, and the one check
// of a (codes, offsets) pair of arrays before the C++ core reads it as sequences.
#pragma once

#include <pybind11/numpy.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "bioaccel/align.hpp"  // SeqView

namespace bioaccel::bindings {

namespace py = pybind11;

template <typename T>
using Array = py::array_t<T, py::array::c_style | py::array::forcecast>;
using U8Array = Array<std::uint8_t>;
using I8Array = Array<std::int8_t>;
using I16Array = Array<std::int16_t>;
using I32Array = Array<std::int32_t>;
using I64Array = Array<std::int64_t>;
using U64Array = Array<std::uint64_t>;
using F32Array = Array<float>;
using F64Array = Array<double>;

// `what` names the argument in the error ("queries", "targets", "sequences").
inline SeqView seq_view(const U8Array& codes, const I64Array& offsets, const char* what = "sequences") {
    if (codes.ndim() != 1 || offsets.ndim() != 1 || offsets.shape(0) < 1)
        throw std::invalid_argument(std::string(what) +
                                    ": codes and offsets must be 1-d (offsets: n + 1 entries)");
    SeqView v;
    v.codes = codes.data();
    v.offsets = offsets.data();
    v.count = offsets.shape(0) - 1;
    if (v.offsets[0] != 0 || v.offsets[v.count] != codes.shape(0))
        throw std::invalid_argument(std::string(what) + ": offsets do not span the code buffer");
    for (std::int64_t i = 0; i < v.count; ++i)
        if (v.offsets[i + 1] < v.offsets[i])
            throw std::invalid_argument(std::string(what) + ": offsets must not decrease");
    return v;
}

}  // namespace bioaccel::bindings
