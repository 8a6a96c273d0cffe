// The targets each library provides: the one list both its registration and `--list` (when the
// library is missing from the build) name.
#include <string_view>

#include "libs/libraries.h"

namespace stabfuzz::libs {
namespace {

std::vector<LibraryTarget> catalog(
    const char* library, std::initializer_list<std::pair<const char*, const char*>> rows) {
  std::vector<LibraryTarget> out;
  for (const auto& [family, name] : rows)
    out.push_back({family, std::string(family) + "/" + library + "/" + name});
  return out;
}

// The primitives of the oneDNN targets; oneDNN 3 removed eltwise_logsigmoid.
constexpr std::pair<const char*, const char*> kOnednnRows[] = {
    {"softmax", "softmax"},
    {"log_softmax", "logsoftmax"},
    {"layer_norm", "layer_normalization"},
    {"batch_norm", "batch_normalization"},
    {"gelu", "eltwise_gelu_erf"},
    {"gelu_tanh", "eltwise_gelu_tanh"},
    {"sigmoid", "eltwise_logistic"},
    {"softplus", "eltwise_soft_relu"},
    {"log_sigmoid", "eltwise_logsigmoid"},
    {"silu", "eltwise_swish"},
    {"tanh", "eltwise_tanh"},
    {"exp", "eltwise_exp"},
    {"log", "eltwise_log"},
    {"gemm", "matmul"},
    {"sum", "reduction_sum"},
    {"mean", "reduction_mean"},
    {"l2_norm", "reduction_norm_lp_sum"}};

std::vector<LibraryTarget> onednn_rows(const char* library, bool v3) {
  std::vector<LibraryTarget> out;
  for (const auto& [family, name] : kOnednnRows)
    if (!v3 || std::string_view(name) != "eltwise_logsigmoid")
      out.push_back({family, std::string(family) + "/" + library + "/" + name});
  return out;
}

}  // namespace

std::vector<LibraryTarget> onednn_catalog() { return onednn_rows("onednn", false); }

std::vector<LibraryTarget> onednn3_catalog() { return onednn_rows("onednn3", true); }

std::vector<LibraryTarget> blas_catalog() {
  return catalog("blas", {{"dot", "dot"}, {"gemm", "gemm"}, {"l2_norm", "nrm2"}});
}

std::vector<LibraryTarget> mkl_catalog() {
  return catalog("mkl", {{"dot", "dot"}, {"gemm", "gemm"}, {"l2_norm", "nrm2"}});
}

std::vector<LibraryTarget> torch_catalog() {
  return catalog("torch", {{"softmax", "softmax"},
                           {"log_softmax", "log_softmax"},
                           {"logsumexp", "logsumexp"},
                           {"layer_norm", "layer_norm"},
                           {"batch_norm", "batch_norm"},
                           {"sum", "sum"},
                           {"mean", "mean"},
                           {"var", "var"},
                           {"std", "std"},
                           {"l2_norm", "vector_norm"},
                           {"cumsum", "cumsum"},
                           {"logcumsumexp", "logcumsumexp"},
                           {"logaddexp", "logaddexp"},
                           {"exp", "exp"},
                           {"log", "log"},
                           {"log1p", "log1p"},
                           {"expm1", "expm1"},
                           {"tanh", "tanh"},
                           {"erf", "erf"},
                           {"sigmoid", "sigmoid"},
                           {"log_sigmoid", "logsigmoid"},
                           {"softplus", "softplus"},
                           {"silu", "silu"},
                           {"gelu", "gelu"},
                           {"gelu_tanh", "gelu_tanh"},
                           {"cross_entropy", "cross_entropy"},
                           {"bce_with_logits", "binary_cross_entropy_with_logits"},
                           {"kl_div", "kl_div"},
                           // No cosine_similarity: torch >= 1.12 divides by max(|a|, eps) max(|b|,
                           // eps), the family by max(|a| |b|, eps); they differ whenever a norm or
                           // the product falls below eps (measured: torch 1 where the family's
                           // contract gives 0.103, a = [2^-8], eps = 9e-9).
                           {"pairwise_distance", "pairwise_distance"},
                           {"dot", "dot"},
                           {"gemm", "matmul"},
                           {"attention", "scaled_dot_product_attention"}});
}

}  // namespace stabfuzz::libs
