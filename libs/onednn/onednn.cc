// oneDNN primitives (softmax, layer/batch normalization, eltwise, matmul, reduction) as targets:
// `family/onednn/...` on the oneDNN linked into stabfuzz (Debian's 2.x) and `family/onednn3/...`
// on oneDNN 3 (ci/bootstrap --with-onednn3), whose calls live in libstabfuzz_onednn3.so, loaded at
// start-up beside the linked one (libs/onednn/onednn_calls.cc is both).
//
// oneDNN holds no f64 on the CPU; f32 always, and bf16 / f16 where this CPU's oneDNN builds the
// primitive (probed once at registration: on AVX2 without AVX512-BF16 it usually refuses).
#include <dlfcn.h>
#include <limits.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <stdexcept>

#include "libs/libraries.h"
#include "libs/onednn/onednn_api.h"
#include "libs/storage.h"
#include "stabfuzz/params.h"

namespace stabfuzz::libs {
namespace {

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

using Scalar = std::function<double(const Input&)>;
using Source = std::function<std::string(const Input&)>;
struct Impl {
  const char* name;  // the primitive, as target ids name it (`family/onednn/<name>`)
  const char* description;
  Scalar scalar;  // the primitive's parameter (OnednnModule::run) for this input
  Input probe;    // a small valid input of the family, to find the dtypes this CPU supports
  Source source;  // the call as standalone C++ ("" in a dtype it has none for)
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

Scalar constant(double v) {
  return [v](const Input&) { return v; };
}

// eps as the dtype holds it (what the oracle uses), passed as the float oneDNN takes.
Scalar eps(double fallback) {
  return [fallback](const Input& in) { return dtype_param(in, "eps", fallback); };
}

std::vector<Impl> impls() {
  const Input r = row({0.5, -1, 2, 0.25});
  Input mm = matrix(2, 2, {1, 2, 3, 4});
  mm.args.push_back({{2, 2}, {0.5, -1, 2, 0.25}});
  auto elt = [&](const char* name, const char* what, float alpha = 0) {
    return Impl{name, what, constant(alpha), r, [name = std::string(name), alpha](const Input& in) {
                  return eltwise_source(in, name, alpha);
                }};
  };
  return {
      {"softmax", "softmax forward, algorithm softmax_accurate, axis of the row", constant(0), r,
       [](const Input& in) { return softmax_source(in, "softmax_accurate"); }},
      {"logsoftmax", "softmax forward, algorithm softmax_log", constant(0), r,
       [](const Input& in) { return softmax_source(in, "softmax_log"); }},
      {"layer_normalization",
       "layer_normalization forward_training on [1, n], no scale or shift, eps from the input",
       eps(params::kLayerNormEps), r,
       [](const Input& in) { return normalization_source(in, true); }},
      {"batch_normalization",
       "batch_normalization forward_training on [n, c] (nc), batch statistics, no scale or shift",
       eps(params::kBatchNormEps), matrix(2, 2, {1, 2, 3, 5}),
       [](const Input& in) { return normalization_source(in, false); }},
      elt("eltwise_gelu_erf", "eltwise_gelu_erf forward"),
      elt("eltwise_gelu_tanh", "eltwise_gelu_tanh forward"),
      elt("eltwise_logistic", "eltwise_logistic forward"),
      // alpha = 1: soft_relu is log(1 + e^x) (oneDNN 3 reads alpha as the beta of softplus).
      elt("eltwise_soft_relu", "eltwise_soft_relu forward", 1),
      elt("eltwise_logsigmoid", "eltwise_logsigmoid forward"),
      // swish is x sigmoid(alpha x): alpha = 1 is silu.
      elt("eltwise_swish", "eltwise_swish forward, alpha 1", 1),
      elt("eltwise_tanh", "eltwise_tanh forward"),
      elt("eltwise_exp", "eltwise_exp forward"),
      elt("eltwise_log", "eltwise_log forward"),
      {"matmul", "matmul of row-major A [m, k] and B [k, n], C in the input's dtype", constant(0),
       mm, matmul_source},
      {"reduction_sum", "reduction_sum of [1, n] to [1, 1]", constant(0), r,
       [](const Input& in) { return reduction_source(in, "reduction_sum", 0); }},
      {"reduction_mean", "reduction_mean of [1, n] to [1, 1]", constant(0), r,
       [](const Input& in) { return reduction_source(in, "reduction_mean", 0); }},
      {"reduction_norm_lp_sum", "reduction_norm_lp_sum, p = 2, eps = 0", constant(2), r,
       [](const Input& in) { return reduction_source(in, "reduction_norm_lp_sum", 2); }},
  };
}

// The call of `impl` on `in`. oneDNN refuses a reduction that reduces no dimension (n = 1): there
// the result is the value itself for sum and mean and its magnitude for the norm, exact, returned
// without a call.
std::vector<double> run(const OnednnModule& m, const Impl& impl, const Input& in) {
  const std::string name = impl.name;
  if (name.rfind("reduction_", 0) == 0 && in.args.at(0).values.size() == 1) {
    const double x = in.args[0].values[0];
    return {name == "reduction_norm_lp_sum" ? std::fabs(x) : x};
  }
  return m.run(impl.name, in.dtype, in.args, impl.scalar(in));
}

// Registers `catalog`'s targets on oneDNN build `m`; `build` is how a reproducer links it.
void add_targets(Registry& registry, const std::vector<LibraryTarget>& catalog,
                 const OnednnModule& m, const std::string& build) {
  static const std::vector<Impl> all = impls();
  const std::string version =
      std::to_string(m.major) + "." + std::to_string(m.minor) + "." + std::to_string(m.patch);
  for (const auto& entry : catalog) {
    const std::string name = entry.id.substr(entry.id.rfind('/') + 1);
    const Impl* impl = nullptr;
    for (const auto& i : all)
      if (name == i.name) impl = &i;
    if (!impl) throw std::logic_error("libs: no oneDNN implementation for " + entry.id);
    Target t;
    t.id = entry.id;
    t.kind = TargetKind::library;
    t.description =
        "oneDNN " + version + " " + impl->description + " (one thread; black box: no CESTAC)";
    std::string refused;
    for (DType d : {DType::f32, DType::bf16, DType::f16}) {
      Input probe = impl->probe;
      probe.dtype = d;
      try {
        run(m, *impl, probe);
        t.dtypes.push_back(d);
      } catch (const std::runtime_error&) {  // oneDNN refused the primitive in this dtype
        refused += (refused.empty() ? "" : ", ") + std::string(dtype_name(d));
      }
    }
    if (t.dtypes.empty()) {
      registry.add_unavailable({t.id, "oneDNN builds this primitive for no dtype on this CPU"});
      continue;
    }
    if (!refused.empty()) t.description += "; this CPU's oneDNN refuses " + refused;
    t.native = [&m, impl](const Input& in) { return run(m, *impl, in); };
    t.standalone = [lib = "oneDNN " + version, build, name,
                    source = impl->source](const Input& in) {
      // A one-value reduction is not a library call (run() returns it exactly); a source is "" in
      // a dtype it is not written for.
      if (name.rfind("reduction_", 0) == 0 && in.args.at(0).values.size() == 1)
        return std::optional<StandaloneCall>();
      std::string body = source(in);
      if (body.empty()) return std::optional<StandaloneCall>();
      return std::optional<StandaloneCall>(StandaloneCall{
          lib, "#include <cstdint>\n#include <cstdio>\n#include <cstring>\n\n#include <dnnl.hpp>\n",
          std::move(body), build});
    };
    registry.add_target(entry.family, std::move(t));
  }
}

// oneDNN 3 beside the linked oneDNN 2: the module's own calls must bind to oneDNN 3's symbols of
// the same names, hence RTLD_DEEPBIND.
const OnednnModule* load_onednn3(std::string& why) {
  if (asan_running()) {
    why = "oneDNN 3 is not loaded under AddressSanitizer (it needs RTLD_DEEPBIND)";
    return nullptr;
  }
  const std::string path = module_path("STABFUZZ_ONEDNN3_MODULE", "libstabfuzz_onednn3.so");
  if (access(path.c_str(), R_OK) != 0) {
    why = "built without oneDNN 3: ci/bootstrap --with-onednn3";
    return nullptr;
  }
  void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
  if (!h) {
    why = "oneDNN 3 not loadable (" + std::string(::dlerror()) + "): ci/bootstrap --with-onednn3";
    return nullptr;
  }
  using Entry = const OnednnModule* (*)();
  auto entry = reinterpret_cast<Entry>(::dlsym(h, "stabfuzz_onednn3_module"));
  if (!entry || entry()->abi != kOnednnModuleAbi) {
    why = path + " is not this build's oneDNN 3 module";
    return nullptr;
  }
  return entry();
}

}  // namespace

void register_onednn(Registry& registry) {
  add_targets(registry, onednn_catalog(), linked_onednn(), "-ldnnl");
  std::string why;
  if (const OnednnModule* m = load_onednn3(why)) {
#ifdef STABFUZZ_ONEDNN3_DIR
    const std::string dir = STABFUZZ_ONEDNN3_DIR;
#else
    const std::string dir = ".deps/onednn3";
#endif
    add_targets(registry, onednn3_catalog(), *m,
                "-I" + dir + "/include " + dir + "/lib/libdnnl.so.3 -Wl,-rpath," + dir + "/lib");
  } else {
    for (const auto& t : onednn3_catalog()) registry.add_unavailable({t.id, why});
  }
}

}  // namespace stabfuzz::libs
