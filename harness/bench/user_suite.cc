// The user-code suite: user_kernels.h instantiated natively, as Stoch<T, 3> and as Stoch<T, 3,
// Rounding::updown>, timed in alternating chunks of thread CPU time.
#include "harness/bench/user_suite.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <memory>
#include <ostream>
#include <sstream>

#include "harness/bench/bench.h"
#include "harness/bench/user_kernels.h"
#include "stabfuzz/cestac.h"
#include "stabfuzz/entropy.h"
#include "stabfuzz/lowp.h"
#include "stabfuzz/stoch.h"

namespace stabfuzz::bench {
namespace {

// Every kernel's inputs as doubles, drawn once from one seed so that each scalar type computes on
// the nearest values of the same data. Magnitudes are chosen so that no kernel overflows in f16
// (65504): a one-pass variance of 4096 values of mean 10 would (sum of squares 4e5).
struct Inputs {
  std::vector<double> wide;   // softmax, logsumexp: N(0, 3)
  std::vector<double> moved;  // layer_norm and the variances: N(1, 1)
  std::vector<double> gamma, beta;
  std::vector<double> x, y;                          // dot
  std::vector<double> a, b;                          // gemm
  std::vector<double> q, k, v;                       // attention
  std::vector<double> w1, b1, w2, b2, mlp_x, mlp_t;  // the MLP and its batch
};

std::vector<double> draw(SeededEntropy& e, std::size_t n, double shift, double scale) {
  std::vector<double> v(n);
  for (auto& d : v) d = shift + scale * e.normal();
  return v;
}

Inputs draw_inputs(const UserSizes& z) {
  SeededEntropy e(23, 0);
  Inputs in;
  in.wide = draw(e, z.n, 0, 3);
  in.moved = draw(e, z.n, 1, 1);
  in.gamma = draw(e, z.n, 1, 0.1);
  in.beta = draw(e, z.n, 0, 0.1);
  in.x = draw(e, z.n, 0, 1);
  in.y = draw(e, z.n, 0, 1);
  in.a = draw(e, z.gemm * z.gemm, 0, 1);
  in.b = draw(e, z.gemm * z.gemm, 0, 1);
  for (auto* m : {&in.q, &in.k, &in.v}) *m = draw(e, z.seq * z.head, 0, 1);
  const std::size_t w = z.mlp_width;
  const double init = 1 / std::sqrt(static_cast<double>(w));  // keeps tanh out of saturation
  in.w1 = draw(e, w * w, 0, init);
  in.b1 = draw(e, w, 0, 0.1);
  in.w2 = draw(e, w * w, 0, init);
  in.b2 = draw(e, w, 0, 0.1);
  in.mlp_x = draw(e, z.mlp_batch * w, 0, 1);
  in.mlp_t = draw(e, z.mlp_batch * w, 0, 1);
  return in;
}

// The nearest values of S (the range constructor converts each element with S(double)).
template <class S>
std::vector<S> as(const std::vector<double>& v) {
  return std::vector<S>(v.begin(), v.end());
}

template <class S>
void append(std::vector<double>& out, const std::vector<S>& v) {
  for (const S& s : v) out.push_back(static_cast<double>(s));  // Stoch: the samples' mean
}

// Operands and result of one call; the result stays observable, so no call is dead code.
template <class S>
struct Buffers {
  std::vector<S> x, y, gamma, beta, out;
};

template <class S, class Fn>
UserCase buffers_case(const char* name, std::shared_ptr<Buffers<S>> b, Fn fn) {
  return {name, [b, fn] { fn(*b); },
          [b] {
            std::vector<double> r;
            append(r, b->out);
            return r;
          }};
}

template <class S>
void add_vector_cases(const Inputs& in, std::vector<UserCase>& out) {
  auto make = [](const std::vector<double>& x, std::size_t out_size) {
    auto b = std::make_shared<Buffers<S>>();
    b->x = as<S>(x);
    b->out.assign(out_size, S(0));
    return b;
  };
  const std::size_t n = in.wide.size();
  out.push_back(buffers_case<S>("softmax", make(in.wide, n),
                                [](Buffers<S>& b) { user::softmax(b.x, b.out); }));
  out.push_back(buffers_case<S>("logsumexp", make(in.wide, 1),
                                [](Buffers<S>& b) { b.out[0] = user::logsumexp(b.x); }));
  auto ln = make(in.moved, n);
  ln->gamma = as<S>(in.gamma);
  ln->beta = as<S>(in.beta);
  out.push_back(buffers_case<S>("layer_norm", ln, [eps = S(1e-5)](Buffers<S>& b) {
    user::layer_norm(b.x, b.gamma, b.beta, eps, b.out);
  }));
  out.push_back(buffers_case<S>("variance_one_pass", make(in.moved, 1),
                                [](Buffers<S>& b) { b.out[0] = user::variance_one_pass(b.x); }));
  out.push_back(buffers_case<S>("variance_two_pass", make(in.moved, 1),
                                [](Buffers<S>& b) { b.out[0] = user::variance_two_pass(b.x); }));
  out.push_back(buffers_case<S>("variance_welford", make(in.moved, 1),
                                [](Buffers<S>& b) { b.out[0] = user::variance_welford(b.x); }));
  auto d = make(in.x, 1);
  d->y = as<S>(in.y);
  out.push_back(buffers_case<S>("dot", d, [](Buffers<S>& b) { b.out[0] = user::dot(b.x, b.y); }));
}

template <class S>
void add_matrix_cases(const Inputs& in, const UserSizes& z, std::vector<UserCase>& out) {
  auto g = std::make_shared<Buffers<S>>();
  g->x = as<S>(in.a);
  g->y = as<S>(in.b);
  g->out.assign(z.gemm * z.gemm, S(0));
  out.push_back(buffers_case<S>(
      "gemm_128", g, [m = z.gemm](Buffers<S>& b) { user::gemm(b.x, b.y, b.out, m, m, m); }));
  // Attention: Q in x, K in gamma, V in beta (Buffers' names are only slots here).
  auto att = std::make_shared<Buffers<S>>();
  att->x = as<S>(in.q);
  att->gamma = as<S>(in.k);
  att->beta = as<S>(in.v);
  att->out.assign(z.seq * z.head, S(0));
  out.push_back(buffers_case<S>("attention", att, [seq = z.seq, d = z.head](Buffers<S>& b) {
    user::attention(b.x, b.gamma, b.beta, seq, d, b.out);
  }));
  struct MlpData {
    user::Mlp<S> net;
    std::vector<S> x, t;
    user::MlpGrads<S> grads;
    S loss = S(0);
  };
  auto mlp = std::make_shared<MlpData>();
  mlp->net = {z.mlp_width,  z.mlp_width,  z.mlp_width, as<S>(in.w1),
              as<S>(in.b1), as<S>(in.w2), as<S>(in.b2)};
  mlp->x = as<S>(in.mlp_x);
  mlp->t = as<S>(in.mlp_t);
  out.push_back(
      {"mlp_step",
       [mlp, batch = z.mlp_batch] {
         mlp->loss = user::mlp_step(mlp->net, mlp->x, mlp->t, batch, mlp->grads);
       },
       [mlp] {
         std::vector<double> r{static_cast<double>(mlp->loss)};
         for (const auto* v : {&mlp->grads.w1, &mlp->grads.b1, &mlp->grads.w2, &mlp->grads.b2})
           append(r, *v);
         return r;
       }});
}

template <class S>
std::vector<UserCase> cases_of(const UserSizes& z) {
  const Inputs in = draw_inputs(z);
  std::vector<UserCase> out;
  add_vector_cases<S>(in, out);
  add_matrix_cases<S>(in, z, out);
  return out;
}

template <class T>
std::vector<UserCase> native_or_cestac(bool cestac, const UserSizes& z) {
  return cestac ? cases_of<Stoch<T, 3>>(z) : cases_of<T>(z);
}
template <class T>
std::vector<UserCase> updown_of(const UserSizes& z) {
  return cases_of<Stoch<T, 3, cestac::Rounding::updown>>(z);
}

// Mean thread-CPU microseconds per call, over calls repeated for at least `seconds` (one at least).
double time_chunk(const std::function<void()>& call, double seconds) {
  int64_t calls = 0;
  const double t0 = cpu_seconds();
  double elapsed = 0;
  do {
    call();
    ++calls;
    elapsed = cpu_seconds() - t0;
  } while (elapsed < seconds);
  return elapsed / static_cast<double>(calls) * 1e6;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : (v[h - 1] + v[h]) / 2;
}

// Native and CESTAC chunks alternate, so that both see the same machine (frequency, other
// processes' load, cache state); each side keeps all its chunks for the min and the median.
UserRow measure_row(const UserCase& native, const UserCase& cestac, const UserCase& updown,
                    const UserOptions& opts, double chunk_s) {
  cestac::Config config;
  config.detect = opts.detect;
  cestac::Config updown_config = config;
  updown_config.rounding = cestac::Rounding::updown;
  // Warm-up (first-touch pages, allocations inside the kernel, caches), timed: a row whose single
  // calls outlast its share of the budget (f16/bf16 gemm: about a second under CESTAC) gets fewer
  // repeats, never under five, so that the suite stays near its budget.
  const double warm_native_s = time_chunk(native.call, 0) * 1e-6;
  double warm_cestac_s = 0;
  {
    cestac::Run run(1, 1, config);
    warm_cestac_s = time_chunk(cestac.call, 0) * 1e-6;
  }
  const double row_budget_s = 2 * chunk_s * opts.repeats;
  const int repeats = std::clamp(static_cast<int>(row_budget_s / (warm_native_s + warm_cestac_s)),
                                 std::min(5, opts.repeats), opts.repeats);
  std::vector<double> tn, tc, tu;
  for (int r = 0; r < repeats; ++r) {
    tn.push_back(time_chunk(native.call, chunk_s));
    {
      cestac::Run run(1, 1, config);
      tc.push_back(time_chunk(cestac.call, chunk_s));
    }
    cestac::Run run(1, 1, updown_config);  // round toward +inf only around the Stoch calls
    tu.push_back(time_chunk(updown.call, chunk_s));
  }
  UserRow row;
  row.kernel = native.kernel;
  row.repeats = repeats;
  row.native_min_us = *std::min_element(tn.begin(), tn.end());
  row.cestac_min_us = *std::min_element(tc.begin(), tc.end());
  row.native_median_us = median(tn);
  row.cestac_median_us = median(tc);
  row.updown_min_us = *std::min_element(tu.begin(), tu.end());
  row.updown_median_us = median(tu);
  return row;
}

// The dtypes of `rows`, in their order.
std::vector<std::string> dtypes_of(const std::vector<UserRow>& rows) {
  std::vector<std::string> dtypes;
  for (const auto& r : rows)
    if (std::find(dtypes.begin(), dtypes.end(), r.dtype) == dtypes.end()) dtypes.push_back(r.dtype);
  return dtypes;
}

}  // namespace

std::vector<UserCase> user_cases(DType d, bool cestac, const UserSizes& sizes) {
  switch (d) {
    case DType::f64:
      return native_or_cestac<double>(cestac, sizes);
    case DType::f32:
      return native_or_cestac<float>(cestac, sizes);
    case DType::f16:
      return native_or_cestac<Half>(cestac, sizes);
    case DType::bf16:
      return native_or_cestac<BFloat16>(cestac, sizes);
  }
  return {};
}

std::vector<UserCase> user_updown_cases(DType d, const UserSizes& sizes) {
  switch (d) {
    case DType::f64:
      return updown_of<double>(sizes);
    case DType::f32:
      return updown_of<float>(sizes);
    case DType::f16:
      return updown_of<Half>(sizes);
    case DType::bf16:
      return updown_of<BFloat16>(sizes);
  }
  return {};
}

std::vector<std::string> user_kernel_names() {
  std::vector<std::string> names;
  for (const auto& c : user_cases(DType::f64, false, UserSizes{64, 4, 4, 4, 4, 2}))
    names.push_back(c.kernel);
  return names;
}

std::vector<UserRow> run_user_suite(const UserOptions& opts, std::ostream& progress) {
  const double rows = static_cast<double>(opts.dtypes.size() * user_kernel_names().size());
  const double chunk_s = opts.budget_s / (rows * 3 * std::max(opts.repeats, 1));
  std::vector<UserRow> out;
  for (DType d : opts.dtypes) {
    const auto native = user_cases(d, false, opts.sizes);
    const auto cestac = user_cases(d, true, opts.sizes);
    const auto updown = user_updown_cases(d, opts.sizes);
    for (std::size_t i = 0; i < native.size(); ++i) {
      UserRow row = measure_row(native[i], cestac[i], updown[i], opts, chunk_s);
      row.dtype = std::string(dtype_name(d));
      progress << "  " << row.kernel << " " << row.dtype << ": native " << row.native_min_us
               << " us, cestac " << row.cestac_min_us << " us (min), ratio " << row.ratio_min()
               << " min, " << row.ratio_median() << " median; updown " << row.updown_ratio_min()
               << " min" << std::endl;
      out.push_back(std::move(row));
    }
  }
  return out;
}

double user_geomean(const std::vector<UserRow>& rows, const std::string& dtype, bool median,
                    bool updown) {
  double log_sum = 0;
  int n = 0;
  for (const auto& r : rows)
    if (r.dtype == dtype) {
      const double ratio = updown ? (median ? r.updown_ratio_median() : r.updown_ratio_min())
                                  : (median ? r.ratio_median() : r.ratio_min());
      log_sum += std::log(ratio);
      ++n;
    }
  return n ? std::exp(log_sum / n) : 0.0;
}

void print_user_table(const std::vector<UserRow>& rows, std::ostream& os) {
  auto num = [](double v, int prec) {
    std::ostringstream s;
    s << std::fixed << std::setprecision(prec) << v;
    return s.str();
  };
  os << std::left << std::setw(19) << "kernel" << std::setw(6) << "dtype" << std::right
     << std::setw(12) << "native_us" << std::setw(12) << "cestac_us" << std::setw(11) << "ratio_min"
     << std::setw(11) << "ratio_med" << std::setw(12) << "updown_us" << std::setw(11) << "ud_ratio"
     << std::setw(6) << "reps"
     << "   (us per call: min over reps)\n";
  for (const auto& r : rows)
    os << std::left << std::setw(19) << r.kernel << std::setw(6) << r.dtype << std::right
       << std::setw(12) << num(r.native_min_us, 2) << std::setw(12) << num(r.cestac_min_us, 2)
       << std::setw(11) << num(r.ratio_min(), 2) << std::setw(11) << num(r.ratio_median(), 2)
       << std::setw(12) << num(r.updown_min_us, 2) << std::setw(11) << num(r.updown_ratio_min(), 2)
       << std::setw(6) << r.repeats << "\n";
  for (const auto& d : dtypes_of(rows))
    os << "geomean ratio " << d << ": " << num(user_geomean(rows, d, false), 2) << " (min), "
       << num(user_geomean(rows, d, true), 2) << " (median); updown "
       << num(user_geomean(rows, d, false, true), 2) << " (min)\n";
}

json::Value user_to_json(const std::vector<UserRow>& rows) {
  json::Value out;
  out.set("suite", "user");
  out.set("cestac", "Stoch<T, 3> of the same template, detection on; thread CPU time per call");
  out.set("updown", "Stoch<T, 3, Rounding::updown> (CADNA's up-or-down rounding), the same way");
  json::Array arr;
  for (const auto& r : rows) {
    json::Value j;
    j.set("kernel", r.kernel);
    j.set("dtype", r.dtype);
    j.set("repeats", static_cast<double>(r.repeats));
    j.set("native_min_us", r.native_min_us);
    j.set("native_median_us", r.native_median_us);
    j.set("cestac_min_us", r.cestac_min_us);
    j.set("cestac_median_us", r.cestac_median_us);
    j.set("ratio_min", r.ratio_min());
    j.set("ratio_median", r.ratio_median());
    j.set("updown_min_us", r.updown_min_us);
    j.set("updown_median_us", r.updown_median_us);
    j.set("updown_ratio_min", r.updown_ratio_min());
    arr.push_back(std::move(j));
  }
  out.set("rows", std::move(arr));
  json::Value geo;
  for (const auto& d : dtypes_of(rows)) {
    json::Value g;
    g.set("min", user_geomean(rows, d, false));
    g.set("median", user_geomean(rows, d, true));
    g.set("updown_min", user_geomean(rows, d, false, true));
    geo.set(d, std::move(g));
  }
  out.set("geomean_ratio", std::move(geo));
  return out;
}

}  // namespace stabfuzz::bench
