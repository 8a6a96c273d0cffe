// Training an ONNX graph: the forward pass of eval.h, a loss on the logits, the backward pass of
// grad.h and SGD or Adam, on Stoch<F, 3> with every node traced (monitor::Trace), or natively.
#include "harness/onnx/train.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "harness/monitor/train.h"
#include "harness/onnx/eval.h"
#include "harness/onnx/grad.h"
#include "harness/onnx/npy.h"
#include "harness/onnx/objective.h"
#include "harness/onnx/prop.h"
#include "reports/findings.h"
#include "stabfuzz/cestac.h"
#include "stabfuzz/entropy.h"
#include "stabfuzz/errors.h"
#include "stabfuzz/stoch.h"

namespace stabfuzz::onnx {

using monitor::Errors;
using monitor::Explained;
using monitor::Phase;

namespace {

constexpr uint64_t kBatchStream = 0x62617463;  // "batc"

bool is_float(Elem e) { return e == Elem::float32 || e == Elem::float64; }

// What a graph trains: its input, the value the loss reads, the nodes that run, the parameters.
struct Plan {
  std::string input, logits;
  bool softmax_skipped = false;
  std::vector<size_t> nodes;        // indices into m.nodes, in graph order
  std::vector<std::string> params;  // float initializers read by a differentiable node
  std::vector<int64_t> row_shape;   // one row of the input (the declared shape without N)
};

Plan plan_of(const Model& m) {
  Plan p;
  std::vector<std::string> float_inputs;
  for (const auto& i : m.inputs) {
    const auto t = m.input_types.count(i) ? m.input_types.at(i) : 0;
    if (t == 0 || t == static_cast<int32_t>(Elem::float32) ||
        t == static_cast<int32_t>(Elem::float64))
      float_inputs.push_back(i);
  }
  if (float_inputs.size() != 1 || m.inputs.size() != 1)
    throw InputError(m.path +
                     ": training needs a graph with exactly one input (the rows); it has " +
                     std::to_string(m.inputs.size()));
  if (m.outputs.empty()) throw InputError(m.path + ": the graph has no output");
  p.input = float_inputs[0];
  p.logits = m.outputs[0];
  size_t last = m.nodes.size();
  for (size_t k = 0; k < m.nodes.size(); ++k)
    if (!m.nodes[k].out.empty() && m.nodes[k].out[0] == p.logits) last = k;
  if (last == m.nodes.size()) throw InputError(m.path + ": no node writes the output " + p.logits);
  const Node& tail = m.nodes[last];
  if (tail.op == "Softmax" && tail.i("axis", -1) == -1 && !tail.in.empty()) {
    p.logits = tail.in[0];
    p.softmax_skipped = true;
  }
  for (size_t k = 0; k < m.nodes.size(); ++k)
    if (!(p.softmax_skipped && k == last)) p.nodes.push_back(k);
  std::set<std::string> seen;
  for (size_t k : p.nodes)
    for (const auto& i : m.nodes[k].in) {
      const auto it = m.initializers.find(i);
      if (it != m.initializers.end() && is_float(it->second.elem) && seen.insert(i).second)
        p.params.push_back(i);
    }
  if (const auto sh = m.input_shapes.find(p.input);
      sh != m.input_shapes.end() && !sh->second.empty())
    p.row_shape.assign(sh->second.begin() + 1, sh->second.end());
  return p;
}

// The values that depend on the input or a parameter: the nodes that must be differentiable.
void check_differentiable(const Model& m, const Plan& p) {
  std::set<std::string> live(p.params.begin(), p.params.end());
  live.insert(p.input);
  for (size_t k : p.nodes) {
    const Node& n = m.nodes[k];
    const bool reads_live =
        std::any_of(n.in.begin(), n.in.end(), [&](const std::string& i) { return live.count(i); });
    if (!reads_live) continue;
    if (!is_differentiable(n.op))
      throw InputError("ONNX node '" + n.name + "' (" + n.op +
                       "): training has no backward for this operator (supported: " +
                       [] {
                         std::string s;
                         for (const auto& o : differentiable_ops())
                           s += (s.empty() ? "" : ", ") + o;
                         return s;
                       }() +
                       ")");
    for (const auto& o : n.out) live.insert(o);
  }
  if (!live.count(p.logits))
    throw InputError(m.path + ": the output " + p.logits + " does not depend on the input");
}

// A tensor of T as Props seeded with per-element relative errors (none: exact).
template <class T>
Tensor<Prop> seeded(const Tensor<T>& t, const Errors* e) {
  Tensor<Prop> r{t.shape, {}, t.elem};
  r.v.reserve(t.size());
  for (size_t k = 0; k < t.size(); ++k) {
    const double x = mean_of(t.v[k]);
    r.v.push_back(e && k < e->size() ? Prop::seeded(x, (*e)[k]) : Prop(x));
  }
  return r;
}

// The training of one scalar type: Stoch<F, 3> with every node traced, or F natively.
template <class T>
class Trainer {
 public:
  Trainer(const Model& m, const Plan& p, const TrainOptions& o, const monitor::Dataset& data)
      : m_(m),
        p_(p),
        o_(o),
        data_(data),
        tr_(o.delta, monitor::is_stoch_v<T> && o.trace),
        draws_(o.seed, kBatchStream) {
    for (const auto& [name, t] : m.initializers) {
      const bool param = std::find(p.params.begin(), p.params.end(), name) != p.params.end();
      (param ? params_ : consts_)[name] = Interpreter<T>::convert(t);
    }
    for (const auto& [name, t] : params_) {
      const Tensor<T> zero{t.shape, std::vector<T>(t.size(), T(0.0)), t.elem};
      m1_[name] = zero;
      v1_[name] = zero;
    }
    needs_grad_.insert(p.params.begin(), p.params.end());
    for (size_t k : p.nodes) {
      const Node& n = m.nodes[k];
      if (std::any_of(n.in.begin(), n.in.end(),
                      [&](const auto& i) { return needs_grad_.count(i); }))
        needs_grad_.insert(n.out.begin(), n.out.end());
    }
    row_ = p.row_shape.empty() ? std::vector<int64_t>{data.features()} : p.row_shape;
    if (count(row_) != static_cast<size_t>(data.features()))
      throw InputError("the data's rows have " + std::to_string(data.features()) +
                       " values; the graph input " + p.input + " takes rows of " +
                       std::to_string(count(row_)));
    const size_t n = data.rows();
    B_ = o.batch <= 0 || static_cast<size_t>(o.batch) >= n ? n : static_cast<size_t>(o.batch);
  }

