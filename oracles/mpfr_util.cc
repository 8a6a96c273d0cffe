// Decidable rounding of MPFR approximations to f32/f64, and correctly rounded sums.
#include "oracles/mpfr_util.h"

#include <cmath>
#include <cstdlib>
#include <new>

#include "stabfuzz/lowp.h"

namespace stabfuzz::oracle {

namespace {
thread_local mpfr_prec_t t_start_precision = kStartPrecision;

// Free significands by limb count (1..kPooledLimbs, up to kPrecisionCap bits); larger ones and
// those past kMaxFree per size go back to malloc.
constexpr size_t kPooledLimbs = (kPrecisionCap + GMP_NUMB_BITS - 1) / GMP_NUMB_BITS;
constexpr size_t kMaxFree = 4096;
struct SignificandPool {
  std::vector<void*> free[kPooledLimbs + 1];
  ~SignificandPool() {
    for (auto& list : free)
      for (void* p : list) std::free(p);
  }
};
thread_local SignificandPool t_pool;

size_t limbs_of(mpfr_prec_t prec) {
  return static_cast<size_t>((prec + GMP_NUMB_BITS - 1) / GMP_NUMB_BITS);
}
}  // namespace

namespace detail {
void* take_significand(mpfr_prec_t prec) {
  const size_t limbs = limbs_of(prec);
  if (limbs <= kPooledLimbs && !t_pool.free[limbs].empty()) {
    void* p = t_pool.free[limbs].back();
    t_pool.free[limbs].pop_back();
    return p;
  }
  void* p = std::malloc(mpfr_custom_get_size(prec));
  if (!p) throw std::bad_alloc();
  mpfr_custom_init(p, prec);
  return p;
}
void give_significand(void* p, mpfr_prec_t prec) {
  const size_t limbs = limbs_of(prec);
  if (limbs <= kPooledLimbs && t_pool.free[limbs].size() < kMaxFree)
    t_pool.free[limbs].push_back(p);
  else
    std::free(p);
}
}  // namespace detail

mpfr_prec_t start_precision() { return t_start_precision; }
StartPrecisionOverride::StartPrecisionOverride(mpfr_prec_t start) : previous_(t_start_precision) {
  t_start_precision = start;
}
StartPrecisionOverride::~StartPrecisionOverride() { t_start_precision = previous_; }

namespace {
// Rounds through MPFR with the format's precision and exponent range (mpfr_subnormalize), never
// through float: rounding to float first and then to f16 could round twice.
double round_to_small_format(mpfr_srcptr x, const Format& f) {
  const mpfr_exp_t old_emin = mpfr_get_emin(), old_emax = mpfr_get_emax();
  Real t(f.p);
  int inex = mpfr_set(t, x, MPFR_RNDN);
  // MPFR writes x = m 2^E with m in [1/2, 1): the smallest subnormal 2^(emin-p+1) has
  // E = emin - p + 2, the largest finite value has E = emax + 1.
  mpfr_set_emin(f.emin - f.p + 2);
  mpfr_set_emax(f.emax + 1);
  inex = mpfr_check_range(t, inex, MPFR_RNDN);
  mpfr_subnormalize(t, inex, MPFR_RNDN);
  const double r = mpfr_get_d(t, MPFR_RNDN);  // exact: the value has at most p bits
  mpfr_set_emin(old_emin);
  mpfr_set_emax(old_emax);
  return r;
}
}  // namespace

long double approx_long_double(mpfr_srcptr x) {
  if (!mpfr_regular_p(x)) return mpfr_get_d(x, MPFR_RNDN);  // 0, inf and NaN as they are
  static_assert(GMP_NUMB_BITS == 64, "one limb holds long double's significand");
  // The most significant limb holds the leading 64 bits (MPFR keeps it normalized): x is about
  // top * 2^(e - 64) with x = 0.1... * 2^e.
  const mp_limb_t* d = x->_mpfr_d;
  const mp_limb_t top = d[(mpfr_get_prec(x) - 1) / GMP_NUMB_BITS];
  const long double m = static_cast<long double>(top);  // exact: 64 bits
  const long e = mpfr_get_exp(x) - 64;
  const long clamped = e < -20000 ? -20000 : (e > 20000 ? 20000 : e);  // past the range anyway
  return std::ldexp(mpfr_signbit(x) ? -m : m, static_cast<int>(clamped));
}

double round_nearest(mpfr_srcptr x, DType d) {
  // mpfr_get_d / mpfr_get_flt round once, directly from the MPFR value, subnormals included.
  switch (d) {
    case DType::f64:
      return mpfr_get_d(x, MPFR_RNDN);
    case DType::f32:
      return static_cast<double>(mpfr_get_flt(x, MPFR_RNDN));
    default:
      return round_to_small_format(x, dtype_format(d));
  }
}

std::optional<double> round_decided(mpfr_srcptr approx, long err_bits, DType d) {
  if (mpfr_nan_p(approx)) return std::nullopt;
  if (mpfr_inf_p(approx) || mpfr_zero_p(approx)) return mpfr_get_d(approx, MPFR_RNDN);
  // Fast path for f64 and f32 inside their normal range (no subnormal's reduced precision, no
  // overflow): when rounding toward zero to one bit more than the format is decided
  // (mpfr_can_round's way to decide round-to-nearest), no value of the interval lies on a midpoint
  // or a representable number's other side. Otherwise (results near a midpoint or exactly
  // representable, like softmax's 1/2) the interval's two ends are rounded below.
  if (d == DType::f64 || d == DType::f32) {
    const mpfr_exp_t e = mpfr_get_exp(approx);  // approx = m 2^e, m in [1/2, 1)
    const bool f64 = d == DType::f64;
    const bool normal = f64 ? (e > -1021 && e < 1024) : (e > -125 && e < 128);
    if (normal && err_bits > 0 &&
        mpfr_can_round(approx, err_bits, MPFR_RNDN, MPFR_RNDZ, (f64 ? 53 : 24) + 1))
      return round_nearest(approx, d);
  }
  const mpfr_prec_t p = mpfr_get_prec(approx) + err_bits + 4;
  Real delta(p), lo(p), hi(p);
  mpfr_abs(delta, approx, MPFR_RNDN);
  mpfr_mul_2si(delta, delta, -err_bits, MPFR_RNDU);  // exact: a power-of-two scaling
  mpfr_sub(lo, approx, delta, MPFR_RNDD);            // exact at this precision
  mpfr_add(hi, approx, delta, MPFR_RNDU);
  const double a = round_nearest(lo, d), b = round_nearest(hi, d);
  if (a != b) return std::nullopt;
  return round_nearest(approx, d);
}

void sum(mpfr_ptr out, const std::vector<Real>& terms) {
  std::vector<mpfr_ptr> ptrs;
  ptrs.reserve(terms.size());
  for (const auto& t : terms) ptrs.push_back(const_cast<mpfr_ptr>(t.get()));
  mpfr_sum(out, ptrs.data(), ptrs.size(), MPFR_RNDN);
}

OracleResult ziv(const std::function<bool(mpfr_prec_t, OracleResult&)>& attempt) {
  for (mpfr_prec_t p = start_precision(); p <= kPrecisionCap; p *= 2) {
    OracleResult r;
    if (attempt(p, r)) {
      r.decidable = true;
      r.precision_bits = p;
      return r;
    }
  }
  OracleResult r;
  r.decidable = false;
  return r;
}

OracleResult elementwise(const Input& in, const std::function<void(mpfr_ptr y, mpfr_srcptr x)>& f,
                         long err_margin_bits, const std::function<double(double x)>& cond) {
  const auto& x = in.args.at(0).values;
  return ziv([&](mpfr_prec_t p, OracleResult& r) {
    Real xm(kExactDoublePrecision), y(p);
    r.exact.resize(x.size());
    r.cond.resize(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      mpfr_set_d(xm, x[i], MPFR_RNDN);
      f(y, xm);
      auto e = round_decided(y, p - err_margin_bits, in.dtype);
      if (!e) return false;
      r.exact[i] = *e;
      r.cond[i] = cond(x[i]);
    }
    return true;
  });
}

}  // namespace stabfuzz::oracle
