// Triage of a library finding: the bug report and the standalone reproducer (triage.h).
#include "harness/triage/triage.h"

#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "harness/pipeline/evaluate.h"
#include "reports/catalog.h"
#include "reports/findings.h"
#include "stabfuzz/errors.h"

namespace stabfuzz::triage {
namespace {

// A value as C++ source: a hex float literal, INFINITY, -INFINITY or NAN.
std::string literal(double v) {
  if (std::isnan(v)) return "NAN";
  if (std::isinf(v)) return v > 0 ? "INFINITY" : "-INFINITY";
  return reports::hex_float(v);
}

std::string hexes(const std::vector<double>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i)
    out += (i ? (i % 4 ? ", " : ",\n      ") : "") + literal(v[i]);
  return out;
}

// Runs `cmd` through the shell; its output (stdout and stderr) and exit status.
std::pair<int, std::string> shell(const std::string& cmd) {
  std::string out;
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return {-1, "cannot run: " + cmd};
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  const int st = ::pclose(p);
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

std::string sh_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

corpus::Entry entry_from_finding(const json::Value& f) {
  corpus::Entry e;
  e.impl = f.at("impl").as_string();
  e.family = f.get("target") ? f.at("target").as_string() : e.impl.substr(0, e.impl.find('/'));
  const auto d = parse_dtype(f.at("dtype").as_string());
  if (!d) throw InputError("finding with unknown dtype '" + f.at("dtype").as_string() + "'");
  e.input.dtype = *d;
  for (const auto& arg : f.at("input").as_array()) {
    Tensor t;
    for (const auto& s : arg.at("shape").as_array()) t.shape.push_back(json::integer<int64_t>(s));
    for (const auto& x : arg.at("values").as_array())
      t.values.push_back(x.is_string() ? reports::parse_float(x.as_string()) : x.as_number());
    e.input.args.push_back(std::move(t));
  }
  if (const json::Value* ps = f.get("params"); ps && ps->is_object())
    for (const auto& [name, v] : ps->as_object()) e.input.set_param(name, v.as_number());
  e.expect = corpus::Expect::detected;
  if (const json::Value* s = f.get("seed"); s && s->is_number())
    e.seed = json::integer<uint64_t>(*s);
  return e;
}

std::string reproducer_source(const StandaloneCall& call, const Input& in,
                              const std::vector<double>& exact,
                              const std::vector<double>& allowed_ulps, const std::string& title) {
  const bool f64 = in.dtype == DType::f64;
  std::ostringstream os;
  os << "// " << title << "\n//\n"
     << "// Standalone reproducer written by stabfuzz triage: calls only " << call.library
     << ".\n// Build and run:\n//   c++ -std=c++17 -O2 repro.cc -o repro " << call.build
     << "\n//   OMP_NUM_THREADS=1 ./repro    # exit status 1: the error is beyond what the\n"
     << "//   problem's conditioning allows (see report.md)\n"
     << "#include <cmath>\n#include <cstdio>\n#include <limits>\n#include <vector>\n\n"
     << call.includes << "\n"
     << "static std::vector<double> call(const std::vector<std::vector<double>>& x) {\n"
     << call.body << "}\n\n"
     << "// Spacing of the " << dtype_name(in.dtype) << " format at |v|.\n"
     << "static double ulp(double v) {\n";
  if (in.dtype == DType::f64 || in.dtype == DType::f32) {
    os << "  using T = " << (f64 ? "double" : "float") << ";\n"
       << "  const T a = std::fabs(static_cast<T>(v));\n"
       << "  return static_cast<double>(std::nextafter(a, std::numeric_limits<T>::infinity())) - "
          "a;\n";
  } else {  // bf16: 8 significant bits, exponents down to -126; f16: 11 bits, down to -14
    const bool bf16 = in.dtype == DType::bf16;
    os << "  const int p = " << (bf16 ? 8 : 11) << ", emin = " << (bf16 ? -126 : -14) << ";\n"
       << "  int e = 0;\n"
       << "  std::frexp(std::fabs(v), &e);  // |v| = m 2^e, m in [1/2, 1)\n"
       << "  return std::ldexp(1.0, (v == 0 || e - 1 < emin ? emin : e - 1) - (p - 1));\n";
  }
  os << "}\n\n"
     << "int main() {\n  // The input, exactly (each value is a " << dtype_name(in.dtype) << ").\n"
     << "  const std::vector<std::vector<double>> x = {\n";
  for (const auto& a : in.args) os << "      {" << hexes(a.values) << "},\n";
  os << "  };\n  // Each output correctly rounded to " << dtype_name(in.dtype)
     << " (MPFR), and the error it may have in ULPs:\n"
     << "  // the tolerance at condition 1 times max(1, the output's condition number).\n"
     << "  const std::vector<double> exact = {" << hexes(exact) << "};\n"
     << "  const std::vector<double> allowed = {" << hexes(allowed_ulps) << "};\n"
     << "  const std::vector<double> y = call(x);\n  int bad = 0;\n"
     << "  for (size_t i = 0; i < exact.size() && i < y.size(); ++i) {\n"
     << "    // A NaN or infinity where the exact result differs is wrong whatever the allowance\n"
     << "    // (an exact 0 from cancellation allows any finite error: its condition is "
        "infinite).\n"
     << "    const bool nonfinite = std::isnan(y[i]) != std::isnan(exact[i]) ||\n"
     << "        ((std::isinf(y[i]) || std::isinf(exact[i])) && y[i] != exact[i]);\n"
     << "    double err = 0;\n"
     << "    if (nonfinite)\n"
     << "      err = INFINITY;\n"
     << "    else if (!std::isnan(y[i]) && y[i] != exact[i])\n"
     << "      err = std::fabs(y[i] - exact[i]) / ulp(exact[i]);\n"
     << "    const bool wrong = nonfinite || !(err <= allowed[i]);\n    bad += wrong;\n"
     << "    std::printf(\"output %zu: computed %a (%.9g), correctly rounded %a (%.9g), \"\n"
     << "                \"error %.3g ULP, allowed %.3g%s\\n\",\n"
     << "                i, y[i], y[i], exact[i], exact[i], err, allowed[i], wrong ? \"  <-- "
        "WRONG\" : \"\");\n"
     << "  }\n"
     << "  std::printf(\"%d of %zu outputs beyond the allowed error\\n\", bad, exact.size());\n"
     << "  return bad ? 1 : 0;\n}\n";
  return os.str();
}

// Builds repro.cc against the library (under o.library_prefix when given) and runs it: its exit
// status and the end of its output into r.
void run_reproducer(const StandaloneCall& call, const Options& o, Result& r) {
  const std::string bin = o.out_dir + "/repro";
  std::string prefix;
  if (!o.library_prefix.empty()) {
    const std::string dir = std::filesystem::absolute(o.library_prefix).string();
    prefix = "-I" + sh_quote(dir + "/include") + " -L" + sh_quote(dir + "/lib") + " -Wl,-rpath," +
             sh_quote(dir + "/lib") + " ";
  }
  auto [rc, text] = shell("c++ -std=c++17 -O2 " + prefix + sh_quote(r.source_path) + " -o " +
                          sh_quote(bin) + " " + call.build);
  if (rc == 0)
    std::tie(rc, text) = shell("OMP_NUM_THREADS=1 " + sh_quote(bin));
  else
    rc = 2 + rc;  // a build error is neither "reproduced" nor "not reproduced"
  r.repro_exit = rc;
  // A build error can run to pages: its end says what failed.
  r.repro_output = text.size() > 3000 ? "...\n" + text.substr(text.size() - 3000) : text;
}

// The bug report: the input, computed vs correctly rounded, the accuracy the conditioning
// allows, a known stable formulation, the reproducer and its output.
std::string report_markdown(const Family& fam, const corpus::Entry& e, const Verdict& v,
                            const std::string& lib, const std::optional<StandaloneCall>& call,
                            const Options& o, const Result& r) {
  const Input& in = e.input;
  reports::Finding f;  // what the catalog of stable formulations matches on
  f.target = fam.name;
  f.nonfinite = v.nonfinite;
  const reports::Suggestion sug = reports::suggest(f);
  std::ostringstream md;
  md << "# " << r.title << "\n\n"
     << "- library: " << lib << "\n- operator: `" << e.impl << "` — " << fam.summary << "\n"
     << "- dtype: " << dtype_name(in.dtype) << "\n- kind: "
     << (v.finding() ? finding_kind_name(v.kind) : "none (the input passes here now)")
     << (v.kind_detail.empty() ? "" : " — " + v.kind_detail) << "\n\n"
     << "## Input\n\n";
  for (size_t k = 0; k < in.args.size(); ++k)
    md << "argument " << k << ", shape " << in.args[k].values.size() << ":\n\n```\n"
       << hexes(in.args[k].values) << "\n```\n\n";
  for (const auto& [name, value] : in.params) md << "- " << name << " = " << value << "\n";
  md << "## Computed vs correctly rounded\n\n"
     << "Output " << v.worst << ": computed `" << reports::hex_float(v.computed) << "` ("
     << reports::num(v.computed, 9) << "), correctly rounded `" << reports::hex_float(v.exact)
     << "` (" << reports::num(v.exact, 9) << "), an error of " << reports::num(v.max_ulp)
     << " ULP.\n\n## Expected accuracy\n\n"
     << "The exact result is computed with MPFR and correctly rounded to " << dtype_name(in.dtype)
     << ". A backward-stable implementation of this operator errs by at most "
     << reports::num(v.tolerance_ulps) << " ULP times max(1, cond), where cond is the relative "
     << "condition number of the problem at this input (" << reports::num(v.cond)
     << " for this output): error from the input's own sensitivity is not counted against the "
     << "library. Here the error is " << reports::num(v.max_ratio) << " times that allowance.\n\n";
  if (!sug.fix.empty())
    md << "## Known stable formulation\n\n" << sug.fix << " (" << sug.source << ")\n\n";
  md << "## Reproducer\n\n";
  if (r.source_path.empty()) {
    md << "No standalone reproducer is written for this target and dtype yet; replay it with "
          "stabfuzz: `stabfuzz replay FILE` on its corpus file.\n";
  } else {
    md << "`repro.cc` calls only " << lib << ":\n\n```sh\nc++ -std=c++17 -O2 repro.cc -o repro "
       << call->build << "\nOMP_NUM_THREADS=1 ./repro\n```\n";
    if (r.repro_exit >= 0)
      md << "\nIts output here"
         << (o.library_prefix.empty()
                 ? std::string()
                 : ", built against the library under `" + o.library_prefix + "` (-I " +
                       o.library_prefix + "/include -L " + o.library_prefix + "/lib)")
         << " (exit status " << r.repro_exit << "):\n\n```\n"
         << r.repro_output << "```\n";
  }
  return md.str();
}

Result triage(const Registry& registry, const corpus::Entry& e, const Options& o) {
  const auto [fam, target] = registry.find_target(e.impl);
  if (!target) throw InputError("unknown implementation '" + e.impl + "' (stabfuzz --list)");
  if (target->kind != TargetKind::library)
    throw InputError(e.impl + " is not a library target: triage writes reports for libraries");
  const Input& in = e.input;
  const std::vector<double> out = target->native(in);
  const OracleResult oracle = fam->oracle(in);
  const Verdict v = pipeline::decide(*fam, in, out, oracle, nullptr);
  Result r;
  r.finding_now = v.finding();
  const auto call = target->standalone ? target->standalone(in) : std::nullopt;
  const std::string lib = call ? call->library : target->description;
  const std::string op = e.impl.substr(e.impl.find('/') + 1);
  std::ostringstream title;
  title << "[" << lib << "] " << op << " " << dtype_name(in.dtype) << ": "
        << (v.finding() ? std::string(finding_kind_name(v.kind)) : "no failure") << ", computed "
        << reports::num(v.computed, 9) << " where the correctly rounded result is "
        << reports::num(v.exact, 9);
  r.title = title.str();
  std::filesystem::create_directories(o.out_dir);
  std::vector<double> allowed;
  for (double c : oracle.cond) allowed.push_back(v.tolerance_ulps * std::max(1.0, c));
  if (call && oracle.decidable) {
    r.source_path = o.out_dir + "/repro.cc";
    std::ofstream(r.source_path) << reproducer_source(*call, in, oracle.exact, allowed, r.title);
    if (o.run) run_reproducer(*call, o, r);
  }
  r.report_path = o.out_dir + "/report.md";
  std::ofstream(r.report_path) << report_markdown(*fam, e, v, lib, call, o, r);
  return r;
}

}  // namespace stabfuzz::triage
