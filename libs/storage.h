// Storage conversions for black-box library targets: exact dtype values <-> f32, bf16, f16 bits.
//
// A family's inputs are doubles that are exactly values of the input's dtype, so converting them to
// the library's storage type is exact; the library's outputs are values of that type, so converting
// them back to double is exact too. Nothing here rounds.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "stabfuzz/family.h"

namespace stabfuzz::libs {

inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
inline float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// bf16 is the top half of an f32: exact for values of the format (NaN keeps a quiet bit).
inline uint16_t to_bf16_bits(double v) { return static_cast<uint16_t>(float_bits(float(v)) >> 16); }
inline double from_bf16_bits(uint16_t b) { return bits_float(uint32_t{b} << 16); }

// IEEE binary16 for values of the format (normal, subnormal, zero, inf, NaN).
inline uint16_t to_f16_bits(double v) {
  const uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  const double a = std::fabs(v);
  if (std::isnan(v)) return 0x7e00;
  if (std::isinf(v)) return sign | 0x7c00;
  if (a < 0x1p-14)
    return sign | static_cast<uint16_t>(a * 0x1p24);  // subnormal: multiples of 2^-24
  const int e = std::ilogb(a);
  const auto mant = static_cast<uint16_t>((std::ldexp(a, -e) - 1) * 1024);
  return sign | static_cast<uint16_t>((e + 15) << 10) | mant;
}
inline double from_f16_bits(uint16_t b) {
  const double sign = (b & 0x8000) ? -1 : 1;
  const int e = (b >> 10) & 0x1f, m = b & 0x3ff;
  if (e == 0x1f) return m ? NAN : sign * INFINITY;
  if (e == 0) return sign * std::ldexp(m, -24);
  return sign * std::ldexp(1024 + m, e - 25);
}

// One tensor in the library's element type (f64, f32, or 16-bit bf16/f16 bit patterns).
struct Buffer {
  DType dtype;
  std::vector<unsigned char> bytes;
  void* data() { return bytes.data(); }
  size_t size() const { return bytes.size() / element_size(dtype); }
  static size_t element_size(DType d) { return d == DType::f64 ? 8 : (d == DType::f32 ? 4 : 2); }
};

inline Buffer encode(DType d, const std::vector<double>& v) {
  Buffer b{d, std::vector<unsigned char>(v.size() * Buffer::element_size(d))};
  for (size_t i = 0; i < v.size(); ++i) {
    unsigned char* p = b.bytes.data() + i * Buffer::element_size(d);
    if (d == DType::f64) {
      std::memcpy(p, &v[i], 8);
    } else if (d == DType::f32) {
      const float f = static_cast<float>(v[i]);
      std::memcpy(p, &f, 4);
    } else {
      const uint16_t h = d == DType::bf16 ? to_bf16_bits(v[i]) : to_f16_bits(v[i]);
      std::memcpy(p, &h, 2);
    }
  }
  return b;
}

inline Buffer empty_buffer(DType d, size_t n) {
  return Buffer{d, std::vector<unsigned char>(n * Buffer::element_size(d))};
}

inline std::vector<double> decode(const Buffer& b) {
  const size_t n = b.size();
  std::vector<double> out(n);
  for (size_t i = 0; i < n; ++i) {
    const unsigned char* p = b.bytes.data() + i * Buffer::element_size(b.dtype);
    if (b.dtype == DType::f64) {
      std::memcpy(&out[i], p, 8);
    } else if (b.dtype == DType::f32) {
      float f;
      std::memcpy(&f, p, 4);
      out[i] = f;
    } else {
      uint16_t h;
      std::memcpy(&h, p, 2);
      out[i] = b.dtype == DType::bf16 ? from_bf16_bits(h) : from_f16_bits(h);
    }
  }
  return out;
}

// A parameter as the dtype holds it (eps = 1e-5 in bf16): what the oracle evaluates with.
inline double dtype_param(const Input& in, std::string_view name, double fallback) {
  for (const auto& [k, v] : in.params)
    if (k == name) return round_to(in.dtype, v);
  return round_to(in.dtype, fallback);
}

inline size_t dim(const Tensor& t, size_t k) { return static_cast<size_t>(t.shape.at(k)); }

}  // namespace stabfuzz::libs
