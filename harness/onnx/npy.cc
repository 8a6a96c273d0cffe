// .npy files: the header (a Python dict literal) and the raw little-endian data.
#include "harness/onnx/npy.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>

#include "stabfuzz/errors.h"

namespace stabfuzz::onnx {
namespace {

constexpr std::string_view kMagic = "\x93NUMPY";

struct Dtype {
  const char* code;  // NumPy's descr without the byte-order character
  Elem elem;
  size_t bytes;
};
constexpr Dtype kDtypes[] = {
    {"f4", Elem::float32, 4}, {"f8", Elem::float64, 8}, {"i1", Elem::int8, 1},
    {"i2", Elem::int16, 2},   {"i4", Elem::int32, 4},   {"i8", Elem::int64, 8},
    {"u1", Elem::uint8, 1},   {"u2", Elem::uint16, 2},  {"u4", Elem::uint32, 4},
    {"u8", Elem::uint64, 8},  {"b1", Elem::bool8, 1}};

// The value text after 'key': in the header dict, up to the next top-level comma or brace.
std::string_view value_of(std::string_view header, std::string_view key, const std::string& where) {
  const std::string quoted = "'" + std::string(key) + "'";
  const size_t k = header.find(quoted);
  if (k == std::string_view::npos)
    throw InputError(where + ": the .npy header has no '" + std::string(key) + "'");
  size_t i = header.find(':', k + quoted.size());
  if (i == std::string_view::npos) throw InputError(where + ": a malformed .npy header");
  ++i;
  while (i < header.size() && header[i] == ' ') ++i;
  size_t j = i;
  const char close = i < header.size() && header[i] == '(' ? ')' : 0;
  if (close) {
    j = header.find(close, i);
    if (j == std::string_view::npos) throw InputError(where + ": a malformed .npy shape");
    return header.substr(i, j + 1 - i);
  }
  while (j < header.size() && header[j] != ',' && header[j] != '}') ++j;
  std::string_view v = header.substr(i, j - i);
  while (!v.empty() && v.back() == ' ') v.remove_suffix(1);
  return v;
}

std::vector<int64_t> parse_shape(std::string_view s, const std::string& where) {
  // "(3, 4)", "(5,)" or "()".
  if (s.size() < 2 || s.front() != '(' || s.back() != ')')
    throw InputError(where + ": a malformed .npy shape " + quoted_excerpt(s));
  std::vector<int64_t> shape;
  size_t i = 1;
  while (i + 1 < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == ',')) ++i;
    if (i + 1 >= s.size()) break;
    int64_t d = 0;
    size_t digits = 0;
    for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i, ++digits) {
      if (d > static_cast<int64_t>(kMaxElements))
        throw InputError(where + ": the array is too large");
      d = d * 10 + (s[i] - '0');
    }
    if (digits == 0) throw InputError(where + ": a malformed .npy shape " + quoted_excerpt(s));
    shape.push_back(d);
  }
  return shape;
}

double element(const char* p, const Dtype& dt) {
  switch (dt.elem) {
    case Elem::float32: {
      float v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case Elem::float64: {
      double v;
      std::memcpy(&v, p, 8);
      return v;
    }
    case Elem::bool8:
      return *p != 0 ? 1.0 : 0.0;
    default:
      break;
  }
  uint64_t u = 0;
  std::memcpy(&u, p, dt.bytes);  // little-endian
  const bool is_signed = dt.code[0] == 'i';
  if (is_signed && dt.bytes < 8 && (u >> (8 * dt.bytes - 1)) & 1)
    u |= ~uint64_t{0} << (8 * dt.bytes);  // sign-extend
  return is_signed ? static_cast<double>(static_cast<int64_t>(u)) : static_cast<double>(u);
}

}  // namespace

