// Adapters that turn an operator written once as a template over its scalar type into a Target's
// native and CESTAC entry points, for any signature (tensors in, one flat tensor out).
//
// An operator is a struct with
//   template <class T> static std::vector<T> run(const stabfuzz::OpArgs<T>& a);
// reading a.x[k] (the k-th input tensor, row-major), a.shape(k) and a.param("eps", 1e-5).
#pragma once

#include <cmath>
#include <string_view>
#include <vector>

#include "stabfuzz/family.h"
#include "stabfuzz/lowp.h"
#include "stabfuzz/stoch.h"

namespace stabfuzz {

template <class T>
struct OpArgs {
  std::vector<std::vector<T>> x;
  const Input* input = nullptr;
  const std::vector<int64_t>& shape(size_t k) const { return input->args.at(k).shape; }
  double param(std::string_view name, double fallback) const {
    return input->param(name, fallback);
  }
};

namespace detail {

template <class T>
OpArgs<T> op_args(const Input& in) {
  OpArgs<T> a;
  a.input = &in;
  a.x.reserve(in.args.size());
  for (const auto& t : in.args) {
    std::vector<T> v;
    v.reserve(t.values.size());
    for (double d : t.values) v.push_back(T(d));
    a.x.push_back(std::move(v));
  }
  return a;
}

template <class Op, class T>
std::vector<double> run_native(const Input& in) {
  const std::vector<T> y = Op::template run<T>(op_args<T>(in));
  std::vector<double> out;
  out.reserve(y.size());
  for (const T& v : y) out.push_back(static_cast<double>(v));
  return out;
}

template <class Op, class T, int N = 3>
CestacOutput run_cestac(const Input& in, const CestacRequest& req) {
  using S = Stoch<T, N>;
  CestacOutput out;
  cestac::Run run(req.seed, req.stream, req.config);
  OpArgs<S> a;
  a.input = &in;
  for (const auto& t : in.args) {
    std::vector<S> v;
    v.reserve(t.values.size());
    for (double d : t.values) v.push_back(S(static_cast<T>(d)));
    a.x.push_back(std::move(v));
  }
  const std::vector<S> ys = Op::template run<S>(a);
  out.mean.reserve(ys.size());
  for (const auto& y : ys) {
    out.mean.push_back(y.mean());
    out.digits.push_back(y.digits());
    bool noisy = false;
    for (int i = 1; i < N; ++i)
      noisy |= !(y.s[i] == y.s[0]) && !(std::isnan(y.s[i]) && std::isnan(y.s[0]));
    out.noisy.push_back(noisy);
  }
  out.log = run.log();
  return out;
}

}  // namespace detail

// Calls f.template operator()<T>() with the scalar type of a dtype: double, float, Half, BFloat16.
template <class F>
decltype(auto) with_scalar(DType d, F&& f) {
  switch (d) {
    case DType::f64:
      return f.template operator()<double>();
    case DType::f32:
      return f.template operator()<float>();
    case DType::f16:
      return f.template operator()<Half>();
    case DType::bf16:
      return f.template operator()<BFloat16>();
  }
  return f.template operator()<double>();
}

template <class Op>
std::function<std::vector<double>(const Input&)> op_native() {
  return [](const Input& in) {
    return with_scalar(in.dtype, [&]<class T>() { return detail::run_native<Op, T>(in); });
  };
}

template <class Op>
std::function<CestacOutput(const Input&, const CestacRequest&)> op_cestac() {
  return [](const Input& in, const CestacRequest& req) {
    return with_scalar(in.dtype, [&]<class T>() { return detail::run_cestac<Op, T>(in, req); });
  };
}

// op_native and op_cestac as one type, for code that instantiates operators generically
// (injectors/faultable.h).
struct PlainAdapter {
  template <class Op>
  static auto native() {
    return op_native<Op>();
  }
  template <class Op>
  static auto cestac() {
    return op_cestac<Op>();
  }
};

// A row operator (`template <class T> static void run(const T* x, T* y, size_t n)`, one row in,
// n values out) as an operator of the general form.
template <class RowOp>
struct RowAsOp {
  template <class T>
  static std::vector<T> run(const OpArgs<T>& a) {
    std::vector<T> y(a.x.at(0).size());
    RowOp::template run<T>(a.x[0].data(), y.data(), y.size());
    return y;
  }
};

template <class RowOp>
std::function<std::vector<double>(const Input&)> row_native() {
  return op_native<RowAsOp<RowOp>>();
}
template <class RowOp>
std::function<CestacOutput(const Input&, const CestacRequest&)> row_cestac() {
  return op_cestac<RowAsOp<RowOp>>();
}

}  // namespace stabfuzz
