// The known-pattern table, seeded from DeepStability and framework fixes.
#include "reports/catalog.h"

#include <algorithm>

namespace stabfuzz::reports {

const std::vector<KnownPattern>& known_patterns() {
  // Kinds are the CESTAC instability kinds the unstable form produces where it fails: an exp that
  // overflows, a log or sqrt of a computational zero ("unstable_function"), a subtraction of
  // nearly equal values ("cancellation"), samples that disagree on inf/NaN.
  static const std::vector<KnownPattern> table = {
      {{"softmax"},
       {"overflow", "nonfinite_divergence", "invalid_operation", "unstable_division"},
       true,
       "e^xi / sum_j e^xj",
       "subtract the row max before exp: e^(xi-m) / sum_j e^(xj-m)",
       "any x > ~88 (f32) / ~11 (f16): inf/inf = NaN; all x << 0: 0/0",
       "FasterTransformer#43"},
      {{"log_softmax"},
       {"unstable_function", "overflow", "underflow", "nonfinite_divergence"},
       true,
       "log(softmax(x))",
       "(x - m) - log sum_j e^(xj - m)",
       "softmax underflows to 0: -inf",
       "pytorch#795"},
      {{"logsumexp", "logcumsumexp"},
       {"overflow", "nonfinite_divergence", "invalid_operation"},
       true,
       "log sum e^x, or a max shift without a non-finite guard",
       "m + log sum e^(x - m), shifting by 0 when m is +-inf",
       "large x overflow; an all -inf row gives NaN",
       "tensorflow#11692, pytorch#49724"},
      {{"logaddexp"},
       {"overflow", "nonfinite_divergence", "invalid_operation", "unstable_function"},
       true,
       "log(e^a + e^b)",
       "max(a, b) + log1p(e^-|a - b|)",
       "a or b > ~88 (f32): inf",
       "numpy logaddexp"},
      {{"log_sigmoid"},
       {"overflow", "unstable_function", "underflow"},
       true,
       "-log(1 + e^-x)",
       "min(x, 0) - log1p(e^-|x|)",
       "x <~ -88 (f32): -inf instead of ~x",
       "pytorch#1835"},
      {{"sigmoid"},
       {"overflow", "nonfinite_divergence"},
       true,
       "1 / (1 + e^-x) for all x",
       "e^x / (1 + e^x) for x < 0",
       "e^-x overflows for x << 0",
       "FATE#65"},
      {{"softplus"},
       {"overflow", "nonfinite_divergence"},
       true,
       "log(1 + e^x)",
       "max(x, 0) + log1p(e^-|x|)",
       "x > 88.7 (f32) / 11.09 (f16): inf",
       "openvino#4932"},
      {{"bce_with_logits"},
       {"unstable_function", "overflow", "underflow", "nonfinite_divergence"},
       true,
       "-[z log sigmoid(x) + (1 - z) log(1 - sigmoid(x))]",
       "max(x, 0) - x z + log1p(e^-|x|)",
       "sigmoid saturates: log 0",
       "pytorch#1792"},
      {{"cross_entropy"},
       {"unstable_function", "underflow", "overflow", "nonfinite_divergence"},
       true,
       "-log(softmax(x))[t]",
       "-log_softmax(x)[t]",
       "extreme logits",
       "ssd.pytorch#85"},
      {{"log1p"},
       {"cancellation", "unstable_function"},
       false,
       "log(1 + x)",
       "log1p(x)",
       "|x| below ~1e-7 (f32): result 0",
       "pytorch#92145"},
      {{"expm1"},
       {"cancellation"},
       false,
       "e^x - 1",
       "expm1(x)",
       "small |x|: total cancellation",
       "pytorch#92154"},
      {{"var", "std"},
       {"cancellation", "unstable_function", "invalid_operation"},
       true,
       "E[x^2] - E[x]^2",
       "two-pass (mean first) or Welford; Chan's merge for parallel parts",
       "|mean| / std large; the result can go negative: NaN in sqrt",
       "pytorch#3402, tensorflow#3290"},
      {{"layer_norm"},
       {"cancellation", "unstable_function", "invalid_operation"},
       true,
       "one-pass variance; statistics in f16",
       "Welford, statistics in f32, clamp var >= 0",
       "rows shifted by a large mean (x + 2000)",
       "pytorch#66707",
       "two-pass or Welford statistics, clamp var >= 0"},
      {{"batch_norm"},
       {"cancellation", "unstable_function", "invalid_operation"},
       true,
       "E[x^2] - E[x]^2 per channel",
       "two-pass or Welford",
       "a constant channel with |x| > 1e7 gives +-1 instead of 0",
       "flax#1491"},
      {{"layer_norm", "rms_norm", "batch_norm"},
       {"unstable_division"},
       true,
       "var + eps with eps = 1e-12 in f16",
       "eps >= 1e-3 in f16, or statistics in f32",
       "eps rounds to 0: rsqrt(0)",
       "tensorflow#24979",
       "",
       true},
      {{"l2_norm", "rms_norm", "cosine_similarity"},
       {"overflow", "underflow", "nonfinite_divergence"},
       true,
       "sqrt(sum x^2)",
       "scale by max|x| first (LAPACK nrm2)",
       "f32 |x| > 1.8e19 overflows; f16 sum x^2 > 65504",
       "numpy#8775"},
      {{"pairwise_distance"},
       {"cancellation", "overflow", "unstable_function"},
       true,
       "sqrt(|x|^2 + |y|^2 - 2 x.y)",
       "subtract first: sqrt(sum (x - y)^2), scaled by max|x - y|",
       "close points: catastrophic cancellation, negative squares",
       "pytorch cdist"},
      {{"adam"},
       {"unstable_division", "nonfinite_divergence"},
       true,
       "m / (sqrt(v) + 1e-8) in f16",
       "eps >= 1e-4, or an f32 denominator",
       "eps rounds to 0; a zero gradient gives 0/0",
       "optax#1754",
       "",
       true},
      {{"sum", "mean", "cumsum"},
       {},
       false,
       "an f16 or sequential accumulator",
       "accumulate in f32 (or wider) in pairwise order",
       "sum > 65504: inf; 2048 + 1 = 2048 in f16",
       "pytorch#59489, #44350",
       "pairwise or compensated (Kahan) summation; f32 data: an f64 accumulator"},
      {{"gelu_tanh"},
       {"overflow", "cancellation", "nonfinite_divergence"},
       true,
       "0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) in f16",
       "compute in f32; the x sigmoid(2u) form",
       "x^3 overflows in f16; x < -4 cancels",
       "fairseq#2235",
       "the x sigmoid(2u) form; guard x^3 against overflow"},
      {{"attention"},
       {"overflow", "nonfinite_divergence", "invalid_operation"},
       true,
       "(Q K^T) scale in f16",
       "(Q scale) K^T, softmax in f32, online softmax",
       "Q K^T > 65504",
       "flash-attention#613",
       "(Q scale) K^T, a max-subtracted (online) softmax"},
      {{"gemm", "dot"},
       {},
       false,
       "partial sums rounded to f16 or TF32 (split-K, reduced mantissa)",
       "full-precision f32 accumulation and reduction",
       "large K; 1024.5 x 1 = 1025 in TF32",
       "pytorch#53635, #67946",
       "no reduced-precision (TF32, split-K f16) modes; blocked or compensated accumulation"},
  };
  return table;
}

namespace {
bool wide(std::string_view dtype) { return dtype == "f32" || dtype == "f64"; }
}  // namespace

const KnownPattern* match_pattern(std::string_view family, const std::vector<std::string>& kinds,
                                  bool nonfinite, std::string_view dtype) {
  for (const auto& p : known_patterns()) {
    if (std::find(p.families.begin(), p.families.end(), family) == p.families.end()) continue;
    if (p.low_precision_only && wide(dtype)) continue;
    if (p.kinds.empty() || (nonfinite && p.nonfinite)) return &p;
    for (const auto& k : kinds)
      if (std::find(p.kinds.begin(), p.kinds.end(), k) != p.kinds.end()) return &p;
  }
  return nullptr;
}

Suggestion suggest(const Finding& f) {
  if (!f.suggested_fix.empty()) return {f.suggested_fix, "planted bug's stable rewrite"};
  std::vector<std::string> kinds;
  for (const auto& s : f.instabilities) kinds.push_back(s.kind);
  if (const KnownPattern* p = match_pattern(f.target, kinds, f.nonfinite, f.dtype))
    return {wide(f.dtype) && !p->stable_wide.empty() ? p->stable_wide : p->stable,
            "known unstable pattern '" + p->unstable + "', fails where " + p->fails_where + " (" +
                p->seen_in + ")"};
  return {};
}

}  // namespace stabfuzz::reports
