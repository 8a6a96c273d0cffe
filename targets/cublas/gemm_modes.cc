// The cuBLAS GEMM modes as host code (gemm_modes.h): names, f16/bf16 bits, the shape check and
// the emulation of each mode's rounding with its error bound.
#include "targets/cublas/gemm_modes.h"

#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#include "stabfuzz/lowp.h"

namespace stabfuzz::cublas {

const char* mode_name(Mode m) {
  switch (m) {
    case Mode::f32:
      return "f32";
    case Mode::tf32:
      return "tf32";
    case Mode::f16_f32acc:
      return "f16_f32acc";
    case Mode::f16_f16acc:
      return "f16_f16acc";
    case Mode::bf16:
      return "bf16";
  }
  return "?";
}

unsigned short f16_bits(double v) {
  const uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  const double a = std::fabs(v);
  if (std::isnan(a)) return 0x7e00;
  if (a == 0) return sign;
  if (std::isinf(a) || a > 65504) return sign | 0x7c00;
  int e = 0;
  std::frexp(a, &e);  // a = f 2^e, f in [0.5, 1): the leading bit is 2^(e-1)
  if (e - 1 < -14) return sign | static_cast<uint16_t>(std::ldexp(a, 24));  // subnormal: a / 2^-24
  const auto mant = static_cast<uint16_t>(std::ldexp(a, 11 - e) - 1024);    // 10 fraction bits
  return sign | static_cast<uint16_t>((e - 1 + 15) << 10) | mant;
}

double f16_value(unsigned short bits) {
  const double sign = (bits & 0x8000) ? -1 : 1;
  const int e = (bits >> 10) & 0x1f, m = bits & 0x3ff;
  if (e == 0x1f) return m ? NAN : sign * INFINITY;
  if (e == 0) return sign * std::ldexp(m, -24);
  return sign * std::ldexp(1024 + m, e - 25);
}

unsigned short bf16_bits(double v) {
  const float f = static_cast<float>(v);  // exact: v is a bf16 value
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return static_cast<uint16_t>(u >> 16);
}

double bf16_value(unsigned short bits) {
  const uint32_t u = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

void check_gemm_shape(size_t a_size, size_t b_size, size_t m, size_t k, size_t n) {
  const size_t kMax = INT_MAX;
  if (m == 0 || k == 0 || n == 0)
    throw std::invalid_argument("gemm/cublas: A [m,k], B [k,n] with m, k, n >= 1");
  if (m > kMax || k > kMax || n > kMax)
    throw std::invalid_argument("gemm/cublas: m = " + std::to_string(m) +
                                ", k = " + std::to_string(k) + ", n = " + std::to_string(n) +
                                ": cublasGemmEx takes each as an int (at most 2^31 - 1)");
  if (a_size != m * k || b_size != k * n)
    throw std::invalid_argument("gemm/cublas: A [m,k], B [k,n]: " + std::to_string(a_size) +
                                " and " + std::to_string(b_size) +
                                " values for m, k, n = " + std::to_string(m) + ", " +
                                std::to_string(k) + ", " + std::to_string(n));
}

double to_tf32(double f32_value, Tf32Rounding r) {
  if (!std::isfinite(f32_value) || f32_value == 0) return f32_value;
  const float f = static_cast<float>(f32_value);
  uint32_t u;
  std::memcpy(&u, &f, 4);
  constexpr uint32_t kDropped = (1u << 13) - 1;  // f32's 23 fraction bits, TF32 keeps 10
  // Adding half of TF32's last place to the magnitude bits rounds half away from zero; a carry
  // moves into the exponent, up to infinity.
  if (r == Tf32Rounding::nearest_away) u += 1u << 12;
  u &= ~kDropped;
  float t;
  std::memcpy(&t, &u, 4);
  return t;
}

namespace {

struct ModeRounding {
  Format operands, accumulator, output;
  bool products_rounded;  // to the accumulator's format before they are summed (f16_f16acc)
};

ModeRounding rounding_of(Mode mode) {
  switch (mode) {
    case Mode::f32:
    case Mode::tf32:  // operands by to_tf32
      return {kF32, kF32, kF32, false};
    case Mode::f16_f32acc:
      return {kF16, kF32, kF16, false};
    case Mode::f16_f16acc:
      return {kF16, kF16, kF16, true};
    case Mode::bf16:
      return {kBF16, kF32, kBF16, false};
  }
  return {kF32, kF32, kF32, false};
}

// gamma(j) = j u / (1 - j u) for one unit in the last place u; infinite when j u >= 1.
double gamma(double j, double u) { return j * u < 1 ? j * u / (1 - j * u) : INFINITY; }

}  // namespace

Emulated emulate_gemm(Mode mode, const std::vector<double>& a, const std::vector<double>& b,
                      size_t m, size_t k, size_t n, Tf32Rounding rounding) {
  check_gemm_shape(a.size(), b.size(), m, k, n);
  const ModeRounding r = rounding_of(mode);
  auto operand = [&](double v) {
    return mode == Mode::tf32 ? to_tf32(v, rounding) : round_to_format(r.operands, v);
  };
  std::vector<double> ra(a.size()), rb(b.size());
  for (size_t i = 0; i < a.size(); ++i) ra[i] = operand(a[i]);
  for (size_t i = 0; i < b.size(); ++i) rb[i] = operand(b[i]);
  // One unit in the last place of the accumulator, and its smallest step (the subnormal spacing)
  // for the sums that underflow.
  const double ulp_acc = std::ldexp(1.0, 1 - r.accumulator.p);
  const double acc = gamma(2.0 * static_cast<double>(k), ulp_acc);
  const double floor_acc = 2.0 * static_cast<double>(k) * r.accumulator.quantum_min();
  const double host_u = std::numeric_limits<long double>::epsilon();
  Emulated out;
  out.value.resize(m * n);
  out.bound.resize(m * n);
  for (size_t i = 0; i < m; ++i)
    for (size_t j = 0; j < n; ++j) {
      long double s = 0, abs_sum = 0;
      for (size_t l = 0; l < k; ++l) {
        double p = ra[i * k + l] * rb[l * n + j];  // exact: at most 24 + 24 bits
        if (r.products_rounded) p = round_to_format(r.accumulator, p);
        s += p;
        abs_sum += std::fabs(p);
      }
      const double v = static_cast<double>(s);
      const double sa = static_cast<double>(abs_sum);
      const double host = static_cast<double>(k) * host_u * sa + std::ldexp(std::fabs(v), -53);
      const double acc_err = acc * sa + floor_acc;
      out.value[i * n + j] = v;
      out.bound[i * n + j] = acc_err + format_quantum(r.output, std::fabs(v) + acc_err) + host;
    }
  return out;
}

namespace {

uint64_t splitmix(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace

std::vector<double> tf32_probe(size_t count, uint64_t seed, bool below_half) {
  std::vector<double> out(count);
  uint64_t state = seed;
  for (auto& v : out) {
    const uint64_t r = splitmix(state);
    // 1.00xxxxxxxx (binary): the two leading fraction bits 0, eight random TF32 fraction bits,
    // then 13 dropped bits from [0x0c00, 0x1000) or [0x1400, 0x1c00) (units of 2^-23).
    const uint32_t kept = static_cast<uint32_t>(r & 0xff) << 13;
    const uint32_t dropped = (below_half ? 0x0c00u : 0x1400u) +
                             static_cast<uint32_t>((r >> 8) % (below_half ? 0x0400u : 0x0800u));
    v = 1.0 + std::ldexp(static_cast<double>(kept | dropped), -23);
  }
  return out;
}

std::vector<double> half_probe(size_t count, uint64_t seed, bool bf16) {
  std::vector<double> out(count);
  uint64_t state = seed;
  const int bits = bf16 ? 7 : 10;
  for (auto& v : out)
    v = 1.0 + std::ldexp(static_cast<double>(splitmix(state) & ((1u << bits) - 1)), -bits);
  return out;
}

}  // namespace stabfuzz::cublas
