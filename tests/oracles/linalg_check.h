// Shared by the linalg oracle tests (linalg_test.cc, linalg_double_double_test.cc): the families
// and the inputs of their shapes.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "families/regimes.h"
#include "stabfuzz/family.h"

namespace stabfuzz::linalg_check {

using Vec = std::vector<double>;
using Params = std::vector<std::pair<std::string, double>>;

inline const Family& family(const std::string& name) {
  const Family* f = default_registry().find_family(name);
  if (!f) throw std::logic_error("no family " + name);
  return *f;
}
inline Tensor row(Vec v) { return Tensor{{static_cast<int64_t>(v.size())}, std::move(v)}; }
inline Tensor mat(int64_t r, int64_t c, Vec v) { return Tensor{{r, c}, std::move(v)}; }
inline Input make(DType d, std::vector<Tensor> t, Params p = {}) {
  return regime::make_input(d, std::move(t), std::move(p));
}
// attention: Q (s x dim), K (t x dim), V (t x dv).
inline Input attention_input(DType d, int64_t s, int64_t dim, int64_t t, int64_t dv, Vec q, Vec k,
                             Vec v, Params p = {}) {
  return make(d, {mat(s, dim, std::move(q)), mat(t, dim, std::move(k)), mat(t, dv, std::move(v))},
              std::move(p));
}
// adam: rows p, g, m, v.
inline Input adam_input(DType d, Vec p, Vec g, Vec m, Vec v, Params prm = {}) {
  return make(d, {row(std::move(p)), row(std::move(g)), row(std::move(m)), row(std::move(v))},
              std::move(prm));
}

}  // namespace stabfuzz::linalg_check
