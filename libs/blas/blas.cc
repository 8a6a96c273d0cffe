// CBLAS libraries as targets: dot (?dot), gemm (?gemm), l2_norm (?nrm2), f64 and f32. The CBLAS
// linked at build time (OpenBLAS on Debian) as `family/blas/...`, and Intel MKL's, loaded at run
// time from the PyPI wheel that `ci/bootstrap --with-mkl` unpacks, as `family/mkl/...`.
//
// CBLAS has no 16-bit types here (Debian's OpenBLAS 0.3.21 is built without sbgemm/sbdot).
#include <cblas.h>
#include <dlfcn.h>

#include <cstdlib>
#include <optional>
#include <stdexcept>

#include "libs/libraries.h"
#include "libs/storage.h"

namespace stabfuzz::libs {
namespace {

// The entry points a target calls, from the linked CBLAS or from a library loaded at run time.
struct Cblas {
  decltype(&cblas_ddot) ddot;
  decltype(&cblas_sdot) sdot;
  decltype(&cblas_dgemm) dgemm;
  decltype(&cblas_sgemm) sgemm;
  decltype(&cblas_dnrm2) dnrm2;
  decltype(&cblas_snrm2) snrm2;
};

std::vector<float> floats(const std::vector<double>& v) { return {v.begin(), v.end()}; }

std::vector<double> dot(const Cblas& api, const Input& in) {
  const auto& a = in.args[0].values;
  const auto& b = in.args[1].values;
  const auto n = static_cast<int>(a.size());
  if (in.dtype == DType::f64) return {api.ddot(n, a.data(), 1, b.data(), 1)};
  const auto af = floats(a), bf = floats(b);
  return {api.sdot(n, af.data(), 1, bf.data(), 1)};
}

// C = 1 A B + 0 C, row-major A [m, k], B [k, n]: beta = 0 never reads C.
std::vector<double> gemm(const Cblas& api, const Input& in) {
  const int m = static_cast<int>(in.args[0].shape.at(0)),
            k = static_cast<int>(in.args[0].shape.at(1));
  const int n = static_cast<int>(in.args[1].shape.at(1));
  const auto& a = in.args[0].values;
  const auto& b = in.args[1].values;
  if (in.dtype == DType::f64) {
    std::vector<double> c(static_cast<size_t>(m) * n);
    api.dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, a.data(), k, b.data(), n,
              0.0, c.data(), n);
    return c;
  }
  const auto af = floats(a), bf = floats(b);
  std::vector<float> c(static_cast<size_t>(m) * n);
  api.sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.f, af.data(), k, bf.data(), n,
            0.f, c.data(), n);
  return {c.begin(), c.end()};
}

std::vector<double> nrm2(const Cblas& api, const Input& in) {
  const auto& x = in.args[0].values;
  const auto n = static_cast<int>(x.size());
  if (in.dtype == DType::f64) return {api.dnrm2(n, x.data(), 1)};
  const auto xf = floats(x);
  return {api.snrm2(n, xf.data(), 1)};
}

// The same calls as standalone C++ (stabfuzz triage): x[k] is argument k, as doubles.
std::string dot_source(const Input& in) {
  const std::string n = std::to_string(in.args[0].values.size());
  if (in.dtype == DType::f64)
    return "  return {cblas_ddot(" + n + ", x[0].data(), 1, x[1].data(), 1)};\n";
  return "  const std::vector<float> a(x[0].begin(), x[0].end()), b(x[1].begin(), x[1].end());\n"
         "  return {cblas_sdot(" +
         n + ", a.data(), 1, b.data(), 1)};\n";
}

std::string gemm_source(const Input& in) {
  const std::string m = std::to_string(in.args[0].shape.at(0)),
                    k = std::to_string(in.args[0].shape.at(1)),
                    n = std::to_string(in.args[1].shape.at(1));
  const std::string dims = m + ", " + n + ", " + k;
  if (in.dtype == DType::f64)
    return "  std::vector<double> c(" + m + " * " + n +
           ");\n"
           "  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, " +
           dims + ", 1.0, x[0].data(), " + k + ", x[1].data(), " + n + ", 0.0, c.data(), " + n +
           ");\n"
           "  return c;\n";
  return "  const std::vector<float> a(x[0].begin(), x[0].end()), b(x[1].begin(), x[1].end());\n"
         "  std::vector<float> c(" +
         m + " * " + n +
         ");\n"
         "  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, " +
         dims + ", 1.f, a.data(), " + k + ", b.data(), " + n + ", 0.f, c.data(), " + n +
         ");\n"
         "  return {c.begin(), c.end()};\n";
}

std::string nrm2_source(const Input& in) {
  const std::string n = std::to_string(in.args[0].values.size());
  if (in.dtype == DType::f64) return "  return {cblas_dnrm2(" + n + ", x[0].data(), 1)};\n";
  return "  const std::vector<float> a(x[0].begin(), x[0].end());\n"
         "  return {cblas_snrm2(" +
         n + ", a.data(), 1)};\n";
}

struct Impl {
  const char* name;  // after family/<library>/
  const char* description;
  std::vector<double> (*run)(const Cblas&, const Input&);
  std::string (*source)(const Input&);
};

constexpr Impl kImpls[] = {
    {"dot", "?dot: ddot (f64), sdot (f32), unit strides", dot, dot_source},
    {"gemm", "?gemm: dgemm / sgemm, row-major, no transposes, alpha 1, beta 0", gemm, gemm_source},
    {"nrm2", "?nrm2: dnrm2 / snrm2, unit stride", nrm2, nrm2_source},
};

