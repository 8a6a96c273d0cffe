// GPU targets in a CUDA build: the CUDA reference kernels (native and device CESTAC) and the cuBLAS
// GEMM modes, registered into their families when a device is usable, else listed as unavailable.
#include <cmath>
#include <stdexcept>
#include <string>

#include "harness/core/cuda_probe.h"
#include "stabfuzz/errors.h"
#include "stabfuzz/gpu/cestac_core.h"
#include "stabfuzz/params.h"
#include "targets/cublas/gemm_cublas.h"
#include "targets/cuda/kernels.h"
#include "targets/gpu_targets.h"

namespace stabfuzz::targets {
namespace {

// The device flag words are numbered as the CPU engine's instability kinds.
static_assert(cestac::kFlagCancellation == 1u << static_cast<int>(cestac::Kind::cancellation));
static_assert(cestac::kFlagInvalidOperation ==
              1u << static_cast<int>(cestac::Kind::invalid_operation));
static_assert(cestac::kDeviceFlagKinds <= cestac::kKindCount);

using params::kLayerNormEps;
using params::kRmsNormEps;

size_t dim(const Input& in, size_t arg, size_t k) {
  return static_cast<size_t>(in.args.at(arg).shape.at(k));
}

cuda::Problem problem_of(cuda::Kernel k, const Input& in) {
  cuda::Problem p;
  for (const auto& t : in.args) p.x.push_back(t.values);
  switch (k) {
    case cuda::Kernel::layer_norm:
      p.eps = in.param("eps", kLayerNormEps);
      break;
    case cuda::Kernel::rms_norm:
      p.eps = in.param("eps", kRmsNormEps);
      break;
    case cuda::Kernel::var:
      p.unbiased = in.param("unbiased", params::kUnbiasedDefault);
      break;
    case cuda::Kernel::gemm:
      p.m = dim(in, 0, 0), p.k = dim(in, 0, 1), p.n = dim(in, 1, 1);
      break;
    case cuda::Kernel::attention: {
      p.s = dim(in, 0, 0), p.d = dim(in, 0, 1), p.t = dim(in, 1, 0), p.dv = dim(in, 2, 1);
      const auto prm = params::attention_params(in, static_cast<double>(p.d));
      p.scale = prm.scale;
      p.causal = prm.causal;
      break;
    }
    default:
      break;
  }
  return p;
}

// Runs f; a shape over the kernel's or cuBLAS's limits (std::invalid_argument from the launch plan
// or the shape check, before anything runs on the device) becomes an InputError naming the target.
template <class F>
auto sized(const std::string& id, F&& f) {
  try {
    return f();
  } catch (const std::invalid_argument& e) {
    throw InputError(id + " cannot take this input: " + e.what());
  }
}

CestacOutput cestac_output(const cuda::DeviceCestac& d, DType dtype) {
  const int precision = dtype == DType::f64 ? 53 : 24;
  // As the CPU engine's Stoch<T, 3> (op.h, run_cestac): the mean of the first kMean lanes, the
  // noise flag and the digits' spread of every lane.
  constexpr int L = cuda::kLanes, kMean = cestac::samples_for_lanes(L);
  CestacOutput out;
  const size_t outputs = d.samples.size() / L;
  for (size_t o = 0; o < outputs; ++o) {
    const double* s = &d.samples[o * L];
    long double m = 0;
    bool noisy = false;
    for (int i = 0; i < L; ++i) {
      if (i < kMean) m += s[i];
      noisy |= !(s[i] == s[0]) && !(std::isnan(s[i]) && std::isnan(s[0]));
    }
    out.mean.push_back(static_cast<double>(m / kMean));
    out.digits.push_back(
        cestac::detail::sample_digits(s, L, precision, cestac::detail::digit_scale(L)));
    out.noisy.push_back(noisy);
  }
  for (int k = 0; k < cestac::kDeviceFlagKinds; ++k) out.log.counts[k] = d.counts[k];
  return out;
}

const char* kernel_description(cuda::Kernel k) {
  switch (k) {
    case cuda::Kernel::softmax:
      return "CUDA, one block per row: block max, exp, chunked-then-tree sum, division";
    case cuda::Kernel::log_softmax:
      return "CUDA, one block per row: argmax and runner-up (block argmax), y = (x - x_k) - "
             "log1p(e^((x_k2 - x_k) + log sum_{j != k} e^(x_j - x_k2)))";
    case cuda::Kernel::layer_norm:
      return "CUDA, one block per row: corrected two-pass mean as 2^-k mean(x 2^k) (2^k max|x| in "
             "[1, 2)), scaled variance (the CPU reference's algorithm)";
    case cuda::Kernel::rms_norm:
      return "CUDA, one block per row: x / (S sqrt(mean((x/S)^2) + (eps/S)/S))";
    case cuda::Kernel::sum:
      return "CUDA, one block per row: chunks in order, warp-shuffle tree; scaled by 2^-32 near "
             "overflow";
    case cuda::Kernel::var:
      return "CUDA, one block per row: corrected two-pass variance (shifted mean, its rounding "
             "error subtracted before squaring) on data scaled into [1, 2), as the CPU reference";
    case cuda::Kernel::gemm:
      return "CUDA, 16x16 output tiles, k in shared-memory chunks of 8 summed in order, chunk "
             "sums combined pairwise";
    case cuda::Kernel::attention:
      return "CUDA, one block per query: pairwise-dot scores, block max and sum, max-shifted "
             "exp, pairwise weighted sums, one division";
  }
  return "";
}

Target cuda_target(const std::string& id, cuda::Kernel k) {
  Target t;
  t.id = id;
  t.kind = TargetKind::reference;
  t.description = std::string(kernel_description(k)) +
                  "; CESTAC on the device: DStoch<T, 4>, directed-rounding intrinsics";
  t.dtypes = {DType::f64, DType::f32};
  t.native = [k, id](const Input& in) {
    return sized(id,
                 [&] { return cuda::run_native(k, problem_of(k, in), in.dtype == DType::f64); });
  };
  t.cestac = [k, id](const Input& in, const CestacRequest& req) {
    const cuda::DeviceCestac d = sized(id, [&] {
      return cuda::run_cestac(k, problem_of(k, in), in.dtype == DType::f64, req.seed, req.stream,
                              req.config.cancel_digits, req.config.detect);
    });
    return cestac_output(d, in.dtype);
  };
  return t;
}

Target cublas_target(const std::string& id, cublas::Mode mode) {
  Target t;
  t.id = id;
  t.kind = TargetKind::library;
  switch (mode) {
    case cublas::Mode::f32:
      t.description = "cublasGemmEx, f32 storage, CUBLAS_COMPUTE_32F, default math mode (no TF32)";
      t.dtypes = {DType::f32};
      break;
    case cublas::Mode::tf32:
      t.description =
          "cublasGemmEx, f32 storage, CUBLAS_COMPUTE_32F_FAST_TF32 with "
          "CUBLAS_TF32_TENSOR_OP_MATH: "
          "on the shapes cuBLAS runs on tensor cores, A and B are rounded to TF32 (10 fraction "
          "bits) before multiplying, about 2^-11 of each product, thousands of f32 ulps; judged "
          "at f32 tolerance (the format asked for), such products are findings";
      t.dtypes = {DType::f32};
      break;
    case cublas::Mode::f16_f32acc:
      t.description =
          "cublasGemmEx, f16 storage, CUBLAS_COMPUTE_32F with "
          "CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION (f32 accumulation throughout)";
      t.dtypes = {DType::f16};
      break;
    case cublas::Mode::f16_f16acc:
      t.description =
          "cublasGemmEx, f16 storage, CUBLAS_COMPUTE_16F_PEDANTIC: products and partial sums "
          "kept in f16; long or cancelling sums lose what f16 tolerance allows";
      t.dtypes = {DType::f16};
      break;
    case cublas::Mode::bf16:
      t.description =
          "cublasGemmEx, bf16 storage, CUBLAS_COMPUTE_32F with "
          "CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION (f32 accumulation throughout)";
      t.dtypes = {DType::bf16};
      break;
  }
  t.native = [mode, id](const Input& in) {
    return sized(id, [&] {
      return cublas::gemm(mode, in.args.at(0).values, in.args.at(1).values, dim(in, 0, 0),
                          dim(in, 0, 1), dim(in, 1, 1));
    });
  };
  return t;  // black box: no CESTAC entry
}

bool cuda_kernel_of(const std::string& family, cuda::Kernel& out) {
  for (cuda::Kernel k : cuda::kAllKernels)
    if (family == cuda::kernel_name(k)) return out = k, true;
  return false;
}

bool cublas_mode_of(const std::string& id, cublas::Mode& out) {
  for (cublas::Mode m : cublas::kAllModes)
    if (id == std::string("gemm/cublas/") + cublas::mode_name(m)) return out = m, true;
  return false;
}

}  // namespace

void register_gpu_targets(Registry& r) {
  std::string why;
  const bool gpu = cuda_device_count(&why) > 0;
  for (const auto& g : gpu_target_ids()) {
    if (!gpu) {
      r.add_unavailable({g.id, "no GPU: " + why});
      continue;
    }
    cuda::Kernel k;
    cublas::Mode m;
    if (g.id.find("/cublas/") != std::string::npos && cublas_mode_of(g.id, m))
      r.add_target(g.family, cublas_target(g.id, m));
    else if (g.id.find("/cuda/") != std::string::npos && cuda_kernel_of(g.family, k))
      r.add_target(g.family, cuda_target(g.id, k));
    else
      throw std::logic_error("registry: GPU target '" + g.id + "' has no implementation");
  }
}

}  // namespace stabfuzz::targets
