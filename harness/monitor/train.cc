// The training loop of `stabfuzz monitor`, instantiated for Stoch<float|double, 3> and native
// float/double: batches, SGD with the k-trick, per-step records, sharpness, per-sample accuracy.
#include "harness/monitor/train.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <utility>

#include "stabfuzz/entropy.h"
#include "stabfuzz/errors.h"

namespace stabfuzz::monitor {
namespace {

constexpr uint64_t kInitStream = 0x696e6974;   // "init"
constexpr uint64_t kBatchStream = 0x62617463;  // "batc"
constexpr uint64_t kSharpStream = 0x73686172;  // "shar"

template <class T>
Params<T> convert(const Params<double>& p) {
  Params<T> q;
  for (int i = 0; i < Params<T>::kTensors; ++i) {
    auto& dst = q.tensor(i);
    for (double v : p.tensor(i)) dst.push_back(T(v));
  }
  return q;
}

// One CESTAC sample's parameters as a native model (sample -1: the samples' mean).
template <class T, class F>
Params<F> sample_params(const Params<T>& p, int k) {
  Params<F> q;
  for (int i = 0; i < Params<T>::kTensors; ++i) {
    auto& dst = q.tensor(i);
    for (const T& v : p.tensor(i)) {
      if constexpr (is_stoch_v<T>)
        dst.push_back(k < 0 ? static_cast<F>(v.mean()) : static_cast<F>(v.s[k]));
      else
        dst.push_back(static_cast<F>(v));
    }
  }
  return q;
}

template <class T>
std::vector<T> to_scalar(const std::vector<double>& v) {
  std::vector<T> out;
  out.reserve(v.size());
  for (double d : v) out.push_back(T(d));
  return out;
}

template <class F>
double accuracy(const ModelSpec& spec, const Params<F>& p, const Dataset& d) {
  if (d.rows() == 0) return 0;
  const std::vector<F> x = to_scalar<F>(d.x);
  const std::vector<int> pred = predict(spec, p, x.data(), static_cast<int>(d.rows()));
  size_t right = 0;
  for (size_t i = 0; i < pred.size(); ++i) right += pred[i] == d.y[i];
  return static_cast<double>(right) / static_cast<double>(d.rows());
}

// The rows each step trains on: the whole training set, or `B` rows drawn from the batch stream.
template <class T>
struct Batches {
  const Dataset& train;
  const int n, features;
  const bool full;
  const int B;
  const std::vector<T> xfull;
  std::vector<T> xb;
  std::vector<int> yb;
  SeededEntropy draws;

  Batches(const TrainConfig& cfg, const Dataset& train_)
      : train(train_),
        n(static_cast<int>(train.rows())),
        features(cfg.spec.features()),
        full(cfg.batch == 0 || cfg.batch >= n),
        B(full ? n : static_cast<int>(cfg.batch)),
        xfull(full ? to_scalar<T>(train.x) : std::vector<T>{}),
        xb(full ? 0 : size_t(B) * features),
        yb(full ? 0 : size_t(B)),
        draws(cfg.seed, kBatchStream) {}

  // The next step's rows x (B rows of features) and their labels y.
  std::pair<const T*, const int*> next() {
    if (full) return {xfull.data(), train.y.data()};
    for (int b = 0; b < B; ++b) {
      const size_t r = draws.below(static_cast<uint64_t>(n));
      for (int f = 0; f < features; ++f)
        xb[size_t(b) * features + f] = T(train.x[r * features + f]);
      yb[b] = train.y[r];
    }
    return {xb.data(), yb.data()};
  }
};

// The rows the sharpness of the full-batch loss is measured on when they are not the whole
// training set: the first 1,024 rows when training on batches.
std::optional<Dataset> sharpness_subset(const Dataset& train, bool full, int features) {
  if (full || train.rows() <= 1024) return std::nullopt;
  return Dataset{train.name,
                 train.height,
                 train.width,
                 train.classes,
                 {train.x.begin(), train.x.begin() + 1024 * features},
                 {train.y.begin(), train.y.begin() + 1024}};
}

// Sharpness at `step` of the samples' mean weights, in round to nearest.
template <class T>
double sharpness_at(const TrainConfig& cfg, const Params<T>& p, const Dataset& set, int64_t step) {
  cestac::NearestScope nearest;
  return sharpness(cfg.spec, cfg.loss, sample_params<T, double>(p, -1), set, cfg.sharpness_iters,
                   cfg.seed ^ static_cast<uint64_t>(step) * kSharpStream);
}

// SGD with the k-trick and weight decay: g += wd w; v = mu v + g; w = w - (lr k) (v / k), each
// tensor's update traced (the decay is part of the traced direction's errors).
template <class T>
struct Sgd {
  using F = typename sample_of<T>::type;
  const ModelSpec& spec;
  const bool momentum, decay;
  const F lrk, kk, mu, wd;
  Params<T> vel;
  std::vector<T> w_old;  // the tensor before its update, for the trace

