// The per-row algorithms of the CUDA row kernels softmax, log_softmax, layer_norm, rms_norm, sum
// and var, attention's row, and gemm's dot product (pairwise_terms), written once over the scalar
// type (float, double, DStoch) and over a Row: the block's collective steps. They are the CPU
// references' algorithms (targets/cpu/softmax.h SoftmaxStable, targets/cpu/normalization.h
// shifted_lse, layer_norm_row and scaled_normalize, targets/cpu/reductions.h SumStable and
// VarianceStable) with the block's reductions in place of pairwise_sum.
//
// A Row offers n (the row length) and
//   each(f)    f(j) for the calling thread's chunk of [0, n) (in order)
//   sum(f)     sum_j f(j): each thread its chunk in order, then the block's tree
//   max(f)     max_j f(j), likewise
//   argmax(skip, f)  the index of the largest f(j), j != skip, the first on ties (-1: none)
//   strided(count, f)  f(l) for l = thread, thread + B, ... below count (B threads)
//   sync()     a barrier after each() wrote what other threads read (each(), sum() and max()
//              visit the same chunks, so a thread that reads back only its own needs none)
//   leader(f)  f() in thread 0 only
// On the device it is DeviceRow (kernels_device.cuh); on the host HostRow (host_row.h), which
// replays a block's reductions in the device's order, so that tests run these algorithms on the
// CPU. Compiled by nvcc (device code) and by any C++ compiler (host code).
#pragma once

#include <type_traits>

#include "stabfuzz/gpu/dstoch.cuh"

#if defined(__CUDACC__)
#define SF_ROW __device__ __forceinline__
#else
#define SF_ROW inline
#endif

