// A CBLAS (OpenBLAS on Debian) as targets: dot (?dot), gemm (?gemm), l2_norm (?nrm2), f64 and f32.
//
// CBLAS has no 16-bit types here (Debian's OpenBLAS 0.3.21 is built without sbgemm/sbdot).
#include <cblas.h>

#include <stdexcept>

#include "libs/libraries.h"
#include "libs/storage.h"

namespace stabfuzz::libs {
namespace {

std::vector<float> floats(const std::vector<double>& v) { return {v.begin(), v.end()}; }

std::vector<double> dot(const Input& in) {
  const auto& a = in.args[0].values;
  const auto& b = in.args[1].values;
  const auto n = static_cast<int>(a.size());
  if (in.dtype == DType::f64) return {cblas_ddot(n, a.data(), 1, b.data(), 1)};
  const auto af = floats(a), bf = floats(b);
  return {cblas_sdot(n, af.data(), 1, bf.data(), 1)};
}

// C = 1 A B + 0 C, row-major A [m, k], B [k, n]: beta = 0 never reads C.
std::vector<double> gemm(const Input& in) {
  const int m = static_cast<int>(in.args[0].shape.at(0)),
            k = static_cast<int>(in.args[0].shape.at(1));
  const int n = static_cast<int>(in.args[1].shape.at(1));
  const auto& a = in.args[0].values;
  const auto& b = in.args[1].values;
  if (in.dtype == DType::f64) {
    std::vector<double> c(static_cast<size_t>(m) * n);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, a.data(), k, b.data(), n,
                0.0, c.data(), n);
    return c;
  }
  const auto af = floats(a), bf = floats(b);
  std::vector<float> c(static_cast<size_t>(m) * n);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.f, af.data(), k, bf.data(), n,
              0.f, c.data(), n);
  return {c.begin(), c.end()};
}

std::vector<double> nrm2(const Input& in) {
  const auto& x = in.args[0].values;
  const auto n = static_cast<int>(x.size());
  if (in.dtype == DType::f64) return {cblas_dnrm2(n, x.data(), 1)};
  const auto xf = floats(x);
  return {cblas_snrm2(n, xf.data(), 1)};
}

struct Impl {
  const char* id;
  const char* description;
  std::vector<double> (*run)(const Input&);
};

}  // namespace

void register_blas(Registry& registry) {
#ifdef STABFUZZ_BLAS_OPENBLAS
  // OpenBLAS starts a thread per core; one thread keeps every sum in the same order on any machine.
  openblas_set_num_threads(1);
  const std::string lib = openblas_get_config();  // "OpenBLAS 0.3.21 ... Haswell ..."
#else
  const std::string lib = "CBLAS";
#endif
  const Impl impls[] = {
      {"dot/blas/dot", "cblas_ddot (f64), cblas_sdot (f32), unit strides", dot},
      {"gemm/blas/gemm", "cblas_dgemm / cblas_sgemm, row-major, no transposes, alpha 1, beta 0",
       gemm},
      {"l2_norm/blas/nrm2", "cblas_dnrm2 / cblas_snrm2, unit stride", nrm2},
  };
  for (const auto& entry : blas_catalog()) {
    const Impl* impl = nullptr;
    for (const auto& i : impls)
      if (entry.id == i.id) impl = &i;
    if (!impl) throw std::logic_error("libs: no CBLAS implementation for " + entry.id);
    Target t;
    t.id = impl->id;
    t.kind = TargetKind::library;
    t.description = lib + ": " + impl->description + " (one thread; black box: no CESTAC)";
    t.dtypes = {DType::f64, DType::f32};
    t.native = impl->run;
    registry.add_target(entry.family, std::move(t));
  }
}

}  // namespace stabfuzz::libs
