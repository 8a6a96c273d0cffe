// Plugin targets: a user's implementation of an existing family, registered with one macro, built
// as a shared library against the installed package (find_package(stabfuzz), stabfuzz::plugin),
// and loaded by `stabfuzz --plugin lib.so --target FAMILY`.
//
//   struct MySoftmax {            // a template over the scalar type: native and CESTAC runs
//     template <class T>
//     static void run(const T* x, T* y, size_t n);                  // one row in, n values out
//     // or: template <class T> static std::vector<T> run(const stabfuzz::plugin::Args<T>& a);
//   };
//   STABFUZZ_PLUGIN_TARGET(softmax, "mylib/fast", MySoftmax);
//
//   void my_softmax_f32(const float* x, float* y, size_t n);         // a plain function: black box
//   STABFUZZ_PLUGIN_BLACKBOX(softmax, "mylib/blas", my_softmax_f32, my_softmax_f64);
//
// A template runs on double, float, stabfuzz::Half, stabfuzz::BFloat16 (f16/bf16: each operation
// in double, rounded to the format) and on cestac::Stoch<T, 3> of each, so write `using std::exp;
// exp(x)` (operations are found by ADL) and compare values with < and >. An operator may declare
// `static constexpr const char* description` and `static constexpr uint32_t dtypes` (a mask of
// STABFUZZ_DTYPE_BIT) when it supports fewer dtypes. Black-box functions take float or double,
// one function per dtype.
//
// The plugin carries its own copy of the CESTAC runtime (the package compiles it into the plugin;
// no stabfuzz library is linked): a CESTAC run executes inside the plugin, and its outputs,
// digits and instability sites (addresses in the plugin, symbolized by stabfuzz) cross the C
// boundary of stabfuzz/plugin_abi.h. Nothing else crosses it: no C++ type, no exception.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <stdexcept>
#include <string_view>
#include <type_traits>
#include <vector>

#include "stabfuzz/lowp.h"
#include "stabfuzz/plugin_abi.h"
#include "stabfuzz/stoch.h"

