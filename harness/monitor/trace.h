// The monitor's trace: digits of every operation's output per step, and the polluting operator.
//
// Model code calls `trace.op(...)` after each operation with the output tensor and, per element,
// the relative error that the errors of its inputs explain through the operation's conditioning:
// sum_j |x_j df/dx_j / f| e_j, each input's error e_j = 10^-digits (at least the unit roundoff u,
// which also stands for the operation's own rounding). An element is polluted when its digits
// fall `delta` below the explained digits -log10(explained + u): the operation itself lost them,
// not its inputs or the problem's conditioning. Only elements whose inputs all keep `delta`
// digits are judged: with noisier inputs the first-order propagation no longer bounds the error
// (exp of an argument off by 3 is off by a factor 20), and the digits are already gone upstream.
// The first polluted operation in execution order is the polluting operator. For native scalars
// the calls do nothing.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "stabfuzz/stoch.h"

namespace stabfuzz::monitor {

enum class Phase { forward, backward, update };
const char* phase_name(Phase p);

// Where an operation runs in the model code (std::source_location needs clang >= 15).
struct Site {
  const char* file;
  int line;
};
#define STABFUZZ_MONITOR_SITE (::stabfuzz::monitor::Site{__FILE__, __LINE__})
// The statement on the next line (for an operation computed away from its trace call).
#define STABFUZZ_MONITOR_SITE_NEXT (::stabfuzz::monitor::Site{__FILE__, __LINE__ + 1})

template <class T>
struct is_stoch : std::false_type {};
template <class F, int N, cestac::Rounding R>
struct is_stoch<Stoch<F, N, R>> : std::true_type {};
template <class T>
inline constexpr bool is_stoch_v = is_stoch<T>::value;

// The native type of a scalar's samples: float or double.
template <class T>
struct sample_of {
  using type = T;
};
template <class F, int N, cestac::Rounding R>
struct sample_of<Stoch<F, N, R>> {
  using type = F;
};

// The full digits of the scalar type (what an exact value has).
template <class T>
double full_digits() {
  if constexpr (is_stoch_v<T>)
    return std::log10(std::ldexp(1.0, T::kPrecision));
  else
    return std::log10(std::ldexp(1.0, std::numeric_limits<T>::digits));
}

// Digits of one value; an exact value (all lanes equal, zero included) has the full digits.
template <class T>
double value_digits(const T& v) {
  if constexpr (is_stoch_v<T>) {
    bool same = true;
    for (int i = 1; i < T::kLanes; ++i) same &= v.s[i] == v.s[0];
    if (same && std::isfinite(v.s[0])) return full_digits<T>();
    return v.digits();
  } else {
    return full_digits<T>();
  }
}

// The scalar's value as a double (the samples' mean under CESTAC).
template <class T>
double value_of(const T& v) {
  if constexpr (is_stoch_v<T>)
    return v.mean();
  else
    return static_cast<double>(v);
}

struct OpStats {
  int64_t step = 0;
  std::string layer, op, site;
  Phase phase = Phase::forward;
  double min = 0, p10 = 0, mean = 0;  // digits over the output's elements
  int64_t elements = 0;
  int64_t polluted = 0;  // elements that lost delta digits more than their inputs explain
};

struct Pollution {
  int64_t step = 0;
  std::string layer, op, site;
  Phase phase = Phase::forward;
  int64_t index = 0;  // the first polluted element
  double out_digits = 0, explained_digits = 0;
  double value = 0;
};

// An operation is named polluting only when its elements lose delta digits beyond what their
// inputs explain at least this often, over every element it wrote during the run. The 4-sample
// digit estimate itself errs that far about once in a million judgments (measured: 4 elements
// of 4.6 million in a stable full-data MLP run, all in tanh's backward), a planted unstable
// operation far more often (the naive cross-entropy of docs/results/monitor.md: 17 of 11,000).
inline constexpr double kMinPollutedRate = 1e-4;

// Per-element relative errors of a tensor: 10^-digits, at least u (empty for native scalars).
using Errors = std::vector<double>;

// What an element's inputs explain: the relative error propagated to first order, and the
// largest relative error among the inputs read (first order holds only for small ones).
struct Explained {
  double err = 0, worst_input = 0;
};

// Sums |x_j df/dx_j| e_j over an element's inputs; rel(f) divides by |f|.
struct Propagated {
  double abs = 0, worst = 0;
  Propagated& add(double weight, double e) {
    abs += weight * e;
    worst = std::max(worst, e);
    return *this;
  }
  Explained rel(double value) const {
    return {value == 0 ? (abs == 0 ? 0.0 : INFINITY) : abs / std::fabs(value), worst};
  }
};

class Trace {
 public:
  explicit Trace(double delta = 2, bool enabled = true) : delta_(delta), enabled_(enabled) {}