  explicit Sgd(const TrainConfig& cfg)
      : spec(cfg.spec),
        momentum(cfg.momentum > 0),
        decay(cfg.weight_decay > 0),
        lrk(static_cast<F>(cfg.lr * cfg.k)),
        kk(static_cast<F>(cfg.k)),
        mu(static_cast<F>(cfg.momentum)),
        wd(static_cast<F>(cfg.weight_decay)),
        vel(Params<T>::zeros(cfg.spec)) {}

  void update(Params<T>& p, Params<T>& g, Trace& tr) {
    for (int i = 0; i < Params<T>::kTensors; ++i) {
      std::vector<T>& w = p.tensor(i);
      std::vector<T>& gi = g.tensor(i);
      std::vector<T>& v = vel.tensor(i);
      if (decay)
        for (size_t j = 0; j < w.size(); ++j) gi[j] = gi[j] + T(wd) * w[j];
      if (momentum) {
        for (size_t j = 0; j < w.size(); ++j) v[j] = T(mu) * v[j] + gi[j];
      }
      const std::vector<T>& d = momentum ? v : gi;
      const Errors e_w = tr.errors(w.data(), w.size()), e_d = tr.errors(d.data(), d.size());
      if (tr.enabled()) w_old = w;
      for (size_t j = 0; j < w.size(); ++j) w[j] = w[j] - T(lrk) * (d[j] / T(kk));
      tr.op(Params<T>::layer_of(spec, i), Phase::update, Params<T>::is_bias(i) ? "sgd_b" : "sgd_w",
            STABFUZZ_MONITOR_SITE, w.data(), w.size(), [&](size_t j) {
              const double wo = value_of(w_old[j]);
              return Propagated{}
                  .add(std::fabs(wo), e_w[j])
                  .add(std::fabs(wo - value_of(w[j])), e_d[j])
                  .rel(value_of(w[j]));
            });
    }
  }
};

// The step's loss and its digits and, under CESTAC, the digits of the weights, the relative L1
// difference between the samples' weights and the instabilities since the last step (`seen`: the
// run's counts so far). In round to nearest.
template <class T>
void measure_step(StepRecord& rec, const T& loss, const Params<T>& p, const cestac::Run* run,
                  std::array<uint64_t, cestac::kKindCount>& seen) {
  cestac::NearestScope nearest;
  rec.loss = value_of(loss);
  rec.loss_digits = value_digits(loss);
  if constexpr (is_stoch_v<T>) {
    double diff = 0, base = 0, dmin = full_digits<T>(), dsum = 0;
    size_t count = 0;
    for (int i = 0; i < Params<T>::kTensors; ++i)
      for (const T& w : p.tensor(i)) {
        base += std::fabs(double(w.s[0]));
        for (int k = 1; k < T::kSamples; ++k) diff += std::fabs(double(w.s[k]) - double(w.s[0]));
        const double dg = value_digits(w);
        dmin = std::min(dmin, dg);
        dsum += dg;
        ++count;
      }
    rec.rel_l1 = base > 0 ? diff / (T::kSamples - 1) / base : 0;
    rec.weight_digits_min = dmin;
    rec.weight_digits_mean = dsum / static_cast<double>(count);
    const auto& counts = run->log().counts;
    for (int k = 0; k < cestac::kKindCount; ++k) {
      rec.instabilities[k] = counts[k] - seen[k];
      seen[k] = counts[k];
    }
  } else {
    (void)run;
    (void)seen;
    rec.weight_digits_min = rec.weight_digits_mean = full_digits<T>();
  }
}

// The run's instability sites, most frequent first. Several addresses (inlined copies) can share
// one file:line: one row per (kind, file:line).
std::vector<SiteRecord> site_records(const cestac::Log& log) {
  cestac::NearestScope nearest;
  std::vector<SiteRecord> sites;
  for (const auto& s : log.sites) {
    SiteRecord r{std::string(cestac::kind_name(s.kind)), cestac::symbolize(s.address), s.count};
    auto same = std::find_if(sites.begin(), sites.end(), [&](const SiteRecord& q) {
      return q.kind == r.kind && q.site == r.site;
    });
    if (same != sites.end())
      same->count += r.count;
    else
      sites.push_back(std::move(r));
  }
  std::stable_sort(sites.begin(), sites.end(),
                   [](const SiteRecord& a, const SiteRecord& b) { return a.count > b.count; });
  return sites;
}

// The first sharpness recorded and the one largest in magnitude.
void summarize_sharpness(TrainResult& res) {
  for (const auto& s : res.steps) {
    if (std::isnan(s.lambda)) continue;
    if (std::isnan(res.lambda0)) res.lambda0 = s.lambda;
    if (std::isnan(res.lambda_max) || std::fabs(s.lambda) > std::fabs(res.lambda_max))
      res.lambda_max = s.lambda;
  }
}

// The final weights (the samples' mean) and the test accuracy of the mean and of each sample, in
// round to nearest.
template <class T>
void evaluate(TrainResult& res, const ModelSpec& spec, const Params<T>& p, const Dataset& test) {
  using F = typename sample_of<T>::type;
  {
    const Params<F> mean = sample_params<T, F>(p, -1);
    res.final_params = sample_params<F, double>(mean, 0);
    res.test_accuracy_mean = accuracy(spec, mean, test);
  }
  if constexpr (is_stoch_v<T>) {
    for (int k = 0; k < T::kSamples; ++k)
      res.test_accuracy.push_back(accuracy(spec, sample_params<T, F>(p, k), test));
  } else {
    res.test_accuracy.push_back(accuracy(spec, p, test));
  }
}

template <class T>
TrainResult run(const TrainConfig& cfg, const Split& data) {
  constexpr bool kStoch = is_stoch_v<T>;
  using F = typename sample_of<T>::type;  // float or double
  const auto t0 = std::chrono::steady_clock::now();
  const ModelSpec& spec = cfg.spec;
  const Dataset& train = data.train;
  if (train.rows() == 0) throw InputError("empty training set");
  check_config(cfg);

  TrainResult res;
  res.config = cfg;
  res.data = train.name;
  const uint64_t init_seed = cfg.init_seed ? cfg.init_seed : cfg.seed;
  Params<T> p = convert<T>(init_params(spec, init_seed, std::is_same_v<F, float>));
  Params<T> g;
  Workspace<T> ws;
  Trace tr(cfg.delta, kStoch && cfg.trace);
  Batches<T> batches(cfg, train);
  const std::optional<Dataset> subset = sharpness_subset(train, batches.full, spec.features());
  const Dataset& sharp_set = subset ? *subset : train;

  std::optional<cestac::Run> cestac_run;
  if constexpr (kStoch) cestac_run.emplace(cfg.seed, 0, cestac::Config{cfg.cancel_digits, true});
  std::array<uint64_t, cestac::kKindCount> seen{};
  Sgd<T> sgd(cfg);

  for (int64_t step = 0; step < cfg.steps; ++step) {
    tr.begin_step(step);
    StepRecord rec;
    rec.step = step;
    if (cfg.sharpness_every > 0 && (step % cfg.sharpness_every == 0 || step == cfg.steps - 1))
      rec.lambda = sharpness_at(cfg, p, sharp_set, step);
    const auto [x, y] = batches.next();
    const T loss = loss_and_grad(spec, p, x, y, batches.B, cfg.loss, &g, ws, tr);
    sgd.update(p, g, tr);
    measure_step(rec, loss, p, cestac_run ? &*cestac_run : nullptr, seen);
    res.steps.push_back(rec);
    if (!std::isfinite(rec.loss)) {  // diverged: every later step is NaN, and slow under CESTAC
      res.diverged_at = step;
      break;
    }
  }
  if constexpr (kStoch) res.sites = site_records(cestac_run->log());
  cestac_run.reset();  // back to round to nearest for the evaluation

  res.ops = tr.stats();
  res.polluting = tr.polluting();
  res.train_loss_final = res.steps.back().loss;
  summarize_sharpness(res);
  evaluate(res, spec, p, data.test);
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

}  // namespace

void check_config(const TrainConfig& cfg) {
  if (!(cfg.lr > 0) || !std::isfinite(cfg.lr)) throw InputError("--lr must be positive");
  if (cfg.k < 1) throw InputError("k must be >= 1");
  if (cfg.steps < 1) throw InputError("--steps must be >= 1");
  if (cfg.batch < 0) throw InputError("--batch must be >= 0 (0: full batch)");
  if (!(cfg.momentum >= 0 && cfg.momentum < 1)) throw InputError("--momentum must be in [0, 1)");
  if (!(cfg.weight_decay >= 0) || !std::isfinite(cfg.weight_decay))
    throw InputError("--weight-decay must be >= 0");
  if (cfg.sharpness_every < 0) throw InputError("--sharpness-every must be >= 0");
  if (!(cfg.delta > 0)) throw InputError("--delta must be positive");
}

Params<double> init_params(const ModelSpec& spec, uint64_t seed, bool f32) {
  SeededEntropy e(seed, kInitStream);
  Params<double> p = Params<double>::zeros(spec);
  const double fan1 = spec.kind == ModelKind::mlp ? spec.features() : 9;
  const double fan2 = spec.layer1_out();
  for (int i = 0; i < Params<double>::kTensors; ++i) {
    const double bound = 1 / std::sqrt(i < 2 ? fan1 : fan2);
    for (double& v : p.tensor(i)) {
      v = e.uniform(-bound, bound);
      if (f32) v = static_cast<float>(v);
    }
  }
  return p;
}

ModelSpec spec_for(ModelKind kind, const Dataset& d) {
  ModelSpec s;
  s.kind = kind;
  s.height = d.height;
  s.width = d.width;
  s.classes = d.classes;
  if (s.height < 3 || s.width < 3) throw InputError("images must be at least 3x3");
  if (s.classes < 2 || s.classes > 16)
    throw InputError("the monitor's models take 2 to 16 classes");
  return s;
}

double sharpness(const ModelSpec& spec, LossKind loss, const Params<double>& p, const Dataset& d,
                 int iters, uint64_t seed) {
  Trace off(2, false);
  Workspace<double> ws;
  const int n = static_cast<int>(d.rows());
  auto flat_grad = [&](const std::vector<double>& w) {
    Params<double> q = Params<double>::zeros(spec), g;
    size_t at = 0;
    for (int i = 0; i < Params<double>::kTensors; ++i)
      for (double& v : q.tensor(i)) v = w[at++];
    loss_and_grad(spec, q, d.x.data(), d.y.data(), n, loss, &g, ws, off);
    std::vector<double> out;
    out.reserve(w.size());
    for (int i = 0; i < Params<double>::kTensors; ++i)
      out.insert(out.end(), g.tensor(i).begin(), g.tensor(i).end());
    return out;
  };
  std::vector<double> w;
  for (int i = 0; i < Params<double>::kTensors; ++i)
    w.insert(w.end(), p.tensor(i).begin(), p.tensor(i).end());
  return power_sharpness(w, flat_grad, iters, seed);
}

double power_sharpness(const std::vector<double>& w,
                       const std::function<std::vector<double>(const std::vector<double>&)>& grad,
                       int iters, uint64_t seed) {
  SeededEntropy e(seed, kSharpStream);
  std::vector<double> v(w.size());
  auto normalize = [](std::vector<double>& u) {
    double s = 0;
    for (double x : u) s += x * x;
    s = std::sqrt(s);
    if (s > 0)
      for (double& x : u) x /= s;
    return s;
  };
  for (double& x : v) x = e.normal();
  normalize(v);
  // Central differences: the O(eps^2) truncation and the O(u |g| / eps) rounding both stay far
  // below 1e-6 relative at eps = 1e-4 for these models' weights of order 1.
  const double eps = 1e-4;
  double lambda = 0;
  std::vector<double> wp(w.size()), wm(w.size()), hv(w.size());
  for (int it = 0; it < iters; ++it) {
    for (size_t i = 0; i < w.size(); ++i) {
      wp[i] = w[i] + eps * v[i];
      wm[i] = w[i] - eps * v[i];
    }
    const std::vector<double> gp = grad(wp), gm = grad(wm);
    double dot = 0;
    for (size_t i = 0; i < w.size(); ++i) {
      hv[i] = (gp[i] - gm[i]) / (2 * eps);
      dot += v[i] * hv[i];
    }
    lambda = dot;
    if (normalize(hv) == 0) break;
    v = hv;
  }
  return lambda;
}

TrainResult train_cestac(const TrainConfig& cfg, const Split& data) {
  return cfg.f64 ? run<Stoch<double, 3>>(cfg, data) : run<Stoch<float, 3>>(cfg, data);
}

TrainResult train_native(const TrainConfig& cfg, const Split& data) {
  return cfg.f64 ? run<double>(cfg, data) : run<float>(cfg, data);
}

}  // namespace stabfuzz::monitor
