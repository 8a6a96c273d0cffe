// libonnx-testdata through the interpreter: native and CESTAC runs against the reference outputs.
#include "harness/onnx/testdata.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>
#include <sstream>

#include "harness/onnx/eval.h"
#include "harness/onnx/model.h"
#include "stabfuzz/errors.h"
#include "stabfuzz/stoch.h"

namespace stabfuzz::onnx {
namespace {

namespace fs = std::filesystem;

// "" when `got` matches `want` within the backend tolerances, else the first difference.
template <class T>
std::string compare(const std::string& name, const Tensor<T>& got, const HostTensor& want,
                    const char* run) {
  if (got.shape != want.shape)
    return std::string(run) + ": output '" + name + "' has another shape";
  for (size_t k = 0; k < want.size(); ++k) {
    const double g = value_of(got.v[k]), w = want.values[k];
    const bool ok = (std::isnan(g) && std::isnan(w)) || g == w ||
                    std::fabs(g - w) <= kTestAtol + kTestRtol * std::fabs(w);
    if (!ok) {
      char buf[200];
      std::snprintf(buf, sizeof buf, "%s: output '%s' element %zu is %.9g, reference %.9g", run,
                    name.c_str(), k, g, w);
      return buf;
    }
  }
  return "";
}

template <class T>
std::string run_set(const Model& m, const std::map<std::string, HostTensor>& inputs,
                    const std::vector<HostTensor>& outputs, const char* what) {
  typename Interpreter<T>::Values v;
  for (const auto& [name, t] : m.initializers) v[name] = Interpreter<T>::convert(t);
  for (const auto& [name, t] : inputs) v[name] = Interpreter<T>::convert(t);
  Interpreter<T>::run(m, v);
  for (size_t k = 0; k < m.outputs.size(); ++k) {
    const auto it = v.find(m.outputs[k]);
    if (it == v.end()) return std::string(what) + ": output '" + m.outputs[k] + "' not computed";
    const std::string d = compare(m.outputs[k], it->second, outputs[k], what);
    if (!d.empty()) return d;
  }
  return "";
}

template <class F>
std::string run_both(const Model& m, const std::map<std::string, HostTensor>& inputs,
                     const std::vector<HostTensor>& outputs) {
  std::string d = run_set<F>(m, inputs, outputs, "native");
  if (!d.empty()) return d;
  cestac::Run run(1, 0);
  return run_set<Stoch<F, 3>>(m, inputs, outputs, "CESTAC mean");
}

TestdataCase run_case(const fs::path& dir) {
  TestdataCase c;
  c.name = dir.filename().string();
  try {
    const Model m = read_model((dir / "model.onnx").string());
    const auto& supported = supported_ops();
    std::set<std::string> ops;
    for (const auto& n : m.nodes) ops.insert(n.op);
    c.ops.assign(ops.begin(), ops.end());
    for (const auto& op : c.ops)
      if (std::find(supported.begin(), supported.end(), op) == supported.end()) {
        c.status = "skip";
        c.reason = "operator " + op + " not supported";
        return c;
      }
    std::vector<fs::path> sets;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0)
        sets.push_back(e.path());
    std::sort(sets.begin(), sets.end());
    if (sets.empty()) throw InputError("no test_data_set folder");
    for (const auto& s : sets) {
      const auto inputs = read_inputs(m, s.string());
      std::vector<HostTensor> outputs;
      bool f64 = false;
      for (size_t k = 0; k < m.outputs.size(); ++k) {
        outputs.push_back(read_tensor((s / ("output_" + std::to_string(k) + ".pb")).string()));
        f64 |= outputs.back().elem == Elem::float64;
      }
      for (const auto& [name, t] : inputs) f64 |= t.elem == Elem::float64;
      const std::string d =
          f64 ? run_both<double>(m, inputs, outputs) : run_both<float>(m, inputs, outputs);
      if (!d.empty()) {
        c.status = "fail";
        c.reason = s.filename().string() + ": " + d;
        return c;
      }
    }
    c.status = "pass";
  } catch (const InputError& e) {  // an unsupported variant, element type or attribute
    c.status = "skip";
    c.reason = e.what();
  }
  return c;
}

}  // namespace

TestdataReport run_testdata(const std::vector<std::string>& roots) {
  TestdataReport r;
  r.roots = roots;
  for (const auto& root : roots) {
    if (!fs::is_directory(root)) throw InputError("ONNX test data: " + root + " is not a folder");
    std::vector<fs::path> dirs;
    for (const auto& e : fs::directory_iterator(root))
      if (e.is_directory() && fs::exists(e.path() / "model.onnx")) dirs.push_back(e.path());
    std::sort(dirs.begin(), dirs.end());
    for (const auto& d : dirs) {
      TestdataCase c = run_case(d);
      c.name = fs::path(root).filename().string() + "/" + c.name;
      (c.status == "pass" ? r.passed : c.status == "fail" ? r.failed : r.skipped)++;
      r.run += c.status != "skip";
      r.cases.push_back(std::move(c));
    }
  }
  return r;
}

std::string testdata_markdown(const TestdataReport& r) {
  std::ostringstream os;
  os << r.cases.size() << " tests: " << r.run << " run, " << r.passed << " passed, " << r.failed
     << " failed, " << r.skipped << " skipped (an operator, variant or element type the "
     << "interpreter does not support). Tolerances: |got - reference| <= " << kTestAtol << " + "
     << kTestRtol << " |reference|, natively and for the CESTAC samples' mean.\n\n";
  std::map<std::string, std::array<int, 3>> per_op;  // run, passed, skipped
  for (const auto& c : r.cases)
    for (const auto& op : c.ops) {
      auto& a = per_op[op];
      a[0] += c.status != "skip";
      a[1] += c.status == "pass";
      a[2] += c.status == "skip";
    }
  os << "| operator | run | passed | skipped |\n|---|---:|---:|---:|\n";
  for (const auto& op : supported_ops()) {
    const auto it = per_op.find(op);
    const auto a = it == per_op.end() ? std::array<int, 3>{0, 0, 0} : it->second;
    os << "| " << op << " | " << a[0] << " | " << a[1] << " | " << a[2] << " |\n";
  }
  if (r.failed) {
    os << "\nFailures:\n\n";
    for (const auto& c : r.cases)
      if (c.status == "fail") os << "- `" << c.name << "`: " << c.reason << "\n";
  }
  os << "\nSkipped tests that use only supported operators (a variant the interpreter "
        "refuses):\n\n";
  int shown = 0;
  for (const auto& c : r.cases)
    if (c.status == "skip" && c.reason.rfind("operator ", 0) != 0) {
      os << "- `" << c.name << "`: " << c.reason << "\n";
      ++shown;
    }
  if (!shown) os << "- none\n";
  return os.str();
}

}  // namespace stabfuzz::onnx
