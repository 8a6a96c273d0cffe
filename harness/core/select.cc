// Target selectors (harness/core/select.h): all, families, libraries, kinds, family/library,
// family/kind and implementation ids.
#include "harness/core/select.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <set>
#include <sstream>

#include "stabfuzz/errors.h"

namespace stabfuzz::select {
namespace {

// family/<part>/name -> part; "" for an id of fewer than three parts.
std::string second_part(const std::string& id) {
  const size_t a = id.find('/');
  const size_t b = a == std::string::npos ? a : id.find('/', a + 1);
  return b == std::string::npos ? "" : id.substr(a + 1, b - a - 1);
}

std::string family_part(const std::string& id) { return id.substr(0, id.find('/')); }

std::optional<TargetKind> kind_named(const std::string& s) {
  for (TargetKind k : {TargetKind::reference, TargetKind::injected, TargetKind::library})
    if (target_kind_name(k) == s) return k;
  return std::nullopt;
}

bool is_library(const Registry& reg, const std::string& s) {
  for (const auto& l : known_libraries())
    if (l.name == s) return true;
  for (const auto& f : reg.families())
    for (const auto& t : f.targets)
      if (library_of(t) == s) return true;
  return false;
}

// What one selector matches among the registered targets and among the unavailable ones.
struct Matcher {
  std::function<bool(const Family&, const Target&)> target;
  std::function<bool(const UnavailableTarget&)> unavailable;
};

// The kind of an unavailable target, as far as its id tells: a library's or a GPU kernel.
bool unavailable_of_kind(const UnavailableTarget& u, TargetKind k) {
  const bool lib = !library_of(u).empty();
  return k == TargetKind::library ? lib : k == TargetKind::reference && !lib;
}

// A family, a kind or a library (no '/').
std::optional<Matcher> word_matcher(const Registry& reg, const std::string& s) {
  if (s == "all")
    return Matcher{[](const Family&, const Target&) { return true; },
                   [](const UnavailableTarget&) { return true; }};
  if (reg.find_family(s))
    return Matcher{[s](const Family& f, const Target&) { return f.name == s; },
                   [s](const UnavailableTarget& u) { return family_part(u.id) == s; }};
  if (const auto k = kind_named(s))
    return Matcher{[k](const Family&, const Target& t) { return t.kind == *k; },
                   [k](const UnavailableTarget& u) { return unavailable_of_kind(u, *k); }};
  if (is_library(reg, s))
    return Matcher{[s](const Family&, const Target& t) { return library_of(t) == s; },
                   [s](const UnavailableTarget& u) { return library_of(u) == s; }};
  return std::nullopt;
}

std::optional<Matcher> matcher(const Registry& reg, const std::string& s) {
  if (auto m = word_matcher(reg, s)) return m;
  const size_t slash = s.find('/');
  if (slash != std::string::npos && s.find('/', slash + 1) == std::string::npos &&
      reg.find_family(s.substr(0, slash))) {
    // family/library or family/kind: the word's matcher within the family.
    const std::string fam = s.substr(0, slash), sub = s.substr(slash + 1);
    if (sub != "all" && !reg.find_family(sub))
      if (auto m = word_matcher(reg, sub))
        return Matcher{
            [fam, m](const Family& f, const Target& t) { return f.name == fam && m->target(f, t); },
            [fam, m](const UnavailableTarget& u) {
              return family_part(u.id) == fam && m->unavailable(u);
            }};
  }
  const bool known_id = reg.find_target(s).second != nullptr ||
                        std::any_of(reg.unavailable().begin(), reg.unavailable().end(),
                                    [&](const UnavailableTarget& u) { return u.id == s; });
  if (known_id)
    return Matcher{[s](const Family&, const Target& t) { return t.id == s; },
                   [s](const UnavailableTarget& u) { return u.id == s; }};
  return std::nullopt;
}

// The families a library implements here, comma-separated.
std::string library_families(const Registry& reg, const std::string& library) {
  std::string out;
  for (const auto& f : reg.families())
    for (const auto& t : f.targets)
      if (library_of(t) == library) {
        out += (out.empty() ? "" : ", ") + f.name;
        break;
      }
  return out;
}

// Why a selector that names something selects nothing that runs here.
std::string nothing_selected(const Registry& reg, const std::string& s, const std::string& flag,
                             const std::vector<const UnavailableTarget*>& unavailable) {
  const std::string head = flag + " " + s + ": ";
  if (!unavailable.empty())
    return head + "unavailable here (" + std::to_string(unavailable.size()) +
           (unavailable.size() == 1 ? " implementation: " : " implementations: ") +
           unavailable.front()->reason + ")";
  const std::string sub = s.substr(s.find('/') + 1);
  if (sub == "plugin") return head + "no plugin is loaded (give --plugin LIB.so)";
  if (sub != s && is_library(reg, sub)) {
    const std::string covers = library_families(reg, sub);
    return head + sub + " has no " + family_part(s) + " implementation" +
           (covers.empty() ? "" : " (it covers " + covers + ")");
  }
  return head + "selects no implementation here (stabfuzz --list shows what each covers)";
}

}  // namespace

std::string library_of(const Target& t) {
  if (t.kind != TargetKind::library) return "";
  return t.library.empty() ? second_part(t.id) : t.library;
}

std::string library_of(const UnavailableTarget& u) {
  const std::string part = second_part(u.id);
  for (const auto& l : known_libraries())
    if (l.name == part) return part;
  return "";
}

const std::vector<Library>& known_libraries() {
  static const std::vector<Library> libs = {
      {"onednn", "oneDNN, Intel's deep learning primitives"},
      {"onednn3", "oneDNN 3 (ci/bootstrap --with-onednn3), loaded at run time"},
      {"blas", "the CBLAS linked at build time (OpenBLAS)"},
      {"mkl", "Intel MKL's CBLAS, loaded at run time"},
      {"torch", "libtorch, PyTorch's C++ library (CPU)"},
      {"cublas", "cuBLAS GEMM modes (GPU)"},
      {"plugin", "your targets, loaded with --plugin LIB.so"}};
  return libs;
}

std::string selector_kinds() {
  std::string libs;
  for (const auto& l : known_libraries()) libs += (libs.empty() ? "" : ", ") + l.name;
  return "all, a family (softmax), a library (" + libs +
         "), a kind (reference, injected, library), family/library or family/kind "
         "(softmax/torch), or an implementation id (softmax/cpu/stable)";
}

std::vector<std::string> Selection::families() const {
  std::vector<std::string> out;
  for (const auto& p : targets)
    if (out.empty() || out.back() != p.family->name) out.push_back(p.family->name);
  return out;
}

Selection select(const Registry& reg, const std::string& selectors, const std::string& flag) {
  std::vector<std::string> words;
  std::stringstream ss(selectors);
  for (std::string w; std::getline(ss, w, ',');)
    if (!w.empty()) words.push_back(w);
  if (words.empty()) throw InputError(flag + " is empty: give " + selector_kinds());
  std::set<const Target*> chosen;
  std::set<const UnavailableTarget*> chosen_unavailable;
  for (const auto& w : words) {
    const auto m = matcher(reg, w);
    if (!m)
      throw InputError("unknown target '" + w + "' in " + flag + ": give " + selector_kinds() +
                       "; stabfuzz --list shows them");
    size_t n = 0;
    for (const auto& f : reg.families())
      for (const auto& t : f.targets)
        if (m->target(f, t)) chosen.insert(&t), ++n;
    std::vector<const UnavailableTarget*> unavailable;
    for (const auto& u : reg.unavailable())
      if (m->unavailable(u)) unavailable.push_back(&u), chosen_unavailable.insert(&u);
    if (n == 0) throw InputError(nothing_selected(reg, w, flag, unavailable));
  }
  Selection out;
  for (const auto& f : reg.families())
    for (const auto& t : f.targets)
      if (chosen.count(&t)) out.targets.push_back({&f, &t});
  for (const auto& u : reg.unavailable())
    if (chosen_unavailable.count(&u)) out.unavailable.push_back(&u);
  return out;
}

}  // namespace stabfuzz::select