namespace stabfuzz::plugin {

// One call's inputs in the scalar type T (the plugin's counterpart of the built-in OpArgs<T>):
// x[k] is the k-th tensor of the family's signature, row-major.
template <class T>
struct Args {
  std::vector<std::vector<T>> x;
  std::vector<std::vector<int64_t>> shapes;
  const stabfuzz_input* input = nullptr;
  const std::vector<int64_t>& shape(size_t k) const { return shapes.at(k); }
  // A named parameter of the call (eps, ...), or `fallback` (the family's default) when absent.
  double param(std::string_view name, double fallback) const {
    for (uint32_t i = 0; i < input->n_params; ++i)
      if (name == input->params[i].name) return input->params[i].value;
    return fallback;
  }
  uint32_t dtype() const { return input->dtype; }
};

namespace detail {

// The plugin's targets, filled by the macros' static initializers (one list per plugin: the
// package builds plugins with hidden visibility).
inline std::vector<stabfuzz_target>& registered() {
  static std::vector<stabfuzz_target> targets;
  return targets;
}
inline bool add(const stabfuzz_target& t) {
  registered().push_back(t);
  return true;
}

template <class T>
struct IsStoch : std::false_type {};
template <class T, int N, cestac::Rounding R>
struct IsStoch<cestac::Stoch<T, N, R>> : std::true_type {};

// An exact input value as T (Stoch: every sample equal to the value in its base type).
template <class T>
T exact(double d) {
  if constexpr (IsStoch<T>::value)
    return T(static_cast<typename T::value_type>(d));
  else
    return T(d);
}

template <class T>
Args<T> make_args(const stabfuzz_input* in) {
  Args<T> a;
  a.input = in;
  a.x.reserve(in->n_args);
  for (uint32_t k = 0; k < in->n_args; ++k) {
    const stabfuzz_tensor& t = in->args[k];
    a.shapes.emplace_back(t.shape, t.shape + t.ndim);
    std::vector<T> v;
    v.reserve(t.size);
    for (uint64_t i = 0; i < t.size; ++i) v.push_back(exact<T>(t.values[i]));
    a.x.push_back(std::move(v));
  }
  return a;
}

template <class Op, class T>
concept RowOp = requires(const T* x, T* y, size_t n) {
  Op::template run<T>(x, y, n);
};

// Runs an operator of either form on one call's inputs.
template <class Op, class T>
std::vector<T> call(const Args<T>& a) {
  if constexpr (RowOp<Op, T>) {
    if (a.x.empty()) throw std::invalid_argument("a row operator needs one input tensor");
    std::vector<T> y(a.x[0].size());
    Op::template run<T>(a.x[0].data(), y.data(), y.size());
    return y;
  } else {
    return Op::template run<T>(a);
  }
}

template <class Op>
constexpr uint32_t dtypes_of() {
  if constexpr (requires { Op::dtypes; })
    return static_cast<uint32_t>(Op::dtypes);
  else
    return STABFUZZ_ALL_DTYPES;
}
template <class Op>
constexpr const char* description_of() {
  if constexpr (requires { Op::description; })
    return Op::description;
  else
    return "";
}

// Calls f.template operator()<T>() with the scalar of dtype code d, for the dtypes in Mask only
// (an operator that declares fewer dtypes is never instantiated for the others).
template <uint32_t Mask, class F>
void with_scalar(uint32_t d, F&& f) {
  if constexpr (Mask & STABFUZZ_DTYPE_BIT(STABFUZZ_F64))
    if (d == STABFUZZ_F64) return f.template operator()<double>();
  if constexpr (Mask & STABFUZZ_DTYPE_BIT(STABFUZZ_F32))
    if (d == STABFUZZ_F32) return f.template operator()<float>();
  if constexpr (Mask & STABFUZZ_DTYPE_BIT(STABFUZZ_F16))
    if (d == STABFUZZ_F16) return f.template operator()<Half>();
  if constexpr (Mask & STABFUZZ_DTYPE_BIT(STABFUZZ_BF16))
    if (d == STABFUZZ_BF16) return f.template operator()<BFloat16>();
  throw std::invalid_argument("the target does not run in this dtype");
}

// Exceptions never cross the C boundary: they become the call's error message.
template <class F>
int guarded(const stabfuzz_sink* sink, F&& f) {
  try {
    f();
    return 0;
  } catch (const std::exception& e) {
    sink->error(sink->ctx, e.what());
  } catch (...) {
    sink->error(sink->ctx, "unknown exception");
  }
  return 1;
}

template <class T>
void emit_outputs(const std::vector<T>& y, const stabfuzz_sink* sink) {
  std::vector<double> out;
  out.reserve(y.size());
  for (const T& v : y) out.push_back(static_cast<double>(v));
  sink->outputs(sink->ctx, out.data(), out.size());
}

template <class Op>
int native(const stabfuzz_input* in, const stabfuzz_sink* sink) {
  return guarded(sink, [&] {
    with_scalar<dtypes_of<Op>()>(
        in->dtype, [&]<class T>() { emit_outputs(call<Op, T>(make_args<T>(in)), sink); });
  });
}

// One CESTAC run of the operator on Stoch<T, 3>, as the built-in targets run (stabfuzz/op.h):
// the run's statistics and instability log stay inside the plugin until the run has ended.
template <class Op, class T>
void cestac_run(const stabfuzz_input* in, const stabfuzz_cestac_config* cfg,
                const stabfuzz_sink* sink) {
  constexpr int N = 3;
  using S = cestac::Stoch<T, N>;
  std::vector<double> mean, digits;
  std::vector<uint8_t> noisy;
  cestac::Log log;
  {
    cestac::Config config;
    config.cancel_digits = cfg->cancel_digits;
    config.detect = cfg->detect != 0;
    cestac::Run run(cfg->seed, cfg->stream, config);
    const std::vector<S> ys = call<Op, S>(make_args<S>(in));
    for (const S& y : ys) {
      mean.push_back(y.mean());
      digits.push_back(y.digits());
      bool differ = false;
      for (int i = 1; i < N; ++i)
        differ |= !(y.s[i] == y.s[0]) && !(std::isnan(y.s[i]) && std::isnan(y.s[0]));
      noisy.push_back(differ);
    }
    log = run.log();
  }
  sink->cestac(sink->ctx, mean.data(), digits.data(), noisy.data(), mean.size());
  for (const auto& s : log.sites)
    sink->instability(sink->ctx, static_cast<uint32_t>(s.kind), static_cast<uint64_t>(s.address),
                      s.count);
}

template <class Op>
int cestac(const stabfuzz_input* in, const stabfuzz_cestac_config* cfg, const stabfuzz_sink* sink) {
  return guarded(sink, [&] {
    with_scalar<dtypes_of<Op>()>(in->dtype, [&]<class T>() { cestac_run<Op, T>(in, cfg, sink); });
  });
}

template <class Op>
stabfuzz_target template_target(const char* family, const char* variant) {
  static_assert(dtypes_of<Op>() != 0 && (dtypes_of<Op>() & ~STABFUZZ_ALL_DTYPES) == 0,
                "dtypes: a nonempty mask of STABFUZZ_DTYPE_BIT(STABFUZZ_F64 ... STABFUZZ_BF16)");
  return {
      family,      variant,    description_of<Op>(), dtypes_of<Op>(), RowOp<Op, double> ? 1 : -1,
      &native<Op>, &cestac<Op>};
}

// ---- black-box functions ------------------------------------------------------------------------

template <class F>
struct BlackBox {
  static_assert(sizeof(F) == 0,
                "a black-box function is void(const T*, T*, size_t) or "
                "std::vector<T>(const stabfuzz::plugin::Args<T>&), T float or double");
};
template <class T>
struct BlackBox<void (*)(const T*, T*, size_t)> {
  using Scalar = T;
  static constexpr bool kRow = true;
};
template <class T>
struct BlackBox<std::vector<T> (*)(const Args<T>&)> {
  using Scalar = T;
  static constexpr bool kRow = false;
};

template <class T>
constexpr uint32_t dtype_code() {
  static_assert(std::is_same_v<T, double> || std::is_same_v<T, float>,
                "black-box functions take float or double");
  return std::is_same_v<T, double> ? STABFUZZ_F64 : STABFUZZ_F32;
}

template <auto Fn>
bool blackbox_try(const stabfuzz_input* in, const stabfuzz_sink* sink) {
  using B = BlackBox<decltype(Fn)>;
  using T = typename B::Scalar;
  if (in->dtype != dtype_code<T>()) return false;
  const Args<T> a = make_args<T>(in);
  if constexpr (B::kRow) {
    if (a.x.empty()) throw std::invalid_argument("a row function needs one input tensor");
    std::vector<T> y(a.x[0].size());
    Fn(a.x[0].data(), y.data(), y.size());
    emit_outputs(y, sink);
  } else {
    emit_outputs(Fn(a), sink);
  }
  return true;
}

template <auto... Fns>
int blackbox_native(const stabfuzz_input* in, const stabfuzz_sink* sink) {
  return guarded(sink, [&] {
    if (!(blackbox_try<Fns>(in, sink) || ...))
      throw std::invalid_argument("the target does not run in this dtype");
  });
}

template <auto... Fns>
stabfuzz_target blackbox_target(const char* family, const char* variant, const char* description) {
  static_assert(sizeof...(Fns) > 0, "name at least one function");
  constexpr uint32_t mask =
      (STABFUZZ_DTYPE_BIT(dtype_code<typename BlackBox<decltype(Fns)>::Scalar>()) | ...);
  constexpr bool row = (BlackBox<decltype(Fns)>::kRow || ...);
  return {family, variant, description, mask, row ? 1 : -1, &blackbox_native<Fns...>, nullptr};
}

}  // namespace detail
}  // namespace stabfuzz::plugin

#define STABFUZZ_PLUGIN_CAT2_(a, b) a##b
#define STABFUZZ_PLUGIN_CAT_(a, b) STABFUZZ_PLUGIN_CAT2_(a, b)

// Registers Op (a struct with a `run` template, see above) as target FAMILY/VARIANT.
#define STABFUZZ_PLUGIN_TARGET(family, variant, Op)                                               \
  [[maybe_unused]] static const bool STABFUZZ_PLUGIN_CAT_(stabfuzz_plugin_target_, __COUNTER__) = \
      ::stabfuzz::plugin::detail::add(                                                            \
          ::stabfuzz::plugin::detail::template_target<Op>(#family, variant))

// Registers plain float/double functions, one per dtype, as the black-box target FAMILY/VARIANT.
#define STABFUZZ_PLUGIN_BLACKBOX(family, variant, ...)                                            \
  [[maybe_unused]] static const bool STABFUZZ_PLUGIN_CAT_(stabfuzz_plugin_target_, __COUNTER__) = \
      ::stabfuzz::plugin::detail::add(::stabfuzz::plugin::detail::blackbox_target<__VA_ARGS__>(   \
          #family, variant, "black box: " #__VA_ARGS__))
