// A small JSON value (reports, corpora, tests), read and written through nlohmann-json: keys keep
// their insertion order, parsing is strict (RFC 8259, UTF-8).
#pragma once

#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace stabfuzz::json {

class Value;
using Array = std::vector<Value>;
using Object = std::vector<std::pair<std::string, Value>>;  // keeps insertion order

class Value {
 public:
  Value() : v_(nullptr) {}
  Value(std::nullptr_t) : v_(nullptr) {}                       // NOLINT
  Value(bool b) : v_(b) {}                                     // NOLINT
  Value(double d) : v_(d) {}                                   // NOLINT
  Value(int i) : v_(static_cast<double>(i)) {}                 // NOLINT
  Value(long i) : v_(static_cast<double>(i)) {}                // NOLINT
  Value(long long i) : v_(static_cast<double>(i)) {}           // NOLINT
  Value(unsigned long i) : v_(static_cast<double>(i)) {}       // NOLINT
  Value(unsigned long long i) : v_(static_cast<double>(i)) {}  // NOLINT
  Value(const char* s) : v_(std::string(s)) {}                 // NOLINT
  Value(std::string s) : v_(std::move(s)) {}                   // NOLINT
  Value(std::string_view s) : v_(std::string(s)) {}            // NOLINT
  Value(Array a) : v_(std::move(a)) {}                         // NOLINT
  Value(Object o) : v_(std::move(o)) {}                        // NOLINT

  bool is_null() const { return std::holds_alternative<std::nullptr_t>(v_); }
  bool is_bool() const { return std::holds_alternative<bool>(v_); }
  bool is_number() const { return std::holds_alternative<double>(v_); }
  bool is_string() const { return std::holds_alternative<std::string>(v_); }
  bool is_array() const { return std::holds_alternative<Array>(v_); }
  bool is_object() const { return std::holds_alternative<Object>(v_); }

  bool as_bool() const;
  double as_number() const;  // also accepts "inf", "-inf", "nan" strings (non-finite numbers)
  const std::string& as_string() const;
  const Array& as_array() const;
  const Object& as_object() const;
  Array& array();
  Object& object();

  // Object member access; `at` throws when missing, `get` returns nullptr.
  const Value& at(std::string_view key) const;
  const Value* get(std::string_view key) const;
  Value& set(std::string key, Value v);  // appends or replaces

 private:
  std::variant<std::nullptr_t, bool, double, std::string, Array, Object> v_;
};

struct ParseError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Compact single-line output (`indent` < 0) or pretty output. Numbers: integral values below 1e15
// without decimals, others in the shortest form that reads back exactly; non-finite ones as the
// strings "inf", "-inf", "nan" (JSON has no literal for them). Invalid UTF-8 in a string is
// written as U+FFFD; of duplicate keys (parse() keeps them) only the first is written.
std::string dump(const Value& v, int indent = -1);
// Throws ParseError ("JSON parse error at line L, column C: what (byte offset N)") for invalid
// JSON or UTF-8, a number out of double range, or nesting deeper than 64 levels below the top.
// Of duplicate keys, get() and at() find the first.
Value parse(std::string_view text);

// A number that must be an integer of T (a count, a seed, an index): throws ParseError when it is
// not one or T cannot hold it, where a cast would be undefined behavior.
template <class T>
T integer(const Value& v) {
  const double d = v.as_number();
  const double top = std::ldexp(1.0, std::numeric_limits<T>::digits);  // T holds [low, top)
  const double low = std::numeric_limits<T>::is_signed ? -top : 0.0;
  if (!(d >= low && d < top) || d != std::trunc(d))
    throw ParseError("expected an integer in [" + std::to_string(low) + ", 2^" +
                     std::to_string(std::numeric_limits<T>::digits) + ")");
  return static_cast<T>(d);
}

}  // namespace stabfuzz::json
