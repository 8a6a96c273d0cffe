// Faulty<T>: a scalar that computes exactly like T (double or float) unless a fault plan is active
// on the thread, in which case the plan's arithmetic fault strikes the operations it names.
//
// Every operation is an always-inline hidden friend (found by ADL, like Stoch's) that calls one
// noinline function per operation class; that function's return address lies inside the operator
// code, so a strike is located to the operator's file:line with CESTAC's symbolizer. A family's
// declaration instantiates its stable operator on Faulty<T> (injectors/faultable.h); the fault
// mutants run that instantiation with a plan in scope.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "injectors/fault_plan.h"
#include "stabfuzz/lowp.h"

namespace stabfuzz::fault {

namespace detail {

enum class Op : uint8_t { add, sub, mul, div, sqrt, pow, elem };

// Precision-only formats: 24 bits with double's range (libm in f32 precision for double data
// without f32's overflow), and TF32 (11 bits, f32's range) for float data.
inline constexpr Format kP24Wide{24, -1022, 1023};
inline constexpr Format kTF32{11, -126, 127};
// 12 bits with f32's range: the accuracy of the SSE/AVX approximate reciprocal (rcpps).
inline constexpr Format kRcp12{12, -126, 127};

template <class T>
constexpr const Format& home() {
  if constexpr (std::is_same_v<T, double>)
    return kF64;
  else
    return kF32;
}
// The lower format of "one operation in lower precision": f32 for double, bf16 for float.
template <class T>
constexpr const Format& lower() {
  if constexpr (std::is_same_v<T, double>)
    return kF32;
  else
    return kBF16;
}

template <class T>
T plain(Op op, T a, T b) {
  switch (op) {
    case Op::add:
      return a + b;
    case Op::sub:
      return a - b;
    case Op::mul:
      return a * b;
    case Op::div:
      return a / b;
    case Op::sqrt:
      return std::sqrt(a);
    case Op::pow:
      return std::pow(a, b);
    case Op::elem:
      break;
  }
  return a;
}

template <class T>
T flush(T v) {
  return std::fpclassify(v) == FP_SUBNORMAL ? std::copysign(T(0), v) : v;
}

template <class T>
bool same(T a, T b) {
  return (a == b && std::signbit(a) == std::signbit(b)) || (std::isnan(a) && std::isnan(b));
}

// r rounded toward zero: r is round-to-nearest of a op b; the exact error's sign decides whether
// r lies beyond the exact value (TwoSum for +/-, FMA residuals for x, / and sqrt).
template <class T>
T toward_zero(Op op, T a, T b, T r) {
  if (!std::isfinite(r) || r == 0) return r;
  T err;  // sign of (exact - r)
  switch (op) {
    case Op::add:
    case Op::sub: {
      const T bb = op == Op::add ? b : -b, z = r - a;
      err = (a - (r - z)) + (bb - z);
      break;
    }
    case Op::mul:
      err = std::fma(a, b, -r);
      break;
    case Op::div: {
      const T rem = std::fma(-r, b, a);  // a - r b, exact
      err = b > 0 ? rem : -rem;
      break;
    }
    case Op::sqrt:
      err = std::fma(-r, r, a);
      break;
    default:
      return r;
  }
  if (err == 0 || (err > 0) == (r > 0)) return r;  // r is already on the zero side
  return std::nextafter(r, T(0));
}

// r moved by kPerturbUlps units in the last place of T, away from zero.
template <class T>
T perturb(T r) {
  if (!std::isfinite(r)) return r;
  const double q = format_quantum(home<T>(), static_cast<double>(r));
  const double p = static_cast<double>(r) + std::copysign(kPerturbUlps * q, r == 0 ? 1.0 : r);
  // Beyond T's largest finite value the conversion would be undefined: the result overflows.
  if (std::fabs(p) > home<T>().max_finite()) return std::copysign(T(INFINITY), r);
  return static_cast<T>(p);
}

// One operation under the thread's plan. `fn` is the elementary function for Op::elem, evaluated on
// T (plain) or on double (a lower-precision evaluation).
template <class T>
[[gnu::noinline]] T apply(Op op, T a, T b, T (*fn)(T), double (*fn_wide)(double)) {
  const auto where = reinterpret_cast<uintptr_t>(__builtin_return_address(0));
  const T r = op == Op::elem ? fn(a) : plain(op, a, b);
  State* st = current;
  if (st == nullptr) return r;
  const int64_t index = st->eligible;
  T f = r;
  bool strike = false;  // the fault acted here (its value may still equal r)
  switch (st->kind) {
    case Kind::one_op_low_precision:
      if (op == Op::add || op == Op::sub || op == Op::mul || op == Op::div) {
        strike = st->eligible++ == st->strike_at;
        if (strike) {
          const Format& lo = lower<T>();
          const double la = round_to_format(lo, a), lb = round_to_format(lo, b);
          f = static_cast<T>(round_to_format(lo, plain(op, la, lb)));
        }
      }
      break;
    case Kind::perturb_ulps:
      strike = st->eligible++ == st->strike_at;
      if (strike) f = perturb(r);
      break;
    case Kind::add_bf16:
    case Kind::add_f16:
      ++st->eligible;
      if (op == Op::add || op == Op::sub)
        f = static_cast<T>(round_to_format(st->kind == Kind::add_bf16 ? kBF16 : kF16,
                                           plain(op, double(a), double(b))));
      break;
    case Kind::mul_low_operands:
      ++st->eligible;
      if (op == Op::mul) {
        const Format& lo = std::is_same_v<T, double> ? kF32 : kTF32;
        f = static_cast<T>(round_to_format(lo, a)) * static_cast<T>(round_to_format(lo, b));
      }
      break;
    case Kind::flush_subnormals:
      ++st->eligible;
      f = flush(op == Op::elem ? fn(flush(a)) : plain(op, flush(a), flush(b)));
      break;
    case Kind::libm_low_precision:
      ++st->eligible;
      if (op == Op::elem || op == Op::sqrt || op == Op::pow) {
        const Format& lo = std::is_same_v<T, double> ? kP24Wide : kTF32;
        const double la = round_to_format(lo, a), lb = round_to_format(lo, b);
        const double w = op == Op::elem ? fn_wide(la) : plain(op, la, lb);
        f = static_cast<T>(round_to_format(lo, w));
      }
      break;
    case Kind::div_approx_reciprocal:
      ++st->eligible;
      if (op == Op::div) {
        const Format& lo = std::is_same_v<T, double> ? kP24Wide : kRcp12;
        f = a * static_cast<T>(round_to_format(lo, 1.0 / static_cast<double>(b)));
      }
      break;
    case Kind::round_toward_zero:
      ++st->eligible;
      f = toward_zero(op, a, b, r);
      break;
    default:
      break;
  }
  const bool changed = !same(f, r);
  if (strike || changed) {
    st->strikes += changed;
    if (st->first_index < 0) record_strike(*st, where), st->first_index = index;
  }
  return f;
}

}  // namespace detail

#define SF_FAULT_INLINE __attribute__((always_inline)) inline

template <class T>
class Faulty {
  static_assert(std::is_same_v<T, double> || std::is_same_v<T, float>, "Faulty<double|float>");
  using Op = detail::Op;

