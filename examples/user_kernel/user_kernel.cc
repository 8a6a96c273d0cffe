// A kernel as a user writes it, a template over the scalar type, run once natively and once with
// stabfuzz's CESTAC type. The variance of a mean-shifted row by the textbook one-pass formula
// E[x^2] - E[x]^2 loses most of its digits to cancellation; the two-pass formula keeps them.
// CESTAC says so without any reference value: the exact significant digits of each result and
// the file:line of every unstable operation.
//
// Output: one line per kernel and type, then the sites; the same with GCC and Clang (a test
// compares them; C++ leaves the order of an expression's operands to the compiler).
#include <cinttypes>
#include <cstdio>
#include <vector>

#include "stabfuzz/stoch.h"

template <class T>
T variance_one_pass(const std::vector<T>& x) {
  T s = 0, s2 = 0;
  for (const T& v : x) {
    s += v;
    s2 += v * v;
  }
  const T n = static_cast<T>(x.size());
  const T mean = s / n, mean_sq = s2 / n;  // named: each draws its random bits in this order
  return mean_sq - mean * mean;
}

template <class T>
T variance_two_pass(const std::vector<T>& x) {
  T s = 0;
  for (const T& v : x) s += v;
  const T mean = s / static_cast<T>(x.size());
  T d2 = 0;
  for (const T& v : x) {
    const T d = v - mean;
    d2 += d * d;
  }
  return d2 / static_cast<T>(x.size());
}

// x_i = shift + (i mod 7) / 8: a spread of about 0.25 around a large mean.
template <class T>
std::vector<T> row(double shift, int n) {
  std::vector<T> x;
  for (int i = 0; i < n; ++i) x.push_back(static_cast<T>(shift + (i % 7) / 8.0));
  return x;
}

template <class T>
void report(const char* type, double shift) {
  using S = stabfuzz::cestac::Stoch<T, 3>;
  const auto native = row<T>(shift, 1000);
  const auto stoch = row<S>(shift, 1000);
  stabfuzz::cestac::Run run(/*seed=*/1, /*stream=*/0);
  const S one = variance_one_pass(stoch);
  const S two = variance_two_pass(stoch);
  std::printf("%s one_pass native %.9g cestac %.9g digits %.1f\n", type,
              static_cast<double>(variance_one_pass(native)), static_cast<double>(one.mean()),
              one.digits());
  std::printf("%s two_pass native %.9g cestac %.9g digits %.1f\n", type,
              static_cast<double>(variance_two_pass(native)), static_cast<double>(two.mean()),
              two.digits());
  const auto& log = run.log();
  for (const auto& site : log.sites)
    std::printf("%s  %s x%" PRIu64 " at %s\n", type,
                std::string(stabfuzz::cestac::kind_name(site.kind)).c_str(), site.count,
                stabfuzz::cestac::symbolize(site.address).c_str());
}

int main() {
  report<double>("f64", 1e6);
  report<float>("f32", 1e3);
  return 0;
}
