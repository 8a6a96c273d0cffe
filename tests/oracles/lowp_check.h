// Shared checks of the f16/bf16 oracle tests: long double references rounded to the format.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "families/regimes.h"
#include "harness/pipeline/verdict.h"
#include "stabfuzz/dtype.h"
#include "stabfuzz/entropy.h"
#include "stabfuzz/family.h"
#include "stabfuzz/lowp.h"

namespace stabfuzz::lowp_check {

using LD = long double;
using Params = std::vector<std::pair<std::string, double>>;

inline const Family& family(const char* name) {
  const Family* f = default_registry().find_family(name);
  if (!f) throw std::logic_error(std::string("no family ") + name);
  return *f;
}

inline Tensor vec(std::vector<double> v) {
  return Tensor{{static_cast<int64_t>(v.size())}, std::move(v)};
}
inline Tensor mat(int64_t r, int64_t c, std::vector<double> v) {
  return Tensor{{r, c}, std::move(v)};
}

// The input with its values rounded to the dtype (what the reference must then use).
inline Input make(DType d, std::vector<Tensor> t, Params p = {}) {
  return regime::make_input(d, std::move(t), std::move(p));
}

// The oracle's answer equals the long double reference rounded to the format, output by output.
// Outputs whose reference lies within 1% of a quantum of a rounding boundary are skipped (long
// double's 64 bits could round either way there); at least half of them must be checked.
inline void expect_oracle_matches(const char* name, const Input& in, const std::vector<LD>& ref) {
  const OracleResult r = family(name).oracle(in);
  const Format& f = dtype_format(in.dtype);
  ASSERT_TRUE(r.decidable) << name << " " << dtype_name(in.dtype);
  ASSERT_EQ(r.exact.size(), ref.size()) << name;
  size_t checked = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double v = static_cast<double>(ref[i]);
    const double q = format_quantum(f, v), rounded = round_to_format(f, v);
    const double to_mid = std::fabs(std::fabs(v - rounded) - q / 2);
    if (to_mid < 0.01 * q) continue;
    ++checked;
    EXPECT_EQ(r.exact[i], rounded)
        << name << " " << dtype_name(in.dtype) << " output " << i << ": reference " << v;
  }
  EXPECT_GE(2 * checked, ref.size()) << name << ": too few outputs far from a rounding boundary";
}

// The family's stable target on a few inputs of every regime, in f16 and bf16: within tolerance.
inline void expect_stable_within_tolerance(const char* name, uint64_t seed) {
  const Family& f = family(name);
  const Target* t = nullptr;
  for (const auto& x : f.targets)
    if (x.id == f.name + "/cpu/stable") t = &x;
  ASSERT_NE(t, nullptr);
  for (DType d : {DType::f16, DType::bf16})
    for (size_t ri = 0; ri < f.regimes.size(); ++ri) {
      SeededEntropy e(seed, ri);
      for (int k = 0; k < 3; ++k) {
        Input in = f.regimes[ri].sample(e, d);
        for (int redraw = 0; redraw < 32 && in.total_size() > 512; ++redraw)
          in = f.regimes[ri].sample(e, d);
        ASSERT_FALSE(f.validate(in).has_value()) << name << " " << f.regimes[ri].name;
        const OracleResult o = f.oracle(in);
        if (!o.decidable) continue;
        const Verdict v = judge(f, in, t->native(in), o, nullptr);
        EXPECT_FALSE(v.oracle_fired)
            << name << " " << dtype_name(d) << " regime " << f.regimes[ri].name << ": computed "
            << v.computed << " exact " << v.exact << " ratio " << v.max_ratio;
      }
    }
}

}  // namespace stabfuzz::lowp_check