 public:
  using value_type = T;
  Faulty() = default;
  template <class U, std::enable_if_t<std::is_arithmetic_v<U>, int> = 0>
  SF_FAULT_INLINE Faulty(U v) : v_(static_cast<T>(v)) {}  // NOLINT: behaves like T
  template <class U, std::enable_if_t<std::is_arithmetic_v<U>, int> = 0>
  SF_FAULT_INLINE explicit operator U() const {
    return static_cast<U>(v_);
  }
  T value() const { return v_; }

#define SF_FAULT_BINARY(sym, op)                                           \
  friend SF_FAULT_INLINE Faulty operator sym(Faulty a, Faulty b) {         \
    return Faulty(detail::apply<T>(Op::op, a.v_, b.v_, nullptr, nullptr)); \
  }                                                                        \
  SF_FAULT_INLINE Faulty& operator sym##=(Faulty b) { return *this = *this sym b; }
  SF_FAULT_BINARY(+, add)
  SF_FAULT_BINARY(-, sub)
  SF_FAULT_BINARY(*, mul)
  SF_FAULT_BINARY(/, div)
#undef SF_FAULT_BINARY
  friend SF_FAULT_INLINE Faulty operator-(Faulty a) { return Faulty(-a.v_); }

  friend SF_FAULT_INLINE Faulty sqrt(Faulty a) {
    return Faulty(detail::apply<T>(Op::sqrt, a.v_, T(0), nullptr, nullptr));
  }
  friend SF_FAULT_INLINE Faulty pow(Faulty a, Faulty b) {
    return Faulty(detail::apply<T>(Op::pow, a.v_, b.v_, nullptr, nullptr));
  }
#define SF_FAULT_ELEMENTARY(fn)                                    \
  friend SF_FAULT_INLINE Faulty fn(Faulty a) {                     \
    return Faulty(detail::apply<T>(                                \
        Op::elem, a.v_, T(0), [](T x) -> T { return std::fn(x); }, \
        [](double x) -> double { return std::fn(x); }));           \
  }
  SF_FAULT_ELEMENTARY(exp)
  SF_FAULT_ELEMENTARY(expm1)
  SF_FAULT_ELEMENTARY(log)
  SF_FAULT_ELEMENTARY(log1p)
  SF_FAULT_ELEMENTARY(log2)
  SF_FAULT_ELEMENTARY(log10)
  SF_FAULT_ELEMENTARY(exp2)
  SF_FAULT_ELEMENTARY(tanh)
  SF_FAULT_ELEMENTARY(erf)
  SF_FAULT_ELEMENTARY(erfc)
  SF_FAULT_ELEMENTARY(sin)
  SF_FAULT_ELEMENTARY(cos)
  SF_FAULT_ELEMENTARY(atan)
#undef SF_FAULT_ELEMENTARY

