// NumPy's .npy files (format versions 1.0, 2.0, 3.0) as graph inputs: what `np.save` writes for a
// C-ordered array of float32, float64, the integer types or bool.
#pragma once

#include <string>
#include <string_view>

#include "harness/onnx/model.h"

namespace stabfuzz::onnx {

// The array in `bytes` (a whole .npy file); `where` names it in errors. Throws InputError for
// anything else: a bad magic or header, a big-endian, Fortran-ordered or other dtype, a shape
// over kMaxElements, or data of the wrong length.
HostTensor parse_npy(std::string_view bytes, const std::string& where);
HostTensor read_npy(const std::string& path);

// `t` as a version 1.0 .npy file (the element type's little-endian NumPy dtype).
std::string npy_bytes(const HostTensor& t);
void write_npy(const std::string& path, const HostTensor& t);

}  // namespace stabfuzz::onnx
