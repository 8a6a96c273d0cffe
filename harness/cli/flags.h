// The flags several commands share, each defined once here: its name, value and meaning. A command
// adds the ones it reads to its own description, with its own default where the meaning differs
// (the default is then the description's, shown by help and the only one the command uses).
#pragma once

#include <boost/program_options.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "stabfuzz/dtype.h"

namespace stabfuzz::cli::flag {

namespace po = boost::program_options;
using Desc = po::options_description;

// A floating-point flag's value must be finite (a NaN budget ran as no budget, an infinite one
// never ended): InputError "--NAME must be a finite number" when it is not.
void check_finite(const char* name, double v);

// The value semantic of a flag of type T (floating point: checked finite when given).
template <class T>
po::typed_value<T>* typed(const char* name, T* v) {
  po::typed_value<T>* t = po::value<T>(v);
  if constexpr (std::is_floating_point_v<T>)
    t->notifier([name](const T& x) { check_finite(name, static_cast<double>(x)); });
  return t;
}

// A flag with a value and a default.
template <class T>
void value(Desc& d, const char* name, T* v, const T& def, const char* label, const char* help) {
  d.add_options()(name, typed<T>(name, v)->default_value(def)->value_name(label), help);
}
inline void value(Desc& d, const char* name, std::string* v, const char* def, const char* label,
                  const char* help) {
  value<std::string>(d, name, v, def, label, help);
}
// A flag with a value and no default (help says what its absence means).
template <class T>
void value(Desc& d, const char* name, T* v, const char* label, const char* help) {
  d.add_options()(name, typed<T>(name, v)->value_name(label), help);
}
// The default of flag `name` in `d` (as the command would use it when the flag is not given).
template <class T>
T default_of(const Desc& d, const char* name) {
  boost::any v;
  d.find(name, false).semantic()->apply_default(v);
  return boost::any_cast<T>(v);
}

// A flag alone: false unless given.
void toggle(Desc& d, const char* name, bool* v, const char* help);

// Run options: which implementations, how many inputs, which seed, where the results go.
void plugin(Desc& d, std::vector<std::string>* v,
            const char* help =
                "load a plugin's targets (stabfuzz/plugin.h) before anything runs; "
                "may repeat");
void timeout_ms(Desc& d, int64_t* v,
                const char* help =
                    "isolated targets (plugins): time one input may take before it "
                    "is a timeout finding (<= 0: no limit)");
// --target VALUE (FAMILY, or SELECTOR where harness/core/select.h's selectors work).
void target(Desc& d, std::string* v, const char* help, const char* value = "FAMILY");
void impl(Desc& d, std::string* v);
void dtype(Desc& d, std::string* v);
void runs(Desc& d, int64_t* v, int64_t def, const char* help);
void runs(Desc& d, int64_t* v, const char* help);  // no default
// --seed S: 0..kMaxSeed, else InputError when parsed.
constexpr uint64_t kMaxSeed = uint64_t{1} << 53;
void seed(Desc& d, uint64_t* v, uint64_t def, const char* help);
void seed(Desc& d, uint64_t* v);  // 0: pick one, printed
void out(Desc& d, std::string* v, const char* help);
void time(Desc& d, std::string* v, const char* def, const char* help);
void generator(Desc& d, std::string* v, const char* help);
// Detector settings: findings kept, CESTAC's cancellation threshold, shrinking.
void max_findings(Desc& d, int64_t* v);
void cancel_digits(Desc& d, int* v);
void shrink_evals(Desc& d, int64_t* v);
// Output.
void json(Desc& d, std::string* v);
void quiet(Desc& d, bool* v);
void no_reports(Desc& d, bool* v);
// --fail-on KINDS: the finding kinds that make the exit code 1 (KindSet::parse reads the text).
void fail_on(Desc& d, std::string* v);

// Checks shared by several commands; each throws InputError naming the flag.
void check_cancel_digits(int v);
void check_max_findings(int64_t v);
// --dtype's value: one dtype, or none for "all".
std::optional<DType> dtype_of(const std::string& v);
// A seed of 0 (the default of the runs) picks one from the clock.
uint64_t pick_seed(uint64_t seed);

}  // namespace stabfuzz::cli::flag
