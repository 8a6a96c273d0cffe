// The input search of `monitor infer --fuzz` (fuzz.h).
#include "harness/onnx/fuzz.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <random>
#include <set>

namespace stabfuzz::onnx {
namespace {

using Inputs = std::map<std::string, HostTensor>;
constexpr const char* kRegimes[] = {"moderate",     "huge",      "tiny", "near_overflow",
                                    "mean_shifted", "subnormal", "mixed"};

double in_format(double v, bool f64) {
  return f64 ? v : static_cast<double>(static_cast<float>(v));
}

double draw(std::mt19937_64& g, const std::string& regime, double offset, bool f64) {
  std::uniform_real_distribution<double> u(0, 1);
  std::normal_distribution<double> nd;
  const double sign = (g() & 1) ? 1 : -1;
  const double emax = f64 ? 307 : 37, emin = f64 ? -307 : -37;
  if (regime == "huge") return sign * std::pow(10.0, 3 + u(g) * (emax - 3));
  if (regime == "tiny") return sign * std::pow(10.0, emin + u(g) * (-3 - emin));
  if (regime == "near_overflow")  // where e^x leaves the range: 88.7 (f32), 709.8 (f64)
    return (f64 ? 700 : 80) + u(g) * (f64 ? 15 : 12) * ((g() % 4) ? 1 : -1);
  if (regime == "mean_shifted") return offset + nd(g);
  if (regime == "subnormal")
    return sign * std::numeric_limits<float>::denorm_min() * std::floor(1 + u(g) * 1e6) *
           (f64 ? 1e-270 : 1);
  return nd(g);
}

Inputs generate(const Inputs& shape_of, std::mt19937_64& g, const std::string& regime, bool f64) {
  Inputs out = shape_of;
  std::uniform_real_distribution<double> u(0, 1);
  const double offset = std::pow(10.0, 2 + u(g) * (f64 ? 12 : 5)) * ((g() & 1) ? 1 : -1);
  for (auto& [name, t] : out) {
    if (t.elem != Elem::float32 && t.elem != Elem::float64) continue;  // keep integer inputs
    for (double& v : t.values) {
      const std::string r =
          regime == "mixed" ? kRegimes[g() % (sizeof kRegimes / sizeof *kRegimes - 1)] : regime;
      v = in_format(draw(g, r, offset, f64), f64);
    }
  }
  return out;
}

// One element of the best input changed: scaled by a power of 10, negated, shifted or redrawn.
Inputs mutate(const Inputs& best, std::mt19937_64& g, bool f64) {
  Inputs out = best;
  std::vector<std::pair<std::string, size_t>> slots;
  for (const auto& [name, t] : out)
    if (t.elem == Elem::float32 || t.elem == Elem::float64)
      for (size_t k = 0; k < t.size(); ++k) slots.emplace_back(name, k);
  if (slots.empty()) return out;
  const int changes = 1 + static_cast<int>(g() % 4);
  for (int c = 0; c < changes; ++c) {
    const auto& [name, k] = slots[g() % slots.size()];
    double& v = out[name].values[k];
    switch (g() % 4) {
      case 0:
        v *= std::pow(10.0, static_cast<double>(static_cast<int>(g() % 9) - 4));
        break;
      case 1:
        v = -v;
        break;
      case 2:
        v += std::ldexp(1.0, static_cast<int>(g() % 40) - 20);
        break;
      default:
        v = draw(g, kRegimes[g() % (sizeof kRegimes / sizeof *kRegimes)], v, f64);
    }
    v = in_format(v, f64);
    if (!std::isfinite(v)) v = 0;
  }
  return out;
}

// The score that leads the search: the largest loss beyond the conditioning; nan and overflow
// from finite inputs count as infinite.
double score(const InferReport& r) {
  double s = 0;
  for (const auto& n : r.nodes) {
    if (!n.polluting) {
      s = std::max(s, n.lost);
      continue;
    }
    s = std::max(s, n.kind == "nan" || n.kind == "overflow" ? INFINITY : n.lost);
  }
  return s;
}

bool breaks_node(const InferReport& r, const std::string& node) {
  for (const auto& n : r.nodes)
    if (n.name == node) return n.polluting;
  return false;
}

// Greedy shrink: each element set to 0, then to 1 significant bit, kept where `node` still
// pollutes; a bounded number of evaluations.
Inputs shrink(const Model& m, Inputs in, const std::string& node, bool f64, uint64_t seed) {
  int budget = 200;
  for (auto& [name, t] : in) {
    if (t.elem != Elem::float32 && t.elem != Elem::float64) continue;
    for (size_t k = 0; k < t.size() && budget > 0; ++k) {
      const double old = t.values[k];
      int e = 0;
      std::frexp(old, &e);
      for (double simpler : {0.0, std::ldexp(std::copysign(0.5, old), e)}) {
        if (simpler == old || budget-- <= 0) continue;
        t.values[k] = simpler;
        try {
          if (breaks_node(infer(m, in, f64, seed), node)) break;
        } catch (const std::exception&) {
        }
        t.values[k] = old;
      }
    }
  }
  return in;
}

std::string safe(const std::string& s) {
  std::string o;
  for (char c : s)
    o += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-') ? c : '_';
  return o.empty() ? "node" : o;
}

}  // namespace

FuzzReport fuzz_inputs(const Model& m, const Inputs& start, bool f64, uint64_t seed,
                       double budget_s, const std::string& out, int64_t max_trials) {
  FuzzReport rep;
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  std::mt19937_64 g(seed);
  Inputs best = start;
  double best_score = -1;
  std::set<std::string> found;
  int64_t last_note = 0;
  while (elapsed() < budget_s && (max_trials == 0 || rep.trials < max_trials)) {
    ++rep.trials;
    const bool fresh = best_score < 0 || (g() % 2);
    const std::string regime =
        fresh ? kRegimes[g() % (sizeof kRegimes / sizeof *kRegimes)] : "mutation";
    const Inputs in = fresh ? generate(start, g, regime, f64) : mutate(best, g, f64);
    InferReport r;
    try {
      r = infer(m, in, f64, seed);
    } catch (const std::exception&) {
      continue;
    }
    const double s = score(r);
    if (s > best_score) best_score = s, best = in;
    for (const auto& n : r.nodes) {
      if (!n.polluting || found.count(n.name)) continue;
      found.insert(n.name);
      FuzzBreak b{n.name,    n.op,
                  n.kind,    n.kind == "nan" || n.kind == "overflow" ? INFINITY : n.lost,
                  regime,    out + "/fuzz/" + safe(n.name) + "/test_data_set_0",
                  rep.trials};
      const Inputs small = shrink(m, in, n.name, f64, seed);
      std::filesystem::create_directories(b.dir);
      for (size_t k = 0; k < m.inputs.size(); ++k)
        write_tensor(small.at(m.inputs[k]), m.inputs[k],
                     b.dir + "/input_" + std::to_string(k) + ".pb");
      std::fprintf(stderr, "stabfuzz monitor infer --fuzz: trial %lld (%s): node %s (%s) %s\n",
                   static_cast<long long>(rep.trials), regime.c_str(), n.name.c_str(), n.op.c_str(),
                   n.kind.c_str());
      rep.breaks.push_back(std::move(b));
    }
    if (rep.trials - last_note >= 500) {
      last_note = rep.trials;
      std::fprintf(stderr, "stabfuzz monitor infer --fuzz: %lld trials, %.0f s, %zu nodes broken\n",
                   static_cast<long long>(rep.trials), elapsed(), rep.breaks.size());
    }
  }
  rep.seconds = elapsed();
  return rep;
}

}  // namespace stabfuzz::onnx