  TrainStep step(int64_t k) {
    tr_.begin_step(k);
    next_batch();
    Values<T> vals = consts_;
    for (const auto& [name, t] : params_) vals[name] = t;
    vals[p_.input] = x_;
    err_.clear();
    for (const auto& [name, t] : params_) err_[name] = tr_.errors(t.v.data(), t.size());
    err_[p_.input] = tr_.errors(x_.v.data(), x_.size());
    forward(vals);
    T total = T(0.0);
    backward(vals, loss(vals, total));
    TrainStep rec = measure(k, total);
    update(k + 1);
    return rec;
  }

  const Values<T>& params() const { return params_; }
  const monitor::Trace& trace() const { return tr_; }

  // The gradient of the mean loss over this trainer's rows (a full-batch trainer: every row) at
  // the weights `flat` (the parameters in the order the graph first reads them, flattened),
  // flattened likewise.
  std::vector<double> gradient_at(const std::vector<double>& flat) {
    size_t at = 0;
    for (const auto& name : p_.params)
      for (T& v : params_.at(name).v) v = T(flat.at(at++));
    next_batch();
    Values<T> vals = consts_;
    for (const auto& [name, t] : params_) vals[name] = t;
    vals[p_.input] = x_;
    err_.clear();
    forward(vals);
    T total = T(0.0);
    backward(vals, loss(vals, total));
    std::vector<double> g;
    g.reserve(flat.size());
    for (const auto& name : p_.params) {
      const auto it = grads_.find(name);
      for (size_t i = 0; i < params_.at(name).size(); ++i)
        g.push_back(it == grads_.end() ? 0.0 : mean_of(it->second.v[i]));
    }
    return g;
  }

 private:
  monitor::Site node_site(size_t k) const { return {m_.path.c_str(), static_cast<int>(k + 1)}; }
  const Errors* err_of(const std::map<std::string, Errors>& e, const std::string& name) const {
    const auto it = e.find(name);
    return it == e.end() || it->second.empty() ? nullptr : &it->second;
  }

