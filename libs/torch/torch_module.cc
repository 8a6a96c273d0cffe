// libtorch kernels behind the torch targets: the only file that includes torch headers.
//
// Built as libstabfuzz_torch.so and loaded by libs/torch/torch.cc when a torch target first runs.
// Every call runs ATen's CPU kernel on tensors holding the input's exact values in the input's
// dtype (f64, f32 or bf16) and reads the result back exactly.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/version.h>

#include <cmath>
#include <functional>
#include <map>
#include <stdexcept>

#include "libs/torch/torch_api.h"

namespace stabfuzz::libs {
namespace {

at::ScalarType scalar_type(DType d) {
  switch (d) {
    case DType::f64:
      return at::kDouble;
    case DType::f32:
      return at::kFloat;
    case DType::bf16:
      return at::kBFloat16;
    case DType::f16:
      return at::kHalf;
  }
  return at::kDouble;
}

// Tensor k of the input in its dtype and shape (values are exact in the dtype: no rounding).
at::Tensor arg(const Input& in, size_t k) {
  const auto& t = in.args.at(k);
  at::Tensor d = at::empty({static_cast<int64_t>(t.values.size())}, at::kDouble);
  std::copy(t.values.begin(), t.values.end(), d.data_ptr<double>());
  return d.reshape(t.shape).to(scalar_type(in.dtype));
}

std::vector<double> out(const at::Tensor& y) {
  const at::Tensor d = y.to(at::kDouble).contiguous().reshape({-1});
  return std::vector<double>(d.data_ptr<double>(), d.data_ptr<double>() + d.numel());
}

double param(const Input& in, const char* name) {
  for (const auto& [k, v] : in.params)
    if (k == name) return v;
  throw std::logic_error(std::string("torch module: parameter '") + name + "' not given");
}

using Kernel = std::function<at::Tensor(const Input&)>;

at::Tensor attention(const Input& in) {
  // [1, s, d] batches; 1.13's math kernel scales q by 1/sqrt(d) itself: another scale is folded
  // into q first (one rounding of q in the dtype, inside the tolerance's budget for the scores).
  at::Tensor q = arg(in, 0), k = arg(in, 1), v = arg(in, 2);
  const double d = static_cast<double>(q.size(1)), scale = param(in, "scale");
  // The default as the oracle holds it: 1/sqrt(d) in f64, or rounded to f32 (bf16's compute type).
  const double def = in.dtype == DType::f64
                         ? 1 / std::sqrt(d)
                         : static_cast<double>(static_cast<float>(1 / std::sqrt(d)));
  if (scale != def) q = (q.to(at::kDouble) * (scale * std::sqrt(d))).to(q.scalar_type());
  const bool causal = param(in, "causal") != 0;
  auto [o, w] = at::_scaled_dot_product_attention(q.unsqueeze(0), k.unsqueeze(0), v.unsqueeze(0),
                                                  {}, 0.0, false, causal);
  return o.squeeze(0);
}

const std::map<std::string, Kernel>& kernels() {
  static const std::map<std::string, Kernel> k = {
      {"softmax/torch/softmax", [](const Input& in) { return at::softmax(arg(in, 0), 0); }},
      {"log_softmax/torch/log_softmax",
       [](const Input& in) { return at::log_softmax(arg(in, 0), 0); }},
      {"logsumexp/torch/logsumexp", [](const Input& in) { return at::logsumexp(arg(in, 0), {0}); }},
      {"layer_norm/torch/layer_norm",
       [](const Input& in) {
         const at::Tensor x = arg(in, 0);
         return at::layer_norm(x, {x.size(0)}, {}, {}, param(in, "eps"));
       }},
      // training = true without running statistics: the batch's mean and biased variance.
      {"batch_norm/torch/batch_norm",
       [](const Input& in) {
         return at::batch_norm(arg(in, 0), {}, {}, {}, {}, true, 0.1, param(in, "eps"), false);
       }},
      {"sum/torch/sum", [](const Input& in) { return at::sum(arg(in, 0)); }},
      {"mean/torch/mean", [](const Input& in) { return at::mean(arg(in, 0)); }},
      {"var/torch/var",
       [](const Input& in) { return at::var(arg(in, 0), param(in, "unbiased") != 0); }},
      {"std/torch/std",
       [](const Input& in) { return at::std(arg(in, 0), param(in, "unbiased") != 0); }},
      {"l2_norm/torch/vector_norm",
       [](const Input& in) { return at::linalg_vector_norm(arg(in, 0), 2); }},
      {"cumsum/torch/cumsum", [](const Input& in) { return at::cumsum(arg(in, 0), 0); }},
      {"logcumsumexp/torch/logcumsumexp",
       [](const Input& in) { return at::logcumsumexp(arg(in, 0), 0); }},
      {"logaddexp/torch/logaddexp",
       [](const Input& in) { return at::logaddexp(arg(in, 0), arg(in, 1)); }},
      {"exp/torch/exp", [](const Input& in) { return at::exp(arg(in, 0)); }},
      {"log/torch/log", [](const Input& in) { return at::log(arg(in, 0)); }},
      {"log1p/torch/log1p", [](const Input& in) { return at::log1p(arg(in, 0)); }},
      {"expm1/torch/expm1", [](const Input& in) { return at::expm1(arg(in, 0)); }},
      {"tanh/torch/tanh", [](const Input& in) { return at::tanh(arg(in, 0)); }},
      {"erf/torch/erf", [](const Input& in) { return at::erf(arg(in, 0)); }},
      {"sigmoid/torch/sigmoid", [](const Input& in) { return at::sigmoid(arg(in, 0)); }},
      {"log_sigmoid/torch/logsigmoid", [](const Input& in) { return at::log_sigmoid(arg(in, 0)); }},
      // torch's defaults, as users call it: beta 1, threshold 20 (x beta > 20 returns x).
      {"softplus/torch/softplus", [](const Input& in) { return at::softplus(arg(in, 0), 1, 20); }},
      {"silu/torch/silu", [](const Input& in) { return at::silu(arg(in, 0)); }},
      {"gelu/torch/gelu", [](const Input& in) { return at::gelu(arg(in, 0), "none"); }},
      {"gelu_tanh/torch/gelu_tanh", [](const Input& in) { return at::gelu(arg(in, 0), "tanh"); }},
      // One sample [1, n] with its class; the mean over one sample divides by 1 (exact).
      {"cross_entropy/torch/cross_entropy",
       [](const Input& in) {
         const at::Tensor t = at::full({1}, static_cast<int64_t>(param(in, "target")), at::kLong);
         return at::cross_entropy_loss(arg(in, 0).unsqueeze(0), t, {}, at::Reduction::Mean, -100,
                                       0.0);
       }},
      {"bce_with_logits/torch/binary_cross_entropy_with_logits",
       [](const Input& in) {
         return at::binary_cross_entropy_with_logits(arg(in, 0), arg(in, 1), {}, {},
                                                     at::Reduction::None);
       }},
      // kl_div(input = logq, target = p, sum, log_target = false) = sum p (log p - logq), 0 at p =
      // 0.
      {"kl_div/torch/kl_div",
       [](const Input& in) {
         return at::kl_div(arg(in, 0), arg(in, 1), at::Reduction::Sum, false);
       }},
      {"pairwise_distance/torch/pairwise_distance",
       [](const Input& in) {
         return at::pairwise_distance(arg(in, 0), arg(in, 1), 2, param(in, "eps"), false);
       }},
      {"dot/torch/dot", [](const Input& in) { return at::dot(arg(in, 0), arg(in, 1)); }},
      {"gemm/torch/matmul", [](const Input& in) { return at::matmul(arg(in, 0), arg(in, 1)); }},
      {"attention/torch/scaled_dot_product_attention", attention},
  };
  return k;
}

std::vector<double> run(const std::string& id, const Input& in) {
  static const bool once = [] {
    at::set_num_threads(1);  // one thread: reductions in one order on any machine
    return true;
  }();
  (void)once;
  const auto it = kernels().find(id);
  if (it == kernels().end()) throw std::logic_error("torch module: no kernel for " + id);
  return out(it->second(in));
}

const TorchModule kModule{kTorchModuleAbi, TORCH_VERSION, run};

}  // namespace
}  // namespace stabfuzz::libs

extern "C" const stabfuzz::libs::TorchModule* stabfuzz_torch_module() {
  return &stabfuzz::libs::kModule;
}
