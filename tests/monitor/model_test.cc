// Models: gradients against finite differences, CESTAC against native, sharpness against the
// explicit Hessian, and the planted naive cross-entropy named as the polluting operation.
#include "harness/monitor/model.h"

#include <gtest/gtest.h>

#include <cmath>

#include "harness/monitor/train.h"
#include "stabfuzz/entropy.h"

namespace stabfuzz::monitor {
namespace {

struct Fixture {
  ModelSpec spec;
  std::vector<double> x;
  std::vector<int> y;
  int B = 6;
};

Fixture fixture(ModelKind kind, int h, int w, int hidden, uint64_t seed) {
  Fixture f;
  f.spec.kind = kind;
  f.spec.height = h;
  f.spec.width = w;
  f.spec.hidden = hidden;
  f.spec.channels = 2;
  f.spec.classes = 4;
  SeededEntropy e(seed, 7);
  for (int i = 0; i < f.B * h * w; ++i) f.x.push_back(e.uniform(0, 1));
  for (int b = 0; b < f.B; ++b) f.y.push_back(static_cast<int>(e.below(4)));
  return f;
}

std::vector<double> flat(const Params<double>& p) {
  std::vector<double> v;
  for (int i = 0; i < 4; ++i) v.insert(v.end(), p.tensor(i).begin(), p.tensor(i).end());
  return v;
}

double& at(Params<double>& p, size_t k) {
  for (int i = 0; i < 4; ++i) {
    if (k < p.tensor(i).size()) return p.tensor(i)[k];
    k -= p.tensor(i).size();
  }
  return p.w1[0];
}

void check_gradient(ModelKind kind, LossKind loss) {
  const Fixture f = fixture(kind, 5, 6, 7, 3);
  Params<double> p = init_params(f.spec, 11, false);
  for (double& v : p.w2) v *= 3;  // larger logits: the softmax away from uniform
  Trace off(2, false);
  Workspace<double> ws;
  Params<double> g;
  loss_and_grad(f.spec, p, f.x.data(), f.y.data(), f.B, loss, &g, ws, off);
  const std::vector<double> analytic = flat(g);
  const double h = 1e-6;
  for (size_t k = 0; k < analytic.size(); ++k) {
    Params<double> q = p;
    at(q, k) += h;
    const double lp = loss_and_grad(f.spec, q, f.x.data(), f.y.data(), f.B, loss,
                                    static_cast<Params<double>*>(nullptr), ws, off);
    at(q, k) -= 2 * h;
    const double lm = loss_and_grad(f.spec, q, f.x.data(), f.y.data(), f.B, loss,
                                    static_cast<Params<double>*>(nullptr), ws, off);
    const double fd = (lp - lm) / (2 * h);
    // Central differences at h = 1e-6: truncation ~h^2 |f'''| and rounding ~u |f| / h, both
    // below 1e-8 here.
    EXPECT_NEAR(analytic[k], fd, 1e-7 + 1e-6 * std::fabs(fd)) << "parameter " << k;
  }
}

TEST(ModelTest, MlpGradientsMatchFiniteDifferences) {
  check_gradient(ModelKind::mlp, LossKind::ce);
  check_gradient(ModelKind::mlp, LossKind::mse);
  check_gradient(ModelKind::mlp, LossKind::ce_naive);
}

TEST(ModelTest, CnnGradientsMatchFiniteDifferences) {
  check_gradient(ModelKind::cnn, LossKind::ce);
  check_gradient(ModelKind::cnn, LossKind::mse);
}

TEST(ModelTest, CestacLossAgreesWithNative) {
  const Fixture f = fixture(ModelKind::mlp, 4, 4, 5, 5);
  const Params<double> p = init_params(f.spec, 2, false);
  Trace off(2, false);
  Workspace<double> wd;
  const double native = loss_and_grad(f.spec, p, f.x.data(), f.y.data(), f.B, LossKind::ce,
                                      static_cast<Params<double>*>(nullptr), wd, off);
  using S = Stoch<double, 3>;
  cestac::Run run(9, 0);
  Params<S> ps;
  for (int i = 0; i < 4; ++i)
    for (double v : p.tensor(i)) ps.tensor(i).push_back(S(v));
  std::vector<S> xs(f.x.begin(), f.x.end());
  Trace tr(2, true);
  Workspace<S> ws;
  Params<S> g;
  const S l = loss_and_grad(f.spec, ps, xs.data(), f.y.data(), f.B, LossKind::ce, &g, ws, tr);
  EXPECT_NEAR(l.mean(), native, 1e-13 * native);
  EXPECT_GT(l.digits(), 12);
  // Every operation of the pass reported its digits, in execution order.
  ASSERT_GE(tr.stats().size(), 10u);
  EXPECT_EQ(tr.stats()[0].layer, "fc1");
  EXPECT_EQ(tr.stats()[0].phase, Phase::forward);
  EXPECT_NE(tr.stats()[0].site.find("harness/monitor/model.h:"), std::string::npos)
      << tr.stats()[0].site;
  EXPECT_FALSE(tr.polluting().has_value());
}

// Jacobi eigenvalues of a symmetric matrix (n small): the largest magnitude.
double largest_eigenvalue(std::vector<std::vector<double>> a) {
  const size_t n = a.size();
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0;
    for (size_t p = 0; p < n; ++p)
      for (size_t q = p + 1; q < n; ++q) off += a[p][q] * a[p][q];
    if (off < 1e-22) break;
    for (size_t p = 0; p < n; ++p)
      for (size_t q = p + 1; q < n; ++q) {
        if (std::fabs(a[p][q]) < 1e-300) continue;
        const double theta = (a[q][q] - a[p][p]) / (2 * a[p][q]);
        const double t = (theta >= 0 ? 1 : -1) / (std::fabs(theta) + std::sqrt(theta * theta + 1));
        const double c = 1 / std::sqrt(t * t + 1), s = t * c;
        for (size_t k = 0; k < n; ++k) {
          const double akp = a[k][p], akq = a[k][q];
          a[k][p] = c * akp - s * akq;
          a[k][q] = s * akp + c * akq;
        }
        for (size_t k = 0; k < n; ++k) {
          const double apk = a[p][k], aqk = a[q][k];
          a[p][k] = c * apk - s * aqk;
          a[q][k] = s * apk + c * aqk;
        }
      }
  }
  double best = 0;
  for (size_t i = 0; i < n; ++i)
    if (std::fabs(a[i][i]) > std::fabs(best)) best = a[i][i];
  return best;
}

TEST(ModelTest, SharpnessMatchesExplicitHessian) {
  const Fixture f = fixture(ModelKind::mlp, 3, 3, 2, 8);
  const Params<double> p = init_params(f.spec, 4, false);
  Dataset d;
  d.height = d.width = 3;
  d.classes = 4;
  d.x = f.x;
  d.y = f.y;
  // The explicit Hessian by central differences of gradients, symmetrized.
  Trace off(2, false);
  Workspace<double> ws;
  auto grad = [&](const Params<double>& q) {
    Params<double> g;
    loss_and_grad(f.spec, q, d.x.data(), d.y.data(), f.B, LossKind::ce, &g, ws, off);
    return flat(g);
  };
  const size_t n = flat(p).size();
  std::vector<std::vector<double>> hm(n, std::vector<double>(n));
  for (size_t j = 0; j < n; ++j) {
    Params<double> a = p, b = p;
    at(a, j) += 1e-5;
    at(b, j) -= 1e-5;
    const auto ga = grad(a), gb = grad(b);
    for (size_t i = 0; i < n; ++i) hm[i][j] = (ga[i] - gb[i]) / 2e-5;
  }
  for (size_t i = 0; i < n; ++i)
    for (size_t j = i + 1; j < n; ++j) hm[i][j] = hm[j][i] = (hm[i][j] + hm[j][i]) / 2;
  const double exact = largest_eigenvalue(hm);
  const double power = sharpness(f.spec, LossKind::ce, p, d, 200, 1);
  EXPECT_NEAR(power, exact, 1e-4 * std::fabs(exact)) << "explicit " << exact;
  EXPECT_GT(std::fabs(exact), 0.0);
}

}  // namespace
}  // namespace stabfuzz::monitor