  void next_batch() {
    const size_t F = static_cast<size_t>(data_.features());
    std::vector<int64_t> shape{static_cast<int64_t>(B_)};
    shape.insert(shape.end(), row_.begin(), row_.end());
    x_ = Tensor<T>{shape, std::vector<T>(B_ * F, T(0.0)),
                   m_.input_types.count(p_.input) && m_.input_types.at(p_.input) == 11
                       ? Elem::float64
                       : Elem::float32};
    y_.resize(B_);
    const bool full = B_ == data_.rows();
    for (size_t b = 0; b < B_; ++b) {
      const size_t r = full ? b : static_cast<size_t>(draws_.below(data_.rows()));
      for (size_t f = 0; f < F; ++f) x_.v[b * F + f] = T(data_.x[r * F + f]);
      y_[b] = data_.y[r];
    }
  }

  Tensor<Prop> prop_forward(const Node& n, const Values<T>& vals) const {
    Values<Prop> pv;
    for (const auto& i : n.in)
      if (const auto it = vals.find(i); !i.empty() && it != vals.end())
        pv[i] = seeded(it->second, err_of(err_, i));
    Interpreter<Prop>::run_node(n, pv);
    return pv.at(n.out[0]);
  }

  void forward(Values<T>& vals) {
    for (size_t k : p_.nodes) {
      const Node& n = m_.nodes[k];
      Interpreter<T>::run_node(n, vals);
      const Tensor<T>& out = vals.at(n.out[0]);
      std::optional<Tensor<Prop>> prop;
      err_[n.out[0]] = tr_.op(n.name.c_str(), Phase::forward, n.op.c_str(), node_site(k),
                              out.v.data(), out.size(), [&](size_t i) {
                                if (!prop) prop = prop_forward(n, vals);
                                return Explained{prop->v[i].rel(), prop->v[i].w};
                              });
    }
  }

  // The rows' loss (traced) and its gradient with respect to the logits (traced); total: the mean.
  Tensor<T> loss(const Values<T>& vals, T& total) {
    const Tensor<T>& z = vals.at(p_.logits);
    const size_t C = z.size() / std::max<size_t>(B_, 1);
    if (z.size() != B_ * C || C == 0)
      throw InputError("the graph's logits " + p_.logits + " do not have one row per input row");
    for (int y : y_)
      if (y < 0 || static_cast<size_t>(y) >= C)
        throw InputError("label " + std::to_string(y) + " is outside the graph's " +
                         std::to_string(C) + " outputs");
    std::vector<T> rows;
    Tensor<T> dz;
    loss_rows(o_.loss, z, y_, rows, dz);
    std::map<size_t, LossRow> cond;  // per row, made when an element of it is judged
    const Errors* ez = err_of(err_, p_.logits);
    auto row = [&](size_t b) -> const LossRow& {
      auto it = cond.find(b);
      if (it != cond.end()) return it->second;
      std::vector<double> zb(C), eb(C, 0.0);
      for (size_t c = 0; c < C; ++c) {
        zb[c] = mean_of(z.v[b * C + c]);
        if (ez) eb[c] = (*ez)[b * C + c];
      }
      return cond.emplace(b, loss_row(o_.loss, zb.data(), eb.data(), C, y_[b])).first->second;
    };
    const char* name = o_.loss == monitor::LossKind::mse  ? "mse"
                       : o_.loss == monitor::LossKind::ce ? "cross_entropy"
                                                          : "cross_entropy_naive";
    tr_.op("loss", Phase::forward, name, STABFUZZ_MONITOR_SITE, rows.data(), rows.size(),
           [&](size_t b) { return loss_explained(row(b), mean_of(rows[b])); });
    gerr_.clear();
    gerr_[p_.logits] =
        tr_.op("loss", Phase::backward, "dlogits", STABFUZZ_MONITOR_SITE, dz.v.data(), dz.size(),
               [&](size_t i) { return grad_explained(o_.loss, row(i / C), i % C); });
    for (const T& r : rows) total = total + r;
    total = total * T(1.0 / static_cast<double>(B_));
    return dz;
  }

  typename Grad<Prop>::Grads prop_backward(const Node& n, const Values<T>& vals,
                                           const Tensor<T>& gy,
                                           const std::vector<bool>& wanted) const {
    Values<Prop> pv;
    for (const auto* names : {&n.in, &n.out})
      for (const auto& i : *names)
        if (const auto it = vals.find(i); !i.empty() && it != vals.end())
          pv[i] = seeded(it->second, err_of(err_, i));
    return Grad<Prop>::backward(n, pv, seeded(gy, err_of(gerr_, n.out[0])), &wanted);
  }

