// Byte decoder: header (dtype, regime, seed) then value edits, always within the family's domain.
#include "harness/fuzz/decoder.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "families/regimes.h"
#include "stabfuzz/entropy.h"
#include "stabfuzz/lowp.h"

namespace stabfuzz::fuzz {
namespace {

// Reads bytes left to right; past the end it reads zeros.
class Reader {
 public:
  Reader(const uint8_t* d, size_t n) : d_(d), n_(n) {}
  uint8_t u8() { return pos_ < n_ ? d_[pos_++] : (pos_++, 0); }
  uint64_t le(size_t bytes) {
    uint64_t v = 0;
    for (size_t i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(u8()) << (8 * i);
    return v;
  }
  bool more() const { return pos_ < n_; }

 private:
  const uint8_t* d_;
  size_t n_;
  size_t pos_ = 0;
};

size_t width(DType d) {
  switch (d) {
    case DType::f64:
      return 8;
    case DType::f32:
      return 4;
    default:
      return 2;
  }
}

double half_bits(uint16_t h) {
  const int sign = h >> 15, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  double v;
  if (exp == 0)
    v = std::ldexp(man, -24);
  else if (exp == 31)
    v = man ? std::nan("") : INFINITY;
  else
    v = std::ldexp(1024 + man, exp - 25);
  return sign ? -v : v;
}

// Values where formulations break: format limits and the exp thresholds (softmax, logsumexp...).
double special(DType d, uint64_t k) {
  const double specials[] = {0.0,
                             1.0,
                             0.5,
                             dtype_unit_roundoff(d),
                             dtype_min_normal(d),
                             regime::exp_overflow_threshold(d),
                             regime::exp_underflow_threshold(d),
                             std::sqrt(dtype_format(d).max_finite()),
                             dtype_format(d).max_finite() / 4,
                             1e4,
                             -1.0};
  constexpr size_t n = sizeof(specials) / sizeof(specials[0]);
  return specials[k % n];
}

}  // namespace

double from_bits(DType d, uint64_t bits) {
  switch (d) {
    case DType::f64:
      return std::bit_cast<double>(bits);
    case DType::f32:
      return std::bit_cast<float>(static_cast<uint32_t>(bits));
    case DType::f16:
      return half_bits(static_cast<uint16_t>(bits));
    case DType::bf16:
      return std::bit_cast<float>(static_cast<uint32_t>(bits & 0xffff) << 16);
  }
  return 0;
}

std::vector<uint8_t> header_bytes(size_t dtype_index, size_t regime, uint64_t seed) {
  std::vector<uint8_t> b(kHeaderBytes);
  b[0] = static_cast<uint8_t>(dtype_index);
  b[1] = static_cast<uint8_t>(regime);
  for (size_t i = 0; i < 8; ++i) b[2 + i] = static_cast<uint8_t>(seed >> (8 * i));
  return b;
}

Decoded decode(const Family& family, const std::vector<DType>& dtypes, const uint8_t* data,
               size_t size, Base base) {
  Reader r(data, size);
  Decoded out;
  const DType d = dtypes[r.u8() % dtypes.size()];
  out.regime = r.u8() % family.regimes.size();
  const uint64_t seed = r.le(8);
  const Regime& regime = family.regimes[out.regime];
  SeededEntropy e(seed, hash_str(family.name) ^ hash_str(regime.name));
  out.input = regime.sample(e, d);
  if (auto bad = family.validate(out.input)) {
    out.reject = *bad;
    return out;
  }
  out.valid = true;
  if (base == Base::uniform) {
    SeededEntropy u(seed, hash_str(family.name) ^ 0x756e69666f726dULL);
    for (size_t k = 0; k < out.input.args.size(); ++k)
      for (double lo : {-1.0, 0.0}) {
        Input cand = out.input;
        for (auto& v : cand.args[k].values) v = round_to(d, u.uniform(lo, 1.0));
        if (!family.validate(cand)) {
          out.input = std::move(cand);
          break;
        }
      }
  }
  // Flattened positions over every tensor of the input.
  std::vector<double*> cells;
  for (auto& t : out.input.args)
    for (auto& v : t.values) cells.push_back(&v);
  if (cells.empty()) return out;
  const size_t w = width(d);
  for (size_t k = 0; k < kMaxEdits && r.more(); ++k) {
    const uint8_t op = r.u8();
    double* cell = cells[r.le(2) % cells.size()];
    const uint64_t payload = r.le(w);
    const double old = *cell;
    double v = old;
    switch (op % 6) {
      case 0:
        v = from_bits(d, payload);
        break;  // raw bit pattern
      case 1:
        v = std::ldexp(old, static_cast<int>(payload % 65) - 32);
        break;   // scale by 2^k
      case 2: {  // step k ULPs
        const auto steps = static_cast<int8_t>(payload & 0xff);
        const double ulp = std::max(dtype_min_normal(d) * dtype_unit_roundoff(d) * 2,
                                    std::fabs(old) * dtype_unit_roundoff(d) * 2);
        v = old + steps * ulp;
        break;
      }
      case 3:
        v = *cells[payload % cells.size()];
        break;  // copy another value
      case 4:
        v = -old;
        break;  // flip the sign
      case 5:
        v = special(d, payload) * ((payload >> 8) & 1 ? -1 : 1);
        break;  // special value
    }
    v = round_to(d, v);
    if (!std::isfinite(v) || v == old) {
      ++out.edits_dropped;
      continue;
    }
    *cell = v;
    if (family.validate(out.input)) {  // outside the operator's domain: undo
      *cell = old;
      ++out.edits_dropped;
    } else {
      ++out.edits_applied;
    }
  }
  return out;
}

}  // namespace stabfuzz::fuzz