// Registers `catalog`'s targets, each calling `api`; `lib` names the library and its version,
// `build` is what a standalone reproducer's compile line needs to link it.
void add_targets(Registry& registry, const std::vector<LibraryTarget>& catalog, const Cblas& api,
                 const std::string& lib, const std::string& build) {
  for (const auto& entry : catalog) {
    const Impl* impl = nullptr;
    for (const auto& i : kImpls)
      if (entry.id.substr(entry.id.rfind('/') + 1) == i.name) impl = &i;
    if (!impl) throw std::logic_error("libs: no CBLAS implementation for " + entry.id);
    Target t;
    t.id = entry.id;
    t.kind = TargetKind::library;
    t.description = lib + ": " + impl->description + " (one thread; black box: no CESTAC)";
    t.dtypes = {DType::f64, DType::f32};
    t.native = [api, run = impl->run](const Input& in) { return run(api, in); };
    t.standalone = [lib, build, source = impl->source](const Input& in) {
      return std::optional<StandaloneCall>(
          StandaloneCall{lib, "#include <cblas.h>\n", source(in), build});
    };
    registry.add_target(entry.family, std::move(t));
  }
}

// Intel MKL's single dynamic library: STABFUZZ_MKL (a path to libmkl_rt.so.N) when set, else the
// folder ci/bootstrap --with-mkl unpacked the wheel into (STABFUZZ_MKL_DIR, set at build time).
std::optional<Cblas> load_mkl(std::string& lib, std::string& why, std::string& path_out) {
  std::string path;
  if (const char* env = std::getenv("STABFUZZ_MKL"); env && *env) path = env;
#ifdef STABFUZZ_MKL_DIR
  if (path.empty()) path = std::string(STABFUZZ_MKL_DIR) + "/libmkl_rt.so.3";
#endif
  if (path.empty()) {
    why = "Intel MKL not found: ci/bootstrap --with-mkl, or STABFUZZ_MKL=/path/to/libmkl_rt.so.3";
    return std::nullopt;
  }
  // MKL's own calls must bind to MKL, not to the linked CBLAS's symbols of the same names:
  // RTLD_DEEPBIND, which AddressSanitizer does not support.
  if (asan_running()) {
    why = "Intel MKL is not loaded under AddressSanitizer (it needs RTLD_DEEPBIND)";
    return std::nullopt;
  }
  // One thread, as for OpenBLAS: the sequential layer needs no OpenMP runtime.
  ::setenv("MKL_THREADING_LAYER", "SEQUENTIAL", 0);
  void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
  if (!h) {
    why = "Intel MKL not loadable (" + std::string(::dlerror()) +
          "): ci/bootstrap --with-mkl, or STABFUZZ_MKL=/path/to/libmkl_rt.so.3";
    return std::nullopt;
  }
  auto sym = [&](const char* name) {
    void* p = ::dlsym(h, name);
    if (!p) why = path + " lacks " + name;
    return p;
  };
  Cblas api{};
  api.ddot = reinterpret_cast<decltype(api.ddot)>(sym("cblas_ddot"));
  api.sdot = reinterpret_cast<decltype(api.sdot)>(sym("cblas_sdot"));
  api.dgemm = reinterpret_cast<decltype(api.dgemm)>(sym("cblas_dgemm"));
  api.sgemm = reinterpret_cast<decltype(api.sgemm)>(sym("cblas_sgemm"));
  api.dnrm2 = reinterpret_cast<decltype(api.dnrm2)>(sym("cblas_dnrm2"));
  api.snrm2 = reinterpret_cast<decltype(api.snrm2)>(sym("cblas_snrm2"));
  if (!why.empty()) return std::nullopt;
  path_out = path;
  lib = "Intel MKL";
  using VersionFn = void (*)(char*, int);
  if (auto version = reinterpret_cast<VersionFn>(::dlsym(h, "MKL_Get_Version_String"))) {
    char buf[256] = {};
    version(buf, sizeof buf - 1);
    lib =
        buf;  // "Intel(R) oneAPI Math Kernel Library Version 2026.2-Product Build 20260915 for ..."
    lib = lib.substr(0, lib.find(" for Intel"));
    while (!lib.empty() && lib.back() == ' ') lib.pop_back();
  }
  return api;
}

}  // namespace

void register_blas(Registry& registry) {
#ifdef STABFUZZ_BLAS_OPENBLAS
  // OpenBLAS starts a thread per core; one thread keeps every sum in the same order on any machine.
  openblas_set_num_threads(1);
  const std::string lib = openblas_get_config();  // "OpenBLAS 0.3.21 ... Haswell ..."
#else
  const std::string lib = "CBLAS";
#endif
  // Debian's OpenBLAS has a pkg-config file; MKL links by its path (the header is CBLAS's).
  add_targets(
      registry, blas_catalog(),
      Cblas{&cblas_ddot, &cblas_sdot, &cblas_dgemm, &cblas_sgemm, &cblas_dnrm2, &cblas_snrm2}, lib,
      "$(pkg-config --cflags --libs openblas)");
  std::string mkl, why, mkl_path;
  if (const auto api = load_mkl(mkl, why, mkl_path))
    add_targets(registry, mkl_catalog(), *api, mkl,
                "$(pkg-config --cflags openblas) " + mkl_path + " -Wl,-rpath," +
                    mkl_path.substr(0, mkl_path.rfind('/')));
  else
    for (const auto& t : mkl_catalog()) registry.add_unavailable({t.id, why});
}

}  // namespace stabfuzz::libs