  // Exact operations: no rounding, so no fault.
#define SF_FAULT_EXACT(fn) \
  friend SF_FAULT_INLINE Faulty fn(Faulty a) { return Faulty(std::fn(a.v_)); }
  SF_FAULT_EXACT(fabs)
  SF_FAULT_EXACT(abs)
  SF_FAULT_EXACT(floor)
  SF_FAULT_EXACT(ceil)
  SF_FAULT_EXACT(round)
  SF_FAULT_EXACT(trunc)
  SF_FAULT_EXACT(nearbyint)
#undef SF_FAULT_EXACT
  friend SF_FAULT_INLINE Faulty fma(Faulty a, Faulty b, Faulty c) {
    return Faulty(std::fma(a.v_, b.v_, c.v_));
  }
  friend SF_FAULT_INLINE Faulty copysign(Faulty a, Faulty b) {
    return Faulty(std::copysign(a.v_, b.v_));
  }
  friend SF_FAULT_INLINE Faulty max(Faulty a, Faulty b) { return a.v_ < b.v_ ? b : a; }
  friend SF_FAULT_INLINE Faulty min(Faulty a, Faulty b) { return b.v_ < a.v_ ? b : a; }
  friend SF_FAULT_INLINE Faulty fmax(Faulty a, Faulty b) { return Faulty(std::fmax(a.v_, b.v_)); }
  friend SF_FAULT_INLINE Faulty fmin(Faulty a, Faulty b) { return Faulty(std::fmin(a.v_, b.v_)); }
  friend SF_FAULT_INLINE bool isfinite(Faulty a) { return std::isfinite(a.v_); }
  friend SF_FAULT_INLINE bool isinf(Faulty a) { return std::isinf(a.v_); }
  friend SF_FAULT_INLINE bool isnan(Faulty a) { return std::isnan(a.v_); }
  friend SF_FAULT_INLINE bool signbit(Faulty a) { return std::signbit(a.v_); }

  friend SF_FAULT_INLINE bool operator<(Faulty a, Faulty b) { return a.v_ < b.v_; }
  friend SF_FAULT_INLINE bool operator>(Faulty a, Faulty b) { return a.v_ > b.v_; }
  friend SF_FAULT_INLINE bool operator<=(Faulty a, Faulty b) { return a.v_ <= b.v_; }
  friend SF_FAULT_INLINE bool operator>=(Faulty a, Faulty b) { return a.v_ >= b.v_; }
  friend SF_FAULT_INLINE bool operator==(Faulty a, Faulty b) { return a.v_ == b.v_; }
  friend SF_FAULT_INLINE bool operator!=(Faulty a, Faulty b) { return a.v_ != b.v_; }

 private:
  T v_ = 0;
};

#undef SF_FAULT_INLINE

}  // namespace stabfuzz::fault

// Scalar-type traits of the CPU targets learn Faulty<T>: it has T's format. (The primary template
// lives in targets/cpu/reductions.h; a partial specialization may precede the definition.)
namespace stabfuzz::targets::reduce_detail {
template <class T>
struct FormatOf;
template <class T>
struct FormatOf<fault::Faulty<T>> : FormatOf<T> {};
}  // namespace stabfuzz::targets::reduce_detail
