// Training data for the monitor: scikit-learn's 8x8 digits (CSV, gzip) and Fashion-MNIST (IDX,
// gzip).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace stabfuzz::monitor {

// Images as rows of features in [0, 1], labels in [0, classes).
struct Dataset {
  std::string name;
  int height = 0, width = 0;
  int classes = 10;
  std::vector<double> x;  // rows x (height * width), row-major
  std::vector<int> y;
  int features() const { return height * width; }
  size_t rows() const { return y.size(); }
};

struct Split {
  Dataset train, test;
};

// The whole content of a gzip file (or a plain file), decompressed; InputError when it is
// missing or not valid gzip.
std::string read_gzip(const std::string& path);

// digits.csv.gz: rows of 64 pixels 0..16, then the label 0..9, no header. Pixels scaled by 1/16
// (exact in every binary format, so the inputs carry no rounding).
Dataset load_digits_csv(const std::string& path);

// An IDX image file (magic 0x803, uint8 pixels scaled by 1/255) and its label file (magic 0x801).
Dataset load_idx(const std::string& images, const std::string& labels, const std::string& name);

// The directory holding digits.csv.gz: $STABFUZZ_DATA_DIR, else ./data, else the source tree's
// data/ (where ci/bootstrap puts it).
std::string digits_path();

// `name`: digits (every fifth row is the test set: 1,438 train, 359 test) or fashion-mnist
// (Debian's dataset-fashion-mnist: 60,000 train, 10,000 test). `max_train` > 0 keeps the first
// rows of the training set only.
Split load_dataset(const std::string& name, int64_t max_train = 0);

}  // namespace stabfuzz::monitor
