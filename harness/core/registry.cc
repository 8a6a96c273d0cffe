// Registry: validated at construction, so a malformed family or target is a startup error.
#include <functional>
#include <set>
#include <stdexcept>

#include "stabfuzz/family.h"

namespace stabfuzz {

size_t Input::total_size() const {
  size_t n = 0;
  for (const auto& t : args) n += t.values.size();
  return n;
}

double Input::param(std::string_view name, double fallback) const {
  for (const auto& [k, v] : params)
    if (k == name) return v;
  return fallback;
}

void Input::set_param(const std::string& name, double value) {
  for (auto& [k, v] : params)
    if (k == name) {
      v = value;
      return;
    }
  params.emplace_back(name, value);
}

std::string_view target_kind_name(TargetKind k) {
  switch (k) {
    case TargetKind::reference:
      return "reference";
    case TargetKind::injected:
      return "injected";
    case TargetKind::library:
      return "library";
  }
  return "?";
}

namespace {
void check_target(const Family& f, const Target& t,
                  const std::function<void(const std::string&)>& fail) {
  if (t.id.rfind(f.name + "/", 0) != 0) fail("target '" + t.id + "' is not named family/...");
  if (t.dtypes.empty()) fail("target '" + t.id + "' has no dtypes");
  if (!t.native) fail("target '" + t.id + "' has no native entry point");
  if (t.kind == TargetKind::injected && !t.injection)
    fail("injected target '" + t.id + "' does not say what it plants");
}
}  // namespace

void Registry::add(Family f) {
  auto fail = [&](const std::string& what) {
    throw std::logic_error("registry: family '" + f.name + "': " + what);
  };
  if (f.name.empty()) fail("has no name");
  if (find_family(f.name)) fail("registered twice");
  if (!f.oracle) fail("has no oracle");
  if (!f.validate) fail("has no input validation");
  if (!f.tolerance_ulps) fail("has no tolerances");
  if (f.regimes.empty()) fail("has no value regimes");
  for (const auto& r : f.regimes)
    if (r.name.empty() || !r.sample) fail("a value regime has no name or sampler");
  if (f.targets.empty()) fail("has no targets");
  std::set<std::string> ids;
  for (const auto& t : f.targets) {
    check_target(f, t, fail);
    if (!ids.insert(t.id).second || find_target(t.id).second)
      fail("target '" + t.id + "' registered twice");
  }
  families_.push_back(std::move(f));
}

void Registry::add_target(std::string_view family, Target t) {
  Family* f = nullptr;
  for (auto& g : families_)
    if (g.name == family) f = &g;
  if (!f)
    throw std::logic_error("registry: target '" + t.id + "' names unknown family '" +
                           std::string(family) + "'");
  auto fail = [&](const std::string& what) {
    throw std::logic_error("registry: family '" + f->name + "': " + what);
  };
  check_target(*f, t, fail);
  if (find_target(t.id).second) fail("target '" + t.id + "' registered twice");
  f->targets.push_back(std::move(t));
}

const Family* Registry::find_family(std::string_view name) const {
  for (const auto& f : families_)
    if (f.name == name) return &f;
  return nullptr;
}

std::pair<const Family*, const Target*> Registry::find_target(std::string_view id) const {
  for (const auto& f : families_)
    for (const auto& t : f.targets)
      if (t.id == id) return {&f, &t};
  return {nullptr, nullptr};
}

}  // namespace stabfuzz
