// The libraries' catalogs (libs/catalog.cc): ids of the form family/library/name for families that
// exist, none twice, oneDNN 3's list oneDNN 2's less the primitive it removed, the CBLAS and MKL
// lists alike, libtorch one kernel per family.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "libs/libraries.h"
#include "stabfuzz/family.h"

namespace stabfuzz::libs {
namespace {

// The name after family/library/ of each entry.
std::vector<std::string> names(const std::vector<LibraryTarget>& catalog) {
  std::vector<std::string> out;
  for (const auto& t : catalog) out.push_back(t.id.substr(t.id.rfind('/') + 1));
  return out;
}

TEST(Catalog, IdsAreFamilyLibraryNameOfRegisteredFamiliesAndUnique) {
  const std::vector<std::pair<std::string, std::vector<LibraryTarget>>> catalogs = {
      {"onednn", onednn_catalog()},
      {"onednn3", onednn3_catalog()},
      {"blas", blas_catalog()},
      {"mkl", mkl_catalog()},
      {"torch", torch_catalog()}};
  std::set<std::string> ids;
  for (const auto& [library, catalog] : catalogs) {
    EXPECT_FALSE(catalog.empty()) << library;
    for (const auto& t : catalog) {
      SCOPED_TRACE(t.id);
      const std::string prefix = t.family + "/" + library + "/";
      ASSERT_EQ(t.id.rfind(prefix, 0), 0u);
      EXPECT_GT(t.id.size(), prefix.size());
      EXPECT_EQ(t.id.find('/', prefix.size()), std::string::npos);
      EXPECT_NE(default_registry().find_family(t.family), nullptr);
      EXPECT_TRUE(ids.insert(t.id).second) << "twice";
    }
  }
}

TEST(Catalog, OneDnn3IsOneDnn2WithoutTheRemovedLogsigmoid) {
  std::vector<std::string> v2 = names(onednn_catalog());
  EXPECT_EQ(v2.size(), 17u);
  std::erase(v2, "eltwise_logsigmoid");
  EXPECT_EQ(v2.size(), 16u);
  EXPECT_EQ(names(onednn3_catalog()), v2);
  for (const auto& t : onednn_catalog())
    if (t.family == "gemm") EXPECT_EQ(t.id, "gemm/onednn/matmul");
}

TEST(Catalog, BlasAndMklProvideTheSameThreeCalls) {
  const std::vector<std::string> calls = {"dot", "gemm", "nrm2"};
  EXPECT_EQ(names(blas_catalog()), calls);
  EXPECT_EQ(names(mkl_catalog()), calls);
  EXPECT_EQ(blas_catalog().at(2).id, "l2_norm/blas/nrm2");
  EXPECT_EQ(mkl_catalog().at(2).id, "l2_norm/mkl/nrm2");
}

TEST(Catalog, TorchHasOneKernelPerFamilyAndNoCosineSimilarity) {
  std::set<std::string> families;
  for (const auto& t : torch_catalog()) EXPECT_TRUE(families.insert(t.family).second) << t.id;
  EXPECT_EQ(families.size(), 32u);
  EXPECT_EQ(families.count("cosine_similarity"), 0u);  // torch's eps differs from the contract
  EXPECT_TRUE(families.count("attention"));
  EXPECT_EQ(torch_catalog().back().id, "attention/torch/scaled_dot_product_attention");
}

}  // namespace
}  // namespace stabfuzz::libs
