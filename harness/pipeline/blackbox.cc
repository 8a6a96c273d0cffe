// Black-box digits: four rounding modes, repeated calls, thread counts (blackbox.h).
#include "harness/pipeline/blackbox.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <iomanip>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "stabfuzz/lowp.h"

namespace stabfuzz::pipeline::blackbox {
namespace {

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

// A thread count a loaded library lets us set, looked up at run time: stabfuzz links no OpenMP
// itself, and OpenBLAS's symbol exists only in OpenBLAS.
struct Knob {
  const char* name;
  void (*set)(int);
  int (*get)();
};

template <class F>
F lookup(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_DEFAULT, name));
}

const std::vector<Knob>& knobs() {
  static const std::vector<Knob> k = [] {
    std::vector<Knob> v;
    auto add = [&](const char* set, const char* get) {
      auto s = lookup<void (*)(int)>(set);
      auto g = lookup<int (*)()>(get);
      if (s && g) v.push_back({set, s, g});
    };
    add("omp_set_num_threads", "omp_get_max_threads");
    add("openblas_set_num_threads", "openblas_get_num_threads");
    return v;
  }();
  return k;
}

int all_threads() {
  if (auto procs = lookup<int (*)()>("omp_get_num_procs")) return procs();
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

// Restores every knob's thread count when it ends.
class ThreadsScope {
 public:
  ThreadsScope() {
    for (const auto& k : knobs()) saved_.push_back(k.get());
  }
  ~ThreadsScope() {
    for (size_t i = 0; i < saved_.size(); ++i) knobs()[i].set(saved_[i]);
  }
  ThreadsScope(const ThreadsScope&) = delete;
  ThreadsScope& operator=(const ThreadsScope&) = delete;
  static void set(int n) {
    for (const auto& k : knobs()) k.set(n);
  }

 private:
  std::vector<int> saved_;
};

// Calls with 1 thread and with all; true when their bits differ. Notes how, or why not.
bool thread_counts_differ(const Native& f, const Input& in, Result& r) {
  if (knobs().empty()) {
    r.threads = "not settable (no omp_set_num_threads or openblas_set_num_threads loaded)";
    return false;
  }
  const int all = all_threads();
  for (const auto& k : knobs()) r.threads += std::string(r.threads.empty() ? "" : ", ") + k.name;
  if (all < 2) {
    r.threads += ": not compared (1 processor)";
    return false;
  }
  r.threads += " 1 vs " + std::to_string(all);
  r.threads_compared = true;
  ThreadsScope scope;
  ThreadsScope::set(1);
  const std::vector<double> one = f(in);
  ThreadsScope::set(all);
  const std::vector<double> many = f(in);
  return !same_bits(one, many);
}

// Fills digits, worst, spread and sensitivity from the results in the four modes.
void spread(DType d, const std::vector<double>& nearest, const std::vector<double> (&dir)[3],
            const Options& o, Result& r) {
  r.digits.resize(nearest.size());
  r.min_digits = dtype_max_digits(d);
  for (size_t i = 0; i < nearest.size(); ++i) {
    const double others[3] = {dir[0][i], dir[1][i], dir[2][i]};
    r.digits[i] = output_digits(d, nearest[i], others);
    if (std::isnan(r.digits[i]) && !std::isfinite(nearest[i])) continue;  // overflow: not judged
    double ulps = 0;
    for (double x : others)
      if (std::memcmp(&x, &nearest[i], sizeof x) != 0)
        ulps = std::max(ulps, std::isfinite(x) && std::isfinite(nearest[i])
                                  ? ulp_error(d, x, nearest[i])
                                  : INFINITY);
    r.max_spread_ulps = std::max(r.max_spread_ulps, ulps);
    if (r.digits[i] < r.min_digits) {
      r.min_digits = r.digits[i];
      r.worst = i;
    }
  }
  r.sensitive = r.max_spread_ulps > o.sensitive_ulps;
}

}  // namespace