namespace stabfuzz::gpu {

template <class T>
SF_ROW T square(const T& v) {  // 0 for a (computational) zero, as on the CPU
  return v == T(0) ? T(0) : v * v;
}
template <class T>
SF_ROW double first_sample(const T& v) {
  if constexpr (std::is_arithmetic<T>::value)
    return v;
  else
    return v.s[0];
}
// v * 2^k in representable steps (targets/cpu/reduce.h scale_pow2): exact unless the result
// over- or underflows, rounded once at the end.
template <class T>
SF_ROW T scale_pow2(T v, long k) {
  using B = scalar_of_t<T>;
  constexpr long kHi = sizeof(B) == 8 ? 1023 : 127, kLo = sizeof(B) == 8 ? -1074 : -149;
  while (k > kHi || k < kLo) {
    const long step = k > kHi ? (k - kHi < kHi ? k - kHi : kHi) : (k - kLo > kLo ? k - kLo : kLo);
    v = v * T(static_cast<B>(ldexp(1.0, static_cast<int>(step))));
    k -= step;
  }
  return v * T(static_cast<B>(ldexp(1.0, static_cast<int>(k))));
}
// k with m 2^k in [1, 2) for an exact finite m > 0 (the CPU's pow2_exponent).
template <class T>
SF_ROW long pow2_exponent(const T& m) {
  return -static_cast<long>(ilogb(first_sample(m)));
}

// term(0) + term(1) + ... + term(len - 1) in that order (len >= 1).
template <class T, class F>
SF_ROW T ordered_sum(int len, F term) {
  T s = term(0);
  for (int l = 1; l < len; ++l) s = s + term(l);
  return s;
}

// Sums of chunks of 8 pushed in order, combined pairwise by a binary counter (at most 2^16 chunks).
template <class T>
struct PairwiseAcc {
  T level[17];
  unsigned count = 0;
  SF_ROW void push(T v) {
    unsigned c = count++;
    int l = 0;
    for (; c & 1u; c >>= 1, ++l) v = level[l] + v;
    level[l] = v;
  }
  SF_ROW T result() const {
    T r = T(0);
    bool have = false;
    for (int l = 0; l < 17; ++l)
      if ((count >> l) & 1u) r = have ? level[l] + r : level[l], have = true;
    return r;
  }
};
// sum_{l < n} term(l): chunks of 8 in order, chunks pairwise (gemm's and attention's dots; the
// gemm kernel runs the same arithmetic on its shared-memory tiles).
template <class T, class F>
SF_ROW T pairwise_terms(int n, F term) {
  PairwiseAcc<T> acc;
  for (int c = 0; c < n; c += 8) {
    T s = term(c);  // ordered_sum's order, written out: the native kernels keep their registers
    for (int l = c + 1; l < c + 8 && l < n; ++l) s = s + term(l);
    acc.push(s);
  }
  return acc.result();
}

// attention for one query row q_i over the row's n keys (causal: i + 1, else t): scores
// e_l = (q_i . k_l) scale by pairwise_terms, the maximum subtracted, exp, z = sum e (>= 1), and
// o_ij = (sum_l e_l v_lj) / z, the weighted sum by pairwise_terms (the CPU's AttentionStable on
// inputs whose scores and weighted sums stay finite: it rescales where they overflow). `e`: n
// values of scratch.
template <class T, class Row>
SF_ROW void attention_row(Row& row, const scalar_of_t<T>* qi, const scalar_of_t<T>* kk,
                          const scalar_of_t<T>* v, T* oi, T* e, int d, int dv,
                          scalar_of_t<T> scale) {
  row.strided(row.n, [&](int l) {
    const scalar_of_t<T>* kl = kk + static_cast<size_t>(l) * d;
    e[l] = pairwise_terms<T>(d, [&](int c) { return T(qi[c]) * T(kl[c]); }) * T(scale);
  });
  row.sync();
  const T m = row.max([&](int l) { return e[l]; });
  row.each([&](int l) { e[l] = exp(e[l] - m); });    // exponents <= 0
  const T z = row.sum([&](int l) { return e[l]; });  // z >= 1
  row.sync();
  row.strided(dv, [&](int j) {
    const T num = pairwise_terms<T>(
        row.n, [&](int l) { return e[l] * T(v[static_cast<size_t>(l) * dv + j]); });
    oi[j] = num / z;
  });
}

// softmax: the maximum subtracted, exp, the sum (>= 1), a division (the CPU's SoftmaxStable).
template <class T, class Row>
SF_ROW void softmax_row(Row& row, const scalar_of_t<T>* x, T* y) {
  const T m = row.max([&](int j) { return T(x[j]); });
  const T s = row.sum([&](int j) {
    y[j] = exp(T(x[j]) - m);  // exponents <= 0: no overflow
    return y[j];
  });
  row.each([&](int j) { y[j] = y[j] / s; });
}

// log_softmax: y = (x - x_k) - log1p(t), t = sum_{j != k} e^(x_j - x_k) formed as
// e^((x_k2 - x_k) + log u), u = sum_{j != k} e^(x_j - x_k2) around the second largest x_k2 (the
// CPU's shifted_lse and log1p_nonneg).
template <class T, class Row>
SF_ROW void log_softmax_row(Row& row, const scalar_of_t<T>* x, T* y) {
  using B = scalar_of_t<T>;
  auto xv = [&](int j) { return T(x[j]); };
  const int k = row.argmax(-1, xv);
  T l = T(0);
  if (row.n > 1) {
    const int k2 = row.argmax(k, xv);
    const T u = row.sum([&](int j) { return j == k ? T(0) : exp(T(x[j]) - T(x[k2])); });
    const T t = exp((T(x[k2]) - T(x[k])) + log(u));
    l = t < T(B(0x1p-60)) ? t : log1p(t);
  }
  row.each([&](int j) { y[j] = (T(x[j]) - T(x[k])) - l; });
}

// y = c / (S sqrt(mean((c/S)^2) + (eps/S)/S)), S = max(max|c|, sqrt eps); c in y, in place
// (the CPU's scaled_normalize).
template <class T, class Row>
SF_ROW void scaled_normalize_row(Row& row, T* y, T eps) {
  const T m = row.max([&](int j) { return fabs(y[j]); });
  const T r = sqrt(eps);
  const T s = m > r ? m : r;
  const T q = row.sum([&](int j) { return square(y[j] / s); }) / T(double(row.n));
  const T sigma = s * sqrt(q + (eps / s) / s);
  row.each([&](int j) { y[j] = y[j] / sigma; });
}

// 2^-k mean(v 2^k) with max|x| 2^k in [1, 2) (the CPU's scaled_mean): every term in [-4, 4], the
// scaling exact.
template <class T, class Row, class F>
SF_ROW T scaled_mean_row(Row& row, long k, F v) {
  return scale_pow2(row.sum([&](int j) { return scale_pow2(v(j), k); }) / T(double(row.n)), -k);
}

// layer_norm by the corrected two-pass algorithm (the CPU's layer_norm_row): mu1 = mean(x),
// d = x - mu1, mu2 = mean(d), c = d - mu2, both means as 2^-k mean(v 2^k), 2^k max|x| in [1, 2).
template <class T, class Row>
SF_ROW void layer_norm_row(Row& row, const scalar_of_t<T>* x, T* y, T eps) {
  const T s = row.max([&](int j) { return fabs(T(x[j])); });
  if (s == T(0)) {  // a zero row: y = 0
    row.each([&](int j) { y[j] = T(0); });
    return;
  }
  const long k = pow2_exponent(s);  // s is an input: exact
  const T mu1 = scaled_mean_row<T>(row, k, [&](int j) { return T(x[j]); });
  row.each([&](int j) { y[j] = T(x[j]) - mu1; });
  const T mu2 = scaled_mean_row<T>(row, k, [&](int j) { return y[j]; });
  row.each([&](int j) { y[j] = y[j] - mu2; });
  scaled_normalize_row(row, y, eps);
}

template <class T, class Row>
SF_ROW void rms_norm_row(Row& row, const scalar_of_t<T>* x, T* y, T eps) {
  row.each([&](int j) { y[j] = T(x[j]); });
  scaled_normalize_row(row, y, eps);
}

// sum scaled by 2^-32 first when max|x| >= 2^(emax - 32), so no partial sum overflows (the
// CPU's SumStable for f64 and f32); the result in *out (thread 0).
template <class T, class Row>
SF_ROW void sum_row(Row& row, const scalar_of_t<T>* x, T* out) {
  using B = scalar_of_t<T>;
  constexpr int kEmax = sizeof(B) == 8 ? 1023 : 127;
  const T m = row.max([&](int j) { return fabs(T(x[j])); });
  const bool guard = m >= T(B(ldexp(1.0, kEmax - 32)));
  const T down = T(B(0x1p-32)), up = T(B(0x1p32));
  const T s = row.sum([&](int j) { return guard ? T(x[j]) * down : T(x[j]); });
  row.leader([&] { *out = guard ? s * up : s; });
}

// var by the corrected two-pass algorithm on data scaled by 2^k into [1, 2) (the CPU's
// VarianceStable): the mean around x_0, and its rounding error c = sum(x - mean) / n subtracted
// from each centred value before squaring, sum((x - mean - c)^2). Not the equivalent
// s2 - square(s1) / n: under CESTAC s1 is a computational zero, square() drops it, and the result
// carries a bias n c^2 that no sample's spread shows (overclaimed digits). `w`: n values of
// scratch; the result in *out (thread 0).
template <class T, class Row>
SF_ROW void var_row(Row& row, const scalar_of_t<T>* x, T* w, T* out, scalar_of_t<T> correction) {
  const T m = row.max([&](int j) { return fabs(T(x[j])); });
  if (m == T(0)) {
    row.leader([&] { *out = T(0); });
    return;
  }
  const long k = pow2_exponent(m);  // m is an input: exact
  row.each([&](int j) { w[j] = scale_pow2(T(x[j]), k); });
  row.sync();
  const T x0 = w[0];
  const T nn = T(double(row.n));
  const T mean = x0 + row.sum([&](int j) { return w[j] - x0; }) / nn;
  row.each([&](int j) { w[j] = w[j] - mean; });
  const T c = row.sum([&](int j) { return w[j]; }) / nn;  // the mean's rounding error
  const T v =
      row.sum([&](int j) { return square(w[j] - c); }) / T(double(row.n) - double(correction));
  row.leader([&] { *out = scale_pow2(v, -2 * k); });
}

}  // namespace stabfuzz::gpu
