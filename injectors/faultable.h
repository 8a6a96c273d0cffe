// How the arithmetic fault mutants reach a reference operator without the operator reading any
// fault state: the family's declaration instantiates its stable operator a second time on the
// fault injectors' types (Target::faultable), and the mutants (injectors/fault_mutants.cc) run
// those instantiations under a fault plan.
//   - Faulty<T> (injectors/faults.h) in place of double and float: the scalar faults.
//   - SequentialSums in place of the operator's summation policy (targets/cpu/reduce.h
//     PairwiseSums): the sequential-sum fault, in every dtype and under CESTAC. An operator that
//     takes no policy has no pairwise sum to make sequential; it runs unchanged.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <vector>

#include "injectors/fault_plan.h"
#include "injectors/faults.h"
#include "stabfuzz/family.h"
#include "stabfuzz/op.h"

namespace stabfuzz::fault {

struct SequentialSums {
  // One loop, error bound (n - 1) u. Noinline, so the strike's return address lies in the calling
  // operator; the strike is recorded in the plan in scope on this thread (fault::Scope), if any.
  template <class T>
  [[gnu::noinline]] static T sum(const T* x, size_t n) {
    if (State* st = current) {
      if (st->first_index < 0) {
        record_strike(*st, reinterpret_cast<uintptr_t>(__builtin_return_address(0)));
        st->first_index = st->eligible;
      }
      ++st->eligible;
      st->strikes += n > 2;  // sums of two values are the same in either order
    }
    T s = n ? x[0] : T(0);
    for (size_t i = 1; i < n; ++i) s += x[i];
    return s;
  }
};

// Op with SequentialSums as its summation policy (Op::WithSums<Sums>), or Op itself when it takes
// none.
template <class Op>
struct WithSequentialSums {
  using type = Op;
};
template <class Op>
requires requires { typename Op::template WithSums<SequentialSums>; }
struct WithSequentialSums<Op> {
  using type = typename Op::template WithSums<SequentialSums>;
};
template <class RowOp>
struct WithSequentialSums<RowAsOp<RowOp>> {
  using type = RowAsOp<typename WithSequentialSums<RowOp>::type>;
};

// The fault instantiations of Op. Adapter turns an operator into a target's entry points
// (stabfuzz/op.h PlainAdapter; targets/cpu/linalg.h OpmathAdapter for f16/bf16 run in f32).
template <class Op, class Adapter = PlainAdapter>
std::shared_ptr<const FaultableImpl> faultable() {
  using Sequential = typename WithSequentialSums<Op>::type;
  auto f = std::make_shared<FaultableImpl>();
  f->faulty_scalar = [](const Input& in) {
    if (in.dtype == DType::f64) return stabfuzz::detail::run_native<Op, Faulty<double>>(in);
    if (in.dtype == DType::f32) return stabfuzz::detail::run_native<Op, Faulty<float>>(in);
    throw std::logic_error("the faulty scalar exists for f64 and f32 only");
  };
  f->sequential_sums_native = Adapter::template native<Sequential>();
  f->sequential_sums_cestac = Adapter::template cestac<Sequential>();
  return f;
}

}  // namespace stabfuzz::fault
