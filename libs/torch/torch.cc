// libtorch targets: registered at start-up, their kernels loaded from libstabfuzz_torch.so on first
// use (libtorch takes 1-2 s to load; `--list` and runs of other targets never pay it).
#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string_view>

#include "libs/libraries.h"
#include "libs/torch/torch_api.h"
#include "stabfuzz/params.h"

#ifndef STABFUZZ_TORCH_VERSION
#define STABFUZZ_TORCH_VERSION "?"
#endif

namespace stabfuzz::libs {

// The libtorch version CMake found (its package version), named in every target's description.
constexpr const char* kVersion = STABFUZZ_TORCH_VERSION;
namespace {

const TorchModule& module() {
  static std::once_flag once;
  static const TorchModule* m = nullptr;
  static std::string error;
  std::call_once(once, [] {
    const std::string path = module_path("STABFUZZ_TORCH_MODULE", "libstabfuzz_torch.so");
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      error = std::string("cannot load the libtorch module: ") + dlerror();
      return;
    }
    using Entry = const TorchModule* (*)();
    auto entry = reinterpret_cast<Entry>(dlsym(h, "stabfuzz_torch_module"));
    if (!entry || entry()->abi != kTorchModuleAbi) {
      error = path + " is not this build's libtorch module";
      return;
    }
    m = entry();
  });
  if (!m) throw std::runtime_error(error);
  return *m;
}

struct Spec {
  const char* id;
  const char* description;
  // Parameters the module needs, with the family's default; how the oracle rounds them.
  std::vector<std::pair<const char*, double>> params = {};
  bool bf16 = true;  // ATen 1.13 has a bf16 CPU kernel
  bool f16 = false;  // and an f16 one (1.13 has few: "exp_vml_cpu" not implemented for 'Half')
};

// The input as the module receives it: eps rounded to the dtype (the kernels add it there; the
// oracle evaluates with that value), attention's scale to its compute type, every default given.
Input prepared(const Input& in, const Spec& s) {
  Input p = in;
  for (const auto& [name, fallback] : s.params) {
    double v = in.param(name, fallback);
    if (std::string_view(name) == "eps") v = round_to(in.dtype, v);
    p.set_param(name, v);
  }
  if (std::string_view(s.id).starts_with("attention/")) {
    const auto a = params::attention_params(in, static_cast<double>(in.args.at(0).shape.at(1)));
    p.set_param("scale", a.scale);
    p.set_param("causal", a.causal ? 1 : 0);
  }
  return p;
}

const std::vector<Spec>& specs() {
  static const std::vector<Spec> s = {
      {"softmax/torch/softmax", "at::softmax(x, 0)"},
      {"log_softmax/torch/log_softmax", "at::log_softmax(x, 0)"},
      {"logsumexp/torch/logsumexp", "at::logsumexp(x, {0})"},
      {"layer_norm/torch/layer_norm",
       "at::layer_norm(x, {n}, no weight, no bias, eps)",
       {{"eps", params::kLayerNormEps}}},
      {"batch_norm/torch/batch_norm",
       "at::batch_norm(x [n, c], training, no running stats, no weight or bias, eps)",
       {{"eps", params::kBatchNormEps}}},
      {"sum/torch/sum", "at::sum(x)", {}, true, true},
      {"mean/torch/mean", "at::mean(x)"},
      {"var/torch/var",
       "at::var(x, unbiased)",
       {{"unbiased", params::kUnbiasedDefault}},
       true,
       true},
      {"std/torch/std", "at::std(x, unbiased)", {{"unbiased", params::kUnbiasedDefault}}},
      {"l2_norm/torch/vector_norm", "at::linalg_vector_norm(x, 2)"},
      {"cumsum/torch/cumsum", "at::cumsum(x, 0)"},
      {"logcumsumexp/torch/logcumsumexp", "at::logcumsumexp(x, 0)"},
      {"logaddexp/torch/logaddexp", "at::logaddexp(a, b)"},
      {"exp/torch/exp", "at::exp"},
      {"log/torch/log", "at::log"},
      {"log1p/torch/log1p", "at::log1p"},
      {"expm1/torch/expm1", "at::expm1"},
      {"tanh/torch/tanh", "at::tanh"},
      {"erf/torch/erf", "at::erf"},
      {"sigmoid/torch/sigmoid", "at::sigmoid"},
      {"log_sigmoid/torch/logsigmoid", "at::log_sigmoid"},
      {"softplus/torch/softplus", "at::softplus(x, beta 1, threshold 20): its defaults"},
      {"silu/torch/silu", "at::silu"},
      {"gelu/torch/gelu", "at::gelu(x, \"none\")"},
      {"gelu_tanh/torch/gelu_tanh", "at::gelu(x, \"tanh\")"},
      {"cross_entropy/torch/cross_entropy",
       "at::cross_entropy_loss(x [1, n], target [1], mean over the one sample)",
       {{"target", 0}}},
      {"bce_with_logits/torch/binary_cross_entropy_with_logits",
       "at::binary_cross_entropy_with_logits(x, z, reduction none)"},
      {"kl_div/torch/kl_div", "at::kl_div(logq, p, reduction sum, log_target false)"},
      {"pairwise_distance/torch/pairwise_distance",
       "at::pairwise_distance(a, b, 2, eps)",
       {{"eps", params::kPairwiseEpsDefault}}},
      {"dot/torch/dot", "at::dot(a, b)"},
      {"gemm/torch/matmul", "at::matmul(A, B)"},
      {"attention/torch/scaled_dot_product_attention",
       "at::_scaled_dot_product_attention(q, k, v, is_causal) on [1, s, d] (1.13's math kernel; a "
       "scale other than 1/sqrt(d) is folded into q)"},
  };
  return s;
}

// The ATen expression of each call for the standalone reproducers (torch_module.cc's kernels, in
// the same argument order and with the same constants).
const char* standalone_expr(std::string_view id) {
  static const std::vector<std::pair<std::string_view, const char*>> k = {
      {"softmax/torch/softmax", "at::softmax(x0, 0)"},
      {"log_softmax/torch/log_softmax", "at::log_softmax(x0, 0)"},
      {"logsumexp/torch/logsumexp", "at::logsumexp(x0, {0})"},
      {"layer_norm/torch/layer_norm", "at::layer_norm(x0, {x0.size(0)}, {}, {}, EPS)"},
      {"batch_norm/torch/batch_norm", "at::batch_norm(x0, {}, {}, {}, {}, true, 0.1, EPS, false)"},
      {"sum/torch/sum", "at::sum(x0)"},
      {"mean/torch/mean", "at::mean(x0)"},
      {"var/torch/var", "at::var(x0, UNBIASED)"},
      {"std/torch/std", "at::std(x0, UNBIASED)"},
      {"l2_norm/torch/vector_norm", "at::linalg_vector_norm(x0, 2)"},
      {"cumsum/torch/cumsum", "at::cumsum(x0, 0)"},
      {"logcumsumexp/torch/logcumsumexp", "at::logcumsumexp(x0, 0)"},
      {"logaddexp/torch/logaddexp", "at::logaddexp(x0, x1)"},
      {"exp/torch/exp", "at::exp(x0)"},
      {"log/torch/log", "at::log(x0)"},
      {"log1p/torch/log1p", "at::log1p(x0)"},
      {"expm1/torch/expm1", "at::expm1(x0)"},
      {"tanh/torch/tanh", "at::tanh(x0)"},
      {"erf/torch/erf", "at::erf(x0)"},
      {"sigmoid/torch/sigmoid", "at::sigmoid(x0)"},
      {"log_sigmoid/torch/logsigmoid", "at::log_sigmoid(x0)"},
      {"softplus/torch/softplus", "at::softplus(x0, 1, 20)"},
      {"silu/torch/silu", "at::silu(x0)"},
      {"gelu/torch/gelu", "at::gelu(x0, \"none\")"},
      {"gelu_tanh/torch/gelu_tanh", "at::gelu(x0, \"tanh\")"},
      {"cross_entropy/torch/cross_entropy",
       "at::cross_entropy_loss(x0.unsqueeze(0), at::full({1}, TARGET, at::kLong), {}, "
       "at::Reduction::Mean, -100, 0.0)"},
      {"bce_with_logits/torch/binary_cross_entropy_with_logits",
       "at::binary_cross_entropy_with_logits(x0, x1, {}, {}, at::Reduction::None)"},
      {"kl_div/torch/kl_div", "at::kl_div(x0, x1, at::Reduction::Sum, false)"},
      {"pairwise_distance/torch/pairwise_distance", "at::pairwise_distance(x0, x1, 2, EPS, false)"},
      {"dot/torch/dot", "at::dot(x0, x1)"},
      {"gemm/torch/matmul", "at::matmul(x0, x1)"},
  };
  for (const auto& [i, e] : k)
    if (i == id) return e;
  return nullptr;
}

void replace_all(std::string& s, std::string_view from, const std::string& to) {
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size()))
    s.replace(p, from.size(), to);
}