  void backward(const Values<T>& vals, Tensor<T> dz) {
    grads_.clear();
    grads_[p_.logits] = std::move(dz);
    for (auto it = p_.nodes.rbegin(); it != p_.nodes.rend(); ++it) {
      const Node& n = m_.nodes[*it];
      const auto g = grads_.find(n.out[0]);
      if (g == grads_.end()) continue;
      const Tensor<T>& gy = g->second;
      std::vector<bool> wanted;
      for (const auto& i : n.in) wanted.push_back(!i.empty() && needs_grad_.count(i) != 0);
      auto gin = Grad<T>::backward(n, vals, gy, &wanted);
      std::optional<typename Grad<Prop>::Grads> prop;
      for (size_t k = 0; k < gin.size() && k < n.in.size(); ++k) {
        const std::string& name = n.in[k];
        if (!gin[k] || name.empty() || !needs_grad_.count(name)) continue;
        const std::string op = "d" + name;
        Errors e = tr_.op(n.name.c_str(), Phase::backward, op.c_str(), node_site(*it),
                          gin[k]->v.data(), gin[k]->size(), [&](size_t i) {
                            if (!prop) prop = prop_backward(n, vals, gy, wanted);
                            const Prop& q = (*prop)[k]->v[i];
                            return Explained{q.rel(), q.w};
                          });
        auto& slot = grads_[name];
        if (slot.v.empty()) {
          slot = std::move(*gin[k]);
          gerr_[name] = std::move(e);
        } else {  // a value read by several nodes: the contributions summed
          for (size_t i = 0; i < slot.size(); ++i) slot.v[i] = slot.v[i] + gin[k]->v[i];
          gerr_[name] = tr_.errors(slot.v.data(), slot.size());
        }
      }
    }
  }

  void update(int64_t t) {
    const bool traced = tr_.enabled() && monitor::is_stoch_v<T>;
    for (auto& [name, w] : params_) {
      const auto g = grads_.find(name);
      if (g == grads_.end()) continue;
      Tensor<T>&M = m1_[name], &V = v1_[name];
      std::vector<T> w0, m0, v0;
      if (traced) w0 = w.v, m0 = M.v, v0 = V.v;
      for (size_t i = 0; i < w.size(); ++i) {
        const Update<T> u = update_one(o_, t, w.v[i], g->second.v[i], M.v[i], V.v[i]);
        w.v[i] = u.w;
        M.v[i] = u.m;
        V.v[i] = u.v;
      }
      if (!traced) continue;
      const Errors ew = err_.at(name), eg = gerr_.count(name) ? gerr_.at(name) : Errors{};
      const Errors em = tr_.errors(m0.data(), m0.size()), ev = tr_.errors(v0.data(), v0.size());
      auto at = [](const std::vector<T>& x, const Errors& e, size_t i) {
        return i < e.size() ? Prop::seeded(mean_of(x[i]), e[i]) : Prop(mean_of(x[i]));
      };
      tr_.op(name.c_str(), Phase::update, optimizer_name(o_.optimizer), STABFUZZ_MONITOR_SITE,
             w.v.data(), w.size(), [&](size_t i) {
               const Prop r = update_one<Prop>(o_, t, at(w0, ew, i), at(g->second.v, eg, i),
                                               at(m0, em, i), at(v0, ev, i))
                                  .w;
               return Explained{r.rel(), r.w};
             });
    }
  }

  TrainStep measure(int64_t k, const T& total) const {
    cestac::NearestScope nearest;
    TrainStep s;
    s.step = k;
    s.loss = mean_of(total);
    s.loss_digits = monitor::value_digits(total);
    const double full = monitor::full_digits<T>();
    auto digits = [&](const Values<T>& vals, double& mn, double& mean) {
      mn = full;
      double sum = 0;
      size_t cnt = 0;
      for (const auto& [name, t] : vals) {
        if (!params_.count(name)) continue;
        for (const T& v : t.v) {
          const double d = monitor::value_digits(v);
          mn = std::min(mn, d), sum += d, ++cnt;
        }
      }
      mean = cnt ? sum / static_cast<double>(cnt) : full;
    };
    digits(params_, s.weight_digits_min, s.weight_digits_mean);
    digits(grads_, s.grad_digits_min, s.grad_digits_mean);
    if constexpr (monitor::is_stoch_v<T>) {
      double diff = 0, base = 0;
      for (const auto& [name, t] : params_)
        for (const T& w : t.v) {
          base += std::fabs(double(w.s[0]));
          for (int j = 1; j < T::kSamples; ++j) diff += std::fabs(double(w.s[j]) - double(w.s[0]));
        }
      s.rel_l1 = base > 0 ? diff / (T::kSamples - 1) / base : 0;
    }
    return s;
  }

