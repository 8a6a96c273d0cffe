// NumPy .npy files (harness/onnx/npy.cc): what np.save writes, read back exactly, and bad files.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/run_binary.h"

#ifdef STABFUZZ_HAVE_ONNX
#include "harness/onnx/npy.h"
#include "stabfuzz/errors.h"
#include "tests/support/onnx_graphs.h"
#endif

namespace stabfuzz::testing {
namespace {

#ifdef STABFUZZ_HAVE_ONNX
// .npy files as np.save writes them: every dtype read back exactly, versions 1 and 2, scalars.
TEST(OnnxNpy, ReadsWhatNumpyWrites) {
  // np.save(f, np.array([[1.5, -2], [3, 0.25]], dtype=np.float32)), byte for byte.
  std::string v1("\x93NUMPY\x01\x00\x76\x00", 10);
  v1 += "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }";
  v1 += std::string(118 - 60, ' ') + "\n";
  ASSERT_EQ(v1.size(), 128u);
  for (float x : {1.5f, -2.0f, 3.0f, 0.25f}) v1.append(reinterpret_cast<const char*>(&x), 4);
  const HostTensor t = onnx::parse_npy(v1, "a.npy");
  EXPECT_EQ(t.elem, Elem::float32);
  EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(t.values, (std::vector<double>{1.5, -2, 3, 0.25}));
  // Version 2 (a 4-byte header length), a 0-d int8 array and a 1-d bool array.
  std::string v2("\x93NUMPY\x02\x00", 8);
  const std::string h = "{'descr': '|i1', 'fortran_order': False, 'shape': (), }\n";
  v2 += std::string{static_cast<char>(h.size()), 0, 0, 0} + h + "\xfe";
  const HostTensor s = onnx::parse_npy(v2, "s.npy");
  EXPECT_TRUE(s.shape.empty());
  EXPECT_EQ(s.values, (std::vector<double>{-2}));
  for (const HostTensor& x :
       {HostTensor{Elem::bool8, {3}, {1, 0, 1}}, HostTensor{Elem::int64, {2}, {-7, 1e15}},
        HostTensor{Elem::uint16, {1, 2}, {65535, 3}}, HostTensor{Elem::float64, {0}, {}}}) {
    const HostTensor back = onnx::parse_npy(onnx::npy_bytes(x), "x.npy");
    EXPECT_EQ(back.elem, x.elem);
    EXPECT_EQ(back.shape, x.shape);
    EXPECT_EQ(back.values, x.values);
  }
}

TEST(OnnxNpy, BadFilesAreOneClearError) {
  const std::string good = onnx::npy_bytes(f32({3}, {1, 2, 3}));
  auto error = [](const std::string& bytes) -> std::string {
    try {
      onnx::parse_npy(bytes, "x.npy");
    } catch (const InputError& e) {
      return e.what();
    }
    return "accepted";
  };
  EXPECT_NE(error("PK\x03\x04 a zip").find("not a .npy file"), std::string::npos);
  EXPECT_NE(error(good.substr(0, good.size() - 1)).find("bytes of data"), std::string::npos);
  std::string big = good;
  big.replace(big.find("<f4"), 3, ">f4");
  EXPECT_NE(error(big).find("big-endian"), std::string::npos);
  std::string fortran = good;
  fortran.replace(fortran.find("False"), 5, "True ");
  EXPECT_NE(error(fortran).find("Fortran"), std::string::npos);
  std::string half = good;
  half.replace(half.find("<f4"), 3, "<f2");
  EXPECT_NE(error(half).find("dtype"), std::string::npos);
  std::string huge = good;
  huge.replace(huge.find("(3,)"), 4, "(99999999999,)");
  EXPECT_NE(error(huge).find("too large"), std::string::npos) << error(huge);
}

TEST(OnnxNpy, WritesAndReadsFilesBack) {
  const std::string dir = temp_dir("");
  const HostTensor t{Elem::float64, {2, 3}, {0.1, -1e300, 5e-324, 0, -0.0, 42}};
  onnx::write_npy(dir + "/t.npy", t);
  const HostTensor back = onnx::read_npy(dir + "/t.npy");
  EXPECT_EQ(back.elem, Elem::float64);
  EXPECT_EQ(back.shape, t.shape);
  EXPECT_EQ(back.values, t.values);
  EXPECT_EQ(slurp(dir + "/t.npy").rfind("\x93NUMPY\x01\x00", 0), 0u);
  EXPECT_THROW(onnx::read_npy(dir + "/missing.npy"), InputError);
}
#endif

}  // namespace
}  // namespace stabfuzz::testing
