// ONNX models as plain data: the graph's nodes, initializers, inputs and outputs, read from a
// .onnx file (ModelProto, through libonnx-dev's onnx_proto) and written back (for tests, examples
// and test_data_set folders). Only model.cc sees protobuf; the interpreter (eval.h) reads these.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace stabfuzz::onnx {

// The most elements one tensor may hold (2^24); a larger one, read or computed, is an InputError.
inline constexpr size_t kMaxElements = size_t{1} << 24;

// ONNX's element types that stabfuzz reads (TensorProto.DataType); values are held as doubles.
enum class Elem : int32_t {
  float32 = 1,
  uint8 = 2,
  int8 = 3,
  uint16 = 4,
  int16 = 5,
  int32 = 6,
  int64 = 7,
  bool8 = 9,
  float64 = 11,
  uint32 = 12,
  uint64 = 13
};

inline bool is_integer(Elem e) {
  return e != Elem::float32 && e != Elem::float64 && e != Elem::bool8;
}

struct HostTensor {
  Elem elem = Elem::float32;
  std::vector<int64_t> shape;  // {} is a scalar
  std::vector<double> values;  // row-major, exactly the stored values
  size_t size() const { return values.size(); }
};

struct Attr {
  int type =
      0;  // AttributeProto.AttributeType (1 FLOAT, 2 INT, 3 STRING, 4 TENSOR, 6 FLOATS, 7 INTS)
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  std::optional<HostTensor> t;
};

// An INT or INTS attribute (for graphs written by code: tests, the exporter).
inline Attr int_attr(int64_t v) {
  Attr a;
  a.type = 2;
  a.i = v;
  return a;
}
inline Attr ints_attr(std::vector<int64_t> v) {
  Attr a;
  a.type = 7;
  a.ints = std::move(v);
  return a;
}

struct Node {
  std::string name;  // the node's name, or "<op_type>_<index>" when the file gives none
  std::string op;    // op_type
  std::vector<std::string> in, out;  // "" is an absent optional input
  std::map<std::string, Attr> attrs;
  bool has(const std::string& a) const { return attrs.count(a) != 0; }
  int64_t i(const std::string& a, int64_t fallback) const;
  double f(const std::string& a, double fallback) const;
  std::vector<int64_t> ints(const std::string& a) const;
};

struct Model {
  std::string path;
  int64_t opset = 0;        // of the default domain
  std::vector<Node> nodes;  // in graph (topological) order
  std::map<std::string, HostTensor> initializers;
  std::vector<std::string> inputs;             // graph inputs that are not initializers
  std::map<std::string, int32_t> input_types;  // their declared element types (0: none given)
  // Their declared shapes, where given: -1 for a dimension without a value (a batch axis N).
  std::map<std::string, std::vector<int64_t>> input_shapes;
  std::vector<std::string> outputs;
};

// Reads a model; a file that is not one, or a graph that is not topologically sorted, is an
// InputError naming the file.
Model read_model(const std::string& path);
// The same from the file's bytes; `where` names it in errors.
Model parse_model(const std::string& bytes, const std::string& where);
void write_model(const Model& m, const std::string& path);

// One TensorProto (test_data_set_N/input_K.pb).
HostTensor read_tensor(const std::string& path);
void write_tensor(const HostTensor& t, const std::string& name, const std::string& path);

// The model's inputs from a test_data_set folder (input_0.pb, input_1.pb, ... in the order of
// the graph's inputs); a missing or misshapen file is an InputError.
std::map<std::string, HostTensor> read_inputs(const Model& m, const std::string& dir);

}  // namespace stabfuzz::onnx
