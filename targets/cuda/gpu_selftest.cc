// GPU self-test and benchmark that needs only CUDA: every kernel native and under DStoch against a
// long-double host reference, replay, a planted cancellation at 1000 seeds, the device's sum
// samples against their host replay, the cuBLAS modes against their emulation, and the device
// CESTAC cost (CUDA events, medians). ci/gpu-check runs it; exit status 1 when a check fails.
//
//   stabfuzz_gpu_selftest [--bench OUTDIR] [--reps N]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
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

// n: the row length of a row kernel (10000 takes the largest block, 512 threads), gemm's k.
void check_kernel(Kernel k, bool f64, size_t n) {
  const std::string name = std::string(stabfuzz::cuda::kernel_name(k)) + (f64 ? " f64" : " f32") +
                           " n=" + std::to_string(n);
  std::mt19937_64 g(static_cast<uint64_t>(k) * 7 + f64);
  const Problem p = problem(k, g, 3, n);
  const auto ref = reference(k, p);
  const double tol = f64 ? 1e-12 : 1e-4;  // thousands of u: a wrong formula is off by O(1)
  const auto y = stabfuzz::cuda::run_native(k, p, f64);
  const double err = normwise(y, ref);
  expect(err <= tol, name + " native normwise error " + std::to_string(err));

  const auto c1 = stabfuzz::cuda::run_cestac(k, p, f64, 11, 3, 4, true);
  const auto c2 = stabfuzz::cuda::run_cestac(k, p, f64, 11, 3, 4, true);
  const auto c3 = stabfuzz::cuda::run_cestac(k, p, f64, 12, 3, 4, true);
  expect(c1.samples == c2.samples, name + " CESTAC replays from its seed");
  constexpr int L = stabfuzz::cuda::kLanes;
  // Exact results (e.g. the f64 sum of 1000 f32 values near 100 needs about 34 bits) are the same
  // sample for every rounding: only outputs with rounding noise can change with the seed.
  bool noisy = false;
  for (size_t o = 0; o * L < c1.samples.size(); ++o)
    for (int i = 1; i < L; ++i) noisy |= c1.samples[o * L + i] != c1.samples[o * L];
  expect(!noisy || c1.samples != c3.samples,
         name + " CESTAC samples change with the seed" + (noisy ? "" : " (every output exact)"));
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

// Outputs of c outside the emulated value +- bound (targets/cublas/gemm_modes.h).
size_t outside(const std::vector<double>& c, const stabfuzz::cublas::Emulated& e) {
  size_t count = 0;
  for (size_t i = 0; i < c.size(); ++i) count += !(std::fabs(c[i] - e.value[i]) <= e.bound[i]);
  return count;
}

// The cuBLAS modes on shapes cuBLAS runs on tensor cores and operands that show their rounding
// (tests/gpu/cublas_modes_test.cc in full): f32 keeps f32, TF32 rounds the operands (by nearest
// or truncation: NVIDIA does not say), f16 accumulation stagnates where f32 accumulation does not.
void check_cublas() {
  namespace cb = stabfuzz::cublas;
  using cb::Mode;
  const size_t s = 256;
  const auto a = cb::tf32_probe(s * s, 1, true), b = cb::tf32_probe(s * s, 2, true);
  const size_t f32_off =
      outside(cb::gemm(Mode::f32, a, b, s, s, s), cb::emulate_gemm(Mode::f32, a, b, s, s, s));
  expect(f32_off == 0, "cuBLAS f32 " + std::to_string(s) + "^3 within the f32 bound (" +
                           std::to_string(f32_off) + " outputs outside)");
  const char* override_tf32 = std::getenv("NVIDIA_TF32_OVERRIDE");
  if (override_tf32 && std::string(override_tf32) == "0") {
    std::printf("skip TF32: NVIDIA_TF32_OVERRIDE=0\n");
  } else {
    // Below half of TF32's last place, nearest and truncation agree; the TF32 bound excludes f32.
    const auto ct = cb::gemm(Mode::tf32, a, b, s, s, s);
    const size_t tf32_off = outside(ct, cb::emulate_gemm(Mode::tf32, a, b, s, s, s));
    expect(tf32_off == 0, "cuBLAS TF32 " + std::to_string(s) +
                              "^3 within the TF32 emulation's bound, not f32's (" +
                              std::to_string(tf32_off) + " outputs outside)");
  }
  const size_t ks = cb::kF16StagnationK, m = 64, n = 64;
  const std::vector<double> sa(m * ks, 1.0), sb(ks * n, cb::kF16StagnationB);
  const auto f32acc = cb::emulate_gemm(Mode::f16_f32acc, sa, sb, m, ks, n);
  const auto c32 = cb::gemm(Mode::f16_f32acc, sa, sb, m, ks, n);
  const auto c16 = cb::gemm(Mode::f16_f16acc, sa, sb, m, ks, n);
  expect(outside(c32, f32acc) == 0,
         "cuBLAS f16_f32acc on 2048 products of 1 + 7/1024: " + std::to_string(c32[0]) +
             " (exact 2062, bound " + std::to_string(f32acc.bound[0]) + ")");
  expect(c16[0] < f32acc.value[0] - f32acc.bound[0],
         "cuBLAS f16_f16acc on the same: " + std::to_string(c16[0]) + " (f16 partial sums)");
  // Small integers: exact in every mode.
  const std::vector<double> ia = {1, 2, 3, 4, 5, 6}, ib = {7, 8, 9, 10, 11, 12};  // [2,3] x [3,2]
  const std::vector<double> want = {58, 64, 139, 154};
  for (Mode md : cb::kAllModes)
    expect(cb::gemm(md, ia, ib, 2, 3, 2) == want,
           std::string("cuBLAS ") + cb::mode_name(md) + ": [2,3] x [3,2] of integers exact");
}

// cuBLAS in each mode against the self-test's CPU reference (the long-double product): wall time
// of one host call (conversions and copies included; median of `reps` after one warm-up), the CPU
// reference's time, and the normwise error against it. 16-bit modes round the inputs first.
std::string bench_cublas(int reps) {
  using stabfuzz::cublas::Mode;
  using Clock = std::chrono::steady_clock;
  const size_t dim = 512;
  std::mt19937_64 g(9);
  const Problem p = problem(Kernel::gemm, g, dim, dim);  // A [512,512], B [512,512]
  const auto t0 = Clock::now();
  const auto ref = reference(Kernel::gemm, p);
  const double cpu_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  std::string md =
      "| cuBLAS mode | 512^3 ms (host call) | CPU long-double reference ms | "
      "speed-up | normwise error |\n|---|---|---|---|---|\n";
  for (Mode m : stabfuzz::cublas::kAllModes) {
    auto in = p.x;
    for (auto& v : in)
      for (auto& x : v) {
        if (m == Mode::f16_f32acc || m == Mode::f16_f16acc)
          x = stabfuzz::cublas::f16_value(stabfuzz::cublas::f16_bits(x));
        else if (m == Mode::bf16)
          x = stabfuzz::cublas::bf16_value(stabfuzz::cublas::bf16_bits(x));
      }
    std::vector<double> y = stabfuzz::cublas::gemm(m, in[0], in[1], dim, dim, dim);  // warm-up
    std::vector<double> ms;
    for (int r = 0; r < reps; ++r) {
      const auto a = Clock::now();
      y = stabfuzz::cublas::gemm(m, in[0], in[1], dim, dim, dim);
      ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - a).count());
    }
    std::sort(ms.begin(), ms.end());
    char line[256];
    std::snprintf(line, sizeof line, "| %s | %.3f | %.1f | %.0f | %.2e |\n",
                  stabfuzz::cublas::mode_name(m), ms[ms.size() / 2], cpu_ms,
                  cpu_ms / ms[ms.size() / 2], normwise(y, ref));
    md += line;
    std::printf("%s", line);
  }
  return md;
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
  md += "\ngeometric mean ratio: " + std::to_string(std::exp(log_sum / count)) + "\n\n";
  md += bench_cublas(reps);
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
      for (bool f64 : {false, true}) {
        check_kernel(k, f64, k == Kernel::gemm ? 300 : 1000);
        if (k != Kernel::gemm && k != Kernel::attention) check_kernel(k, f64, 10000);
      }
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
