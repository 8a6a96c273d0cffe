// The corpus text format: writing, and parsing with file:line errors.
#include "harness/corpus/corpus.h"

#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

#include "stabfuzz/errors.h"

namespace stabfuzz::corpus {
namespace {

constexpr int kValuesPerLine = 4;

std::string hex(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", v);
  return buf;
}

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t' || s[b] == '\r')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r')) --e;
  return std::string(s.substr(b, e - b));
}

std::vector<std::string> words(const std::string& s) {
  std::istringstream is(s);
  std::vector<std::string> out;
  for (std::string w; is >> w;) out.push_back(w);
  return out;
}

// A whole-word double: hex float, decimal, inf, -inf or nan.
std::optional<double> parse_double(const std::string& w) {
  if (w.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(w.c_str(), &end);
  if (end != w.c_str() + w.size()) return std::nullopt;
  if (errno == ERANGE && std::isfinite(v) && v != 0) return std::nullopt;
  return v;
}

void make_dirs(const std::string& path) {
  std::string cur;
  for (size_t i = 0; i < path.size(); ++i) {
    cur += path[i];
    if (path[i] == '/' && cur.size() > 1 && ::mkdir(cur.c_str(), 0755) != 0 && errno != EEXIST)
      throw InputError("cannot create directory " + cur);
  }
}

// One parse: the entry so far, the header keys seen, and the tensor whose values are still
// coming. Errors name the file and the line being parsed.
struct Parser {
  const std::string& name;
  Entry e;
  bool have_family = false, have_impl = false, have_dtype = false, have_expect = false;
  size_t pending = 0;  // values the current tensor still needs
  size_t line_no = 0, tensor_line = 0;

  explicit Parser(const std::string& name_) : name(name_) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw InputError(name + ":" + std::to_string(line_no) + ": " + what);
  }

  // One line, already trimmed.
  void read_line(const std::string& line) {
    if (line.empty() || line[0] == '#') return;
    if (pending > 0)
      values(line);
    else if (line.rfind("tensor", 0) == 0 && (line.size() == 6 || line[6] == ' '))
      tensor(line);
    else
      header(line);
  }

  // Values of the current tensor.
  void values(const std::string& line) {
    for (const auto& w : words(line)) {
      if (pending == 0) fail("more values than the tensor's shape holds");
      const auto v = parse_double(w);
      if (!v)
        fail("'" + quoted_excerpt(w) +
             "' is not a float (hex floats like 0x1.8p+3, inf, -inf, nan)");
      if (!representable(e.input.dtype, *v))
        fail("value " + w + " is not representable in " + std::string(dtype_name(e.input.dtype)));
      e.input.args.back().values.push_back(*v);
      --pending;
    }
  }

  // 'tensor <shape>': a new tensor whose values follow.
  void tensor(const std::string& line) {
    if (!have_dtype) fail("'dtype:' must come before the first tensor");
    const auto w = words(line.substr(6));
    if (w.size() != 1)
      fail("expected 'tensor <shape>', e.g. 'tensor 4' or 'tensor 2x3' or 'tensor scalar'");
    Tensor t;
    size_t count = 1;
    if (w[0] != "scalar") {
      std::stringstream ss(w[0]);
      for (std::string dim; std::getline(ss, dim, 'x');) {
        char* end = nullptr;
        errno = 0;
        const long long d = std::strtoll(dim.c_str(), &end, 10);
        if (dim.empty() || end != dim.c_str() + dim.size() || d < 0 || errno == ERANGE ||
            d > (1LL << 28))
          fail("bad dimension '" + quoted_excerpt(dim) + "' in shape '" + quoted_excerpt(w[0]) +
               "'");
        t.shape.push_back(d);
        count *= static_cast<size_t>(d);
        if (count > (size_t{1} << 28)) fail("tensor too large");
      }
    }
    t.values.reserve(count);
    e.input.args.push_back(std::move(t));
    pending = count;
    tensor_line = line_no;
  }

  // 'key: value', before the first tensor.
  void header(const std::string& line) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos)
      fail("expected 'key: value' or 'tensor <shape>', got '" + quoted_excerpt(line) + "'");
    if (!e.input.args.empty()) fail("header line after the first tensor");
    const std::string key = trim(std::string_view(line).substr(0, colon));
    const std::string value = trim(std::string_view(line).substr(colon + 1));
    if (key == "family") {
      if (value.empty()) fail("empty family");
      e.family = value, have_family = true;
    } else if (key == "impl") {
      if (value.empty()) fail("empty impl");
      e.impl = value, have_impl = true;
    } else if (key == "dtype") {
      const auto d = parse_dtype(value);
      if (!d) fail("unknown dtype '" + quoted_excerpt(value) + "' (f64, f32, f16, bf16)");
      e.input.dtype = *d, have_dtype = true;
    } else if (key == "params") {
      params(value);
    } else if (key == "expect") {
      expect(value);
    } else if (key == "seed") {
      seed(value);
    } else if (key == "kind") {
      e.kind = parse_finding_kind(value);
      if (!e.kind)
        fail("unknown kind '" + value +
             "' (accuracy, overflow, nan, underflow, nondeterminism, crash, hang)");
    } else if (key == "note") {
      e.note = value;
    } else {
      fail("unknown key '" + quoted_excerpt(key) + "'");
    }
  }

  // 'params: name=value ...'
  void params(const std::string& value) {
    for (const auto& w : words(value)) {
      const size_t eq = w.find('=');
      const auto v = eq == std::string::npos ? std::nullopt : parse_double(w.substr(eq + 1));
      if (eq == 0 || !v) fail("expected name=value parameters, got '" + quoted_excerpt(w) + "'");
      e.input.set_param(w.substr(0, eq), *v);
    }
  }

  void expect(const std::string& value) {
    if (value == "stable")
      e.expect = Expect::stable;
    else if (value == "detected")
      e.expect = Expect::detected;
    else
      fail("expect must be 'stable' or 'detected', got '" + quoted_excerpt(value) + "'");
    have_expect = true;
  }

  void seed(const std::string& value) {
    char* end = nullptr;
    errno = 0;
    const unsigned long long s = std::strtoull(value.c_str(), &end, 10);
    if (value.empty() || end != value.c_str() + value.size() || errno == ERANGE || value[0] == '-')
      fail("bad seed '" + quoted_excerpt(value) + "'");
    e.seed = s;
  }

  // The entry, once every line is read: every required key and a complete tensor.
  Entry finish() {
    if (pending > 0) {
      line_no = tensor_line;
      fail("the tensor declared here lacks " + std::to_string(pending) + " values");
    }
    if (!have_family) fail("no 'family:' line");
    if (!have_impl) fail("no 'impl:' line");
    if (!have_dtype) fail("no 'dtype:' line");
    if (!have_expect) fail("no 'expect:' line");
    if (e.kind && e.expect != Expect::detected) fail("'kind:' needs 'expect: detected'");
    if (e.input.args.empty()) fail("no tensor");
    return std::move(e);
  }
};

}  // namespace

