// Corpus replay: the CI regression suite over corpora/.
#include "harness/corpus/replay.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <optional>
#include <ostream>
#include <sstream>

#include "harness/campaign/isolate.h"
#include "reports/junit.h"
#include "stabfuzz/entropy.h"
#include "stabfuzz/errors.h"

namespace stabfuzz::corpus {
namespace {

std::string ratio_text(const Verdict& v) {
  std::ostringstream os;
  if (v.undecidable) return "oracle undecidable";
  os << std::setprecision(3) << "error " << v.max_ratio << " x tolerance";
  if (v.has_cestac) os << ", cestac digits " << std::setprecision(2) << std::fixed << v.min_digits;
  return os.str();
}

// Why a file's implementation cannot run in this build or on this CPU (a library not compiled in,
// a dtype its library refuses here), or "" when it can: such files are skipped, not failed.
std::string unavailable_here(const Registry& registry, const Entry& e) {
  for (const auto& u : registry.unavailable())
    if (u.id == e.impl) return u.reason;
  const auto [owner, target] = registry.find_target(e.impl);
  if (target && target->kind == TargetKind::library &&
      std::find(target->dtypes.begin(), target->dtypes.end(), e.input.dtype) ==
          target->dtypes.end())
    return "this library offers no " + std::string(dtype_name(e.input.dtype)) + " here";
  return "";
}

}  // namespace

ReplayOutcome check(const Registry& registry, const Entry& e, const std::string& path,
                    int64_t timeout_ms) {
  const Family* fam = registry.find_family(e.family);
  if (!fam) throw InputError(path + ": unknown family '" + e.family + "'");
  const auto [owner, target] = registry.find_target(e.impl);
  if (!target || owner != fam)
    throw InputError(path + ": unknown implementation '" + e.impl + "' of " + e.family);
  if (std::find(target->dtypes.begin(), target->dtypes.end(), e.input.dtype) ==
      target->dtypes.end())
    throw InputError(path + ": " + e.impl + " does not run in " +
                     std::string(dtype_name(e.input.dtype)));
  if (auto bad = fam->validate(e.input)) throw InputError(path + ": invalid input: " + *bad);
  CestacRequest req;
  req.seed = e.seed.value_or(0);
  req.stream = hash_str(e.impl) ^ (static_cast<uint64_t>(e.input.dtype) << 56);
  std::optional<campaign::Isolator> iso;
  if (target->isolated) iso.emplace(*target, timeout_ms);
  const campaign::Outcome out =
      campaign::evaluate_outcome(*fam, *target, e.input, req, iso ? &*iso : nullptr);
  const Verdict& v = out.verdict;
  ReplayOutcome o;
  o.path = path;
  // With a 'kind:' line, a finding of another kind is not the one the file keeps.
  const bool right_kind = !e.kind || out.kind() == *e.kind;
  const std::string kind = std::string(finding_kind_name(out.kind()));
  if (out.failure != campaign::Failure::none) {  // a crash, timeout or exception is detected
    o.ok = e.expect == Expect::detected && right_kind;
    o.message = std::string(o.ok ? "detected (" : "FAILED now (") +
                std::string(campaign::failure_name(out.failure)) + ": " + out.detail + ")";
    return o;
  }
  if (e.expect == Expect::detected) {
    o.ok = v.finding() && right_kind;
    o.message = o.ok ? "detected (" + kind + ", " + v.detectors() + ", " + ratio_text(v) + ")"
                : v.finding()
                    ? "detected as " + kind + ", not " + std::string(finding_kind_name(*e.kind)) +
                          " (" + ratio_text(v) + ")"
                    : "NOT DETECTED any more (" + ratio_text(v) + ")";
  } else {
    o.ok = !v.finding();
    o.message = o.ok ? "stable (" + ratio_text(v) + ")"
                     : "UNSTABLE now (" + v.detectors() + ", " + ratio_text(v) + ")";
  }
  return o;
}

std::vector<std::string> collect(const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (const auto& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<std::string> found;
      for (auto it = fs::recursive_directory_iterator(p, ec);
           !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
        if (it->is_regular_file() && it->path().extension() == ".txt")
          found.push_back(it->path().string());
      if (ec) throw InputError("cannot read directory " + p + ": " + ec.message());
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else if (fs::exists(p, ec)) {
      files.push_back(p);
    } else {
      throw InputError("no such file or directory: " + p);
    }
  }
  return files;
}

std::string render_replay_junit(const std::vector<JunitCase>& cases) {
  int failures = 0, errors = 0;
  double total = 0;
  for (const auto& c : cases) {
    failures += !c.ok && !c.malformed;
    errors += c.malformed;
    total += c.seconds;
  }
  std::ostringstream os;
  os << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
     << "<testsuites name=\"stabfuzz replay\" tests=\"" << cases.size() << "\" failures=\""
     << failures << "\" errors=\"" << errors << "\" time=\"" << total << "\">\n"
     << "  <testsuite name=\"replay\" tests=\"" << cases.size() << "\" failures=\"" << failures
     << "\" errors=\"" << errors << "\" time=\"" << total << "\">\n";
  for (const auto& c : cases) {
    os << "    <testcase classname=\""
       << reports::xml_escape(c.impl.empty() ? "corpus" : c.impl + "." + c.dtype) << "\" name=\""
       << reports::xml_escape(c.path) << "\" time=\"" << c.seconds << "\"";
    if (c.ok) {
      os << "/>\n";
      continue;
    }
    os << ">\n      <" << (c.malformed ? "error" : "failure") << " message=\""
       << reports::xml_escape(c.message) << "\"/>\n    </testcase>\n";
  }
  os << "  </testsuite>\n</testsuites>\n";
  return os.str();
}

int replay(const Registry& registry, const std::vector<std::string>& paths, std::ostream& out,
           const std::string& junit_path, int64_t timeout_ms) {
  const std::vector<std::string> files = collect(paths);
  if (files.empty()) throw InputError("no corpus files (*.txt) under the given paths");
  int passed = 0, failed = 0, malformed = 0, skipped = 0;
  std::vector<JunitCase> cases;
  for (const auto& f : files) {
    const auto t0 = std::chrono::steady_clock::now();
    JunitCase c;
    c.path = f;
    try {
      const Entry e = read_file(f);
      c.impl = e.impl;
      c.dtype = std::string(dtype_name(e.input.dtype));
      if (const std::string why = unavailable_here(registry, e); !why.empty()) {
        out << "skip  " << f << ": " << e.impl << " " << dtype_name(e.input.dtype) << ": " << why
            << "\n";
        ++skipped;
        continue;
      }
      const ReplayOutcome o = check(registry, e, f, timeout_ms);
      out << (o.ok ? "ok    " : "FAIL  ") << f << ": " << e.impl << " " << dtype_name(e.input.dtype)
          << ", expect " << expect_name(e.expect) << ": " << o.message << "\n";
      (o.ok ? passed : failed)++;
      c.ok = o.ok;
      c.message = o.message;
    } catch (const InputError& err) {
      out << "ERROR " << err.what() << " (skipped)\n";
      ++malformed;
      c.malformed = true;
      c.message = err.what();
    }
    c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    cases.push_back(std::move(c));
  }
  out << "replay: " << files.size() << " files, " << passed << " ok, " << failed << " failed, "
      << malformed << " malformed";
  if (skipped) out << ", " << skipped << " skipped (unavailable here)";
  out << "\n";
  if (!junit_path.empty()) {
    const std::string tmp = junit_path + ".tmp";
    std::ofstream j(tmp);
    j << render_replay_junit(cases);
    j.close();
    if (!j || std::rename(tmp.c_str(), junit_path.c_str()) != 0)
      throw InputError("cannot write " + junit_path);
    out << "junit: " << junit_path << "\n";
  }
  // A malformed file is bad input (exit 2), after every other file has run and been reported.
  return malformed > 0 ? 2 : failed > 0 ? 1 : 0;
}

}  // namespace stabfuzz::corpus
