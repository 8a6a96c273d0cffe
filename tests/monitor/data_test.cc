// Dataset loaders: generated gzip fixtures (CSV and IDX), corrupt and missing files, the real
// digits.
#include "harness/monitor/data.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "stabfuzz/errors.h"
#include "tests/support/run_binary.h"

namespace stabfuzz::monitor {
namespace {

void write_gz(const std::string& path, const std::string& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())),
            static_cast<int>(bytes.size()));
  gzclose(f);
}

std::string digits_row(int seed, int label) {
  std::string s;
  for (int k = 0; k < 64; ++k) s += std::to_string((k * 7 + seed) % 17) + ",";
  return s + std::to_string(label) + "\n";
}

std::string be32(uint32_t v) {
  return {char(v >> 24), char((v >> 16) & 255), char((v >> 8) & 255), char(v & 255)};
}

TEST(DataTest, DigitsCsvFixture) {
  const std::string dir = testing::temp_dir("");
  const std::string path = dir + "/d.csv.gz";
  write_gz(path, digits_row(1, 3) + digits_row(2, 9) + digits_row(3, 0));
  const Dataset d = load_digits_csv(path);
  ASSERT_EQ(d.rows(), 3u);
  EXPECT_EQ(d.features(), 64);
  EXPECT_EQ(d.y[0], 3);
  EXPECT_EQ(d.y[1], 9);
  EXPECT_EQ(d.x[1], 8.0 / 16);        // (1 * 7 + 1) % 17 = 8, scaled by 1/16
  EXPECT_EQ(d.x[64 + 2], 16.0 / 16);  // (2 * 7 + 2) % 17 = 16
}

TEST(DataTest, BadFilesAreInputErrors) {
  const std::string dir = testing::temp_dir("");
  EXPECT_THROW(load_digits_csv(dir + "/missing.csv.gz"), InputError);
  write_gz(dir + "/short.csv.gz", "1,2,3\n");
  EXPECT_THROW(load_digits_csv(dir + "/short.csv.gz"), InputError);
  write_gz(dir + "/text.csv.gz", digits_row(1, 3) + "a,b\n");
  EXPECT_THROW(load_digits_csv(dir + "/text.csv.gz"), InputError);
  std::string label = digits_row(1, 3);
  label.replace(label.size() - 2, 1, "12");
  write_gz(dir + "/label.csv.gz", label);
  EXPECT_THROW(load_digits_csv(dir + "/label.csv.gz"), InputError);
  // A gzip stream cut in half.
  write_gz(dir + "/full.csv.gz", digits_row(1, 3) + digits_row(2, 4) + digits_row(5, 6));
  std::ifstream in(dir + "/full.csv.gz", std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::ofstream(dir + "/cut.csv.gz", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  EXPECT_THROW(load_digits_csv(dir + "/cut.csv.gz"), InputError);
}

TEST(DataTest, IdxFixture) {
  const std::string dir = testing::temp_dir("");
  std::string im = be32(0x803) + be32(2) + be32(3) + be32(4);
  for (int i = 0; i < 24; ++i) im += char(i * 10);
  const std::string lb = be32(0x801) + be32(2) + std::string{char(7), char(1)};
  write_gz(dir + "/im.gz", im);
  write_gz(dir + "/lb.gz", lb);
  const Dataset d = load_idx(dir + "/im.gz", dir + "/lb.gz", "fixture");
  ASSERT_EQ(d.rows(), 2u);
  EXPECT_EQ(d.height, 3);
  EXPECT_EQ(d.width, 4);
  EXPECT_EQ(d.y[0], 7);
  EXPECT_EQ(d.y[1], 1);
  EXPECT_DOUBLE_EQ(d.x[13], 130 / 255.0);
  write_gz(dir + "/bad_magic.gz", be32(0x802) + im.substr(4));
  EXPECT_THROW(load_idx(dir + "/bad_magic.gz", dir + "/lb.gz", "x"), InputError);
  write_gz(dir + "/short.gz", im.substr(0, im.size() - 1));
  EXPECT_THROW(load_idx(dir + "/short.gz", dir + "/lb.gz", "x"), InputError);
  write_gz(dir + "/lb3.gz", be32(0x801) + be32(3) + std::string(3, char(1)));
  EXPECT_THROW(load_idx(dir + "/im.gz", dir + "/lb3.gz", "x"), InputError);
}

// The real file ci/bootstrap extracts from Debian's python3-sklearn.
TEST(DataTest, RealDigits) {
  const Split s = load_dataset("digits");
  EXPECT_EQ(s.train.rows(), 1438u);
  EXPECT_EQ(s.test.rows(), 359u);
  EXPECT_EQ(s.train.features(), 64);
  int seen[10] = {};
  for (int y : s.train.y) ++seen[y];
  for (int c = 0; c < 10; ++c) EXPECT_GT(seen[c], 120) << c;
  for (double v : s.train.x) ASSERT_TRUE(v >= 0 && v <= 1);
  EXPECT_EQ(load_dataset("digits", 100).train.rows(), 100u);
  EXPECT_THROW(load_dataset("mnist"), InputError);
}

}  // namespace
}  // namespace stabfuzz::monitor
