// `stabfuzz --list` (harness/cli/list.h): the selectors, kinds, libraries and families, in 100
// columns; --list --json for scripts.
#include "harness/cli/list.h"

#include <algorithm>
#include <map>
#include <ostream>
#include <sstream>

#include "harness/core/select.h"
#include "stabfuzz/version.h"

namespace stabfuzz::cli {
namespace {

std::string pad(const std::string& s, size_t w) {
  const size_t c = columns(s);
  return c >= w ? s + " " : s + std::string(w - c, ' ');
}

// `s` in at most `width` columns: cut at a word, "..." after it.
std::string cut(const std::string& s, size_t width) {
  if (columns(s) <= width) return s;
  std::string out;
  std::istringstream words(s);
  for (std::string w; words >> w;) {
    if (columns(out) + 1 + columns(w) + 4 > width) break;
    out += (out.empty() ? "" : " ") + w;
  }
  return out + " ...";
}

std::string count(size_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

// What a kind or a library covers here: implementations, their families (registry order), and the
// unavailable ones with their reasons.
struct Coverage {
  size_t impls = 0;
  std::vector<std::string> families;
  std::vector<std::pair<std::string, size_t>> reasons;  // reason, how many; first seen first

  void add(const Family& f, const Target&) {
    ++impls;
    if (families.empty() || families.back() != f.name) families.push_back(f.name);
  }
  void add(const UnavailableTarget& u) {
    for (auto& [r, n] : reasons)
      if (r == u.reason) return void(++n);
    reasons.emplace_back(u.reason, 1);
  }
};

template <class Pred, class UPred>
Coverage coverage(const Registry& reg, Pred pred, UPred upred) {
  Coverage c;
  for (const auto& f : reg.families())
    for (const auto& t : f.targets)
      if (pred(t)) c.add(f, t);
  for (const auto& u : reg.unavailable())
    if (upred(u)) c.add(u);
  return c;
}

// The libraries selectors know, then any other a registered target names.
std::vector<select::Library> libraries(const Registry& reg) {
  std::vector<select::Library> out = select::known_libraries();
  for (const auto& f : reg.families())
    for (const auto& t : f.targets) {
      const std::string lib = select::library_of(t);
      if (!lib.empty() && std::none_of(out.begin(), out.end(),
                                       [&](const select::Library& l) { return l.name == lib; }))
        out.push_back({lib, "library targets named " + lib});
    }
  return out;
}

void list_selectors(const Registry& reg, std::ostream& os) {
  size_t impls = 0;
  for (const auto& f : reg.families()) impls += f.targets.size();
  os << "Selectors (--target, campaign --targets; comma-separated; fuzz: FAMILY or "
        "FAMILY/LIBRARY):\n"
     << "  all             every implementation: " << impls << " in "
     << count(reg.families().size(), "family", "families") << "\n"
     << "  FAMILY          one family's implementations, e.g. softmax (Families below)\n"
     << "  KIND            reference, injected or library (Kinds below)\n"
     << "  LIBRARY         one library's implementations, e.g. onednn (Libraries below)\n"
     << "  FAMILY/LIBRARY  one library within a family, e.g. softmax/torch\n"
     << "  FAMILY/KIND     one kind within a family, e.g. softmax/reference\n"
     << "  ID              one implementation, e.g. softmax/cpu/stable (Families below)\n";
}

void list_kinds(const Registry& reg, std::ostream& os) {
  static const std::pair<TargetKind, const char*> kinds[] = {
      {TargetKind::reference, "stabfuzz's own stable kernels"},
      {TargetKind::injected, "planted bugs the detectors must find"},
      {TargetKind::library, "kernels of real libraries (Libraries below)"}};
  os << "\nKinds:\n";
  for (const auto& [kind, what] : kinds) {
    const Coverage c = coverage(
        reg, [k = kind](const Target& t) { return t.kind == k; },
        [](const UnavailableTarget&) { return false; });
    wrap(os, pad("  " + std::string(target_kind_name(kind)), 13),
         count(c.impls, "implementation", "implementations") + " in " +
             count(c.families.size(), "family", "families") + ": " + what,
         13);
  }
}

void list_libraries(const Registry& reg, std::ostream& os) {
  os << "\nLibraries (LIBRARY, FAMILY/LIBRARY):\n";
  const std::string indent(10, ' ');
  for (const auto& lib : libraries(reg)) {
    const Coverage c = coverage(
        reg, [&](const Target& t) { return select::library_of(t) == lib.name; },
        [&](const UnavailableTarget& u) { return select::library_of(u) == lib.name; });
    wrap(os, pad("  " + lib.name, 10), lib.what, 10);
    if (c.impls > 0)
      wrap(os, indent,
           count(c.impls, "implementation", "implementations") + " in " +
               count(c.families.size(), "family", "families") + ": " + join(c.families),
           12);
    for (const auto& [reason, n] : c.reasons)
      wrap(os, indent, "unavailable here (" + std::to_string(n) + "): " + reason, 12);
    if (c.impls == 0 && c.reasons.empty())
      os << indent << (lib.name == "plugin" ? "none loaded: give --plugin LIB.so" : "none here")
         << "\n";
  }
}

void list_family(const Family& f, std::ostream& os) {
  wrap(os, f.name + " — ", f.summary, 4);
  std::vector<std::string> regimes;
  for (const auto& r : f.regimes) regimes.push_back(r.name);
  wrap(os, "  regimes: ", join(regimes), 11);
  size_t w = 0;
  for (const auto& t : f.targets) w = std::max(w, t.id.size() + 2);
  for (const auto& t : f.targets) {
    std::string dts;
    for (DType d : t.dtypes) dts += (dts.empty() ? "" : ",") + std::string(dtype_name(d));
    const std::string head = "  " + pad(t.id, w) + pad(std::string(target_kind_name(t.kind)), 10) +
                             pad(dts, 17) + (t.cestac ? "cestac+oracle" : "oracle");
    if (columns(head) + 2 + columns(t.description) <= kListColumns) {
      os << head << "  " << t.description << "\n";
    } else {
      os << head << "\n";
      wrap(os, "      ", t.description, 6);
    }
  }
}

}  // namespace

void list_targets(const Registry& reg, std::ostream& os) {
  list_selectors(reg, os);
  list_kinds(reg, os);
  list_libraries(reg, os);
  os << "\nFamilies (implementation, kind, dtypes, detectors, description):\n";
  for (const auto& f : reg.families()) list_family(f, os);
  if (!reg.unavailable().empty()) {
    os << "\nUnavailable here:\n";
    size_t w = 0;
    for (const auto& u : reg.unavailable()) w = std::max(w, u.id.size() + 2);
    const std::string* previous = nullptr;
    for (const auto& u : reg.unavailable()) {
      const std::string head = "  " + pad(u.id, w);
      // A reason given in full on the line above is cut to the line's width.
      if (previous && *previous == u.reason && columns(head + u.reason) > kListColumns)
        os << head << cut(u.reason, kListColumns - columns(head)) << "\n";
      else
        wrap(os, head, u.reason, 6);
      previous = &u.reason;
    }
  }
  os << "\n";
  wrap(os, "build: ", build_configuration(), 7);
}

json::Value list_json(const Registry& reg) {
  json::Value out;
  json::Array fams;
  for (const auto& f : reg.families()) {
    json::Value jf;
    jf.set("name", f.name);
    jf.set("summary", f.summary);
    json::Array regimes;
    for (const auto& r : f.regimes) {
      json::Value jr;
      jr.set("name", r.name);
      jr.set("description", r.description);
      regimes.push_back(std::move(jr));
    }
    jf.set("regimes", std::move(regimes));
    json::Array targets;
    for (const auto& t : f.targets) {
      json::Value jt;
      jt.set("id", t.id);
      jt.set("kind", target_kind_name(t.kind));
      if (const std::string lib = select::library_of(t); !lib.empty()) jt.set("library", lib);
      json::Array dts;
      for (DType d : t.dtypes) dts.emplace_back(dtype_name(d));
      jt.set("dtypes", std::move(dts));
      jt.set("cestac", static_cast<bool>(t.cestac));
      if (t.isolated) jt.set("isolated", true);  // runs in a child process (plugins)
      jt.set("description", t.description);
      if (t.injection) {
        jt.set("plants", t.injection->plants);
        jt.set("fails_where", t.injection->fails_where);
        jt.set("fix", t.injection->fix);
      }
      targets.push_back(std::move(jt));
    }
    jf.set("targets", std::move(targets));
    fams.push_back(std::move(jf));
  }
  out.set("families", std::move(fams));
  json::Array unavailable;
  for (const auto& u : reg.unavailable()) {
    json::Value ju;
    ju.set("id", u.id);
    ju.set("reason", u.reason);
    if (const std::string lib = select::library_of(u); !lib.empty()) ju.set("library", lib);
    unavailable.push_back(std::move(ju));
  }
  out.set("unavailable", std::move(unavailable));
  json::Array libs;
  for (const auto& lib : libraries(reg)) {
    json::Value jl;
    jl.set("name", lib.name);
    jl.set("description", lib.what);
    libs.push_back(std::move(jl));
  }
  out.set("libraries", std::move(libs));
  out.set("build", build_configuration());
  return out;
}

}  // namespace stabfuzz::cli
