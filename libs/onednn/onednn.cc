// oneDNN primitives (softmax, layer/batch normalization, eltwise, matmul, reduction) as targets.
//
// Each primitive is created for the input's shape, run once on the CPU engine and its output read
// back. oneDNN holds no f64 on the CPU; f32 always, and bf16 / f16 where this CPU's oneDNN builds
// the primitive (probed once at registration: on AVX2 without AVX512-BF16 it usually refuses).
#include <dlfcn.h>

#include <cmath>
#include <cstdio>
#include <dnnl.hpp>
#include <functional>
#include <stdexcept>
#include <unordered_map>

#include "libs/libraries.h"
#include "libs/storage.h"
#include "stabfuzz/params.h"

namespace stabfuzz::libs {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;
using Alg = dnnl::algorithm;
using Dim = memory::dim;

struct Context {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
};
Context& ctx() {
  static Context c;
  return c;
}

// Debian's oneDNN runs on OpenMP (libgomp, loaded with it): one thread, so that a run does not
// depend on the machine's core count. Looked up at run time, as stabfuzz itself links no OpenMP.
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

Dim size_of(const Input& in, size_t k = 0) { return static_cast<Dim>(in.args.at(k).values.size()); }

// ---- the primitives ---------------------------------------------------------------------------

// softmax_v2 over the row (axis 1 of [1, n]): softmax_accurate or softmax_log.
std::vector<double> softmax(const Input& in, Alg alg) {
  const memory::desc md({1, size_of(in)}, data_type(in.dtype), Tag::ab);
  const dnnl::softmax_v2_forward::primitive_desc pd(
      {dnnl::prop_kind::forward_inference, alg, md, md, 1}, ctx().engine);
  Buffer x = encode(in.dtype, in.args[0].values), y = empty_buffer(in.dtype, x.size());
  execute(dnnl::softmax_v2_forward(pd), {{DNNL_ARG_SRC, mem(md, x)}, {DNNL_ARG_DST, mem(md, y)}});
  return decode(y);
}

// Statistics computed from the data (forward_training, no scale or shift): y = (x - mean) /
// sqrt(var + eps), biased variance, eps added to the variance — the families' contract. eps is the
// dtype's rounding of the parameter (what the oracle uses), passed as the float oneDNN takes.
template <class P>
std::vector<double> normalize(const Input& in, const typename P::primitive_desc& pd,
                              const memory::desc& md) {
  Buffer x = encode(in.dtype, in.args[0].values), y = empty_buffer(in.dtype, x.size());
  memory mean(pd.mean_desc(), ctx().engine), var(pd.variance_desc(), ctx().engine);
  execute(P(pd), {{DNNL_ARG_SRC, mem(md, x)},
                  {DNNL_ARG_DST, mem(md, y)},
                  {DNNL_ARG_MEAN, mean},
                  {DNNL_ARG_VARIANCE, var}});
  return decode(y);
}

std::vector<double> layer_norm(const Input& in) {
  const memory::desc md({1, size_of(in)}, data_type(in.dtype), Tag::ab);
  const auto eps = static_cast<float>(dtype_param(in, "eps", params::kLayerNormEps));
  using LN = dnnl::layer_normalization_forward;
  const LN::primitive_desc pd(
      {dnnl::prop_kind::forward_training, md, eps, dnnl::normalization_flags::none}, ctx().engine);
  return normalize<LN>(in, pd, md);
}

// x [n, c] row-major is oneDNN's nc layout: channels are the columns, statistics over the batch.
std::vector<double> batch_norm(const Input& in) {
  const auto& t = in.args[0];
  const memory::desc md({t.shape.at(0), t.shape.at(1)}, data_type(in.dtype), Tag::nc);
  const auto eps = static_cast<float>(dtype_param(in, "eps", params::kBatchNormEps));
  using BN = dnnl::batch_normalization_forward;
  const BN::primitive_desc pd(
      {dnnl::prop_kind::forward_training, md, eps, dnnl::normalization_flags::none}, ctx().engine);
  return normalize<BN>(in, pd, md);
}

std::vector<double> eltwise(const Input& in, Alg alg, float alpha) {
  const memory::desc md({size_of(in)}, data_type(in.dtype), Tag::a);
  const dnnl::eltwise_forward::primitive_desc pd(
      {dnnl::prop_kind::forward_inference, alg, md, alpha, 0.f}, ctx().engine);
  Buffer x = encode(in.dtype, in.args[0].values), y = empty_buffer(in.dtype, x.size());
  execute(dnnl::eltwise_forward(pd), {{DNNL_ARG_SRC, mem(md, x)}, {DNNL_ARG_DST, mem(md, y)}});
  return decode(y);
}

// C [m, n] = A [m, k] B [k, n], all row-major, C in the input's dtype (f32 accumulation inside).
std::vector<double> matmul(const Input& in) {
  const Dim m = in.args[0].shape.at(0), k = in.args[0].shape.at(1), n = in.args[1].shape.at(1);
  const auto dt = data_type(in.dtype);
  const memory::desc a_md({m, k}, dt, Tag::ab), b_md({k, n}, dt, Tag::ab),
      c_md({m, n}, dt, Tag::ab);
  const dnnl::matmul::primitive_desc pd({a_md, b_md, c_md}, ctx().engine);
  Buffer a = encode(in.dtype, in.args[0].values), b = encode(in.dtype, in.args[1].values);
  Buffer c = empty_buffer(in.dtype, static_cast<size_t>(m * n));
  execute(dnnl::matmul(pd), {{DNNL_ARG_SRC, mem(a_md, a)},
                             {DNNL_ARG_WEIGHTS, mem(b_md, b)},
                             {DNNL_ARG_DST, mem(c_md, c)}});
  return decode(c);
}

// The row [1, n] reduced to [1, 1]; norm_lp_sum with p = 2 and eps = 0 is (sum x^2)^(1/2).
// oneDNN refuses a reduction that reduces no dimension (n = 1): there the result is the value
// itself for sum and mean and its magnitude for the norm, exact, returned without a call.
std::vector<double> reduction(const Input& in, Alg alg, float p) {
  if (in.args[0].values.size() == 1) {
    const double x = in.args[0].values[0];
    return {alg == Alg::reduction_norm_lp_sum ? std::fabs(x) : x};
  }
  const auto dt = data_type(in.dtype);
  const memory::desc src({1, size_of(in)}, dt, Tag::ab), dst({1, 1}, dt, Tag::ab);
  const dnnl::reduction::primitive_desc pd({alg, src, dst, p, 0.f}, ctx().engine);
  Buffer x = encode(in.dtype, in.args[0].values), y = empty_buffer(in.dtype, 1);
  execute(dnnl::reduction(pd), {{DNNL_ARG_SRC, mem(src, x)}, {DNNL_ARG_DST, mem(dst, y)}});
  return decode(y);
}

// ---- the same calls as standalone C++ (stabfuzz triage) ---------------------------------------
//
// f32 or bf16 ("" in other dtypes: no source). A bf16 buffer holds the top 16 bits of each float
// (exact: every input value is a bf16), and the outputs are widened back the same way.

bool source_dtype(DType d) { return d == DType::f32 || d == DType::bf16; }

const char* source_type(DType d) { return d == DType::bf16 ? "bf16" : "f32"; }

std::string source_prologue() {
  return "  using namespace dnnl;\n"
         "  const dnnl_version_t* v = dnnl_version();\n"
         "  std::printf(\"oneDNN %d.%d.%d\\n\", v->major, v->minor, v->patch);\n"
         "  engine eng(engine::kind::cpu, 0);\n"
         "  stream s(eng);\n";
}

// The primitive descriptor `pd` and the primitive `prim`, in oneDNN 3's API or in 2's (operation
// descriptors), chosen when the reproducer is compiled: one file builds against either version.
// v3 empty: oneDNN 3 has no such primitive (the file then fails to build against it, saying so).
std::string source_primitive(const std::string& type3, const std::string& args3,
                             const std::string& type2, const std::string& args2) {
  std::string s = "#if DNNL_VERSION_MAJOR >= 3\n";
  if (type3.empty())
    s += "#error \"oneDNN 3 removed this primitive\"\n";
  else
    s += "  " + type3 + "::primitive_desc pd(eng, " + args3 + ");\n  " + type3 + " prim(pd);\n";
  return s + "#else\n  " + type2 + "::primitive_desc pd(" + type2 + "::desc(" + args2 +
         "), eng);\n  " + type2 + " prim(pd);\n#endif\n";
}

// std::vector `name` of the dtype's elements holding the doubles of `from` (a vector).
std::string source_input(DType d, const std::string& name, const std::string& from) {
  if (d != DType::bf16)
    return "  std::vector<float> " + name + "(" + from + ".begin(), " + from + ".end());\n";
  return "  std::vector<uint16_t> " + name + "(" + from + ".size());\n" +
         "  for (size_t i = 0; i < " + name + ".size(); ++i) {\n" +
         "    const float f = static_cast<float>(" + from + "[i]);\n" +
         "    uint32_t b;\n"
         "    std::memcpy(&b, &f, 4);\n"
         "    " +
         name + "[i] = static_cast<uint16_t>(b >> 16);  // exact: the value is a bf16\n" + "  }\n";
}

// std::vector `name` of `count` elements of the dtype, for the outputs.
std::string source_output(DType d, const std::string& name, const std::string& count) {
  return std::string("  std::vector<") + (d == DType::bf16 ? "uint16_t" : "float") + "> " + name +
         "(" + count + ");\n";
}

// Returns the output vector `name` as doubles.
std::string source_return(DType d, const std::string& name) {
  if (d != DType::bf16) return "  return {" + name + ".begin(), " + name + ".end()};\n";
  return "  std::vector<double> y(" + name + ".size());\n" +
         "  for (size_t i = 0; i < y.size(); ++i) {\n" +
         "    const uint32_t b = static_cast<uint32_t>(" + name + "[i]) << 16;\n" +
         "    float f;\n"
         "    std::memcpy(&f, &b, 4);\n"
         "    y[i] = f;\n"
         "  }\n"
         "  return y;\n";
}

// A primitive from src to dst of one memory descriptor (dims, tag): eltwise and softmax.
std::string primitive_source(DType d, const std::string& n, const std::string& dims,
                             const char* tag, const std::string& primitive) {
  if (!source_dtype(d)) return "";
  return source_prologue() + "  const memory::desc md(" + dims +
         ", memory::data_type::" + source_type(d) + ", memory::format_tag::" + tag + ");\n" +
         source_input(d, "src", "x[0]") + source_output(d, "dst", n) + primitive +
         "  memory sm(md, eng, src.data()), dm(md, eng, dst.data());\n" +
         "  prim.execute(s, {{DNNL_ARG_SRC, sm}, {DNNL_ARG_DST, dm}});\n" + "  s.wait();\n" +
         source_return(d, "dst");
}

std::string eltwise_source(const Input& in, const std::string& alg, float alpha) {
  const std::string n = std::to_string(in.args[0].values.size());
  char a[32];
  std::snprintf(a, sizeof a, "%.9gf", static_cast<double>(alpha));
  if (alpha == std::floor(alpha)) std::snprintf(a, sizeof a, "%.1ff", static_cast<double>(alpha));
  const std::string args = "algorithm::" + alg + ", md, ";
  // oneDNN 3 removed eltwise_logsigmoid.
  const bool in3 = alg != "eltwise_logsigmoid";
  return primitive_source(
      in.dtype, n, "{" + n + "}", "a",
      source_primitive(in3 ? "eltwise_forward" : "",
                       "prop_kind::forward_inference, " + args + "md, " + a + ", 0.f",
                       "eltwise_forward", "prop_kind::forward_inference, " + args + a + ", 0.f"));
}

std::string softmax_source(const Input& in, const std::string& alg) {
  const std::string n = std::to_string(in.args[0].values.size());
  const std::string args = "prop_kind::forward_inference, algorithm::" + alg + ", md, md, 1";
  return primitive_source(in.dtype, n, "{1, " + n + "}", "ab",
                          source_primitive("softmax_forward", args, "softmax_v2_forward", args));
}

// A float literal of C++ source: 1e-05f.
std::string float_literal(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9gf", static_cast<double>(static_cast<float>(v)));
  std::string out = buf;
  if (out.find_first_of(".e") == std::string::npos) out.insert(out.size() - 1, ".0");
  return out;
}

// layer_normalization ([1, n], ab) or batch_normalization ([n, c], nc), forward_training with
// the batch statistics, as in normalize().
std::string normalization_source(const Input& in, bool layer) {
  if (!source_dtype(in.dtype)) return "";
  const std::string prim = layer ? "layer_normalization_forward" : "batch_normalization_forward";
  const auto& t = in.args[0];
  const std::string n = std::to_string(t.values.size());
  const std::string dims =
      layer ? "{1, " + n + "}"
            : "{" + std::to_string(t.shape.at(0)) + ", " + std::to_string(t.shape.at(1)) + "}";
  const double eps = dtype_param(in, "eps", layer ? params::kLayerNormEps : params::kBatchNormEps);
  const std::string eps_flags = float_literal(eps) + ", normalization_flags::none";
  // oneDNN 3.13's C++ header creates a layer normalization through a _v2 C function that 3.2's
  // library lacks: the C function every oneDNN 3 has, wrapped.
  const std::string layer_norm_v3 =
      "#if DNNL_VERSION_MAJOR >= 3\n"
      "  dnnl_primitive_desc_t c_pd = nullptr;\n"
      "  error::wrap_c_api(dnnl_layer_normalization_forward_primitive_desc_create(&c_pd, "
      "eng.get(), dnnl_forward_training, md.get(), md.get(), nullptr, " +
      float_literal(eps) +
      ", dnnl_normalization_flags_none, nullptr), \"layer_normalization_forward\");\n"
      "  " +
      prim + "::primitive_desc pd(c_pd);\n  " + prim + " prim(pd);\n";
  return source_prologue() + "  const memory::desc md(" + dims +
         ", memory::data_type::" + source_type(in.dtype) +
         ", memory::format_tag::" + (layer ? "ab" : "nc") + ");\n" +
         source_input(in.dtype, "src", "x[0]") + source_output(in.dtype, "dst", n) +
         (layer ? layer_norm_v3 + "#else\n  " + prim + "::primitive_desc pd(" + prim +
                      "::desc(prop_kind::forward_training, md, " + eps_flags + "), eng);\n  " +
                      prim + " prim(pd);\n#endif\n"
                : source_primitive(prim, "prop_kind::forward_training, md, md, " + eps_flags, prim,
                                   "prop_kind::forward_training, md, " + eps_flags)) +
         "  memory sm(md, eng, src.data()), dm(md, eng, dst.data());\n" +
         "  memory mean(pd.mean_desc(), eng), var(pd.variance_desc(), eng);\n" +
         "  prim.execute(s, {{DNNL_ARG_SRC, sm}, {DNNL_ARG_DST, dm}, " +
         "{DNNL_ARG_MEAN, mean}, {DNNL_ARG_VARIANCE, var}});\n" + "  s.wait();\n" +
         source_return(in.dtype, "dst");
}

// The row [1, n] reduced to [1, 1], as in reduction() (n = 1 is never called: exact there).
std::string reduction_source(const Input& in, const std::string& alg, float p) {
  if (!source_dtype(in.dtype)) return "";
  const std::string n = std::to_string(in.args[0].values.size());
  const std::string dt = std::string("memory::data_type::") + source_type(in.dtype);
  const std::string args = "algorithm::" + alg + ", src_md, dst_md, " + float_literal(p) + ", 0.f";
  return source_prologue() + "  const memory::desc src_md({1, " + n + "}, " + dt +
         ", memory::format_tag::ab), dst_md({1, 1}, " + dt + ", memory::format_tag::ab);\n" +
         source_input(in.dtype, "src", "x[0]") + source_output(in.dtype, "dst", "1") +
         source_primitive("reduction", args, "reduction", args) +
         "  memory sm(src_md, eng, src.data()), dm(dst_md, eng, dst.data());\n" +
         "  prim.execute(s, {{DNNL_ARG_SRC, sm}, {DNNL_ARG_DST, dm}});\n" + "  s.wait();\n" +
         source_return(in.dtype, "dst");
}

// C [m, n] = A [m, k] B [k, n], row-major, C in the input's dtype, as in matmul().
std::string matmul_source(const Input& in) {
  if (!source_dtype(in.dtype)) return "";
  const std::string m = std::to_string(in.args[0].shape.at(0)),
                    k = std::to_string(in.args[0].shape.at(1)),
                    n = std::to_string(in.args[1].shape.at(1));
  const std::string dt = std::string("memory::data_type::") + source_type(in.dtype);
  return source_prologue() + "  const memory::desc a_md({" + m + ", " + k + "}, " + dt +
         ", memory::format_tag::ab), b_md({" + k + ", " + n + "}, " + dt +
         ", memory::format_tag::ab), c_md({" + m + ", " + n + "}, " + dt +
         ", memory::format_tag::ab);\n" + source_input(in.dtype, "a", "x[0]") +
         source_input(in.dtype, "b", "x[1]") + source_output(in.dtype, "c", m + " * " + n) +
         source_primitive("matmul", "a_md, b_md, c_md", "matmul", "a_md, b_md, c_md") +
         "  memory am(a_md, eng, a.data()), bm(b_md, eng, b.data()), cm(c_md, eng, c.data());\n" +
         "  prim.execute(s, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, "
         "cm}});\n" +
         "  s.wait();\n" + source_return(in.dtype, "c");
}

// ---- the table --------------------------------------------------------------------------------

using Run = std::function<std::vector<double>(const Input&)>;
using Source = std::function<std::string(const Input&)>;
struct Impl {
  const char* id;
  const char* description;
  Run run;
  Input probe;  // a small valid input of the family, to find the dtypes this CPU supports
  Source source = nullptr;  // the call as standalone C++ ("" in a dtype it has none for)
};

Input row(std::vector<double> v) {
  const auto n = static_cast<int64_t>(v.size());
  Input in;
  in.args.push_back({{n}, std::move(v)});
  return in;
}
Input matrix(int64_t r, int64_t c, std::vector<double> v) {
  Input in;
  in.args.push_back({{r, c}, std::move(v)});
  return in;
}

std::vector<Impl> impls() {
  const Input r = row({0.5, -1, 2, 0.25});
  Input mm = matrix(2, 2, {1, 2, 3, 4});
  mm.args.push_back({{2, 2}, {0.5, -1, 2, 0.25}});
  auto elt = [&](const char* id, const char* what, Alg alg, float alpha = 0) {
    const std::string name = std::string(id).substr(std::string(id).rfind('/') + 1);
    return Impl{id, what, [alg, alpha](const Input& in) { return eltwise(in, alg, alpha); }, r,
                [name, alpha](const Input& in) { return eltwise_source(in, name, alpha); }};
  };
  return {
      {"softmax/onednn/softmax", "softmax_v2 forward, algorithm softmax_accurate, axis of the row",
       [](const Input& in) { return softmax(in, Alg::softmax_accurate); }, r,
       [](const Input& in) { return softmax_source(in, "softmax_accurate"); }},
      {"log_softmax/onednn/logsoftmax", "softmax_v2 forward, algorithm softmax_log",
       [](const Input& in) { return softmax(in, Alg::softmax_log); }, r,
       [](const Input& in) { return softmax_source(in, "softmax_log"); }},
      {"layer_norm/onednn/layer_normalization",
       "layer_normalization forward_training on [1, n], no scale or shift, eps from the input",
       layer_norm, r, [](const Input& in) { return normalization_source(in, true); }},
      {"batch_norm/onednn/batch_normalization",
       "batch_normalization forward_training on [n, c] (nc), batch statistics, no scale or shift",
       batch_norm, matrix(2, 2, {1, 2, 3, 5}),
       [](const Input& in) { return normalization_source(in, false); }},
      elt("gelu/onednn/eltwise_gelu_erf", "eltwise_gelu_erf forward", Alg::eltwise_gelu_erf),
      elt("gelu_tanh/onednn/eltwise_gelu_tanh", "eltwise_gelu_tanh forward",
          Alg::eltwise_gelu_tanh),
      elt("sigmoid/onednn/eltwise_logistic", "eltwise_logistic forward", Alg::eltwise_logistic),
      // alpha = 1: soft_relu is log(1 + e^x) (oneDNN 3 reads alpha as the beta of softplus).
      elt("softplus/onednn/eltwise_soft_relu", "eltwise_soft_relu forward", Alg::eltwise_soft_relu,
          1),
      elt("log_sigmoid/onednn/eltwise_logsigmoid", "eltwise_logsigmoid forward",
          Alg::eltwise_logsigmoid),
      // swish is x sigmoid(alpha x): alpha = 1 is silu.
      elt("silu/onednn/eltwise_swish", "eltwise_swish forward, alpha 1", Alg::eltwise_swish, 1),
      elt("tanh/onednn/eltwise_tanh", "eltwise_tanh forward", Alg::eltwise_tanh),
      elt("exp/onednn/eltwise_exp", "eltwise_exp forward", Alg::eltwise_exp),
      elt("log/onednn/eltwise_log", "eltwise_log forward", Alg::eltwise_log),
      {"gemm/onednn/matmul", "matmul of row-major A [m, k] and B [k, n], C in the input's dtype",
       matmul, mm, matmul_source},
      {"sum/onednn/reduction_sum", "reduction_sum of [1, n] to [1, 1]",
       [](const Input& in) { return reduction(in, Alg::reduction_sum, 0); }, r,
       [](const Input& in) { return reduction_source(in, "reduction_sum", 0); }},
      {"mean/onednn/reduction_mean", "reduction_mean of [1, n] to [1, 1]",
       [](const Input& in) { return reduction(in, Alg::reduction_mean, 0); }, r,
       [](const Input& in) { return reduction_source(in, "reduction_mean", 0); }},
      {"l2_norm/onednn/reduction_norm_lp_sum", "reduction_norm_lp_sum, p = 2, eps = 0",
       [](const Input& in) { return reduction(in, Alg::reduction_norm_lp_sum, 2); }, r,
       [](const Input& in) { return reduction_source(in, "reduction_norm_lp_sum", 2); }},
  };
}

}  // namespace

