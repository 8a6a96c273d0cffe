// Site symbolization: a recorded return address becomes file:line through the binary's line tables.
//
// addr2line -i prints the inline chain innermost first; the first frame outside the CESTAC headers
// is the operator line where the operation ran. Sources are compiled with -ffile-prefix-map so the
// paths are relative to the repository root.
#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <mutex>
#include <string>

#include "stabfuzz/cestac.h"

namespace stabfuzz::cestac {
namespace {

struct Module {
  std::string path;
  uintptr_t bias = 0;
  bool found = false;
};

// The executable's own path (in addr2line's shell, /proc/self/exe would be addr2line itself).
std::string self_path() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string("/proc/self/exe");
}

int find_module(struct dl_phdr_info* info, size_t, void* data) {
  auto* q = static_cast<std::pair<uintptr_t, Module>*>(data);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    const uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
    if (q->first >= lo && q->first < lo + ph.p_memsz) {
      q->second.path = (info->dlpi_name && *info->dlpi_name) ? info->dlpi_name : self_path();
      q->second.bias = info->dlpi_addr;
      q->second.found = true;
      return 1;
    }
  }
  return 0;
}

bool is_engine_frame(const std::string& loc) {
  return loc.find("stabfuzz/stoch") != std::string::npos ||
         loc.find("stabfuzz/cestac.h") != std::string::npos ||
         loc.find("injectors/faults.h") != std::string::npos || loc.rfind("??", 0) == 0;
}

std::string resolve(uintptr_t address) {
  std::pair<uintptr_t, Module> q{address - 1, {}};  // -1: the call instruction, not the next one
  dl_iterate_phdr(find_module, &q);
  if (!q.second.found) return "?";
  char cmd[512];
  std::snprintf(cmd, sizeof cmd, "addr2line -i -e '%s' 0x%lx 2>/dev/null", q.second.path.c_str(),
                static_cast<unsigned long>(address - 1 - q.second.bias));
  FILE* p = popen(cmd, "r");
  if (!p) return "?";
  std::string first, chosen;
  char line[1024];
  while (std::fgets(line, sizeof line, p)) {
    std::string loc(line);
    while (!loc.empty() && (loc.back() == '\n' || loc.back() == '\r')) loc.pop_back();
    if (auto d = loc.find(" (discriminator"); d != std::string::npos) loc.resize(d);
    while (loc.rfind("./", 0) == 0) loc.erase(0, 2);  // compilation dir "." joined to the file
    if (first.empty()) first = loc;
    if (chosen.empty() && !is_engine_frame(loc)) chosen = loc;
  }
  pclose(p);
  if (!chosen.empty()) return chosen;
  return first.empty() || first.rfind("??", 0) == 0 ? "?" : first;
}

}  // namespace

std::string symbolize(uintptr_t address) {
  static std::mutex mu;
  static std::map<uintptr_t, std::string> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(address);
  if (it != cache.end()) return it->second;
  return cache[address] = resolve(address);
}

}  // namespace stabfuzz::cestac
