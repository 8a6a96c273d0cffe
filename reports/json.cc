// JSON reading and writing through nlohmann-json: its SAX parser builds a Value, and dump() writes
// through an nlohmann::ordered_json (insertion order kept).
#include "reports/json.h"

#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

namespace stabfuzz::json {

bool Value::as_bool() const {
  if (!is_bool()) throw ParseError("expected a boolean");
  return std::get<bool>(v_);
}
double Value::as_number() const {
  if (is_string()) {
    const auto& s = std::get<std::string>(v_);
    if (s == "inf") return INFINITY;
    if (s == "-inf") return -INFINITY;
    if (s == "nan") return NAN;
  }
  if (!is_number()) throw ParseError("expected a number");
  return std::get<double>(v_);
}
const std::string& Value::as_string() const {
  if (!is_string()) throw ParseError("expected a string");
  return std::get<std::string>(v_);
}
const Array& Value::as_array() const {
  if (!is_array()) throw ParseError("expected an array");
  return std::get<Array>(v_);
}
const Object& Value::as_object() const {
  if (!is_object()) throw ParseError("expected an object");
  return std::get<Object>(v_);
}
Array& Value::array() {
  if (!is_array()) v_ = Array{};
  return std::get<Array>(v_);
}
Object& Value::object() {
  if (!is_object()) v_ = Object{};
  return std::get<Object>(v_);
}
const Value* Value::get(std::string_view key) const {
  if (!is_object()) return nullptr;
  for (const auto& [k, v] : std::get<Object>(v_))
    if (k == key) return &v;
  return nullptr;
}
const Value& Value::at(std::string_view key) const {
  const Value* v = get(key);
  if (!v) throw ParseError("missing key '" + std::string(key) + "'");
  return *v;
}
Value& Value::set(std::string key, Value v) {
  auto& o = object();
  for (auto& [k, x] : o)
    if (k == key) return x = std::move(v);
  o.emplace_back(std::move(key), std::move(v));
  return o.back().second;
}

namespace {

using nlohmann::ordered_json;

// Integral values below 1e15 are written as integers ("3", not "3.0"); -0.0 stays a float so
// that its sign survives. Non-finite numbers become the strings "inf", "-inf", "nan".
ordered_json number_json(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  if (d == std::trunc(d) && std::fabs(d) < 1e15 && !(d == 0 && std::signbit(d)))
    return static_cast<std::int64_t>(d);
  return d;
}

// Recursive, but only over Values the program built or parse() returned (at most kMaxDepth deep).
ordered_json to_json(const Value& v) {
  if (v.is_null()) return nullptr;
  if (v.is_bool()) return v.as_bool();
  if (v.is_number()) return number_json(v.as_number());
  if (v.is_string()) return v.as_string();
  if (v.is_array()) {
    ordered_json a = ordered_json::array();
    for (const Value& x : v.as_array()) a.push_back(to_json(x));
    return a;
  }
  ordered_json o = ordered_json::object();
  for (const auto& [k, x] : v.as_object()) o.emplace(k, to_json(x));  // a duplicate: first wins
  return o;
}

constexpr size_t kMaxDepth = 64;  // nested arrays and objects below the top-level value

// nlohmann's SAX events, building a Value. Duplicate keys are kept in order (Value::get finds the
// first). Errors throw ParseError.
class Builder {
 public:
  using number_integer_t = ordered_json::number_integer_t;
  using number_unsigned_t = ordered_json::number_unsigned_t;
  using number_float_t = ordered_json::number_float_t;
  using string_t = ordered_json::string_t;
  using binary_t = ordered_json::binary_t;

  Value result;

  bool null() { return add(Value()); }
  bool boolean(bool b) { return add(Value(b)); }
  bool number_integer(number_integer_t i) { return add(Value(static_cast<double>(i))); }
  bool number_unsigned(number_unsigned_t u) { return add(Value(static_cast<double>(u))); }
  bool number_float(number_float_t d, const string_t&) { return add(Value(d)); }
  bool string(string_t& s) { return add(Value(std::move(s))); }
  bool binary(binary_t&) { throw ParseError("JSON: unexpected binary value"); }
  bool start_object(std::size_t) { return open(Value(Object{})); }
  bool key(string_t& k) {
    key_ = std::move(k);
    return true;
  }
  bool end_object() { return close(); }
  bool start_array(std::size_t) { return open(Value(Array{})); }
  bool end_array() { return close(); }
  bool parse_error(std::size_t position, const std::string&, const ordered_json::exception& e) {
    // e.what(): "[json.exception.parse_error.101] parse error at line 1, column 4: ...".
    std::string what = e.what();
    if (const size_t close = what.find("] "); !what.empty() && what[0] == '[' && close != what.npos)
      what.erase(0, close + 2);
    throw ParseError("JSON " + what + " (byte offset " +
                     std::to_string(position ? position - 1 : 0) + ")");
  }

 private:
  // Places v in the innermost open container (or as the result); returns where it went.
  Value& place(Value v) {
    if (stack_.empty()) return result = std::move(v);
    Value& parent = *stack_.back();
    if (parent.is_array()) return parent.array().emplace_back(std::move(v));
    return parent.object().emplace_back(std::move(key_), std::move(v)).second;
  }
  bool add(Value v) {
    place(std::move(v));
    return true;
  }
  bool open(Value container) {
    if (stack_.size() > kMaxDepth)
      throw ParseError("JSON: nesting deeper than " + std::to_string(kMaxDepth) + " levels");
    stack_.push_back(&place(std::move(container)));
    return true;
  }
  bool close() {
    stack_.pop_back();
    return true;
  }

  std::vector<Value*> stack_;  // open containers, outermost first; each stays put while open
  std::string key_;
};

}  // namespace

std::string dump(const Value& v, int indent) {
  return to_json(v).dump(indent, ' ', false, ordered_json::error_handler_t::replace);
}

Value parse(std::string_view text) {
  Builder b;
  ordered_json::sax_parse(text, &b);
  return std::move(b.result);
}

}  // namespace stabfuzz::json