RoundingScope::RoundingScope(int mode) : saved_(std::fegetround()) {
  if (std::fesetround(mode) != 0) throw std::runtime_error("fesetround failed");
}

RoundingScope::~RoundingScope() { std::fesetround(saved_); }

[[gnu::noinline]] std::vector<double> call_in_mode(const Native& f, const Input& in, int mode) {
  const RoundingScope scope(mode);
  std::vector<double> out = f(in);
  // The results leave the scope through memory the compiler must assume the call wrote.
  asm volatile("" ::: "memory");
  return out;
}

std::string_view nondeterminism_name(Nondeterminism n) {
  switch (n) {
    case Nondeterminism::none:
      return "";
    case Nondeterminism::repeat:
      return "repeat";
    case Nondeterminism::threads:
      return "threads";
    case Nondeterminism::both:
      return "repeat+threads";
  }
  return "";
}

double output_digits(DType d, double nearest, const double directed[3]) {
  const double full = dtype_max_digits(d);
  const double r[4] = {nearest, directed[0], directed[1], directed[2]};
  auto all = [&](auto&& pred) { return std::all_of(r, r + 4, pred); };
  if (all([&](double x) { return std::memcmp(&x, &nearest, sizeof x) == 0; })) return full;
  // Underflow (all four below the smallest normal, 0 included) or overflow (all four inf or the
  // largest finite value, of one sign): at the format's edges, not judged.
  const double tiny = dtype_min_normal(d), huge = dtype_format(d).max_finite();
  if (all([&](double x) { return std::fabs(x) < tiny; }) ||
      all([&](double x) { return x >= huge; }) || all([&](double x) { return x <= -huge; }))
    return NAN;
  if (!all([](double x) { return std::isfinite(x); }) || nearest == 0) return 0;
  double dev = 0;
  for (int k = 0; k < 3; ++k) dev = std::max(dev, std::fabs(directed[k] - nearest));
  if (dev == 0) return full;  // -0 against +0 only
  return std::clamp(-std::log10(dev / std::fabs(nearest)), 0.0, full);
}

namespace {

// The calls of measure(); throws what the target throws.
void measure_calls(const Native& f, const Input& in, const Options& o, Result& r) {
  const std::vector<double> nearest = call_in_mode(f, in, FE_TONEAREST);
  std::vector<double> dir[3];
  const int modes[3] = {FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO};
  for (int k = 0; k < 3; ++k) {
    dir[k] = call_in_mode(f, in, modes[k]);
    if (dir[k].size() != nearest.size()) {
      r.note = "the number of outputs changed with the rounding mode";
      return;
    }
  }
  spread(in.dtype, nearest, dir, o, r);
  r.nearest = nearest;
  bool repeat = false, threads = false;
  if (o.repeat)
    for (int k = 0; k < 2; ++k) repeat |= !same_bits(call_in_mode(f, in, FE_TONEAREST), nearest);
  if (o.threads) threads = thread_counts_differ(f, in, r);
  r.nondeterminism = static_cast<Nondeterminism>((repeat ? 1 : 0) | (threads ? 2 : 0));
  r.measured = true;
}

}  // namespace

