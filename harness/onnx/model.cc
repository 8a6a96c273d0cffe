// ModelProto and TensorProto to plain data and back (onnx_proto from libonnx-dev).
#include "harness/onnx/model.h"

#include <onnx/onnx_pb.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include "harness/onnx/npy.h"
#include "stabfuzz/errors.h"

namespace stabfuzz::onnx {
namespace {

namespace pb = ::onnx;

// h's shape from t; returns its element count, checked against kMaxElements.
size_t read_shape(const pb::TensorProto& t, const std::string& where, HostTensor& h) {
  for (int64_t d : t.dims()) {
    if (d < 0) throw InputError(where + ": tensor '" + t.name() + "' has a negative dimension");
    h.shape.push_back(d);
  }
  size_t n = 1;
  for (int64_t d : h.shape) {  // checked before each product: no wrap-around
    if (d > 0 && n > kMaxElements / static_cast<size_t>(d))
      throw InputError(where + ": tensor '" + t.name() + "' is too large");
    n *= static_cast<size_t>(d);
  }
  return n;
}

// Throws unless `have` (bytes of raw data, or items of a typed field with bytes = 1) holds n
// elements of `bytes` each.
void check_size(const pb::TensorProto& t, const std::string& where, size_t n, size_t bytes,
                size_t have) {
  if (have != n * bytes && !(have == 0 && n == 0))
    throw InputError(where + ": tensor '" + t.name() + "' holds " + std::to_string(have) +
                     " bytes of data for " + std::to_string(n) + " elements");
}

// float32 and float64 tensors' values into h.values (sized n).
void read_floats(const pb::TensorProto& t, const std::string& where, HostTensor& h) {
  const size_t n = h.values.size();
  const std::string& raw = t.raw_data();
  auto need = [&](size_t bytes, size_t have) { check_size(t, where, n, bytes, have); };
  switch (h.elem) {
    case Elem::float32:
      if (!raw.empty()) {
        need(4, raw.size());
        for (size_t i = 0; i < n; ++i) {
          float f;
          std::memcpy(&f, raw.data() + 4 * i, 4);
          h.values[i] = f;
        }
      } else {
        need(1, static_cast<size_t>(t.float_data_size()));
        for (size_t i = 0; i < n; ++i) h.values[i] = t.float_data(static_cast<int>(i));
      }
      break;
    case Elem::float64:
      if (!raw.empty()) {
        need(8, raw.size());
        std::memcpy(h.values.data(), raw.data(), 8 * n);
      } else {
        need(1, static_cast<size_t>(t.double_data_size()));
        for (size_t i = 0; i < n; ++i) h.values[i] = t.double_data(static_cast<int>(i));
      }
      break;
    default:
      break;
  }
}

// Integer and bool tensors' values into h.values (sized n), exact as doubles up to 2^53.
void read_integers(const pb::TensorProto& t, const std::string& where, HostTensor& h) {
  const size_t n = h.values.size();
  const std::string& raw = t.raw_data();
  auto need = [&](size_t bytes, size_t have) { check_size(t, where, n, bytes, have); };
  switch (h.elem) {
    case Elem::int64:
      if (!raw.empty()) {
        need(8, raw.size());
        for (size_t i = 0; i < n; ++i) {
          int64_t v;
          std::memcpy(&v, raw.data() + 8 * i, 8);
          h.values[i] = static_cast<double>(v);
        }
      } else {
        need(1, static_cast<size_t>(t.int64_data_size()));
        for (size_t i = 0; i < n; ++i)
          h.values[i] = static_cast<double>(t.int64_data(static_cast<int>(i)));
      }
      break;
    case Elem::int8:
    case Elem::int16:
    case Elem::int32:
    case Elem::uint8:
    case Elem::uint16:
    case Elem::bool8: {
      const bool is_signed = h.elem == Elem::int8 || h.elem == Elem::int16 || h.elem == Elem::int32;
      const size_t bytes = h.elem == Elem::int32                             ? 4
                           : h.elem == Elem::int16 || h.elem == Elem::uint16 ? 2
                                                                             : 1;
      if (!raw.empty()) {
        need(bytes, raw.size());
        for (size_t i = 0; i < n; ++i) {
          uint32_t u = 0;
          std::memcpy(&u, raw.data() + bytes * i, bytes);  // little-endian, as ONNX stores it
          const uint32_t sign = bytes < 4 ? uint32_t{1} << (8 * bytes - 1) : 0;
          h.values[i] = is_signed && bytes < 4 && (u & sign) ? static_cast<double>(u) - 2.0 * sign
                        : is_signed && bytes == 4            ? static_cast<int32_t>(u)
                                                             : static_cast<double>(u);
        }
      } else {
        need(1, static_cast<size_t>(t.int32_data_size()));
        for (size_t i = 0; i < n; ++i) h.values[i] = t.int32_data(static_cast<int>(i));
      }
      break;
    }
    case Elem::uint32:
    case Elem::uint64:
      if (!raw.empty()) {
        const size_t bytes = h.elem == Elem::uint32 ? 4 : 8;
        need(bytes, raw.size());
        for (size_t i = 0; i < n; ++i) {
          uint64_t u = 0;
          std::memcpy(&u, raw.data() + bytes * i, bytes);
          h.values[i] = static_cast<double>(u);
        }
      } else {
        need(1, static_cast<size_t>(t.uint64_data_size()));
        for (size_t i = 0; i < n; ++i)
          h.values[i] = static_cast<double>(t.uint64_data(static_cast<int>(i)));
      }
      break;
    default:
      break;
  }
}

HostTensor from_proto(const pb::TensorProto& t, const std::string& where) {
  HostTensor h;
  h.elem = static_cast<Elem>(t.data_type());
  h.values.resize(read_shape(t, where, h));
  switch (h.elem) {
    case Elem::float32:
    case Elem::float64:
      read_floats(t, where, h);
      break;
    case Elem::int64:
    case Elem::int8:
    case Elem::int16:
    case Elem::int32:
    case Elem::uint8:
    case Elem::uint16:
    case Elem::bool8:
    case Elem::uint32:
    case Elem::uint64:
      read_integers(t, where, h);
      break;
    default:
      throw InputError(where + ": tensor '" + t.name() + "' has element type " +
                       std::to_string(t.data_type()) +
                       " (stabfuzz reads float, double, the integer types and bool)");
  }
  return h;
}

void to_proto(const HostTensor& h, const std::string& name, pb::TensorProto& t) {
  t.set_name(name);
  t.set_data_type(static_cast<int32_t>(h.elem));
  for (int64_t d : h.shape) t.add_dims(d);
  std::string raw;
  for (double v : h.values) {
    char b[8];
    size_t n = 0;
    if (h.elem == Elem::float32) {
      const float f = static_cast<float>(v);
      std::memcpy(b, &f, n = 4);
    } else if (h.elem == Elem::float64) {
      std::memcpy(b, &v, n = 8);
    } else if (h.elem == Elem::int64) {
      const auto i = static_cast<int64_t>(v);
      std::memcpy(b, &i, n = 8);
    } else if (h.elem == Elem::int32) {
      const auto i = static_cast<int32_t>(v);
      std::memcpy(b, &i, n = 4);
    } else if (h.elem == Elem::bool8) {
      b[0] = v != 0;
      n = 1;
    } else {
      throw InputError("cannot write tensor '" + name + "': element type " +
                       std::to_string(static_cast<int>(h.elem)));
    }
    raw.append(b, n);
  }
  t.set_raw_data(raw);
}

template <class Proto>
void parse_file(const std::string& path, Proto& p, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError("cannot open " + std::string(what) + " " + path);
  if (!p.ParseFromIstream(&in)) throw InputError(path + " is not an ONNX " + what);
}

template <class Proto>
void write_file(const std::string& path, const Proto& p) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out || !p.SerializeToOstream(&out)) throw InputError("cannot write " + path);
}

}  // namespace