std::string_view expect_name(Expect e) { return e == Expect::stable ? "stable" : "detected"; }

std::string format(const Entry& e) {
  std::ostringstream os;
  os << "# stabfuzz input (format: corpora/README.md)\n";
  os << "family: " << e.family << "\n";
  os << "impl: " << e.impl << "\n";
  os << "dtype: " << dtype_name(e.input.dtype) << "\n";
  os << "params:";
  for (const auto& [name, v] : e.input.params) os << " " << name << "=" << hex(v);
  os << "\n";
  os << "expect: " << expect_name(e.expect) << "\n";
  if (e.kind) os << "kind: " << finding_kind_name(*e.kind) << "\n";
  if (e.seed) os << "seed: " << *e.seed << "\n";
  if (!e.note.empty()) {
    std::string note = e.note;
    for (char& c : note)
      if (c == '\n' || c == '\r') c = ' ';
    os << "note: " << note << "\n";
  }
  for (const auto& t : e.input.args) {
    os << "tensor ";
    if (t.shape.empty()) os << "scalar";
    for (size_t i = 0; i < t.shape.size(); ++i) os << (i ? "x" : "") << t.shape[i];
    os << "\n";
    for (size_t i = 0; i < t.values.size(); ++i)
      os << hex(t.values[i])
         << ((i + 1) % kValuesPerLine == 0 || i + 1 == t.values.size() ? "\n" : " ");
  }
  return os.str();
}

Entry parse(std::string_view text, const std::string& name) {
  Parser p(name);
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t nl = text.find('\n', pos);
    const std::string_view raw =
        text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
    ++p.line_no;
    p.read_line(trim(raw));
  }
  return p.finish();
}

Entry read_file(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw InputError(path + ": cannot read");
  std::stringstream ss;
  ss << f.rdbuf();
  return parse(ss.str(), path);
}

void write_file(const std::string& path, const Entry& e) {
  make_dirs(path);
  std::ofstream f(path);
  f << format(e);
  if (!f) throw InputError("cannot write " + path);
}

std::string regression_path(const std::string& dir, const Entry& e) {
  std::string variant =
      e.impl.rfind(e.family + "/", 0) == 0 ? e.impl.substr(e.family.size() + 1) : e.impl;
  for (char& c : variant)
    if (c == '/') c = '-';
  return dir + "/" + e.family + "/regression/" + variant + "-" +
         std::string(dtype_name(e.input.dtype)) + ".txt";
}

}  // namespace stabfuzz::corpus
