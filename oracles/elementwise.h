// Elementwise oracles: y_i = f(x_i) correctly rounded in MPFR, and each output's condition number.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "stabfuzz/family.h"

namespace stabfuzz::oracle {

enum class Unary {
  exp,
  log,    // x >= 0; log(0) = -inf exactly
  log1p,  // x >= -1; log1p(-1) = -inf exactly
  expm1,
  tanh,
  erf,
  sigmoid,      // 1 / (1 + e^-x)
  log_sigmoid,  // -log(1 + e^-x)
  softplus,     // log(1 + e^x)
  silu,         // x sigmoid(x)
  gelu,         // x/2 (1 + erf(x / sqrt 2))
  gelu_tanh,    // x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), the constants as written
};

std::string_view unary_name(Unary f);

// y_i = f(x_i) over the one input row, correctly rounded to the input dtype (Ziv's strategy),
// and cond_i = unary_cond(f, x_i). Infinite inputs give f's limits (exp(-inf) = 0,
// sigmoid(-inf) = 0, silu(-inf) = -0, ...).
OracleResult unary(Unary f, const Input& in);

// Componentwise relative condition number |x f'(x) / f(x)| at x, computed in long double (a few
// correct digits), capped at DBL_MAX. Conventions where the quotient is not a number:
//  - f(x) = 0 exactly at x = 0 (log1p, expm1, tanh, erf, silu, gelu, gelu_tanh): the limit, 1;
//  - log at x = 1: 1. The limit is infinite, but the input is exact and log(1) = 0 is exact:
//    a kernel must return 0 itself, within tol subnormal steps;
//  - infinite outputs at exact poles (log(0), log1p(-1)) and infinite inputs: 0, since only the
//    exact limit is right.
double unary_cond(Unary f, double x);

namespace detail {
// The two ways unary() evaluates an output (exposed for tests). Double-double with a proven
// bound (oracles/double_double.h) for exp, log, log1p, expm1, tanh, sigmoid, log_sigmoid,
// softplus and silu, rounded when the bound decides it: nullopt for the other functions, for
// inputs out of the fast path's range and for undecided results, which unary() evaluates in
// MPFR. And MPFR with Ziv's ladder for a whole row (always).
std::optional<double> unary_double_double(Unary f, double x, DType dt);
OracleResult unary_mpfr(Unary f, const Input& in);

// f at x = +inf and x = -inf (NaN: outside the domain, rejected by validation).
double unary_limit(Unary f, bool positive);
// Outputs [from, to) of the row x by the double-double path (oracles/elementwise_double_double.cc):
// exact and cond set in r for the decided ones, the others' indices appended to `rest`.
void unary_double_double_block(Unary f, const std::vector<double>& x, DType dt, size_t from,
                               size_t to, OracleResult& r, std::vector<size_t>& rest);
}  // namespace detail

}  // namespace stabfuzz::oracle
