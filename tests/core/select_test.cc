// Target selectors: every kind of selector on a toy registry (two families, references, a planted
// bug, two libraries, a plugin target, unavailable targets), lists, and the errors: an unknown
// selector names the selector kinds; a library not built or not loaded says why.
#include "harness/core/select.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "stabfuzz/errors.h"
#include "tests/support/toy_family.h"

namespace stabfuzz::select {
namespace {

Target toy_target(const std::string& id, TargetKind kind, const std::string& library = "") {
  Target t = testing::toy_target(id);
  t.kind = kind;
  t.library = library;
  if (kind == TargetKind::injected) t.injection = Injection{"bug", "anywhere", "fix", "oracle"};
  return t;
}

// The toy family `name` (name/cpu/ref) with a planted bug, name/injected/naive.
Family toy_family(const std::string& name) {
  Family f = testing::toy_family(name);
  f.targets.push_back(toy_target(name + "/injected/naive", TargetKind::injected));
  return f;
}

// softmax: reference, bug, onednn, torch, a plugin; dot: reference, bug, blas. torch's dot and
// every cuBLAS target are unavailable, and so is a GPU kernel (not a library).
const Registry& toy() {
  static const Registry r = [] {
    Registry r;
    r.add(toy_family("softmax"));
    r.add(toy_family("dot"));
    r.add_target("softmax", toy_target("softmax/onednn/softmax", TargetKind::library));
    r.add_target("softmax", toy_target("softmax/torch/softmax", TargetKind::library));
    r.add_target("softmax", toy_target("softmax/mylib/fast", TargetKind::library, "plugin"));
    r.add_target("dot", toy_target("dot/blas/dot", TargetKind::library));
    r.add_unavailable({"dot/torch/dot", "built without libtorch: ci/bootstrap --with-torch"});
    r.add_unavailable({"dot/cublas/f32", "no GPU: none here"});
    r.add_unavailable({"softmax/cuda/block", "no GPU: none here"});
    return r;
  }();
  return r;
}

std::vector<std::string> ids(const std::string& selectors) {
  std::vector<std::string> out;
  for (const auto& p : select(toy(), selectors, "--target").targets) out.push_back(p.target->id);
  return out;
}

std::vector<std::string> unavailable(const std::string& selectors) {
  std::vector<std::string> out;
  for (const auto* u : select(toy(), selectors, "--targets").unavailable) out.push_back(u->id);
  return out;
}

// The InputError's message, "" when `selectors` selects something.
std::string error(const std::string& selectors) {
  try {
    select(toy(), selectors, "--target");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

using V = std::vector<std::string>;

TEST(Select, LibraryOfATarget) {
  EXPECT_EQ(library_of(toy_target("softmax/onednn/softmax", TargetKind::library)), "onednn");
  EXPECT_EQ(library_of(toy_target("softmax/mylib/fast", TargetKind::library, "plugin")), "plugin");
  EXPECT_EQ(library_of(toy_target("softmax/cpu/ref", TargetKind::reference)), "");
  EXPECT_EQ(library_of(UnavailableTarget{"dot/torch/dot", ""}), "torch");
  EXPECT_EQ(library_of(UnavailableTarget{"softmax/cuda/block", ""}), "");  // a GPU kernel
}

TEST(Select, AllAndFamily) {
  EXPECT_EQ(ids("all").size(), 8u);
  EXPECT_EQ(unavailable("all").size(), 3u);
  EXPECT_EQ(ids("dot"), (V{"dot/cpu/ref", "dot/injected/naive", "dot/blas/dot"}));
  EXPECT_EQ(unavailable("dot"), (V{"dot/torch/dot", "dot/cublas/f32"}));
}

TEST(Select, Library) {
  EXPECT_EQ(ids("onednn"), (V{"softmax/onednn/softmax"}));
  EXPECT_EQ(ids("torch"), (V{"softmax/torch/softmax"}));
  EXPECT_EQ(unavailable("torch"), (V{"dot/torch/dot"}));  // the rest of torch runs
  EXPECT_EQ(ids("blas"), (V{"dot/blas/dot"}));
  EXPECT_EQ(ids("plugin"), (V{"softmax/mylib/fast"}));
}

TEST(Select, Kind) {
  EXPECT_EQ(ids("library"), (V{"softmax/onednn/softmax", "softmax/torch/softmax",
                               "softmax/mylib/fast", "dot/blas/dot"}));
  EXPECT_EQ(unavailable("library"), (V{"dot/torch/dot", "dot/cublas/f32"}));
  EXPECT_EQ(ids("reference"), (V{"softmax/cpu/ref", "dot/cpu/ref"}));
  EXPECT_EQ(unavailable("reference"), (V{"softmax/cuda/block"}));
  EXPECT_EQ(ids("injected"), (V{"softmax/injected/naive", "dot/injected/naive"}));
}

TEST(Select, FamilyWithinLibraryOrKind) {
  EXPECT_EQ(ids("softmax/torch"), (V{"softmax/torch/softmax"}));
  EXPECT_EQ(ids("softmax/plugin"), (V{"softmax/mylib/fast"}));
  EXPECT_EQ(ids("softmax/library"),
            (V{"softmax/onednn/softmax", "softmax/torch/softmax", "softmax/mylib/fast"}));
  EXPECT_EQ(ids("dot/reference"), (V{"dot/cpu/ref"}));
  EXPECT_EQ(ids("softmax/injected"), (V{"softmax/injected/naive"}));
}

TEST(Select, ImplementationIdAndLists) {
  EXPECT_EQ(ids("dot/blas/dot"), (V{"dot/blas/dot"}));
  // A union in registry order, each once, whatever the order and overlap of the selectors.
  EXPECT_EQ(ids("blas,softmax/torch,library"), ids("library"));
  EXPECT_EQ(ids("dot/cpu/ref,onednn,,"), (V{"softmax/onednn/softmax", "dot/cpu/ref"}));
  const Selection s = select(toy(), "onednn,dot", "--target");
  EXPECT_EQ(s.families(), (V{"softmax", "dot"}));
}

TEST(Select, UnknownSelectorNamesTheSelectorKinds) {
  for (const char* bad : {"nosuch", "softmax/nosuch", "softmax/cpu/nope", "mylib", "dot/all"}) {
    const std::string e = error(bad);
    EXPECT_NE(e.find("unknown target '" + std::string(bad) + "' in --target"), std::string::npos)
        << e;
    for (const char* kind : {"a family", "a library", "a kind", "family/library", "onednn", "torch",
                             "plugin", "reference", "injected", "implementation id"})
      EXPECT_NE(e.find(kind), std::string::npos) << kind << ": " << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
  EXPECT_NE(error(",").find("--target is empty"), std::string::npos);
}

TEST(Select, UnavailableOrAbsentLibrarySaysWhy) {
  EXPECT_EQ(error("dot/torch"),
            "--target dot/torch: unavailable here (1 implementation: built without libtorch: "
            "ci/bootstrap --with-torch)");
  EXPECT_EQ(error("cublas"),
            "--target cublas: unavailable here (1 implementation: no GPU: none here)");
  EXPECT_EQ(error("dot/onednn"),
            "--target dot/onednn: onednn has no dot implementation (it "
            "covers softmax)");
  EXPECT_EQ(error("dot/plugin"), "--target dot/plugin: no plugin is loaded (give --plugin LIB.so)");
  EXPECT_EQ(error("mkl"),
            "--target mkl: selects no implementation here (stabfuzz --list shows "
            "what each covers)");
  // One unavailable selector fails the whole list.
  EXPECT_NE(error("softmax,cublas").find("cublas"), std::string::npos);
}

// The words selectors reserve are no family's name in the default registry: `--target torch` can
// only mean the library.
TEST(Select, SelectorWordsAreNoFamilyNames) {
  std::set<std::string> words = {"all", "reference", "injected", "library"};
  for (const auto& l : known_libraries()) words.insert(l.name);
  for (const auto& f : default_registry().families()) EXPECT_EQ(words.count(f.name), 0u) << f.name;
}

// Every library target of the default registry belongs to a library selectors know.
TEST(Select, DefaultRegistryLibrariesAreKnown) {
  std::set<std::string> known;
  for (const auto& l : known_libraries()) known.insert(l.name);
  for (const auto& f : default_registry().families())
    for (const auto& t : f.targets)
      if (t.kind == TargetKind::library) EXPECT_EQ(known.count(library_of(t)), 1u) << t.id;
  for (const auto& u : default_registry().unavailable())
    if (u.id.find("/cuda/") == std::string::npos) EXPECT_FALSE(library_of(u).empty()) << u.id;
}

}  // namespace
}  // namespace stabfuzz::select