Result measure(const Native& f, const Input& in, const Options& o) {
  const auto t0 = std::chrono::steady_clock::now();
  Result r;
  try {
    measure_calls(f, in, o, r);
  } catch (const std::exception& e) {
    r = Result{};
    r.note = std::string("the target threw: ") + e.what();
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

void Totals::add(const Result& r) {
  seconds += r.seconds;
  if (!r.measured) return skip(r.note);
  min_digits = measured_inputs == 0 ? r.min_digits : std::min(min_digits, r.min_digits);
  ++measured_inputs;
  sensitive_inputs += r.sensitive;
  nondeterministic_inputs += r.nondeterminism != Nondeterminism::none;
  nondeterministic_repeat += (static_cast<int>(r.nondeterminism) & 1) != 0;
  nondeterministic_threads += (static_cast<int>(r.nondeterminism) & 2) != 0;
  threads = r.threads;
}

void Totals::skip(const std::string& why) {
  ++not_measured_inputs;
  not_measured = why;
}

Result not_measured(std::string why) {
  Result r;
  r.note = std::move(why);
  return r;
}

json::Value result_json(const Result& r, size_t oracle_worst) {
  json::Value j;
  j.set("measured", r.measured);
  if (!r.measured) {
    j.set("note", r.note);
    return j;
  }
  j.set("min_digits", r.min_digits);
  j.set("worst_index", static_cast<unsigned long>(r.worst));
  if (oracle_worst < r.digits.size())  // null: not judged (underflow)
    j.set("digits_at_oracle_worst",
          std::isnan(r.digits[oracle_worst]) ? json::Value() : json::Value(r.digits[oracle_worst]));
  j.set("max_spread_ulps", r.max_spread_ulps);
  j.set("rounding_sensitive", r.sensitive);
  j.set("nondeterministic", std::string(nondeterminism_name(r.nondeterminism)));
  j.set("threads", r.threads);
  return j;
}

json::Value totals_json(const Totals& t) {
  json::Value j;
  j.set("measured_inputs", static_cast<long long>(t.measured_inputs));
  j.set("min_digits", t.measured_inputs > 0 ? json::Value(t.min_digits) : json::Value());
  j.set("rounding_sensitive_inputs", static_cast<long long>(t.sensitive_inputs));
  j.set("nondeterministic_inputs", static_cast<long long>(t.nondeterministic_inputs));
  j.set("nondeterministic_repeat", static_cast<long long>(t.nondeterministic_repeat));
  j.set("nondeterministic_threads", static_cast<long long>(t.nondeterministic_threads));
  j.set("threads", t.threads);
  if (t.not_measured_inputs > 0) {
    j.set("not_measured_inputs", static_cast<long long>(t.not_measured_inputs));
    j.set("not_measured", t.not_measured);
  }
  j.set("seconds", t.seconds);
  return j;
}

json::Value merge_totals_json(const json::Value* a, const json::Value& b) {
  if (!a || a->is_null()) return b;
  json::Value j = *a;
  auto num = [](const json::Value& v, const char* k) {
    const json::Value* x = v.get(k);
    return x && !x->is_null() ? x->as_number() : 0.0;
  };
  for (const char* k :
       {"measured_inputs", "rounding_sensitive_inputs", "nondeterministic_inputs",
        "nondeterministic_repeat", "nondeterministic_threads", "not_measured_inputs", "seconds"})
    if (a->get(k) || b.get(k)) j.set(k, num(*a, k) + num(b, k));
  const json::Value* ma = a->get("min_digits");
  const json::Value* mb = b.get("min_digits");
  if (mb && !mb->is_null())
    j.set("min_digits",
          ma && !ma->is_null() ? std::min(ma->as_number(), mb->as_number()) : mb->as_number());
  for (const char* k : {"threads", "not_measured"})
    if (const json::Value* s = b.get(k); s && !s->as_string().empty()) j.set(k, *s);
  return j;
}

std::string totals_line(const Totals& t) {
  std::ostringstream os;
  os << t.measured_inputs << " inputs measured";
  if (t.measured_inputs > 0)
    os << ", min " << std::fixed << std::setprecision(1) << t.min_digits << " digits, "
       << t.sensitive_inputs << " rounding-sensitive, " << t.nondeterministic_inputs
       << " nondeterministic (" << t.nondeterministic_repeat << " on repeat, "
       << t.nondeterministic_threads << " by thread count); threads: " << t.threads;
  if (t.not_measured_inputs > 0)
    os << "; " << t.not_measured_inputs << " not measured: " << t.not_measured;
  os << std::setprecision(2) << "; " << t.seconds << " s in the extra calls";
  return os.str();
}

}  // namespace stabfuzz::pipeline::blackbox