void register_onednn(Registry& registry) {
  auto all = impls();
  const dnnl_version_t* v = dnnl::version();
  const std::string version =
      std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
  for (const auto& entry : onednn_catalog()) {
    const Impl* impl = nullptr;
    for (const auto& i : all)
      if (entry.id == i.id) impl = &i;
    if (!impl) throw std::logic_error("libs: no oneDNN implementation for " + entry.id);
    Target t;
    t.id = impl->id;
    t.kind = TargetKind::library;
    t.description =
        "oneDNN " + version + " " + impl->description + " (one thread; black box: no CESTAC)";
    std::string refused;
    for (DType d : {DType::f32, DType::bf16, DType::f16}) {
      Input probe = impl->probe;
      probe.dtype = d;
      try {
        one_thread();
        impl->run(probe);
        t.dtypes.push_back(d);
      } catch (const dnnl::error& e) {
        refused += (refused.empty() ? "" : ", ") + std::string(dtype_name(d));
      }
    }
    if (t.dtypes.empty()) {
      registry.add_unavailable({t.id, "oneDNN builds this primitive for no dtype on this CPU"});
      continue;
    }
    if (!refused.empty()) t.description += "; this CPU's oneDNN refuses " + refused;
    t.native = [run = impl->run](const Input& in) {
      one_thread();
      return run(in);
    };
    if (impl->source)
      t.standalone = [lib = "oneDNN " + version, id = t.id,
                      source = impl->source](const Input& in) {
        // A one-value reduction is not a library call (reduction() returns it exactly); a source
        // is "" in a dtype it is not written for.
        if (id.find("/reduction_") != std::string::npos && in.args[0].values.size() == 1)
          return std::optional<StandaloneCall>();
        std::string body = source(in);
        if (body.empty()) return std::optional<StandaloneCall>();
        return std::optional<StandaloneCall>(StandaloneCall{
            lib,
            "#include <cstdint>\n#include <cstdio>\n#include <cstring>\n\n#include <dnnl.hpp>\n",
            std::move(body), "-ldnnl"});
      };
    registry.add_target(entry.family, std::move(t));
  }
}

}  // namespace stabfuzz::libs
