// The linalg families' contracts: parameters, input validation, MPFR oracles and conditioning.
// dot, gemm, attention, cosine_similarity, pairwise_distance and one Adam step; outputs correctly
// rounded to the dtype, with componentwise condition numbers per output.
#pragma once

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "stabfuzz/dtype.h"
#include "stabfuzz/family.h"
#include "stabfuzz/params.h"

namespace stabfuzz::oracle {

// ---- validation: nullopt for a valid input, else a one-line reason
// -------------------------------- Every family: tensors of its signature, dimensions >= 1, values
// finite and representable in the dtype, only its own parameters, finite. Row lengths are compared
// before any value is read.
std::optional<std::string> validate_dot(const Input& in);
std::optional<std::string> validate_gemm(const Input& in);  // also m n k <= 2^26 (oracle cost)
// also causal in {0, 1}, causal only with s = t, s t (d + dv) <= 2^24
std::optional<std::string> validate_attention(const Input& in);
// also eps = 0 or 1e-30 <= eps <= 1
std::optional<std::string> validate_cosine_similarity(const Input& in);
std::optional<std::string> validate_pairwise_distance(const Input& in);
// also v >= 0, lr >= 0, betas in [0, 1) and eps > 0 as the dtype holds them, step an integer in
// [1, 2^24] that the dtype holds exactly
std::optional<std::string> validate_adam(const Input& in);

// ---- oracles -----------------------------------------------------------------------------------
// Outputs that are exactly 0 get cond 0 when every term they depend on is 0 (any correct kernel
// returns 0), else +inf (no relative accuracy can be asked of a value that cancels to 0).

// y = sum a_i b_i. cond = 2 sum |a_i b_i| / |y|: perturbing a and b both (Ogita, Rump and Oishi's
// definition); the pairwise kernel errs by at most (8 + log2 n) u sum |a_i b_i|.
OracleResult dot(const Input& in);

// C = A B, A [m,k], B [k,n] row-major. Each c_ij is a dot product: cond_ij = 2 sum_l |a_il b_lj|
// / |c_ij|.
OracleResult gemm(const Input& in);

// O = softmax(scale Q K^T, masked when causal) V, one head. cond is the componentwise bound
// (sum_l P_il |V_lj| + 2 sum_l P_il A_il |V_lj - O_ij|) / |O_ij|, A_il = |scale| sum_c |Q_ic K_lc|:
// the weighted sum's own condition, plus the scores' (dot products, both factors perturbed: the
// 2) carried through the softmax Jacobian dP_il = P_il (dS_il - sum_r P_ir dS_ir). Within a
// factor 2 of the exact componentwise value (the K perturbations alone reach the score term).
OracleResult attention(const Input& in);

// y = a.b / max(|a| |b|, eps). Where |a| |b| >= eps, cond = (sum_i |a^_i b^_i - y a^_i^2| +
// sum_i |a^_i b^_i - y b^_i^2|) / |y| with a^ = a/|a|, b^ = b/|b| (from dy/da_i = b_i/(|a||b|) -
// y a_i/|a|^2); below eps y = a.b / eps and cond is the dot product's. A zero vector gives y = 0.
OracleResult cosine_similarity(const Input& in);

// y = |a - b + eps|_2. cond = sum_i |d_i| (|a_i| + |b_i|) / y^2, d = a - b + eps (eps is a
// parameter, not perturbed): large where a ~ b and the eps-shifted difference cancels.
OracleResult pairwise_distance(const Input& in);

// One Adam step (PyTorch's formula), output p'. cond_i from the derivative of p' w.r.t. p, g, m,
// v; see oracles/linalg.cc.
OracleResult adam(const Input& in);
namespace detail {
// A head's shapes and parameters: s queries, t keys, dimension d, dv value columns.
struct AttentionShape {
  size_t s, t, d, dv;
  params::AttentionParams prm;
  size_t keys(size_t i) const { return prm.causal ? i + 1 : t; }  // causal: keys 0..i
};
AttentionShape attention_shape(const Input& in);
// A_il = |scale| sum_c |Q_ic K_lc|, which bounds |S_il| (*amax: the largest): it sizes the score
// precision and enters cond.
std::vector<long double> attention_amp(const Input& in, const AttentionShape& sh,
                                       long double* amax);
// Adam's step quantities (long double) of one element, for its condition number.
struct AdamTerms {
  long double u, pp, den, vp, sq, bc1;  // U, p' = p - U, D, v', sqrt(v^), 1 - b1^t
};
// cond_i (the formula above adam()) from the element's inputs and step quantities.
double adam_cond(const params::AdamParams& prm, double p, double g, double m, double v,
                 const AdamTerms& t);
// The two ways attention() evaluates (exposed for tests), as for adam below.
std::optional<OracleResult> attention_double_double(const Input& in);
OracleResult attention_mpfr(const Input& in);
// The two ways adam() evaluates (exposed for tests): double-double with error bounds carried
// along (nullopt when out of range or an output undecided), and MPFR with Ziv's ladder.
std::optional<OracleResult> adam_double_double(const Input& in);
OracleResult adam_mpfr(const Input& in);
}  // namespace detail

}  // namespace stabfuzz::oracle