  const Model& m_;
  const Plan& p_;
  const TrainOptions& o_;
  const monitor::Dataset& data_;
  monitor::Trace tr_;
  SeededEntropy draws_;
  Values<T> params_, consts_, m1_, v1_, grads_;
  std::set<std::string> needs_grad_;
  std::map<std::string, Errors> err_, gerr_;
  std::vector<int64_t> row_;
  size_t B_ = 0;
  Tensor<T> x_;
  std::vector<int> y_;
};

// The graph with `params` (one sample k of each value, or the mean for k < 0) as its weights.
template <class T>
Model with_params(const Model& m, const Values<T>& params, int k) {
  Model r = m;
  for (const auto& [name, t] : params) {
    HostTensor& h = r.initializers.at(name);
    for (size_t i = 0; i < t.size(); ++i) {
      double x;
      if constexpr (monitor::is_stoch_v<T>)
        x = k < 0 ? t.v[i].mean() : static_cast<double>(t.v[i].s[k]);
      else
        x = static_cast<double>(t.v[i]);
      h.values[i] = h.elem == Elem::float32 ? static_cast<float>(x) : x;
    }
  }
  return r;
}

// The share of test rows whose largest output is the label, natively in F.
template <class F>
double accuracy(const Model& m, const Plan& p, const monitor::Dataset& test) {
  if (test.rows() == 0) return 0;
  const size_t Fe = static_cast<size_t>(test.features()), chunk = 512;
  const std::vector<int64_t> row =
      p.row_shape.empty() ? std::vector<int64_t>{test.features()} : p.row_shape;
  typename Interpreter<F>::Values base;
  for (const auto& [name, t] : m.initializers) base[name] = Interpreter<F>::convert(t);
  size_t right = 0;
  for (size_t r0 = 0; r0 < test.rows(); r0 += chunk) {
    const size_t n = std::min(chunk, test.rows() - r0);
    auto vals = base;
    std::vector<int64_t> shape{static_cast<int64_t>(n)};
    shape.insert(shape.end(), row.begin(), row.end());
    Tensor<F> x{shape, {}, Elem::float32};
    for (size_t k = 0; k < n * Fe; ++k) x.v.push_back(static_cast<F>(test.x[r0 * Fe + k]));
    vals[p.input] = std::move(x);
    Interpreter<F>::run(m, vals);
    const Tensor<F>& out = vals.at(m.outputs[0]);
    const size_t C = out.size() / n;
    for (size_t b = 0; b < n; ++b) {
      const F* o = &out.v[b * C];
      right += static_cast<size_t>(std::max_element(o, o + C) - o) ==
               static_cast<size_t>(test.y[r0 + b]);
    }
  }
  return static_cast<double>(right) / static_cast<double>(test.rows());
}

// The samples' mean weights in the order the graph first reads them, flattened.
template <class T>
std::vector<double> flat_mean(const Plan& p, const Values<T>& params) {
  std::vector<double> w;
  for (const auto& name : p.params)
    for (const T& v : params.at(name).v) w.push_back(mean_of(v));
  return w;
}

// Sharpness (the largest Hessian eigenvalue of the mean data loss) at the weights `w`, over the
// training rows (the first 1,024 when the run trains on batches of a larger set), in double.
double sharpness_at(const Model& m, const Plan& p, const TrainOptions& o,
                    const monitor::Dataset& train, const std::vector<double>& w, int64_t step) {
  cestac::NearestScope nearest;
  monitor::Dataset rows = train;
  if (o.batch > 0 && train.rows() > 1024) {
    rows.x.resize(1024 * static_cast<size_t>(train.features()));
    rows.y.resize(1024);
  }
  TrainOptions full = o;
  full.batch = 0;
  full.trace = false;
  Trainer<double> t(m, p, full, rows);
  return monitor::power_sharpness(
      w, [&](const std::vector<double>& x) { return t.gradient_at(x); }, o.sharpness_iters,
      o.seed ^ static_cast<uint64_t>(step) * 0x73686172);
}

template <class F>
TrainReport train_as(const Model& m, const monitor::Split& data, const TrainOptions& o) {
  using S = Stoch<F, 3>;
  const auto t0 = std::chrono::steady_clock::now();
  const Plan p = plan_of(m);
  TrainReport r;
  r.model = m.path;
  r.data = data.train.name;
  r.precision = std::is_same_v<F, double> ? "f64" : "f32";
  r.options = o;
  r.input = p.input;
  r.logits = p.logits;
  r.softmax_skipped = p.softmax_skipped;
  r.params = p.params;
  for (const auto& name : p.params) r.param_count += m.initializers.at(name).size();
  std::optional<Values<S>> params;
  {
    cestac::Run run(o.seed, 0, cestac::Config{cestac::kDefaultCancelDigits, true});
    Trainer<S> t(m, p, o, data.train);
    const auto ts = std::chrono::steady_clock::now();
    for (int64_t k = 0; k < o.steps; ++k) {
      const bool sharp = o.sharpness_every > 0 && (k % o.sharpness_every == 0 || k == o.steps - 1);
      const double lambda =
          sharp ? sharpness_at(m, p, o, data.train, flat_mean(p, t.params()), k) : NAN;
      r.steps.push_back(t.step(k));
      r.steps.back().lambda = lambda;
      if (!std::isfinite(r.steps.back().loss)) {
        r.diverged_at = k;
        break;
      }
    }
    r.seconds_per_step =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - ts).count() /
        static_cast<double>(r.steps.size());
    r.ops = t.trace().stats();
    r.polluting = t.trace().polluting();
    params = t.params();
  }
  r.trained = with_params(m, *params, -1);
  r.test_accuracy_mean = accuracy<F>(r.trained, p, data.test);
  for (int k = 0; k < S::kSamples; ++k)
    r.test_accuracy.push_back(accuracy<F>(with_params(m, *params, k), p, data.test));
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

template <class F>
std::vector<double> native_as(const Model& m, const monitor::Split& data, const TrainOptions& o,
                              double* seconds_per_step, double* test_accuracy) {
  const Plan p = plan_of(m);
  Trainer<F> t(m, p, o, data.train);
  std::vector<double> losses;
  const auto t0 = std::chrono::steady_clock::now();
  for (int64_t k = 0; k < o.steps; ++k) losses.push_back(t.step(k).loss);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (seconds_per_step) *seconds_per_step = o.steps > 0 ? s / static_cast<double>(o.steps) : 0;
  if (test_accuracy) *test_accuracy = accuracy<F>(with_params(m, t.params(), 0), p, data.test);
  return losses;
}

}  // namespace

Optimizer parse_optimizer(const std::string& s) {
  if (s == "sgd") return Optimizer::sgd;
  if (s == "adam") return Optimizer::adam;
  throw InputError("unknown optimizer '" + s + "' (sgd, adam)");
}

const char* optimizer_name(Optimizer o) { return o == Optimizer::sgd ? "sgd" : "adam"; }

void check_trainable(const Model& m, const TrainOptions& o) {
  auto positive = [](double x) { return x > 0 && std::isfinite(x); };
  if (!positive(o.lr)) throw InputError("--lr must be positive");
  if (o.steps < 1) throw InputError("--steps must be at least 1");
  if (o.batch < 0) throw InputError("--batch must not be negative");
  if (!(o.momentum >= 0 && o.momentum < 1)) throw InputError("--momentum must be in [0, 1)");
  if (!(o.weight_decay >= 0) || !std::isfinite(o.weight_decay))
    throw InputError("--weight-decay must not be negative");
  if (o.optimizer == Optimizer::adam && o.momentum > 0)
    throw InputError("--momentum is SGD's; Adam keeps its own moments");
  if (o.k < 1 || o.k > 1000) throw InputError("k must be a whole number 1..1000");
  const Plan p = plan_of(m);
  if (p.params.empty()) throw InputError(m.path + ": the graph has no floating-point weights");
  check_differentiable(m, p);
}

TrainReport train(const Model& m, const monitor::Split& data, const TrainOptions& o) {
  check_trainable(m, o);
  if (data.train.rows() == 0) throw InputError("empty training set");
  return o.f64 ? train_as<double>(m, data, o) : train_as<float>(m, data, o);
}

std::vector<double> train_native(const Model& m, const monitor::Split& data, const TrainOptions& o,
                                 double* seconds_per_step, double* test_accuracy) {
  check_trainable(m, o);
  return o.f64 ? native_as<double>(m, data, o, seconds_per_step, test_accuracy)
               : native_as<float>(m, data, o, seconds_per_step, test_accuracy);
}

}  // namespace stabfuzz::onnx
