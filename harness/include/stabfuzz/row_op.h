// Adapters that turn a row operator written once as a template over its scalar type into a
// Target's native and CESTAC entry points.
//
// A row operator is a struct with `template <class T> static void run(const T* x, T* y, size_t n)`
// reading one row of n values and writing n outputs.
#pragma once

#include <vector>

#include "stabfuzz/family.h"
#include "stabfuzz/stoch.h"

namespace stabfuzz {

template <class Op, class T>
std::vector<double> run_row_native(const Input& in) {
  const auto& x = in.args.at(0).values;
  std::vector<T> xs(x.begin(), x.end()), ys(x.size());
  Op::template run<T>(xs.data(), ys.data(), xs.size());
  return std::vector<double>(ys.begin(), ys.end());
}

template <class Op>
std::function<std::vector<double>(const Input&)> row_native() {
  return [](const Input& in) {
    return in.dtype == DType::f64 ? run_row_native<Op, double>(in) : run_row_native<Op, float>(in);
  };
}

template <class Op, class T, int N = 3>
CestacOutput run_row_cestac(const Input& in, const CestacRequest& req) {
  using S = Stoch<T, N>;
  const auto& x = in.args.at(0).values;
  CestacOutput out;
  cestac::Run run(req.seed, req.stream, req.config);
  std::vector<S> xs(x.size()), ys(x.size());
  for (size_t i = 0; i < x.size(); ++i) xs[i] = S(static_cast<T>(x[i]));
  Op::template run<S>(xs.data(), ys.data(), xs.size());
  out.mean.reserve(ys.size());
  for (const auto& y : ys) {
    out.mean.push_back(y.mean());
    out.digits.push_back(y.digits());
    bool noisy = false;
    for (int i = 1; i < N; ++i) noisy |= !(y.s[i] == y.s[0]) && !(std::isnan(y.s[i]) && std::isnan(y.s[0]));
    out.noisy.push_back(noisy);
  }
  out.log = run.log();
  return out;
}

template <class Op>
std::function<CestacOutput(const Input&, const CestacRequest&)> row_cestac() {
  return [](const Input& in, const CestacRequest& req) {
    return in.dtype == DType::f64 ? run_row_cestac<Op, double>(in, req)
                                  : run_row_cestac<Op, float>(in, req);
  };
}

}  // namespace stabfuzz