const char* aten_type(DType d) {
  switch (d) {
    case DType::f64:
      return "at::kDouble";
    case DType::f32:
      return "at::kFloat";
    case DType::bf16:
      return "at::kBFloat16";
    case DType::f16:
      return "at::kHalf";
  }
  return "at::kDouble";
}

// The call as standalone C++ (stabfuzz triage): each argument as an ATen tensor of its shape in
// the input's dtype (its values are exact there), the expression, the result read back exactly.
std::optional<StandaloneCall> standalone(const Spec& spec, const Input& raw) {
  const char* e = standalone_expr(spec.id);
  if (!e) return std::nullopt;
  const Input in = prepared(raw, spec);
  std::string expr = e;
  char eps[64];
  std::snprintf(eps, sizeof eps, "%a", in.param("eps", 0));
  replace_all(expr, "EPS", eps);
  replace_all(expr, "UNBIASED", in.param("unbiased", 1) != 0 ? "true" : "false");
  replace_all(expr, "TARGET", std::to_string(static_cast<long long>(in.param("target", 0))) + "L");
  std::string body =
      "  at::set_num_threads(1);  // one thread, as stabfuzz calls it\n"
      "  const auto tensor = [&](size_t k, std::vector<int64_t> shape) {\n"
      "    at::Tensor d = at::empty({static_cast<int64_t>(x[k].size())}, at::kDouble);\n"
      "    std::copy(x[k].begin(), x[k].end(), d.data_ptr<double>());\n"
      "    return d.reshape(shape).to(" +
      std::string(aten_type(in.dtype)) + ");\n  };\n";
  for (size_t k = 0; k < in.args.size(); ++k) {
    std::string shape;
    for (int64_t d : in.args[k].shape) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
    body += "  const at::Tensor x" + std::to_string(k) + " = tensor(" + std::to_string(k) + ", {" +
            shape + "});\n";
  }
  body += "  const at::Tensor y = (" + expr +
          ").to(at::kDouble).contiguous().reshape({-1});\n"
          "  return {y.data_ptr<double>(), y.data_ptr<double>() + y.numel()};\n";
  return StandaloneCall{std::string("libtorch ") + kVersion,
                        "#include <ATen/ATen.h>\n#include <ATen/Parallel.h>\n", body,
                        "-ltorch_cpu -lc10"};
}

}  // namespace

void register_torch(Registry& registry) {
  for (const auto& entry : torch_catalog()) {
    const Spec* spec = nullptr;
    for (const auto& s : specs())
      if (entry.id == s.id) spec = &s;
    if (!spec) throw std::logic_error("libs: no libtorch implementation for " + entry.id);
    Target t;
    t.id = spec->id;
    t.kind = TargetKind::library;
    t.description = std::string("libtorch ") + kVersion + " " + spec->description +
                    " (CPU, one thread; black box: no CESTAC)";
    t.dtypes = {DType::f64, DType::f32};
    if (spec->f16) t.dtypes.push_back(DType::f16);
    if (spec->bf16) t.dtypes.push_back(DType::bf16);
    t.native = [spec](const Input& in) { return module().run(spec->id, prepared(in, *spec)); };
    if (standalone_expr(spec->id))
      t.standalone = [spec](const Input& in) { return standalone(*spec, in); };
    t.prepare = [] {
      try {
        (void)module();
      } catch (const std::exception&) {  // the first call reports it, as an error of that input
      }
    };
    registry.add_target(entry.family, std::move(t));
  }
}

}  // namespace stabfuzz::libs