HostTensor parse_npy(std::string_view bytes, const std::string& where) {
  if (bytes.size() < 10 || bytes.substr(0, 6) != kMagic)
    throw InputError(where + " is not a .npy file (no \\x93NUMPY magic)");
  const auto major = static_cast<unsigned char>(bytes[6]);
  size_t header_len = 0, offset = 0;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) |
                 static_cast<size_t>(static_cast<unsigned char>(bytes[9])) << 8;
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) throw InputError(where + ": a truncated .npy header");
    for (int k = 0; k < 4; ++k)
      header_len |= static_cast<size_t>(static_cast<unsigned char>(bytes[8 + k])) << (8 * k);
    offset = 12;
  } else {
    throw InputError(where + ": .npy format version " + std::to_string(major) +
                     " (stabfuzz reads 1, 2 and 3)");
  }
  if (header_len > bytes.size() - offset) throw InputError(where + ": a truncated .npy header");
  const std::string_view header = bytes.substr(offset, header_len);
  const std::string_view descr = value_of(header, "descr", where);
  if (descr.size() != 5 || descr.front() != '\'' || descr.back() != '\'')
    throw InputError(where + ": .npy dtype " + quoted_excerpt(descr) +
                     " (stabfuzz reads float32, float64, the integer types and bool)");
  const char order = descr[1];
  if (order == '>')
    throw InputError(
        where +
        ": a big-endian array (save it little-endian: a.astype(a.dtype.newbyteorder('<')))");
  const Dtype* dt = nullptr;
  for (const auto& d : kDtypes)
    if (descr.substr(2, 2) == d.code) dt = &d;
  if (!dt || (order != '<' && order != '|' && order != '='))
    throw InputError(where + ": .npy dtype " + quoted_excerpt(descr) +
                     " (stabfuzz reads float32, float64, the integer types and bool)");
  if (value_of(header, "fortran_order", where) != "False")
    throw InputError(where + ": a Fortran-ordered array (save np.ascontiguousarray(a))");
  HostTensor t;
  t.elem = dt->elem;
  t.shape = parse_shape(value_of(header, "shape", where), where);
  size_t n = 1;
  for (int64_t d : t.shape) {
    if (d > 0 && n > kMaxElements / static_cast<size_t>(d))
      throw InputError(where + ": the array is too large (over 2^24 elements)");
    n *= static_cast<size_t>(d);
  }
  const std::string_view data = bytes.substr(offset + header_len);
  if (data.size() != n * dt->bytes)
    throw InputError(where + " holds " + std::to_string(data.size()) + " bytes of data for " +
                     std::to_string(n) + " elements of " + std::to_string(dt->bytes) + " bytes");
  t.values.resize(n);
  for (size_t i = 0; i < n; ++i) t.values[i] = element(data.data() + i * dt->bytes, *dt);
  return t;
}

HostTensor read_npy(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw InputError("cannot read " + path);
  std::ostringstream ss;
  ss << f.rdbuf();
  return parse_npy(ss.str(), path);
}

std::string npy_bytes(const HostTensor& t) {
  const Dtype* dt = nullptr;
  for (const auto& d : kDtypes)
    if (d.elem == t.elem) dt = &d;
  if (!dt)
    throw InputError("no .npy dtype for element type " + std::to_string(static_cast<int>(t.elem)));
  std::string header = std::string("{'descr': '") + (dt->bytes == 1 ? "|" : "<") + dt->code +
                       "', 'fortran_order': False, 'shape': (";
  for (size_t k = 0; k < t.shape.size(); ++k)
    header += std::to_string(t.shape[k]) +
              (t.shape.size() == 1 || k + 1 < t.shape.size() ? "," : "") +
              (k + 1 < t.shape.size() ? " " : "");
  header += "), }";
  while ((kMagic.size() + 4 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out(kMagic);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  for (double v : t.values) {
    char b[8];
    switch (t.elem) {
      case Elem::float32: {
        const float f = static_cast<float>(v);
        std::memcpy(b, &f, 4);
        break;
      }
      case Elem::float64:
        std::memcpy(b, &v, 8);
        break;
      default: {  // little-endian: the low bytes first; doubles above 2^63 / 2^64 saturate
        if (dt->code[0] == 'u') {
          const uint64_t u = !(v > 0) ? 0 : v >= 0x1p64 ? UINT64_MAX : static_cast<uint64_t>(v);
          std::memcpy(b, &u, 8);
        } else {
          const int64_t i = std::isnan(v) ? 0
                            : v >= 0x1p63 ? INT64_MAX
                            : v < -0x1p63 ? INT64_MIN
                                          : static_cast<int64_t>(v);
          std::memcpy(b, &i, 8);
        }
      }
    }
    out.append(b, dt->bytes);
  }
  return out;
}

void write_npy(const std::string& path, const HostTensor& t) {
  std::ofstream f(path, std::ios::binary);
  const std::string b = npy_bytes(t);
  if (!f.write(b.data(), static_cast<std::streamsize>(b.size())))
    throw InputError("cannot write " + path);
}

}  // namespace stabfuzz::onnx
