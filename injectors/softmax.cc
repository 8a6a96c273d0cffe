// Registry rows of the injected softmax targets.
#include "injectors/softmax.h"

#include "stabfuzz/op.h"

namespace stabfuzz::injectors {

std::vector<Target> softmax_injected_targets() {
  std::vector<Target> out;
  Target t;
  t.id = "softmax/injected/no_max_subtract";
  t.kind = TargetKind::injected;
  t.description = "e^x_i / sum_j e^x_j without subtracting the row maximum";
  t.dtypes = {DType::f64, DType::f32, DType::f16, DType::bf16};
  t.native = row_native<SoftmaxNoMaxSubtract>();
  t.cestac = row_cestac<SoftmaxNoMaxSubtract>();
  t.injection = Injection{
      "softmax computed as exp(x_i) / sum_j exp(x_j), no max subtraction",
      "any logit above ~88.7 (f32) / ~709.8 (f64): exp overflows, inf/inf = NaN; rows of logits "
      "all below ~-87 (f32) / ~-708 (f64): exp underflows to subnormals or 0, 0/0 = NaN",
      "subtract m = max_j x_j first: y_i = exp(x_i - m) / sum_j exp(x_j - m)", "both"};
  out.push_back(std::move(t));
  return out;
}

}  // namespace stabfuzz::injectors
