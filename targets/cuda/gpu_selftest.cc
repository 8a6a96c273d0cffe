// GPU self-test and benchmark that needs only CUDA: every kernel native and under DStoch against a
// long-double host reference, replay, a planted cancellation at 1000 seeds, the device's sum
// samples against their host replay, the cuBLAS modes, and the device CESTAC cost (CUDA events,
// medians). ci/gpu-check runs it; exit status 1 when a check fails.
//
//   stabfuzz_gpu_selftest [--bench OUTDIR] [--reps N]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "stabfuzz/gpu/cestac_core.h"
#include "targets/cublas/gemm_cublas.h"
#include "targets/cuda/host_row.h"
#include "targets/cuda/kernels.h"

namespace {

using stabfuzz::cuda::Kernel;
using stabfuzz::cuda::Problem;
using LD = long double;

int failures = 0;
void expect(bool ok, const std::string& what) {
  std::printf("%s %s\n", ok ? "ok  " : "FAIL", what.c_str());
  failures += !ok;
}

// Values exact in f32 (so the f32 and f64 runs see the same inputs).
std::vector<double> normals(std::mt19937_64& g, size_t n, double sd = 1, double mean = 0) {
  std::normal_distribution<double> d(mean, sd);
  std::vector<double> v(n);
  for (auto& x : v) x = static_cast<float>(d(g));
  return v;
}

Problem problem(Kernel k, std::mt19937_64& g, size_t rows, size_t n) {
  Problem p;
  p.rows = rows;
  switch (k) {
    case Kernel::gemm:
      p.m = rows, p.k = n, p.n = rows;
      p.x = {normals(g, p.m * p.k), normals(g, p.k * p.n)};
      break;
    case Kernel::attention:
      p.s = p.t = rows, p.d = p.dv = 64;
      p.scale = 0.125;
      p.causal = true;
      p.x = {normals(g, p.s * p.d), normals(g, p.t * p.d), normals(g, p.t * p.dv)};
      break;
    default:
      // sum and var around 100: condition ~1, so digits measure the kernel, not the data.
      p.x = {normals(g, rows * n, 1, k == Kernel::var || k == Kernel::sum ? 100 : 0)};
      p.eps = 1e-5;
      break;
  }
  return p;
}

// The exact operator in long double.
std::vector<double> reference(Kernel k, const Problem& p) {
  std::vector<double> y;
  if (k == Kernel::gemm) {
    for (size_t i = 0; i < p.m; ++i)
      for (size_t j = 0; j < p.n; ++j) {
        LD s = 0;
        for (size_t l = 0; l < p.k; ++l) s += LD(p.x[0][i * p.k + l]) * p.x[1][l * p.n + j];
        y.push_back(static_cast<double>(s));
      }
    return y;
  }
  if (k == Kernel::attention) {
    for (size_t i = 0; i < p.s; ++i) {
      const size_t tl = p.causal ? i + 1 : p.t;
      std::vector<LD> e(tl);
      LD m = -INFINITY, z = 0;
      for (size_t l = 0; l < tl; ++l) {
        LD s = 0;
        for (size_t c = 0; c < p.d; ++c) s += LD(p.x[0][i * p.d + c]) * p.x[1][l * p.d + c];
        e[l] = s * p.scale;
        m = std::max(m, e[l]);
      }
      for (auto& v : e) z += v = std::exp(v - m);
      for (size_t j = 0; j < p.dv; ++j) {
        LD num = 0;
        for (size_t l = 0; l < tl; ++l) num += e[l] * p.x[2][l * p.dv + j];
        y.push_back(static_cast<double>(num / z));
      }
    }
    return y;
  }
  const size_t n = p.x[0].size() / p.rows;
  for (size_t r = 0; r < p.rows; ++r) {
    const double* x = &p.x[0][r * n];
    LD m = x[0], s = 0, s2 = 0, se = 0;
    for (size_t j = 0; j < n; ++j) m = std::max<LD>(m, x[j]), s += x[j], s2 += LD(x[j]) * x[j];
    for (size_t j = 0; j < n; ++j) se += std::exp(LD(x[j]) - m);
    const LD mu = s / n;
    LD c2 = 0;
    for (size_t j = 0; j < n; ++j) c2 += (x[j] - mu) * (x[j] - mu);
    for (size_t j = 0; j < n; ++j) {
      switch (k) {
        case Kernel::softmax:
          y.push_back(static_cast<double>(std::exp(x[j] - m) / se));
          break;
        case Kernel::log_softmax:
          y.push_back(static_cast<double>(x[j] - m - std::log(se)));
          break;
        case Kernel::layer_norm:
          y.push_back(static_cast<double>((x[j] - mu) / std::sqrt(c2 / n + p.eps)));
          break;
        case Kernel::rms_norm:
          y.push_back(static_cast<double>(x[j] / std::sqrt(s2 / n + p.eps)));
          break;
        default:
          break;
      }
    }
    if (k == Kernel::sum) y.push_back(static_cast<double>(s));
    if (k == Kernel::var) y.push_back(static_cast<double>(c2 / (n - p.unbiased)));
  }
  return y;
}

// Normwise error max|y - ref| / max|ref|.
double normwise(const std::vector<double>& y, const std::vector<double>& ref) {
  double num = 0, den = 0;
  for (size_t i = 0; i < ref.size() && i < y.size(); ++i) {
    num = std::max(num, std::fabs(y[i] - ref[i]));
    den = std::max(den, std::fabs(ref[i]));
  }
  return y.size() == ref.size() ? num / den : INFINITY;
}

void check_kernel(Kernel k, bool f64) {
  const std::string name = std::string(stabfuzz::cuda::kernel_name(k)) + (f64 ? " f64" : " f32");
  std::mt19937_64 g(static_cast<uint64_t>(k) * 7 + f64);
  const Problem p = problem(k, g, 3, k == Kernel::gemm ? 300 : 1000);
  const auto ref = reference(k, p);
  const double tol = f64 ? 1e-12 : 1e-4;  // thousands of u: a wrong formula is off by O(1)
  const auto y = stabfuzz::cuda::run_native(k, p, f64);
  const double err = normwise(y, ref);
  expect(err <= tol, name + " native normwise error " + std::to_string(err));

  const auto c1 = stabfuzz::cuda::run_cestac(k, p, f64, 11, 3, 4, true);
  const auto c2 = stabfuzz::cuda::run_cestac(k, p, f64, 11, 3, 4, true);
  const auto c3 = stabfuzz::cuda::run_cestac(k, p, f64, 12, 3, 4, true);
  expect(c1.samples == c2.samples, name + " CESTAC replays from its seed");
  expect(c1.samples != c3.samples, name + " CESTAC samples change with the seed");
  constexpr int L = stabfuzz::cuda::kLanes;
  std::vector<double> mean, digits;
  for (size_t o = 0; o * L < c1.samples.size(); ++o) {
    const double* s = &c1.samples[o * L];
    mean.push_back((s[0] + s[1] + s[2] + s[3]) / 4);
    digits.push_back(stabfuzz::cestac::detail::sample_digits(
        s, L, f64 ? 53 : 24, stabfuzz::cestac::detail::digit_scale(L)));
  }
  const double merr = normwise(mean, ref);
  expect(merr <= tol, name + " CESTAC mean normwise error " + std::to_string(merr));
  std::sort(digits.begin(), digits.end());
  const double med = digits.empty() ? 0 : digits[digits.size() / 2];
  expect(med >= (f64 ? 12 : 5), name + " CESTAC median digits " + std::to_string(med));
}

// The self-test's planted cancellation at seeds 1-1000: with balanced rounding patterns the tested
// lanes of (1 - 1e8) never all round alike, so the last + shows its noise at every seed.
void check_cancellation() {
  Problem p;
  p.x = {{1, 1e8, -1e8}};  // f32: (1 - 1e8) + 1e8 in the tree; the exact sum is 1
  int flagged = 0, no_digits = 0;
  for (uint64_t seed = 1; seed <= 1000; ++seed) {
    const auto c = stabfuzz::cuda::run_cestac(Kernel::sum, p, false, seed, 0, 4, true);
    flagged += c.counts[0] > 0;
    no_digits += stabfuzz::cestac::detail::sample_digits(c.samples.data(), 4, 24, 0.35) < 1;
  }
  expect(no_digits == 1000, "sum f32 of {1, 1e8, -1e8}: CESTAC digits < 1 at " +
                                std::to_string(no_digits) + "/1000 seeds");
  expect(flagged == 1000, "sum f32 of {1, 1e8, -1e8}: cancellation flagged at " +
                              std::to_string(flagged) + "/1000 seeds");
  const auto off = stabfuzz::cuda::run_cestac(Kernel::sum, p, false, 1, 0, 4, false);
  expect(off.counts[0] == 0, "detection off: no flags");
}

// The device's sum samples and flags are the host replay's (targets/cuda/host_row.h: DStoch as
// host code, each thread of the block with its own stream): the same patterns, the same directed
// roundings, bit for bit.
template <class B>
bool replay_matches(const Problem& p, uint64_t seed, uint64_t stream) {
  using S = stabfuzz::gpu::DStoch<B, 4>;
  const auto c = stabfuzz::cuda::run_cestac(Kernel::sum, p, sizeof(B) == 8, seed, stream, 4, true);
  const std::vector<B> x(p.x[0].begin(), p.x[0].end());
  stabfuzz::gpu::HostRow<S> row(static_cast<int>(x.size()),
                                stabfuzz::cestac::stream_key(seed, stream));
  S y;
  stabfuzz::gpu::sum_row(row, x.data(), &y);
  const uint32_t flags = row.flags();
  bool same = c.samples.size() == 4;
  for (int i = 0; same && i < 4; ++i)
    same = (std::isnan(y.s[i]) && std::isnan(c.samples[i])) || double(y.s[i]) == c.samples[i];
  for (int k = 0; k < stabfuzz::cestac::kDeviceFlagKinds; ++k)
    same &= (c.counts[k] > 0) == (((flags >> k) & 1u) != 0);
  return same;
}

void check_replay() {
  std::mt19937_64 g(9);
  for (bool f64 : {false, true})
    for (size_t n : {3, 100, 1000, 5000}) {
      Problem p;
      p.x = {n == 3 ? std::vector<double>{1, 1e8, -1e8} : normals(g, n, 3, 1e4)};
      int same = 0;
      for (uint64_t seed = 1; seed <= 20; ++seed)
        same += f64 ? replay_matches<double>(p, seed, 5) : replay_matches<float>(p, seed, 5);
      expect(same == 20, std::string("sum ") + (f64 ? "f64" : "f32") + " n=" + std::to_string(n) +
                             ": device samples and flags = host replay at " + std::to_string(same) +
                             "/20 seeds");
    }
}

void check_cublas() {
  using stabfuzz::cublas::Mode;
  const auto tf32 = stabfuzz::cublas::gemm(Mode::tf32, {1024.5}, {1}, 1, 1, 1);
  const auto f32 = stabfuzz::cublas::gemm(Mode::f32, {1024.5}, {1}, 1, 1, 1);
  expect(f32[0] == 1024.5, "cuBLAS f32: 1024.5 x 1 = " + std::to_string(f32[0]));
  expect(tf32[0] != 1024.5,
         "cuBLAS TF32: 1024.5 x 1 = " + std::to_string(tf32[0]) + " (not 1024.5)");
  // Small integers: exact in every mode.
  const std::vector<double> a = {1, 2, 3, 4, 5, 6}, b = {7, 8, 9, 10, 11, 12};  // [2,3] x [3,2]
  const std::vector<double> want = {58, 64, 139, 154};
  for (Mode m : stabfuzz::cublas::kAllModes)
    expect(stabfuzz::cublas::gemm(m, a, b, 2, 3, 2) == want,
           std::string("cuBLAS ") + stabfuzz::cublas::mode_name(m) +
               ": [2,3] x [3,2] of integers exact");
}

void bench(const std::string& dir, int reps) {
  std::string md =
      "| kernel | dtype | size | native ms | CESTAC ms | ratio |\n|---|---|---|---|---|---|\n";
  std::string js = "{\"reps\": " + std::to_string(reps) + ", \"kernels\": [";
  double log_sum = 0;
  int count = 0;
  for (Kernel k : stabfuzz::cuda::kAllKernels)
    for (bool f64 : {false, true}) {
      std::mt19937_64 g(5);
      const size_t rows = k == Kernel::gemm ? 512 : (k == Kernel::attention ? 512 : 4096);
      const size_t n = k == Kernel::gemm ? 512 : 4096;
      const Problem p = problem(k, g, rows, n);
      const auto t = stabfuzz::cuda::time_kernel(k, p, f64, reps);
      const double ratio = t.cestac_ms / t.native_ms;
      log_sum += std::log(ratio);
      ++count;
      const std::string size =
          k == Kernel::gemm ? "512^3" : (k == Kernel::attention ? "s=t=512,d=64" : "4096x4096");
      char line[256];
      std::snprintf(line, sizeof line, "| %s | %s | %s | %.4f | %.4f | %.1f |\n",
                    stabfuzz::cuda::kernel_name(k), f64 ? "f64" : "f32", size.c_str(), t.native_ms,
                    t.cestac_ms, ratio);
      md += line;
      std::printf("%s", line);
      std::snprintf(
          line, sizeof line,
          "%s{\"kernel\": \"%s\", \"dtype\": \"%s\", \"size\": \"%s\", \"native_ms\": %.6f, "
          "\"cestac_ms\": %.6f, \"ratio\": %.3f}",
          count > 1 ? ", " : "", stabfuzz::cuda::kernel_name(k), f64 ? "f64" : "f32", size.c_str(),
          t.native_ms, t.cestac_ms, ratio);
      js += line;
    }
  char tail[128];
  std::snprintf(tail, sizeof tail, "], \"geomean_ratio\": %.3f}\n", std::exp(log_sum / count));
  js += tail;
  md += "\ngeometric mean ratio: " + std::to_string(std::exp(log_sum / count)) + "\n";
  std::ofstream(dir + "/bench.json") << js;
  std::ofstream(dir + "/bench.md") << md;
  std::printf("geometric mean CESTAC / native: %.2f\n", std::exp(log_sum / count));
}

}  // namespace

int main(int argc, char** argv) {
  std::string bench_dir;
  int reps = 7;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--bench") && i + 1 < argc)
      bench_dir = argv[++i];
    else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc)
      reps = std::max(1, std::atoi(argv[++i]));
    else {
      std::fprintf(stderr, "stabfuzz_gpu_selftest: error: unknown argument '%s'\n", argv[i]);
      return 2;
    }
  }
  std::string why;
  if (stabfuzz::cuda::device_count(&why) == 0) {
    std::printf("skipped: no GPU: %s\n", why.c_str());
    return 77;  // the conventional "skipped" status
  }
  try {
    for (Kernel k : stabfuzz::cuda::kAllKernels)
      for (bool f64 : {false, true}) check_kernel(k, f64);
    check_cancellation();
    check_replay();
    check_cublas();
    if (!bench_dir.empty()) bench(bench_dir, reps);
  } catch (const std::exception& e) {
    std::printf("FAIL exception: %s\n", e.what());
    return 1;
  }
  std::printf("%d failure(s)\n", failures);
  return failures ? 1 : 0;
}
