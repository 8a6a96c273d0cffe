// Loaders for the monitor's datasets: gzip through zlib, digits CSV and IDX parsing, the splits.
#include "harness/monitor/data.h"

#include <zlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "stabfuzz/errors.h"

namespace stabfuzz::monitor {
namespace {

uint32_t be32(const std::string& s, size_t at) {
  return (uint32_t(uint8_t(s[at])) << 24) | (uint32_t(uint8_t(s[at + 1])) << 16) |
         (uint32_t(uint8_t(s[at + 2])) << 8) | uint32_t(uint8_t(s[at + 3]));
}

}  // namespace

std::string read_gzip(const std::string& path) {
  if (!std::filesystem::is_regular_file(path)) throw InputError("data file not found: " + path);
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) throw InputError("cannot open data file " + path);
  std::string out;
  char buf[1 << 16];
  for (;;) {
    const int n = gzread(f, buf, sizeof buf);
    if (n < 0) {
      int code = 0;
      const std::string msg = gzerror(f, &code);
      gzclose(f);
      throw InputError("corrupt gzip data in " + path + ": " + msg);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  // gzread stops quietly at a truncated stream; gzclose_r reports it as Z_BUF_ERROR.
  const int rc = gzclose_r(f);
  if (rc != Z_OK) throw InputError("corrupt or truncated gzip data in " + path);
  return out;
}

Dataset load_digits_csv(const std::string& path) {
  const std::string text = read_gzip(path);
  Dataset d;
  d.name = "digits";
  d.height = d.width = 8;
  std::istringstream in(text);
  std::string line;
  size_t lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    std::vector<double> cells;
    size_t pos = 0;
    while (pos <= line.size()) {
      const size_t comma = std::min(line.find(',', pos), line.size());
      const std::string cell = line.substr(pos, comma - pos);
      char* end = nullptr;
      const double v = std::strtod(cell.c_str(), &end);
      if (cell.empty() || end != cell.c_str() + cell.size())
        throw InputError(path + ":" + std::to_string(lineno) + ": not a number: '" + cell + "'");
      cells.push_back(v);
      pos = comma + 1;
    }
    if (cells.size() != 65)
      throw InputError(path + ":" + std::to_string(lineno) +
                       ": expected 65 columns (64 pixels, label), got " +
                       std::to_string(cells.size()));
    for (int k = 0; k < 64; ++k) {
      if (!(cells[k] >= 0 && cells[k] <= 16))
        throw InputError(path + ":" + std::to_string(lineno) + ": pixel outside 0..16");
      d.x.push_back(cells[k] / 16);
    }
    const double label = cells[64];
    if (!(label >= 0 && label <= 9 && label == static_cast<int>(label)))
      throw InputError(path + ":" + std::to_string(lineno) + ": label not an integer 0..9");
    d.y.push_back(static_cast<int>(label));
  }
  if (d.y.empty()) throw InputError(path + ": no rows");
  return d;
}

Dataset load_idx(const std::string& images, const std::string& labels, const std::string& name) {
  const std::string im = read_gzip(images), lb = read_gzip(labels);
  if (im.size() < 16 || be32(im, 0) != 0x803)
    throw InputError(images + ": not an IDX image file (magic 0x803)");
  if (lb.size() < 8 || be32(lb, 0) != 0x801)
    throw InputError(labels + ": not an IDX label file (magic 0x801)");
  const uint32_t n = be32(im, 4), h = be32(im, 8), w = be32(im, 12);
  if (h == 0 || w == 0 || h > 1024 || w > 1024)
    throw InputError(images + ": implausible image size");
  if (im.size() != 16 + size_t(n) * h * w)
    throw InputError(images + ": size does not match its header");
  if (be32(lb, 4) != n || lb.size() != 8 + size_t(n))
    throw InputError(labels + ": label count does not match " + images);
  Dataset d;
  d.name = name;
  d.height = static_cast<int>(h);
  d.width = static_cast<int>(w);
  d.x.resize(size_t(n) * h * w);
  for (size_t i = 0; i < d.x.size(); ++i) d.x[i] = uint8_t(im[16 + i]) / 255.0;
  d.y.resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    d.y[i] = uint8_t(lb[8 + i]);
    if (d.y[i] > 9)
      throw InputError(labels + ": label " + std::to_string(d.y[i]) + " outside 0..9");
  }
  return d;
}

std::string digits_path() {
  const char* env = std::getenv("STABFUZZ_DATA_DIR");
  std::vector<std::string> dirs;
  if (env && *env) dirs.emplace_back(env);
  dirs.emplace_back("data");
#ifdef STABFUZZ_DATA_DIR
  dirs.emplace_back(STABFUZZ_DATA_DIR);
#endif
  for (const auto& d : dirs)
    if (std::filesystem::is_regular_file(d + "/digits.csv.gz")) return d + "/digits.csv.gz";
  throw InputError(
      "digits.csv.gz not found in $STABFUZZ_DATA_DIR, ./data or the source tree's data/ "
      "(ci/bootstrap extracts it from Debian's python3-sklearn)");
}

Split load_dataset(const std::string& name, int64_t max_train) {
  if (max_train < 0) throw InputError("--max-train must be >= 0 (0: all rows)");
  Split s;
  if (name == "digits") {
    const Dataset all = load_digits_csv(digits_path());
    s.train = s.test = Dataset{all.name, all.height, all.width, all.classes, {}, {}};
    const size_t f = static_cast<size_t>(all.features());
    for (size_t i = 0; i < all.rows(); ++i) {
      Dataset& to = i % 5 == 4 ? s.test : s.train;
      to.x.insert(to.x.end(), all.x.begin() + i * f, all.x.begin() + (i + 1) * f);
      to.y.push_back(all.y[i]);
    }
  } else if (name == "fashion-mnist") {
    const char* env = std::getenv("STABFUZZ_FASHION_MNIST_DIR");
    const std::string dir = env && *env ? env : "/usr/share/datasets/fashion-mnist";
    s.train =
        load_idx(dir + "/train-images-idx3-ubyte.gz", dir + "/train-labels-idx1-ubyte.gz", name);
    s.test = load_idx(dir + "/t10k-images-idx3-ubyte.gz", dir + "/t10k-labels-idx1-ubyte.gz", name);
  } else {
    throw InputError("unknown dataset '" + name + "' (digits, fashion-mnist)");
  }
  if (max_train > 0 && static_cast<size_t>(max_train) < s.train.rows()) {
    s.train.y.resize(static_cast<size_t>(max_train));
    s.train.x.resize(static_cast<size_t>(max_train) * s.train.features());
  }
  return s;
}

}  // namespace stabfuzz::monitor
