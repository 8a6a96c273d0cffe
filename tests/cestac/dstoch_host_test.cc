// The device CESTAC type DStoch, compiled as host code, against the CPU engine Stoch: with the
// same key both draw the same rounding patterns, so +, -, x, /, sqrt and fma (and log, log1p,
// tanh, whose libm is the same here) give bit-identical samples, the same digits and the same
// instability kinds, on the calibration cases of `stabfuzz calibrate` and on representative
// programs. The host versions of the directed-rounding intrinsics are checked against the FPU's
// own directed rounding. Runs without a GPU.
#include <gtest/gtest.h>

#include <array>
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "harness/bench/calibrate.h"
#include "injectors/variance.h"
#include "stabfuzz/entropy.h"
#include "stabfuzz/gpu/dstoch.cuh"
#include "stabfuzz/stoch.h"
#include "targets/cpu/linalg.h"
#include "targets/cpu/reductions.h"

// The CPU reference operators scale by powers of two of the scalar's format.
namespace stabfuzz::targets::reduce_detail {
template <class T, int L>
struct FormatOf<gpu::DStoch<T, L>> : FormatOf<T> {};
}  // namespace stabfuzz::targets::reduce_detail

namespace stabfuzz {
namespace {

template <class T>
using Dev = gpu::DStoch<T, 4>;
// In up-or-down rounding (CADNA's, balanced patterns: HostThread's Rounding::updown) the device
// engine is compared with the CPU engine's Stoch<T, 3, Rounding::updown> on four lanes, bit for
// bit. In stochastic rounding to nearness (the default of both) the CPU's four-lane vector path
// draws from a pool the device does not have: eight lanes, which both engines round lane by lane
// from the same stream, are compared bit for bit instead (`Near`, below).
template <class T>
using Cpu = Stoch<T, 3, cestac::Rounding::updown>;
template <class T>
using NearCpu = Stoch<T, 8>;
template <class T>
using NearDev = gpu::DStoch<T, 8>;

template <class T>
uint64_t bits_of(T v) {
  if constexpr (sizeof(T) == 8) {
    uint64_t b;
    std::memcpy(&b, &v, 8);
    return b;
  } else {
    uint32_t b;
    std::memcpy(&b, &v, 4);
    return b;
  }
}

// ---- the host intrinsics against the FPU's directed rounding ------------------------------------

enum class Op { add, mul, div, sqrt, fma };

template <class T>
[[gnu::noinline]] T hardware(Op op, T a, T b, T c, bool up) {
  const int saved = std::fegetround();
  std::fesetround(up ? FE_UPWARD : FE_DOWNWARD);
  volatile T va = a, vb = b, vc = c;
  volatile T r = 0;
  switch (op) {
    case Op::add:
      r = va + vb;
      break;
    case Op::mul:
      r = va * vb;
      break;
    case Op::div:
      r = va / vb;
      break;
    case Op::sqrt:
      r = std::sqrt(static_cast<T>(va));
      break;
    case Op::fma:
      r = std::fma(static_cast<T>(va), static_cast<T>(vb), static_cast<T>(vc));
      break;
  }
  std::fesetround(saved);
  return r;
}

template <class T>
T host(Op op, T a, T b, T c, bool up) {
  switch (op) {
    case Op::add:
      return gpu::add_dir(a, b, up);
    case Op::mul:
      return gpu::mul_dir(a, b, up);
    case Op::div:
      return gpu::div_dir(a, b, up);
    case Op::sqrt:
      return gpu::sqrt_dir(a, up);
    case Op::fma:
      return gpu::fma_dir(a, b, c, up);
  }
  return 0;
}

// Operands over the whole range: ordinary values, subnormals, values near overflow, zeros of
// both signs, infinities, and pairs built to cancel or to be exact.
template <class T>
T operand(Entropy& e) {
  constexpr T kMax = std::numeric_limits<T>::max(), kDen = std::numeric_limits<T>::denorm_min();
  const double pick = e.uniform(0, 1);
  const double sign = e.chance(0.5) ? 1 : -1;
  if (pick < 0.5) return static_cast<T>(sign * e.log_uniform(1e-3, 1e3));
  if (pick < 0.6) return static_cast<T>(sign * kDen * static_cast<T>(1 + e.below(1u << 20)));
  if (pick < 0.7) return static_cast<T>(sign * kMax * e.uniform(0.25, 1));
  if (pick < 0.75) return sign > 0 ? T(0) : -T(0);
  if (pick < 0.77) return static_cast<T>(sign * INFINITY);
  const int lo = std::numeric_limits<T>::min_exponent - std::numeric_limits<T>::digits;
  const int hi = std::numeric_limits<T>::max_exponent;
  return static_cast<T>(sign * std::ldexp(e.uniform(1, 2), static_cast<int>(e.uniform(lo, hi))));
}

template <class T>
void check_primitives(uint64_t seed) {
  SeededEntropy e(seed, 0);
  for (int i = 0; i < 200000; ++i) {
    T a = operand<T>(e), b = operand<T>(e), c = operand<T>(e);
    if (e.chance(0.1)) b = -a * static_cast<T>(1 + e.uniform(-1e-6, 1e-6));  // cancels
    if (e.chance(0.1)) c = -a * b;                                           // fma cancels
    for (Op op : {Op::add, Op::mul, Op::div, Op::sqrt, Op::fma})
      for (bool up : {false, true}) {
        const T want = hardware(op, a, b, c, up), got = host(op, a, b, c, up);
        if (std::isnan(want) && std::isnan(got)) continue;
        ASSERT_EQ(bits_of(got), bits_of(want))
            << "op " << static_cast<int>(op) << (up ? " up " : " down ") << std::hexfloat << a
            << " " << b << " " << c << ": " << got << " != " << want;
      }
  }
}

TEST(DStochHost, DirectedRoundingIsTheFpusDouble) { check_primitives<double>(1); }
TEST(DStochHost, DirectedRoundingIsTheFpusFloat) { check_primitives<float>(2); }

// ---- the two engines on the same stream ---------------------------------------------------------

// What a program left: every output's lanes, its digits, and the instability kinds met.
struct Outcome {
  std::vector<std::vector<uint64_t>> lanes;
  std::vector<double> digits;
  uint32_t kinds = 0;  // cestac::DeviceFlag bits
};

template <class S>
void collect(const std::vector<S>& ys, Outcome& o) {
  for (const S& y : ys) {
    std::vector<uint64_t> l(S::kLanes);
    // NaN's sign and payload mean nothing (x86 makes inf - inf negative, and the CPU's sign
    // flips flip it; CUDA returns one canonical NaN): every NaN compares as one value.
    for (int i = 0; i < S::kLanes; ++i) l[i] = std::isnan(y.s[i]) ? 1 : bits_of(y.s[i]);
    o.lanes.push_back(l);
  }
}

// A program is a generic callable: template <class S> std::vector<S> operator()() const. kNear:
// stochastic rounding to nearness on eight lanes; else up or down on four.
template <class T, bool kNear = false, class Program>
Outcome run_cpu(const Program& program, uint64_t seed, uint64_t stream) {
  using S = std::conditional_t<kNear, NearCpu<T>, Cpu<T>>;
  Outcome o;
  std::vector<S> ys;
  {
    cestac::Config config;
    config.rounding = kNear ? cestac::Rounding::nearness : cestac::Rounding::updown;
    cestac::Run run(seed, stream, config);
    ys = program.template operator()<S>();
    for (int k = 0; k < cestac::kDeviceFlagKinds; ++k)
      if (run.log().counts[k] > 0) o.kinds |= 1u << k;
  }
  collect(ys, o);
  for (const auto& y : ys) o.digits.push_back(y.digits());  // in round to nearest, as below
  return o;
}

template <class T, bool kNear = false, class Program>
Outcome run_device(const Program& program, uint64_t seed, uint64_t stream) {
  using D = std::conditional_t<kNear, NearDev<T>, Dev<T>>;
  Outcome o;
  gpu::HostThread thread(cestac::stream_key(seed, stream), 4, true,
                         kNear ? cestac::Rounding::nearness : cestac::Rounding::updown);
  const std::vector<D> ys = program.template operator()<D>();
  o.kinds = thread.flags();
  collect(ys, o);
  for (const auto& y : ys) o.digits.push_back(y.digits());
  return o;
}

// Runs a program on both engines and requires the same lanes, digits and kinds; counts the kinds
// met into `met` (so that tests can require the kinds they mean to exercise).
template <class T, bool kNear = false, class Program>
void expect_same(const Program& program, uint64_t seed, uint64_t stream, const std::string& what,
                 std::array<int, cestac::kDeviceFlagKinds>& met) {
  const Outcome c = run_cpu<T, kNear>(program, seed, stream),
                d = run_device<T, kNear>(program, seed, stream);
  ASSERT_EQ(c.lanes.size(), d.lanes.size()) << what;
  for (size_t i = 0; i < c.lanes.size(); ++i) {
    ASSERT_EQ(c.lanes[i], d.lanes[i]) << what << ": output " << i;
    ASSERT_EQ(c.digits[i], d.digits[i]) << what << ": output " << i;
  }
  ASSERT_EQ(c.kinds, d.kinds) << what;
  for (int k = 0; k < cestac::kDeviceFlagKinds; ++k) met[k] += (c.kinds >> k) & 1u;
}

int met_of(const std::array<int, cestac::kDeviceFlagKinds>& met, cestac::Kind k) {
  return met[static_cast<int>(k)];
}

// An operator of the CPU references (targets/cpu) on `in`, run over the scalar S.
template <class Op>
struct OnInput {
  const Input* in;
  template <class S>
  std::vector<S> operator()() const {
    using T = scalar_of<S>;
    OpArgs<S> a;
    a.input = in;
    for (const auto& t : in->args) {
      std::vector<S> v;
      for (double x : t.values) v.push_back(S(static_cast<T>(x)));
      a.x.push_back(std::move(v));
    }
    return Op::template run<S>(a);
  }
  template <class S>
  using scalar_of = typename S::value_type;
};

// `stabfuzz calibrate`'s subjects (harness/bench/calibrate.cc): the stable sum, variance and dot
// product and the planted naive variance, on rows conditioned 1 to 1e12 (f64) or 1e7 (f32). kNear:
// in stochastic rounding to nearness on eight lanes, else up or down on four.
template <class Op, bool kNear = false>
std::array<int, cestac::kDeviceFlagKinds> check_calibration(const char* family, const char* name,
                                                            int per) {
  std::array<int, cestac::kDeviceFlagKinds> met{};
  for (DType d : {DType::f64, DType::f32}) {
    SeededEntropy e(7, std::hash<std::string>{}(name) ^ static_cast<uint64_t>(d));
    const double max_log_cond = d == DType::f64 ? 12 : 7;
    for (int k = 0; k < per; ++k) {
      const auto in = calibrate::conditioned_input(family, d, e, max_log_cond * k / (per - 1));
      EXPECT_TRUE(in.has_value());
      if (!in) return met;
      const OnInput<Op> program{&*in};
      const std::string what = std::string(name) + " " + std::string(dtype_name(d)) + " case " +
                               std::to_string(k) + (kNear ? " (nearness)" : "");
      if (d == DType::f64)
        expect_same<double, kNear>(program, 1, static_cast<uint64_t>(k), what, met);
      else
        expect_same<float, kNear>(program, 1, static_cast<uint64_t>(k), what, met);
    }
  }
  return met;
}

TEST(DStochHost, CalibrationSumsAgreeWithTheCpuEngine) {
  const auto met = check_calibration<targets::SumStable>("sum", "sum/cpu/stable", 60);
  EXPECT_GT(met_of(met, cestac::Kind::cancellation), 20);  // the ill-conditioned rows
}
TEST(DStochHost, CalibrationVariancesAgreeWithTheCpuEngine) {
  check_calibration<targets::VarianceStable<false>>("var", "var/cpu/stable", 60);
}
TEST(DStochHost, CalibrationDotsAgreeWithTheCpuEngine) {
  check_calibration<targets::DotStable>("dot", "dot/cpu/stable", 60);
}
TEST(DStochHost, CalibrationNaiveVarianceAgreesWithTheCpuEngine) {
  const auto met =
      check_calibration<injectors::VarianceNaive>("var", "var/injected/naive_one_pass", 60);
  EXPECT_GT(met_of(met, cestac::Kind::cancellation), 20);  // the planted one-pass formula
}
// The same subjects in stochastic rounding to nearness, the default of both engines, on the eight
// lanes both round lane by lane from the same stream.
TEST(DStochHost, NearnessCalibrationAgreesWithTheCpuEngine) {
  const auto sums = check_calibration<targets::SumStable, true>("sum", "sum/cpu/stable", 60);
  EXPECT_GT(met_of(sums, cestac::Kind::cancellation), 20);
  check_calibration<targets::VarianceStable<false>, true>("var", "var/cpu/stable", 60);
  check_calibration<targets::DotStable, true>("dot", "dot/cpu/stable", 60);
  const auto naive =
      check_calibration<injectors::VarianceNaive, true>("var", "var/injected/naive_one_pass", 60);
  EXPECT_GT(met_of(naive, cestac::Kind::cancellation), 20);
}

// Small programs that meet every kind the device reports, and their clean twins.
struct Programs {
  std::vector<double> x;  // inputs
  int which;
  template <class S>
  std::vector<S> operator()() const {
    using T = typename S::value_type;
    std::vector<S> v;
    for (double d : x) v.push_back(S(static_cast<T>(d)));
    const S a = v[0], b = v[1], c = v[2];
    const S big = S(static_cast<T>(1e4)), huge = S(std::numeric_limits<T>::max() / 4);
    const S noise = ((a + big) - big) - a;  // a computational zero (noise, or an exact 0)
    switch (which) {
      case 0:  // cancellation
        return {(a + big) - big, a - b, (a * b - b * a) + c};
      case 1:  // products, quotients, square roots, fma chains
        return {(a * b) / c, sqrt(fabs(a * b)) / (c * c + S(T(1))), fma(a, b, fma(b, c, a))};
      case 2:  // division by noise, noise times noise
        return {c / noise, noise * ((b + big) - big - b), noise * a};
      case 3: {  // branching and intrinsics on noise
        const bool lt = noise < S(T(0)), eq = noise == S(T(0));
        return {fabs(noise), S(T(lt)), S(T(eq)), a < b ? a : b};
      }
      case 4:  // overflow and invalid operations, settled overflow
        return {huge * huge * a, (huge * huge) - (huge * huge), huge + huge * S(T(3)),
                fma(huge, S(T(8)), huge)};
      case 5:  // elementary functions with the same libm: log1p, tanh, log of noise
        return {log(fabs(a) + S(T(1e-3))), log1p(fabs(b)), tanh(c), log(fabs(noise) + noise),
                sqrt(noise)};
      case 7:  // square roots of noise and of a noisy sum
        return {sqrt(noise), sqrt(fabs(noise)), sqrt(fabs(a) + (b + big) - big)};
      default:  // a sum of products (a dot product) and a shifted variance
      {
        S s = a * b, m = S(T(0)), q = S(T(0));
        for (int i = 3; i < static_cast<int>(v.size()); ++i) s = fma(v[i], v[i - 1], s);
        for (const S& t : v) m += t;
        m /= S(T(static_cast<double>(v.size())));
        for (const S& t : v) q += (t - m) * (t - m);
        return {s, m, q};
      }
    }
  }
};

// kNear: stochastic rounding to nearness on eight lanes, program 7 in place of program 5
// (elementary functions: the CPU rounds their samples stochastically from a wider result, the
// device perturbs libm's).
template <class T, bool kNear = false>
void check_programs(uint64_t seed) {
  std::array<int, cestac::kDeviceFlagKinds> met{};
  SeededEntropy e(seed, 0);
  for (int i = 0; i < 3000; ++i) {
    std::vector<double> x(8 + e.below(24));
    const double shift = e.chance(0.5) ? e.log_uniform(1, 1e6) : 0;
    for (auto& v : x) v = static_cast<T>(shift + e.normal() * e.log_uniform(1e-3, 1e3));
    const int which = kNear && i % 7 == 5 ? 7 : static_cast<int>(i % 7);
    const Programs program{x, which};
    expect_same<T, kNear>(program, seed, static_cast<uint64_t>(i),
                          "program " + std::to_string(which), met);
  }
  using cestac::Kind;
  for (Kind k : {Kind::cancellation, Kind::unstable_multiplication, Kind::unstable_division,
                 Kind::unstable_function, Kind::unstable_intrinsic, Kind::unstable_branching,
                 Kind::overflow, Kind::invalid_operation})
    EXPECT_GT(met_of(met, k), 10) << cestac::kind_name(k);
}

TEST(DStochHost, ProgramsAgreeWithTheCpuEngineDouble) { check_programs<double>(3); }
TEST(DStochHost, ProgramsAgreeWithTheCpuEngineFloat) { check_programs<float>(4); }
TEST(DStochHost, NearnessProgramsAgreeWithTheCpuEngineDouble) { check_programs<double, true>(7); }
TEST(DStochHost, NearnessProgramsAgreeWithTheCpuEngineFloat) { check_programs<float, true>(8); }

// exp takes a rounding pattern where the CPU's vector exp does: the streams stay in step, and the
// samples bracket the exact value within the libm and vector-exp errors (not bit-identical: the
// CPU evaluates its own polynomial).
struct ExpThenAdd {
  std::vector<double> x;
  template <class S>
  std::vector<S> operator()() const {
    using U = typename S::value_type;
    const S a(static_cast<U>(x[0])), b(static_cast<U>(x[1])), c(static_cast<U>(x[2]));
    return {exp(a), c + b, exp(b) * c, b * c};  // b * c: the same pattern after exp
  }
};

template <class T>
void check_exp(uint64_t seed) {
  SeededEntropy e(seed, 0);
  for (int i = 0; i < 2000; ++i) {
    const double range = sizeof(T) == 8 ? 700 : 80;  // exp finite in the format
    const std::vector<double> x = {static_cast<T>(e.uniform(-range, range)),
                                   static_cast<T>(e.uniform(-30, 30)),
                                   static_cast<T>(e.uniform(-1, 1))};  // exact in T
    const ExpThenAdd program{x};
    const Outcome c = run_cpu<T>(program, seed, i), d = run_device<T>(program, seed, i);
    ASSERT_EQ(c.lanes[1], d.lanes[1]);
    ASSERT_EQ(c.lanes[3], d.lanes[3]);
    for (int o : {0, 2})
      for (int l = 0; l < 4; ++l) {
        T cv, dv;
        std::memcpy(&cv, &c.lanes[o][l], sizeof(T));
        std::memcpy(&dv, &d.lanes[o][l], sizeof(T));
        const T ulp = std::nextafter(cv, T(INFINITY)) - cv;
        ASSERT_LE(std::fabs(cv - dv), (o == 0 ? 3 : 4) * ulp)
            << x[0] << " " << x[1] << " lane " << l;
      }
  }
}

TEST(DStochHost, ExpDrawsTheCpuEnginesPatternDouble) { check_exp<double>(5); }
TEST(DStochHost, ExpDrawsTheCpuEnginesPatternFloat) { check_exp<float>(6); }

}  // namespace
}  // namespace stabfuzz