int64_t Node::i(const std::string& a, int64_t fallback) const {
  const auto it = attrs.find(a);
  return it == attrs.end() ? fallback : it->second.i;
}
double Node::f(const std::string& a, double fallback) const {
  const auto it = attrs.find(a);
  return it == attrs.end() ? fallback : it->second.f;
}
std::vector<int64_t> Node::ints(const std::string& a) const {
  const auto it = attrs.find(a);
  return it == attrs.end() ? std::vector<int64_t>{} : it->second.ints;
}

Model read_model(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError("cannot open model " + path);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return parse_model(bytes, path);
}

Model parse_model(const std::string& bytes, const std::string& path) {
  pb::ModelProto mp;
  if (!mp.ParseFromString(bytes)) throw InputError(path + " is not an ONNX model");
  Model m;
  m.path = path;
  for (const auto& o : mp.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") m.opset = o.version();
  const auto& g = mp.graph();
  for (const auto& t : g.initializer()) m.initializers[t.name()] = from_proto(t, path);
  std::set<std::string> known;
  for (const auto& [name, t] : m.initializers) known.insert(name);
  for (const auto& i : g.input())
    if (!m.initializers.count(i.name())) {
      m.inputs.push_back(i.name());
      m.input_types[i.name()] = i.type().has_tensor_type() ? i.type().tensor_type().elem_type() : 0;
      if (i.type().has_tensor_type() && i.type().tensor_type().has_shape()) {
        auto& shape = m.input_shapes[i.name()];
        for (const auto& d : i.type().tensor_type().shape().dim())
          shape.push_back(d.has_dim_value() ? d.dim_value() : -1);
      }
      known.insert(i.name());
    }
  for (const auto& o : g.output()) m.outputs.push_back(o.name());
  for (int k = 0; k < g.node_size(); ++k) {
    const auto& np = g.node(k);
    Node n;
    n.op = np.op_type();
    n.name = np.name().empty() ? n.op + "_" + std::to_string(k) : np.name();
    if (!np.domain().empty() && np.domain() != "ai.onnx")
      throw InputError(path + ": node '" + n.name + "' (" + n.op + ") is in domain '" +
                       np.domain() + "', which stabfuzz does not run");
    for (const auto& i : np.input()) {
      if (!i.empty() && !known.count(i))
        throw InputError(path + ": node '" + n.name + "' (" + n.op + ") reads '" + i +
                         "', which no earlier node, input or initializer defines");
      n.in.push_back(i);
    }
    for (const auto& o : np.output()) {
      n.out.push_back(o);
      known.insert(o);
    }
    for (const auto& a : np.attribute()) {
      Attr v;
      v.type = static_cast<int>(a.type());
      v.i = a.i();
      v.f = a.f();
      v.s = a.s();
      v.ints.assign(a.ints().begin(), a.ints().end());
      v.floats.assign(a.floats().begin(), a.floats().end());
      if (a.has_t()) v.t = from_proto(a.t(), path);
      n.attrs[a.name()] = std::move(v);
    }
    m.nodes.push_back(std::move(n));
  }
  for (const auto& o : m.outputs)
    if (!known.count(o)) throw InputError(path + ": graph output '" + o + "' is never computed");
  return m;
}

void write_model(const Model& m, const std::string& path) {
  pb::ModelProto mp;
  mp.set_ir_version(8);
  mp.set_producer_name("stabfuzz");
  auto* op = mp.add_opset_import();
  op->set_domain("");
  op->set_version(m.opset ? m.opset : 17);
  auto* g = mp.mutable_graph();
  g->set_name("graph");
  auto value_info = [](pb::ValueInfoProto* v, const std::string& name, Elem e) {
    v->set_name(name);
    v->mutable_type()->mutable_tensor_type()->set_elem_type(static_cast<int32_t>(e));
  };
  for (const auto& [name, t] : m.initializers) to_proto(t, name, *g->add_initializer());
  for (const auto& i : m.inputs) {
    const auto it = m.input_types.find(i);
    auto* v = g->add_input();
    value_info(
        v, i,
        it != m.input_types.end() && it->second ? static_cast<Elem>(it->second) : Elem::float32);
    if (const auto sh = m.input_shapes.find(i); sh != m.input_shapes.end()) {
      auto* shape = v->mutable_type()->mutable_tensor_type()->mutable_shape();
      for (int64_t d : sh->second) {
        auto* dim = shape->add_dim();
        if (d >= 0)
          dim->set_dim_value(d);
        else
          dim->set_dim_param("N");
      }
    }
  }
  for (const auto& o : m.outputs) value_info(g->add_output(), o, Elem::float32);
  for (const auto& n : m.nodes) {
    auto* np = g->add_node();
    np->set_name(n.name);
    np->set_op_type(n.op);
    for (const auto& i : n.in) np->add_input(i);
    for (const auto& o : n.out) np->add_output(o);
    for (const auto& [name, a] : n.attrs) {
      auto* ap = np->add_attribute();
      ap->set_name(name);
      const int type = a.type              ? a.type
                       : a.t               ? 4
                       : !a.ints.empty()   ? 7
                       : !a.floats.empty() ? 6
                       : !a.s.empty()      ? 3
                       : a.f != 0          ? 1
                                           : 2;
      if (type == 4 && a.t) {
        ap->set_type(pb::AttributeProto::TENSOR);
        to_proto(*a.t, name, *ap->mutable_t());
      } else if (type == 7) {
        ap->set_type(pb::AttributeProto::INTS);
        for (int64_t v : a.ints) ap->add_ints(v);
      } else if (type == 6) {
        ap->set_type(pb::AttributeProto::FLOATS);
        for (double v : a.floats) ap->add_floats(static_cast<float>(v));
      } else if (type == 3) {
        ap->set_type(pb::AttributeProto::STRING);
        ap->set_s(a.s);
      } else if (type == 1) {
        ap->set_type(pb::AttributeProto::FLOAT);
        ap->set_f(static_cast<float>(a.f));
      } else {
        ap->set_type(pb::AttributeProto::INT);
        ap->set_i(a.i);
      }
    }
  }
  write_file(path, mp);
}

HostTensor read_tensor(const std::string& path) {
  pb::TensorProto t;
  parse_file(path, t, "tensor");
  return from_proto(t, path);
}

void write_tensor(const HostTensor& t, const std::string& name, const std::string& path) {
  pb::TensorProto p;
  to_proto(t, name, p);
  write_file(path, p);
}

std::map<std::string, HostTensor> read_inputs(const Model& m, const std::string& dir) {
  if (!std::filesystem::is_directory(dir))
    throw InputError("--inputs " + dir +
                     " is not a folder (a test_data_set: input_0.pb, ...; or NAME.npy files)");
  std::map<std::string, HostTensor> out;
  for (size_t k = 0; k < m.inputs.size(); ++k) {
    // ONNX's test-data layout, else NumPy files named after the graph input or its position.
    const std::string pb = dir + "/input_" + std::to_string(k) + ".pb";
    const std::string named = dir + "/" + m.inputs[k] + ".npy";
    const std::string numbered = dir + "/input_" + std::to_string(k) + ".npy";
    std::string f;
    for (const auto& c : {pb, named, numbered})
      if (f.empty() && std::filesystem::is_regular_file(c)) f = c;
    if (f.empty())
      throw InputError(dir + " has no input_" + std::to_string(k) + ".pb, " + m.inputs[k] +
                       ".npy or input_" + std::to_string(k) + ".npy for the graph input '" +
                       m.inputs[k] + "'");
    HostTensor t = f == pb ? read_tensor(f) : read_npy(f);
    const auto declared = m.input_types.count(m.inputs[k]) ? m.input_types.at(m.inputs[k]) : 0;
    if (declared != 0 && declared != static_cast<int32_t>(t.elem))
      throw InputError("graph input '" + m.inputs[k] + "' is declared with element type " +
                       std::to_string(declared) + " (" + f + " holds type " +
                       std::to_string(static_cast<int>(t.elem)) +
                       "); stabfuzz runs float, double, the integer types and bool");
    out[m.inputs[k]] = std::move(t);
  }
  return out;
}

}  // namespace stabfuzz::onnx
