// Build-time check of the CUDA kernels' register use against the blocks they are launched with
// (no GPU needed): reads ptxas's resource report of targets/cuda/kernels.cu as it was compiled
// (cmake/capture_ptxas.cmake writes it during the build) and fails when any kernel's registers
// times its largest block exceed what one block may hold, 64K registers: such a launch fails with
// "too many resources requested for launch".
#include <cxxabi.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "targets/cuda/launch_plan.h"

namespace stabfuzz::cuda {
namespace {

struct Entry {
  std::string mangled, arch, name;
  int registers = -1;
  long spill_stores = 0;
};

std::string demangle(const std::string& m) {
  int status = 0;
  char* d = abi::__cxa_demangle(m.c_str(), nullptr, nullptr, &status);
  std::string out = status == 0 && d ? d : m;
  std::free(d);
  return out;
}

std::vector<Entry> read_report(const std::string& path) {
  std::ifstream f(path);
  const std::regex entry(R"(Compiling entry function '([^']+)' for '([^']+)')");
  const std::regex props(R"(Function properties for (\S+))");
  const std::regex spill(R"((\d+) bytes spill stores)");
  const std::regex used(R"(Used (\d+) registers)");
  std::vector<Entry> out;
  std::string line, props_of;
  std::smatch m;
  while (std::getline(f, line)) {
    if (std::regex_search(line, m, entry)) {
      out.push_back({m[1], m[2], demangle(m[1])});
    } else if (std::regex_search(line, m, props)) {
      props_of = m[1];
    } else if (!out.empty() && props_of == out.back().mangled &&
               std::regex_search(line, m, spill)) {
      out.back().spill_stores = std::stol(m[1]);
    } else if (!out.empty() && out.back().registers < 0 && std::regex_search(line, m, used)) {
      out.back().registers = std::stoi(m[1]);
    }
  }
  return out;
}

// The most threads per block the host ever launches each kernel with (launch_plan.h); a kernel
// missing here fails the test until it is added.
struct Launch {
  const char* needle;  // in the demangled name
  int max_block;
};
const Launch kLaunches[] = {
    {"::softmax_kernel<", kRowMaxThreads},    {"::log_softmax_kernel<", kRowMaxThreads},
    {"::layer_norm_kernel<", kRowMaxThreads}, {"::rms_norm_kernel<", kRowMaxThreads},
    {"::sum_kernel<", kRowMaxThreads},        {"::var_kernel<", kRowMaxThreads},
    {"::gemm_kernel<", kGemmThreads},         {"::attention_kernel<", kAttentionThreads},
    {"::init_states(", kInitThreads},
};

// Registers one block of `threads` needs: whole warps, each given registers in units of 256
// (sm_50 to sm_90), out of 64K per block.
long block_registers(int registers, int threads) {
  const long warps = (threads + 31) / 32;
  const long per_warp = (registers * 32L + 255) / 256 * 256;
  return warps * per_warp;
}

TEST(PtxasRegisters, EveryKernelFitsItsLargestBlock) {
  const std::vector<Entry> report = read_report(STABFUZZ_PTXAS_REPORT);
  ASSERT_FALSE(report.empty()) << "no ptxas report in " << STABFUZZ_PTXAS_REPORT
                               << ": rebuild stabfuzz_cuda_kernels (its compile writes it)";
  std::map<std::string, int> instantiations;  // per needle and arch
  std::printf("%-60s %5s %5s %7s %6s\n", "kernel", "regs", "block", "regs*B", "spill");
  for (const Entry& e : report) {
    const Launch* l = nullptr;
    for (const Launch& c : kLaunches)
      if (e.name.find(c.needle) != std::string::npos) l = &c;
    ASSERT_NE(l, nullptr) << e.name << ": a kernel with no known launch size (add it)";
    ASSERT_GE(e.registers, 0) << e.name << ": no register count in the report";
    ++instantiations[std::string(l->needle) + " " + e.arch];
    std::string shown =
        std::regex_replace(e.name, std::regex(R"(\(anonymous namespace\)::|^void )"), "");
    shown = shown.substr(0, shown.find('(')) + " " + e.arch;
    std::printf("%-60s %5d %5d %7ld %6ld\n", shown.c_str(), e.registers, l->max_block,
                block_registers(e.registers, l->max_block), e.spill_stores);
    EXPECT_LE(block_registers(e.registers, l->max_block), 65536)
        << shown << ": " << e.registers << " registers x " << l->max_block
        << " threads exceed the 65536 registers of a block; the launch would fail";
    EXPECT_LE(e.registers, 255) << shown;
  }
  // Every kernel in every instantiation the host launches: float, double, DStoch<float|double>.
  for (const auto& [key, count] : instantiations)
    EXPECT_EQ(count, key.rfind("::init_states(", 0) == 0 ? 1 : 4) << key;
  std::set<std::string> archs;
  for (const Entry& e : report) archs.insert(e.arch);
  EXPECT_EQ(instantiations.size(), std::size(kLaunches) * archs.size());
}

}  // namespace
}  // namespace stabfuzz::cuda
