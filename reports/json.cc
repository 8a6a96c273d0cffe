// JSON writer and recursive-descent parser.
#include "reports/json.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

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

void write_string(std::string& out, const std::string& s) {
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

void write(std::string& out, const Value& v, int indent, int depth) {
  auto newline = [&](int d) {
    if (indent < 0) return;
    out += '\n';
    out.append(static_cast<size_t>(indent * d), ' ');
  };
  if (v.is_null()) {
    out += "null";
  } else if (v.is_bool()) {
    out += v.as_bool() ? "true" : "false";
  } else if (v.is_number()) {
    const double d = v.as_number();
    if (std::isnan(d)) {
      out += "\"nan\"";
    } else if (std::isinf(d)) {
      out += d > 0 ? "\"inf\"" : "\"-inf\"";
    } else if (d == std::trunc(d) && std::fabs(d) < 1e15) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.0f", d);
      out += buf;
    } else {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.17g", d);
      out += buf;
    }
  } else if (v.is_string()) {
    write_string(out, v.as_string());
  } else if (v.is_array()) {
    const auto& a = v.as_array();
    out += '[';
    for (size_t i = 0; i < a.size(); ++i) {
      if (i) out += indent < 0 ? "," : ",";
      newline(depth + 1);
      write(out, a[i], indent, depth + 1);
    }
    if (!a.empty()) newline(depth);
    out += ']';
  } else {
    const auto& o = v.as_object();
    out += '{';
    for (size_t i = 0; i < o.size(); ++i) {
      if (i) out += ',';
      newline(depth + 1);
      write_string(out, o[i].first);
      out += indent < 0 ? ":" : ": ";
      write(out, o[i].second, indent, depth + 1);
    }
    if (!o.empty()) newline(depth);
    out += '}';
  }
}

class Parser {
 public:
  explicit Parser(std::string_view s) : s_(s) {}
  Value document() {
    Value v = value(0);
    ws();
    if (i_ != s_.size()) fail("trailing characters");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) {
    throw ParseError("JSON: " + what + " at offset " + std::to_string(i_));
  }
  void ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t' || s_[i_] == '\r'))
      ++i_;
  }
  bool eat(char c) {
    ws();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!eat(c)) fail(std::string("expected '") + c + "'");
  }
  bool word(std::string_view w) {
    if (s_.substr(i_, w.size()) == w) {
      i_ += w.size();
      return true;
    }
    return false;
  }
  Value value(int depth) {
    if (depth > 64) fail("nesting too deep");
    ws();
    if (i_ >= s_.size()) fail("unexpected end");
    const char c = s_[i_];
    if (c == '{') {
      ++i_;
      Value v{Object{}};
      if (eat('}')) return v;
      do {
        ws();
        std::string k = string();
        expect(':');
        v.object().emplace_back(std::move(k), value(depth + 1));
      } while (eat(','));
      expect('}');
      return v;
    }
    if (c == '[') {
      ++i_;
      Value v{Array{}};
      if (eat(']')) return v;
      do v.array().push_back(value(depth + 1));
      while (eat(','));
      expect(']');
      return v;
    }
    if (c == '"') return Value(string());
    if (word("true")) return Value(true);
    if (word("false")) return Value(false);
    if (word("null")) return Value();
    return number();
  }
  std::string string() {
    if (i_ >= s_.size() || s_[i_] != '"') fail("expected a string");
    ++i_;
    std::string out;
    while (true) {
      if (i_ >= s_.size()) fail("unterminated string");
      const char c = s_[i_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("control character in string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i_ >= s_.size()) fail("unterminated escape");
      const char e = s_[i_++];
      switch (e) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          unsigned cp = hex4();
          if (cp >= 0xd800 && cp <= 0xdbff) {  // high surrogate: a low one must follow
            if (s_.substr(i_, 2) != "\\u") fail("unpaired surrogate");
            i_ += 2;
            const unsigned lo = hex4();
            if (lo < 0xdc00 || lo > 0xdfff) fail("unpaired surrogate");
            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
          } else if (cp >= 0xdc00 && cp <= 0xdfff) {
            fail("unpaired surrogate");
          }
          append_utf8(out, cp);
          break;
        }
        default:
          fail("bad escape");
      }
    }
  }
  // RFC 8259: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
  Value number() {
    const size_t start = i_;
    auto digit = [&] { return i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9'; };
    auto digits = [&] {
      if (!digit()) fail("expected a digit");
      while (digit()) ++i_;
    };
    if (i_ < s_.size() && s_[i_] == '-') ++i_;
    if (!digit()) fail("unexpected character");
    if (s_[i_] == '0') {
      ++i_;
    } else {
      digits();
    }
    if (i_ < s_.size() && s_[i_] == '.') {
      ++i_;
      digits();
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      ++i_;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
      digits();
    }
    const std::string tok(s_.substr(start, i_ - start));
    return Value(std::strtod(tok.c_str(), nullptr));
  }
  unsigned hex4() {
    if (i_ + 4 > s_.size()) fail("short \\u escape");
    unsigned v = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = s_[i_++];
      v <<= 4;
      if (c >= '0' && c <= '9')
        v |= static_cast<unsigned>(c - '0');
      else if (c >= 'a' && c <= 'f')
        v |= static_cast<unsigned>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        v |= static_cast<unsigned>(c - 'A' + 10);
      else
        fail("bad hex digit in \\u escape");
    }
    return v;
  }
  static void append_utf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xc0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xe0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
      out += static_cast<char>(0xf0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    }
  }

  std::string_view s_;
  size_t i_ = 0;
};

}  // namespace

std::string dump(const Value& v, int indent) {
  std::string out;
  write(out, v, indent, 0);
  return out;
}

Value parse(std::string_view text) { return Parser(text).document(); }

}  // namespace stabfuzz::json
