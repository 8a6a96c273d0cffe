// Writing and strictly parsing the monitor's trained-model file (format 1, hex floats).
#include "harness/monitor/weights.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "reports/findings.h"
#include "reports/report.h"
#include "stabfuzz/errors.h"

namespace stabfuzz::monitor {
namespace {

const char* const kTensorNames[Params<double>::kTensors] = {"w1", "b1", "w2", "b2"};

std::string hex(double v) {
  char b[48];
  std::snprintf(b, sizeof b, "%a", v);
  return b;
}

std::string dec(double v) {
  char b[48];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

// Line-by-line reader that names the file and line in every error.
class Reader {
 public:
  Reader(const std::string& text, const std::string& path) : in_(text), path_(path) {}
  [[noreturn]] void fail(const std::string& what) const {
    throw InputError("model file " + path_ + ", line " + std::to_string(line_) + ": " + what);
  }
  std::string next() {
    std::string l;
    if (!std::getline(in_, l)) {
      ++line_;
      fail("truncated (no 'end' line)");
    }
    ++line_;
    if (!l.empty() && l.back() == '\r') l.pop_back();
    return l;
  }
  // "key value": the value for `key`.
  std::string value(const std::string& key) {
    const std::string l = next();
    if (l.size() <= key.size() + 1 || l.compare(0, key.size(), key) != 0 || l[key.size()] != ' ')
      fail("expected '" + key + " ...', got '" + l.substr(0, 60) + "'");
    return l.substr(key.size() + 1);
  }
  double number(const std::string& s) const {
    if (s.empty() || std::isspace(static_cast<unsigned char>(s[0]))) fail("bad number '" + s + "'");
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size() || errno == ERANGE || !std::isfinite(v))
      fail("bad number '" + s.substr(0, 60) + "'");
    return v;
  }
  int64_t integer(const std::string& key, int64_t lo, int64_t hi) {
    const std::string s = value(key);
    const double v = number(s);
    if (v != std::floor(v) || v < static_cast<double>(lo) || v > static_cast<double>(hi))
      fail(key + " must be a whole number in [" + std::to_string(lo) + ", " + std::to_string(hi) +
           "], got '" + s + "'");
    return static_cast<int64_t>(v);
  }

 private:
  std::istringstream in_;
  std::string path_;
  int line_ = 0;
};

size_t expected_size(const ModelSpec& s, int i) {
  return i == 0   ? s.w1_size()
         : i == 1 ? s.b1_size()
         : i == 2 ? size_t(s.layer1_out()) * s.classes
                  : size_t(s.classes);
}

}  // namespace

std::string model_file_text(const ModelFile& m) {
  std::ostringstream os;
  const ModelSpec& s = m.spec;
  os << "stabfuzz-monitor-model " << kModelFormat << "\nmodel " << model_name(s.kind) << "\ndata "
     << m.data << "\nprecision " << (m.f64 ? "f64" : "f32") << "\nheight " << s.height << "\nwidth "
     << s.width << "\nhidden " << s.hidden << "\nchannels " << s.channels << "\nclasses "
     << s.classes << "\nloss " << m.loss << "\nlr " << dec(m.lr) << "\nsteps " << m.steps
     << "\nseed " << m.seed << "\ntest_accuracy_mean " << dec(m.test_accuracy_mean) << '\n';
  for (int i = 0; i < Params<double>::kTensors; ++i) {
    os << "tensor " << kTensorNames[i] << ' ' << m.params.tensor(i).size() << '\n';
    for (double v : m.params.tensor(i)) os << hex(v) << '\n';
  }
  os << "end\n";
  return os.str();
}

void write_model_file(const ModelFile& m, const std::string& path) {
  reports::write_text_atomically(path, model_file_text(m));
}

ModelFile parse_model_file(const std::string& text, const std::string& path) {
  Reader r(text, path);
  ModelFile m;
  const std::string head = r.next();
  if (head.rfind("stabfuzz-monitor-model ", 0) != 0)
    r.fail("not a stabfuzz monitor model (expected 'stabfuzz-monitor-model " +
           std::to_string(kModelFormat) + "')");
  if (head != "stabfuzz-monitor-model " + std::to_string(kModelFormat))
    r.fail("unsupported format '" + head.substr(23, 20) + "' (this stabfuzz reads format " +
           std::to_string(kModelFormat) + ")");
  const std::string kind = r.value("model");
  if (kind != "mlp" && kind != "cnn") r.fail("model must be mlp or cnn, got '" + kind + "'");
  m.spec.kind = kind == "mlp" ? ModelKind::mlp : ModelKind::cnn;
  m.data = r.value("data");
  if (m.data != "digits" && m.data != "fashion-mnist")
    r.fail("data must be digits or fashion-mnist, got '" + m.data + "'");
  const std::string prec = r.value("precision");
  if (prec != "f32" && prec != "f64") r.fail("precision must be f32 or f64, got '" + prec + "'");
  m.f64 = prec == "f64";
  m.spec.height = static_cast<int>(r.integer("height", 3, 4096));
  m.spec.width = static_cast<int>(r.integer("width", 3, 4096));
  m.spec.hidden = static_cast<int>(r.integer("hidden", 1, 1 << 16));
  m.spec.channels = static_cast<int>(r.integer("channels", 1, 1 << 10));
  m.spec.classes = static_cast<int>(r.integer("classes", 2, 16));
  m.loss = r.value("loss");
  m.lr = r.number(r.value("lr"));
  m.steps = r.integer("steps", 0, int64_t(1) << 52);
  m.seed = static_cast<uint64_t>(r.integer("seed", 0, int64_t(1) << 53));
  m.test_accuracy_mean = r.number(r.value("test_accuracy_mean"));
  m.params = Params<double>::zeros(m.spec);
  for (int i = 0; i < Params<double>::kTensors; ++i) {
    const std::string want = std::string("tensor ") + kTensorNames[i] + ' ';
    const std::string l = r.next();
    if (l.rfind(want, 0) != 0) r.fail("expected '" + want + "COUNT'");
    const double count = r.number(l.substr(want.size()));
    const size_t n = expected_size(m.spec, i);
    if (count != static_cast<double>(n))
      r.fail(std::string("tensor ") + kTensorNames[i] + " has " + l.substr(want.size()) +
             " values; the " + kind + " with these shapes takes " + std::to_string(n));
    for (double& v : m.params.tensor(i)) {
      v = r.number(r.next());
      if (!m.f64 && static_cast<double>(static_cast<float>(v)) != v)
        r.fail("value " + hex(v) + " is not a float in an f32 model");
    }
  }
  if (r.next() != "end") r.fail("expected 'end'");
  return m;
}

ModelFile read_model_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError("cannot read model file " + path);
  std::ostringstream os;
  os << in.rdbuf();
  return parse_model_file(os.str(), path);
}

}  // namespace stabfuzz::monitor
