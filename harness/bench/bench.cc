// CESTAC overhead benchmark: softmax, logsumexp, layer_norm, naive and two-pass variance
// (n = 4096) and gemm 128x128x128, native and under Stoch<T, 3>, for double and float.
#include "harness/bench/bench.h"

#include <cmath>
#include <ctime>
#include <functional>
#include <ostream>

#include "families/regimes.h"
#include "harness/fuzz/executor.h"
#include "injectors/variance.h"
#include "stabfuzz/entropy.h"
#include "stabfuzz/family.h"
#include "stabfuzz/op.h"
#include "targets/cpu/linalg.h"
#include "targets/cpu/normalization.h"
#include "targets/cpu/reductions.h"
#include "targets/cpu/softmax.h"

namespace stabfuzz::bench {

double cpu_seconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

namespace {

// Keeps results alive so the compiler cannot drop the work.
volatile double g_sink = 0;

template <class S>
double first_value(const std::vector<S>& y) {
  if constexpr (std::is_floating_point_v<S>)
    return y.empty() ? 0.0 : static_cast<double>(y[0]);
  else
    return y.empty() ? 0.0 : y[0].mean();
}

// The mean time per call of calls repeated for at least `seconds`, in ns.
template <class Op, class S>
double time_chunk(const OpArgs<S>& args, double seconds) {
  int64_t calls = 0;
  const double t0 = cpu_seconds();
  double elapsed = 0;
  do {
    g_sink = g_sink + first_value(Op::template run<S>(args));
    ++calls;
    elapsed = cpu_seconds() - t0;
  } while (elapsed < seconds);
  return elapsed / static_cast<double>(calls) * 1e9;
}

template <class S>
OpArgs<S> args_of(const Input& in) {
  OpArgs<S> a;
  a.input = &in;
  for (const auto& t : in.args) {
    std::vector<S> v;
    for (double d : t.values) v.push_back(S(d));
    a.x.push_back(std::move(v));
  }
  return a;
}

template <class Op, class T>
Measurement measure(const std::string& op, const Input& in, double elements, const Options& opts) {
  Measurement m;
  m.op = op;
  m.dtype = std::is_same_v<T, double> ? "f64" : "f32";
  m.elements = elements;
  const auto native = args_of<T>(in);
  const auto stoch = args_of<Stoch<T>>(in);
  cestac::Config config;
  config.detect = opts.detect;
  // Native and CESTAC chunks alternate, so that both see the same machine (frequency, other
  // processes, cache state); each keeps its minimum over the repeats.
  const double chunk = opts.seconds_per_measurement / opts.repeats;
  m.native_ns = m.cestac_ns = INFINITY;
  for (int r = 0; r < opts.repeats; ++r) {
    m.native_ns = std::min(m.native_ns, time_chunk<Op, T>(native, chunk) / elements);
    cestac::Run run(1, 1, config);  // a run only around the Stoch calls
    m.cestac_ns = std::min(m.cestac_ns, time_chunk<Op, Stoch<T>>(stoch, chunk) / elements);
  }
  m.ratio = m.cestac_ns / m.native_ns;
  return m;
}

Input row(DType d, size_t n, double shift, double scale, uint64_t seed) {
  SeededEntropy e(seed, 0);
  std::vector<double> v(n);
  for (auto& x : v) x = shift + scale * e.normal();
  return regime::row_input(d, std::move(v));
}

Input gemm_input(DType d, size_t m, size_t k, size_t n) {
  SeededEntropy e(7, 0);
  std::vector<double> a(m * k), b(k * n);
  for (auto& x : a) x = e.normal();
  for (auto& x : b) x = e.normal();
  return regime::make_input(
      d, {Tensor{{int64_t(m), int64_t(k)}, a}, Tensor{{int64_t(k), int64_t(n)}, b}});
}

template <class T>
void measure_all(DType d, const Options& opts, std::vector<Measurement>& out,
                 std::ostream& progress) {
  constexpr size_t kN = 4096, kG = 128;
  auto add = [&](Measurement m) {
    progress << "  " << m.op << " " << m.dtype << ": native " << m.native_ns << " ns, cestac "
             << m.cestac_ns << " ns per element, ratio " << m.ratio << std::endl;
    out.push_back(std::move(m));
  };
  add(measure<RowAsOp<targets::SoftmaxStable>, T>("softmax", row(d, kN, 0, 3, 1), kN, opts));
  add(measure<targets::LogSumExpStable, T>("logsumexp", row(d, kN, 0, 3, 2), kN, opts));
  Input ln = row(d, kN, 10, 1, 3);
  ln.set_param("eps", 1e-5);
  add(measure<targets::LayerNormStable, T>("layer_norm", ln, kN, opts));
  Input var = row(d, kN, 1e3, 1, 4);
  var.set_param("unbiased", 0);
  add(measure<injectors::VarianceNaive, T>("variance_naive", var, kN, opts));
  add(measure<targets::VarianceStable<false>, T>("variance_two_pass", var, kN, opts));
  add(measure<targets::GemmStable, T>("gemm_128", gemm_input(d, kG, kG, kG), double(kG * kG * kG),
                                      opts));
}

}  // namespace

std::vector<Measurement> run(const Options& opts, std::ostream& progress) {
  std::vector<Measurement> out;
  measure_all<double>(DType::f64, opts, out, progress);
  measure_all<float>(DType::f32, opts, out, progress);
  return out;
}

std::vector<OracleCost> oracle_costs(int inputs, size_t max_elements, std::ostream& progress) {
  std::vector<OracleCost> out;
  for (const Family& f : default_registry().families()) {
    const Target* stable = nullptr;
    for (const auto& t : f.targets)
      if (t.kind == TargetKind::reference && t.native) {
        stable = &t;
        break;
      }
    if (!stable) continue;
    OracleCost c;
    c.family = f.name;
    double native_s = 0, oracle_s = 0;
    SeededEntropy e(11, std::hash<std::string>{}(f.name));
    for (int k = 0, tries = 0; k < inputs && tries < 50 * inputs; ++tries) {
      const Regime& r = f.regimes[static_cast<size_t>(k) % f.regimes.size()];
      const Input in = r.sample(e, DType::f64);
      if (in.total_size() > max_elements || f.validate(in)) continue;  // keep the bench short
      ++k;
      const double t0 = cpu_seconds();
      g_sink = g_sink + static_cast<double>(stable->native(in).size());
      const double t1 = cpu_seconds();
      g_sink = g_sink + static_cast<double>(f.oracle(in).exact.size());
      const double t2 = cpu_seconds();
      native_s += t1 - t0;
      oracle_s += t2 - t1;
      c.elements += static_cast<double>(in.total_size());
      ++c.inputs;
    }
    if (c.elements == 0) continue;
    c.native_ns = 1e9 * native_s / c.elements;
    c.oracle_ns = 1e9 * oracle_s / c.elements;
    c.ratio = c.native_ns > 0 ? c.oracle_ns / c.native_ns : 0;
    progress << "  oracle " << f.name << ": " << c.oracle_ns << " ns per element (" << c.inputs
             << " inputs)" << std::endl;
    out.push_back(c);
  }
  return out;
}

double geomean_ratio(const std::vector<Measurement>& ms, const std::string& dtype) {
  double log_sum = 0;
  int n = 0;
  for (const auto& m : ms)
    if (dtype.empty() || m.dtype == dtype) {
      log_sum += std::log(m.ratio);
      ++n;
    }
  return n ? std::exp(log_sum / n) : 0.0;
}

std::vector<FuzzThroughput> fuzz_throughput(double seconds, std::ostream& progress) {
  std::vector<FuzzThroughput> out;
  for (const char* family : {"softmax", "layer_norm"}) {
    for (DType d : {DType::f64, DType::f32}) {
      const std::string impl = std::string(family) + "/cpu/stable";
      const fuzz::Executor ex(default_registry(), family, impl, {d}, fuzz::Feedback::error, 1);
      // Byte strings as libFuzzer starts from: random headers and a few value edits; kept when
      // the decoded row holds at most 64 values.
      SeededEntropy e(11, 0);
      std::vector<std::vector<uint8_t>> inputs;
      double values = 0;
      for (int tries = 0; inputs.size() < 64 && tries < 20000; ++tries) {
        std::vector<uint8_t> b(10 + e.below(40));
        for (auto& c : b) c = static_cast<uint8_t>(e.below(256));
        const fuzz::Decoded dec = fuzz::decode(ex.family(), ex.dtypes(), b.data(), b.size());
        if (!dec.valid || dec.input.total_size() > 64) continue;
        values += static_cast<double>(dec.input.total_size());
        inputs.push_back(std::move(b));
      }
      FuzzThroughput t;
      t.impl = impl;
      t.dtype = std::string(dtype_name(d));
      t.inputs = static_cast<int64_t>(inputs.size());
      t.mean_values = inputs.empty() ? 0 : values / static_cast<double>(inputs.size());
      int64_t execs = 0;
      const double t0 = cpu_seconds();
      double elapsed = 0;
      while (!inputs.empty() && elapsed < seconds) {
        const auto& b = inputs[static_cast<size_t>(execs) % inputs.size()];
        (void)ex.run(b.data(), b.size());
        ++execs;
        elapsed = cpu_seconds() - t0;
      }
      t.execs_per_s = elapsed > 0 ? static_cast<double>(execs) / elapsed : 0;
      progress << "  fuzz " << t.impl << " " << t.dtype << ": " << t.execs_per_s << " exec/s ("
               << t.inputs << " inputs, " << t.mean_values << " values each on average)"
               << std::endl;
      out.push_back(std::move(t));
    }
  }
  return out;
}

json::Value to_json(const std::vector<Measurement>& ms, const std::vector<OracleCost>& oracle,
                    const std::vector<FuzzThroughput>& fuzz) {
  json::Value out;
  json::Array rows;
  for (const auto& m : ms) {
    json::Value r;
    r.set("op", m.op);
    r.set("dtype", m.dtype);
    r.set("elements", m.elements);
    r.set("native_ns", m.native_ns);
    r.set("cestac_ns", m.cestac_ns);
    r.set("ratio", m.ratio);
    rows.push_back(std::move(r));
  }
  out.set("bench", std::move(rows));
  out.set("geomean_ratio", geomean_ratio(ms, "f64"));
  out.set("geomean_ratio_f32", geomean_ratio(ms, "f32"));
  out.set("cestac", "Stoch<T, 3>, CADNA-style directed rounding, detection on");
  json::Array orows;
  for (const auto& c : oracle) {
    json::Value r;
    r.set("family", c.family);
    r.set("inputs", static_cast<double>(c.inputs));
    r.set("elements", c.elements);
    r.set("native_ns", c.native_ns);
    r.set("oracle_ns", c.oracle_ns);
    r.set("ratio", c.ratio);
    orows.push_back(std::move(r));
  }
  out.set("oracle", std::move(orows));
  json::Array frows;
  for (const auto& f : fuzz) {
    json::Value r;
    r.set("impl", f.impl);
    r.set("dtype", f.dtype);
    r.set("inputs", static_cast<double>(f.inputs));
    r.set("mean_values", f.mean_values);
    r.set("execs_per_s", f.execs_per_s);
    frows.push_back(std::move(r));
  }
  out.set("fuzz_throughput", std::move(frows));
  return out;
}

}  // namespace stabfuzz::bench