  void begin_step(int64_t step) { step_ = step; }
  bool enabled() const { return enabled_; }

  // Records the operation that wrote out[0..n) and returns its elements' errors. `explained(i)`:
  // the Explained error of element i (called only for elements that lost at least delta digits).
  template <class T, class ExplainFn>
  Errors op(const char* layer, Phase phase, const char* name, Site site, const T* out, size_t n,
            ExplainFn&& explained) {
    if constexpr (!is_stoch_v<T>) {
      return {};
    } else {
      if (!enabled_) return {};
      cestac::NearestScope nearest;  // statistics and conditioning in round to nearest
      const double full = full_digits<T>(), u = std::pow(10.0, -full),
                   judged = std::pow(10.0, -delta_);
      digits_.resize(n);
      Errors err(n);
      double mn = full, sum = 0;
      for (size_t i = 0; i < n; ++i) {
        digits_[i] = value_digits(out[i]);
        err[i] = std::max(u, std::pow(10.0, -digits_[i]));
        mn = std::min(mn, digits_[i]);
        sum += digits_[i];
      }
      Tally& tally = tallies_[std::string(layer) + "|" + phase_key(phase) + "|" + name];
      if (tally.order < 0) tally.order = static_cast<int64_t>(tallies_.size());
      OpStats s;
      s.step = step_;
      s.layer = layer;
      s.op = name;
      s.site = site_string(site);
      s.phase = phase;
      s.elements = static_cast<int64_t>(n);
      s.min = n ? mn : full;
      s.mean = n ? sum / static_cast<double>(n) : full;
      for (size_t i = 0; i < n; ++i) {
        if (!(digits_[i] < full - delta_)) continue;  // cannot be polluted: skip the conditioning
        const Explained e = explained(i);
        if (!(e.worst_input <= judged)) continue;
        const double ed = std::min(full, -std::log10(e.err + u));
        if (!(digits_[i] < ed - delta_)) continue;
        ++s.polluted;
        if (!tally.first)
          tally.first = Pollution{step_,      layer, name,
                                  s.site,     phase, static_cast<int64_t>(i),
                                  digits_[i], ed,    value_of(out[i])};
      }
      tally.elements += static_cast<int64_t>(n);
      tally.polluted += s.polluted;
      if (n) {
        const size_t k = n / 10;
        std::nth_element(digits_.begin(), digits_.begin() + static_cast<std::ptrdiff_t>(k),
                         digits_.end());
        s.p10 = digits_[k];
      }
      stats_.push_back(std::move(s));
      return err;
    }
  }

  // Errors of a tensor that no traced operation of this step wrote (data, parameters).
  template <class T>
  Errors errors(const T* v, size_t n) const {
    if constexpr (!is_stoch_v<T>) {
      return {};
    } else {
      if (!enabled_) return {};
      cestac::NearestScope nearest;
      const double u = std::pow(10.0, -full_digits<T>());
      Errors err(n);
      for (size_t i = 0; i < n; ++i) err[i] = std::max(u, std::pow(10.0, -value_digits(v[i])));
      return err;
    }
  }

  const std::vector<OpStats>& stats() const { return stats_; }
  // The first pollution (by step, then by the order the operations first ran) of the operations
  // whose polluted elements reach kMinPollutedRate of the elements they wrote; none otherwise.
  std::optional<Pollution> polluting() const {
    const Tally* best = nullptr;
    for (const auto& [key, t] : tallies_) {
      if (!t.first ||
          static_cast<double>(t.polluted) < kMinPollutedRate * static_cast<double>(t.elements))
        continue;
      if (!best || t.first->step < best->first->step ||
          (t.first->step == best->first->step && t.order < best->order))
        best = &t;
    }
    return best ? best->first : std::nullopt;
  }

 private:
  static std::string site_string(Site s);
  double delta_;
  bool enabled_;
  int64_t step_ = 0;
  std::vector<double> digits_;
  std::vector<OpStats> stats_;
  struct Tally {
    int64_t order = -1, elements = 0, polluted = 0;
    std::optional<Pollution> first;
  };
  static const char* phase_key(Phase p) {
    return p == Phase::forward ? "f" : p == Phase::backward ? "b" : "u";
  }
  std::map<std::string, Tally> tallies_;
};

}  // namespace stabfuzz::monitor
