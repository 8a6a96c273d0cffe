// The oneDNN calls of the oneDNN targets, written once for oneDNN 2's API and oneDNN 3's.
//
// Compiled twice: into stabfuzz against the oneDNN it links (Debian's 2.x: linked_onednn()), and,
// with STABFUZZ_ONEDNN_MODULE, into libstabfuzz_onednn3.so against ci/bootstrap --with-onednn3's
// oneDNN 3 (stabfuzz_onednn3_module(), the module's one visible symbol). Each primitive is created
// for the input's shape, run once on the CPU engine on one thread and its output read back.
#include <dlfcn.h>

#include <cmath>
#include <dnnl.hpp>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "libs/onednn/onednn_api.h"
#include "libs/storage.h"

namespace stabfuzz::libs {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;
using Alg = dnnl::algorithm;
using Dim = memory::dim;
using Args = std::vector<Tensor>;

struct Context {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
};
Context& ctx() {
  static Context c;
  return c;
}

// oneDNN runs on OpenMP (libgomp, loaded with it): one thread, so that a run does not depend on
// the machine's core count. Looked up at run time, as stabfuzz itself links no OpenMP.
void one_thread() {
  thread_local bool done = [] {
    using SetThreads = void (*)(int);
    if (auto f = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"))) f(1);
    return true;
  }();
  (void)done;
}

memory::data_type data_type(DType d) {
  switch (d) {
    case DType::f32:
      return memory::data_type::f32;
    case DType::bf16:
      return memory::data_type::bf16;
    case DType::f16:
      return memory::data_type::f16;
    case DType::f64:
      break;
  }
  return memory::data_type::undef;  // oneDNN's CPU engine has no f64
}

memory mem(const memory::desc& md, Buffer& b) { return memory(md, ctx().engine, b.data()); }

void execute(const dnnl::primitive& p, const std::unordered_map<int, memory>& args) {
  p.execute(ctx().stream, args);
  ctx().stream.wait();
}

Dim size_of(const Args& a, size_t k = 0) { return static_cast<Dim>(a.at(k).values.size()); }

// softmax over the row (axis 1 of [1, n]): softmax_accurate or softmax_log.
std::vector<double> softmax(DType d, const Args& a, Alg alg) {
  const memory::desc md({1, size_of(a)}, data_type(d), Tag::ab);
#if DNNL_VERSION_MAJOR >= 3
  const dnnl::softmax_forward::primitive_desc pd(ctx().engine, dnnl::prop_kind::forward_inference,
                                                 alg, md, md, 1);
  const dnnl::softmax_forward prim(pd);
#else
  const dnnl::softmax_v2_forward::primitive_desc pd(
      {dnnl::prop_kind::forward_inference, alg, md, md, 1}, ctx().engine);
  const dnnl::softmax_v2_forward prim(pd);
#endif
  Buffer x = encode(d, a[0].values), y = empty_buffer(d, x.size());
  execute(prim, {{DNNL_ARG_SRC, mem(md, x)}, {DNNL_ARG_DST, mem(md, y)}});
  return decode(y);
}

// Statistics computed from the data (forward_training, no scale or shift): y = (x - mean) /
// sqrt(var + eps), biased variance, eps added to the variance — the families' contract.
template <class P>
std::vector<double> normalize(DType d, const Args& a, const typename P::primitive_desc& pd,
                              const memory::desc& md) {
  Buffer x = encode(d, a[0].values), y = empty_buffer(d, x.size());
  memory mean(pd.mean_desc(), ctx().engine), var(pd.variance_desc(), ctx().engine);
  execute(P(pd), {{DNNL_ARG_SRC, mem(md, x)},
                  {DNNL_ARG_DST, mem(md, y)},
                  {DNNL_ARG_MEAN, mean},
                  {DNNL_ARG_VARIANCE, var}});
  return decode(y);
}

std::vector<double> layer_norm(DType d, const Args& a, float eps) {
  const memory::desc md({1, size_of(a)}, data_type(d), Tag::ab);
  using LN = dnnl::layer_normalization_forward;
#if DNNL_VERSION_MAJOR >= 3
  // Newer oneDNN 3 headers create a layer normalization through a _v2 C function that oneDNN 3.2
  // lacks: the C function every oneDNN 3 has.
  dnnl_primitive_desc_t c_pd = nullptr;
  dnnl::error::wrap_c_api(dnnl_layer_normalization_forward_primitive_desc_create(
                              &c_pd, ctx().engine.get(), dnnl_forward_training, md.get(), md.get(),
                              nullptr, eps, dnnl_normalization_flags_none, nullptr),
                          "could not create a layer normalization primitive descriptor");
  const LN::primitive_desc pd(c_pd);
#else
  const LN::primitive_desc pd(
      {dnnl::prop_kind::forward_training, md, eps, dnnl::normalization_flags::none}, ctx().engine);
#endif
  return normalize<LN>(d, a, pd, md);
}

// x [n, c] row-major is oneDNN's nc layout: channels are the columns, statistics over the batch.
std::vector<double> batch_norm(DType d, const Args& a, float eps) {
  const memory::desc md({a.at(0).shape.at(0), a.at(0).shape.at(1)}, data_type(d), Tag::nc);
  using BN = dnnl::batch_normalization_forward;
#if DNNL_VERSION_MAJOR >= 3
  const BN::primitive_desc pd(ctx().engine, dnnl::prop_kind::forward_training, md, md, eps,
                              dnnl::normalization_flags::none);
#else
  const BN::primitive_desc pd(
      {dnnl::prop_kind::forward_training, md, eps, dnnl::normalization_flags::none}, ctx().engine);
#endif
  return normalize<BN>(d, a, pd, md);
}

std::vector<double> eltwise(DType d, const Args& a, Alg alg, float alpha) {
  const memory::desc md({size_of(a)}, data_type(d), Tag::a);
#if DNNL_VERSION_MAJOR >= 3
  const dnnl::eltwise_forward::primitive_desc pd(ctx().engine, dnnl::prop_kind::forward_inference,
                                                 alg, md, md, alpha, 0.f);
#else
  const dnnl::eltwise_forward::primitive_desc pd(
      {dnnl::prop_kind::forward_inference, alg, md, alpha, 0.f}, ctx().engine);
#endif
  Buffer x = encode(d, a[0].values), y = empty_buffer(d, x.size());
  execute(dnnl::eltwise_forward(pd), {{DNNL_ARG_SRC, mem(md, x)}, {DNNL_ARG_DST, mem(md, y)}});
  return decode(y);
}

// C [m, n] = A [m, k] B [k, n], all row-major, C in the input's dtype (f32 accumulation inside).
std::vector<double> matmul(DType d, const Args& a) {
  const Dim m = a.at(0).shape.at(0), k = a.at(0).shape.at(1), n = a.at(1).shape.at(1);
  const auto dt = data_type(d);
  const memory::desc a_md({m, k}, dt, Tag::ab), b_md({k, n}, dt, Tag::ab),
      c_md({m, n}, dt, Tag::ab);
#if DNNL_VERSION_MAJOR >= 3
  const dnnl::matmul::primitive_desc pd(ctx().engine, a_md, b_md, c_md);
#else
  const dnnl::matmul::primitive_desc pd({a_md, b_md, c_md}, ctx().engine);
#endif
  Buffer x = encode(d, a[0].values), w = encode(d, a[1].values);
  Buffer c = empty_buffer(d, static_cast<size_t>(m * n));
  execute(dnnl::matmul(pd), {{DNNL_ARG_SRC, mem(a_md, x)},
                             {DNNL_ARG_WEIGHTS, mem(b_md, w)},
                             {DNNL_ARG_DST, mem(c_md, c)}});
  return decode(c);
}

// The row [1, n] reduced to [1, 1] (n >= 2: oneDNN refuses a reduction that reduces nothing);
// norm_lp_sum with p = 2 and eps = 0 is (sum x^2)^(1/2).
std::vector<double> reduction(DType d, const Args& a, Alg alg, float p) {
  const auto dt = data_type(d);
  const memory::desc src({1, size_of(a)}, dt, Tag::ab), dst({1, 1}, dt, Tag::ab);
#if DNNL_VERSION_MAJOR >= 3
  const dnnl::reduction::primitive_desc pd(ctx().engine, alg, src, dst, p, 0.f);
#else
  const dnnl::reduction::primitive_desc pd({alg, src, dst, p, 0.f}, ctx().engine);
#endif
  Buffer x = encode(d, a[0].values), y = empty_buffer(d, 1);
  execute(dnnl::reduction(pd), {{DNNL_ARG_SRC, mem(src, x)}, {DNNL_ARG_DST, mem(dst, y)}});
  return decode(y);
}

std::vector<double> call(const std::string& name, DType d, const Args& a, double scalar) {
  const auto s = static_cast<float>(scalar);
  if (name == "softmax") return softmax(d, a, Alg::softmax_accurate);
  if (name == "logsoftmax") return softmax(d, a, Alg::softmax_log);
  if (name == "layer_normalization") return layer_norm(d, a, s);
  if (name == "batch_normalization") return batch_norm(d, a, s);
  if (name == "matmul") return matmul(d, a);
  if (name == "reduction_sum") return reduction(d, a, Alg::reduction_sum, s);
  if (name == "reduction_mean") return reduction(d, a, Alg::reduction_mean, s);
  if (name == "reduction_norm_lp_sum") return reduction(d, a, Alg::reduction_norm_lp_sum, s);
  static const std::unordered_map<std::string, Alg> eltwise_algs = {
    {"eltwise_gelu_erf", Alg::eltwise_gelu_erf},
    {"eltwise_gelu_tanh", Alg::eltwise_gelu_tanh},
    {"eltwise_logistic", Alg::eltwise_logistic},
    {"eltwise_soft_relu", Alg::eltwise_soft_relu},
#if DNNL_VERSION_MAJOR < 3
    {"eltwise_logsigmoid", Alg::eltwise_logsigmoid},  // removed in oneDNN 3
#endif
    {"eltwise_swish", Alg::eltwise_swish},
    {"eltwise_tanh", Alg::eltwise_tanh},
    {"eltwise_exp", Alg::eltwise_exp},
    {"eltwise_log", Alg::eltwise_log}
  };
  if (const auto it = eltwise_algs.find(name); it != eltwise_algs.end())
    return eltwise(d, a, it->second, s);
  throw std::logic_error("oneDNN " + std::to_string(DNNL_VERSION_MAJOR) + ": no primitive " + name);
}

// What crosses to the caller: oneDNN's refusals as std::runtime_error (dnnl::error's type stays
// inside a module built with hidden visibility).
std::vector<double> run(const char* name, DType d, const Args& a, double scalar) {
  one_thread();
  try {
    return call(name, d, a, scalar);
  } catch (const dnnl::error& e) {
    throw std::runtime_error(std::string("oneDNN: ") + e.what());
  }
}

const OnednnModule& module() {
  static const OnednnModule m = [] {
    const dnnl_version_t* v = dnnl::version();
    return OnednnModule{kOnednnModuleAbi, v->major, v->minor, v->patch, &run};
  }();
  return m;
}

}  // namespace

#ifndef STABFUZZ_ONEDNN_MODULE
const OnednnModule& linked_onednn() { return module(); }
#endif

}  // namespace stabfuzz::libs

#ifdef STABFUZZ_ONEDNN_MODULE
extern "C" __attribute__((visibility("default"))) const stabfuzz::libs::OnednnModule*
stabfuzz_onednn3_module() {
  return &stabfuzz::libs::module();
}
#endif
