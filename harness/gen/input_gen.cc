// Regime-driven RapidCheck generators with float-aware shrinking.
#include "harness/gen/input_gen.h"

#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>
#include <ostream>
#include <string>

namespace stabfuzz::gen {
namespace {

class RcEntropy final : public Entropy {
 public:
  explicit RcEntropy(const rc::Random& r) : r_(r) {}
  uint64_t next_u64() override { return r_.next(); }

 private:
  rc::Random r_;
};

double keep_mantissa_bits(double v, int bits) {
  int e;
  const double m = std::frexp(v, &e);  // |m| in [0.5, 1)
  return std::ldexp(std::trunc(std::ldexp(m, bits)), e - bits);
}

// The candidates of `seq` that the family accepts, ending the sequence after `max_rejects`
// rejections in a row: a family whose parameters tie it to positions (cross_entropy's target
// index) can reject almost every shorter row, and each rejection costs a validation.
class BoundedValid {
 public:
  BoundedValid(rc::Seq<Input> seq, std::function<std::optional<std::string>(const Input&)> validate,
               int max_rejects)
      : seq_(std::move(seq)), validate_(std::move(validate)), max_rejects_(max_rejects) {}
  rc::Maybe<Input> operator()() {
    for (int rejects = 0; rejects < max_rejects_; ++rejects) {
      auto c = seq_.next();
      if (!c || !validate_(*c)) return c;
    }
    return rc::Nothing;
  }

 private:
  rc::Seq<Input> seq_;
  std::function<std::optional<std::string>(const Input&)> validate_;
  int max_rejects_;
};

constexpr int kMaxRejects = 256;

}  // namespace

std::vector<double> simpler_floats(double v, DType d) {
  std::vector<double> out;
  auto add = [&](double c) {
    c = round_to(d, c);
    if (c == v || std::isnan(c)) return;
    for (double o : out)
      if (o == c) return;
    out.push_back(c);
  };
  if (v == 0) return out;
  add(0.0);
  if (std::isinf(v)) {
    add(std::copysign(1e3, v));
    return out;
  }
  if (std::fabs(v) < 0x1p52 && v != std::trunc(v)) add(std::trunc(v));
  for (int bits = 1; bits < dtype_precision(d); bits *= 2) add(keep_mantissa_bits(v, bits));
  int e;
  const double m = std::frexp(v, &e);
  if (e > 2 || e < -1) add(std::ldexp(m, e / 2));
  if (v < 0) add(-v);
  return out;
}

rc::Seq<Input> shrink_input(const Family& family, const Input& in) {
  rc::Seq<Input> all;
  // Shorter rows: when every tensor is a 1-D row of one length n (softmax's row, dot's two rows,
  // adam's four), the same positions are removed from all of them, so candidates stay valid;
  // chunks removed from one row alone would be O(n^2) candidates the family rejects.
  bool rows = !in.args.empty();
  for (const auto& t : in.args)
    rows &= t.shape.size() == 1 && t.values.size() == in.args[0].values.size();
  if (rows) {
    std::vector<uint32_t> index(in.args[0].values.size());
    for (size_t i = 0; i < index.size(); ++i) index[i] = static_cast<uint32_t>(i);
    auto shorter = rc::seq::map(rc::shrink::removeChunks(std::move(index)),
                                [in](const std::vector<uint32_t>& keep) {
                                  Input c = in;
                                  for (auto& t : c.args) {
                                    std::vector<double> v;
                                    v.reserve(keep.size());
                                    for (uint32_t i : keep) v.push_back(t.values[i]);
                                    t.values = std::move(v);
                                    t.shape[0] = static_cast<int64_t>(keep.size());
                                  }
                                  return c;
                                });
    all = rc::Seq<Input>(BoundedValid(std::move(shorter), family.validate, kMaxRejects));
  }
  for (size_t k = 0; k < in.args.size(); ++k) {
    const Tensor& t = in.args[k];
    auto with_values = [in, k](std::vector<double> vals) {
      Input c = in;
      c.args[k].values = std::move(vals);
      return c;
    };
    const DType d = in.dtype;
    auto simpler = rc::seq::map(
        rc::shrink::eachElement(
            t.values, [d](double v) { return rc::seq::fromContainer(simpler_floats(v, d)); }),
        with_values);
    all = rc::seq::concat(std::move(all), rc::Seq<Input>(BoundedValid(
                                              std::move(simpler), family.validate, kMaxRejects)));
  }
  return all;
}

rc::Gen<Input> regime_gen(const Family& family, const Regime& regime, DType d) {
  const Family* fam = &family;  // registry families live for the whole program
  const auto sample = regime.sample;
  return rc::Gen<Input>([fam, sample, d](const rc::Random& random, int) {
    RcEntropy e(random);
    Input in = sample(e, d);
    return rc::shrinkable::shrinkRecur(std::move(in),
                                       [fam](const Input& x) { return shrink_input(*fam, x); });
  });
}

rc::Gen<Input> input_gen(const Family& family, DType d, const std::string& regime) {
  std::vector<rc::Gen<Input>> gens;
  for (const auto& r : family.regimes)
    if (regime.empty() || r.name == regime) gens.push_back(regime_gen(family, r, d));
  if (gens.empty()) throw std::invalid_argument("unknown regime '" + regime + "'");
  return rc::Gen<Input>([gens](const rc::Random& random, int size) {
    rc::Random r = random;
    const auto pick = static_cast<size_t>(r.split().next() % gens.size());
    return gens[pick](r, size);
  });
}

}  // namespace stabfuzz::gen

namespace stabfuzz {
void showValue(const Input& in, std::ostream& os) {
  os << dtype_name(in.dtype) << " [";
  char buf[64];
  for (size_t k = 0; k < in.args.size(); ++k) {
    if (k) os << "; ";
    for (size_t i = 0; i < in.args[k].values.size(); ++i) {
      std::snprintf(buf, sizeof buf, "%s%a", i ? ", " : "", in.args[k].values[i]);
      os << buf;
    }
  }
  os << "]";
}
}  // namespace stabfuzz
