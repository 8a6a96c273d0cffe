// Site symbolization: a recorded return address becomes file:line through the binary's line tables.
//
// addr2line -i prints the inline chain innermost first; the first frame outside the CESTAC headers
// is the operator line where the operation ran. Sources are compiled with -ffile-prefix-map so the
// paths are relative to the repository root.
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

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

// One long-lived `addr2line -i -a -e MODULE` per module: loading a large binary's line tables
// costs ~0.3 s, once per process instead of once per site. After each address a sentinel address
// is sent; its echo ("0xffffffffffffffff") ends the answer, since -i prints a variable number of
// lines.
class Addr2line {
 public:
  explicit Addr2line(const std::string& module) {
    int in[2], out[2];
    if (::pipe2(in, O_CLOEXEC) != 0) return;
    if (::pipe2(out, O_CLOEXEC) != 0) {
      ::close(in[0]), ::close(in[1]);
      return;
    }
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(in[0], 0);
      ::dup2(out[1], 1);
      const int null = ::open("/dev/null", O_WRONLY);
      if (null >= 0) ::dup2(null, 2);
      ::execlp("addr2line", "addr2line", "-i", "-a", "-e", module.c_str(),
               static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(in[0]), ::close(out[1]);
    if (pid_ < 0) {
      ::close(in[1]), ::close(out[0]);
      return;
    }
    to_ = ::fdopen(in[1], "w");
    from_ = ::fdopen(out[0], "r");
  }
  ~Addr2line() {
    if (to_) std::fclose(to_);
    if (from_) std::fclose(from_);
    if (pid_ > 0) ::waitpid(pid_, nullptr, 0);
  }
  Addr2line(const Addr2line&) = delete;
  Addr2line& operator=(const Addr2line&) = delete;

  // The inline chain of `offset`, innermost first; empty when addr2line is not there.
  std::vector<std::string> query(uintptr_t offset) {
    std::vector<std::string> out;
    if (!to_ || !from_) return out;
    std::fprintf(to_, "0x%lx\n0xffffffffffffffff\n", static_cast<unsigned long>(offset));
    if (std::fflush(to_) != 0) return fail(), out;
    char line[1024];
    bool header = true;
    while (std::fgets(line, sizeof line, from_)) {
      std::string loc(line);
      while (!loc.empty() && (loc.back() == '\n' || loc.back() == '\r')) loc.pop_back();
      if (header) {  // our address echoed
        header = false;
        continue;
      }
      if (loc == "0xffffffffffffffff") {
        if (!std::fgets(line, sizeof line, from_)) fail();  // the sentinel's own "??:0"
        return out;
      }
      out.push_back(loc);
    }
    fail();
    return {};
  }

 private:
  void fail() {
    if (to_) std::fclose(to_);
    if (from_) std::fclose(from_);
    to_ = from_ = nullptr;
  }
  pid_t pid_ = -1;
  std::FILE* to_ = nullptr;
  std::FILE* from_ = nullptr;
};

std::string resolve(uintptr_t address) {
  std::pair<uintptr_t, Module> q{address - 1, {}};  // -1: the call instruction, not the next one
  dl_iterate_phdr(find_module, &q);
  if (!q.second.found) return "?";
  // A forked child (the isolation fork server) must not share its parent's pipes: its own.
  static std::map<std::pair<pid_t, std::string>, std::unique_ptr<Addr2line>> tools;
  auto& tool = tools[{::getpid(), q.second.path}];
  if (!tool) tool = std::make_unique<Addr2line>(q.second.path);
  std::string first, chosen;
  for (std::string loc : tool->query(address - 1 - q.second.bias)) {
    if (auto d = loc.find(" (discriminator"); d != std::string::npos) loc.resize(d);
    while (loc.rfind("./", 0) == 0) loc.erase(0, 2);  // compilation dir "." joined to the file
    if (first.empty()) first = loc;
    if (chosen.empty() && !is_engine_frame(loc)) chosen = loc;
  }
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
