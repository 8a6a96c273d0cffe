// Plugin loader: the host side of the C boundary in stabfuzz/plugin_abi.h.
#include "harness/plugin/loader.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <stdexcept>

#include "stabfuzz/errors.h"
#include "stabfuzz/plugin_abi.h"

namespace stabfuzz::plugin {
namespace {

static_assert(static_cast<int>(DType::f64) == STABFUZZ_F64 &&
                  static_cast<int>(DType::f32) == STABFUZZ_F32 &&
                  static_cast<int>(DType::f16) == STABFUZZ_F16 &&
                  static_cast<int>(DType::bf16) == STABFUZZ_BF16,
              "plugin dtype codes are DType's values");

// An Input seen through the C structs; points into `in`, valid while `in` lives.
struct CInput {
  std::vector<stabfuzz_tensor> tensors;
  std::vector<stabfuzz_param> params;
  stabfuzz_input c{};
  explicit CInput(const Input& in) {
    for (const auto& t : in.args)
      tensors.push_back({t.shape.data(), static_cast<uint32_t>(t.shape.size()), t.values.data(),
                         static_cast<uint64_t>(t.values.size())});
    for (const auto& [k, v] : in.params) params.push_back({k.c_str(), v});
    c.dtype = static_cast<uint32_t>(in.dtype);
    c.n_args = static_cast<uint32_t>(tensors.size());
    c.args = tensors.data();
    c.n_params = static_cast<uint32_t>(params.size());
    c.params = params.data();
  }
};

// What one call sent back through the sink.
struct Collected {
  bool outputs = false, cestac = false, bad_kind = false;
  std::vector<double> out;
  CestacOutput c;
  std::string error;
};

stabfuzz_sink sink_for(Collected& col) {
  stabfuzz_sink s{};
  s.ctx = &col;
  s.outputs = [](void* ctx, const double* v, uint64_t n) {
    auto& c = *static_cast<Collected*>(ctx);
    c.outputs = true;
    c.out.assign(v, v + n);
  };
  s.cestac = [](void* ctx, const double* mean, const double* digits, const uint8_t* noisy,
                uint64_t n) {
    auto& c = *static_cast<Collected*>(ctx);
    c.cestac = true;
    c.c.mean.assign(mean, mean + n);
    c.c.digits.assign(digits, digits + n);
    c.c.noisy.assign(noisy, noisy + n);
  };
  s.instability = [](void* ctx, uint32_t kind, uint64_t address, uint64_t count) {
    auto& c = *static_cast<Collected*>(ctx);
    if (kind >= static_cast<uint32_t>(cestac::kKindCount)) {
      c.bad_kind = true;
      return;
    }
    c.c.log.counts[kind] += count;
    c.c.log.sites.push_back(
        {static_cast<cestac::Kind>(kind), static_cast<uintptr_t>(address), count});
  };
  s.error = [](void* ctx, const char* message) {
    static_cast<Collected*>(ctx)->error = message ? message : "(no message)";
  };
  return s;
}

void check_call(int rc, const Collected& col, const std::string& id, bool has_result) {
  if (rc != 0 || !col.error.empty())
    throw std::runtime_error(
        id + " failed: " + (col.error.empty() ? "error " + std::to_string(rc) : col.error));
  if (!has_result) throw std::runtime_error(id + " returned no result");
  if (col.bad_kind) throw std::runtime_error(id + " reported an unknown instability kind");
}

bool valid_variant(const std::string& v) {
  if (v.empty() || v.front() == '/' || v.back() == '/' || v.find("//") != std::string::npos)
    return false;
  for (char ch : v)
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-' || ch == '.' ||
          ch == '/'))
      return false;
  return true;
}

// Tensors the family passes: what its first value regime generates.
size_t family_arity(const Family& f) {
  SeededEntropy e(1, 0);
  return f.regimes.front().sample(e, DType::f64).args.size();
}

// Opens the library at `path` and returns its entry table once its ABI matches this stabfuzz's.
// The library stays loaded for the life of the process: its code backs the targets.
const stabfuzz_plugin& open_plugin(const std::string& path, const std::string& where) {
  void* lib = ::dlopen(path.find('/') == std::string::npos ? ("./" + path).c_str() : path.c_str(),
                       RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* err = ::dlerror();
    throw InputError(where + " does not load: " + (err ? err : "unknown error"));
  }
  auto entry = reinterpret_cast<stabfuzz_plugin_entry_v1>(::dlsym(lib, STABFUZZ_PLUGIN_ENTRY));
  if (!entry)
    throw InputError(where + " is not a stabfuzz plugin: it exports no " STABFUZZ_PLUGIN_ENTRY
                             " (build it with find_package(stabfuzz) and stabfuzz::plugin)");
  const stabfuzz_plugin* table = entry();
  if (!table) throw InputError(where + ": " STABFUZZ_PLUGIN_ENTRY " returned no table");
  if (table->abi_version != STABFUZZ_PLUGIN_ABI_VERSION)
    throw InputError(where + " speaks plugin ABI version " + std::to_string(table->abi_version) +
                     ", this stabfuzz speaks " + std::to_string(STABFUZZ_PLUGIN_ABI_VERSION) +
                     " (rebuild it against this stabfuzz)");
  if (table->target_size < sizeof(stabfuzz_target))
    throw InputError(where + ": its target entries are smaller than ABI version 1's");
  if (table->kind_count != static_cast<uint32_t>(cestac::kKindCount))
    throw InputError(where + " was built against a stabfuzz with " +
                     std::to_string(table->kind_count) +
                     " CESTAC instability kinds, this one has " +
                     std::to_string(cestac::kKindCount) + " (rebuild it against this stabfuzz)");
  if (table->n_targets == 0 || !table->targets) throw InputError(where + " registers no targets");
  return *table;
}

// How long a plugin may take to load (its static constructors and entry point) in the probe.
constexpr int kLoadTimeoutMs = 10000;

// Loads the library once in a forked child first, its stdout captured: its static constructors and
// entry point run there, so a plugin that crashes, calls exit(), hangs or prints on stdout while
// loading is refused with one line, instead of taking stabfuzz down or writing into its report.
// (Its calls later run isolated too when it opts in; see harness/campaign/isolate.h.)
void probe_load(const std::string& path, const std::string& where) {
  int out[2], done[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return;  // no probe possible: the load itself still runs
  if (::pipe2(done, O_CLOEXEC) != 0) {
    ::close(out[0]), ::close(out[1]);
    return;
  }
  std::cout.flush();
  std::fflush(nullptr);  // nothing buffered may be written twice, or count as the plugin's output
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out[1], STDOUT_FILENO);
    try {
      open_plugin(path, where);
    } catch (...) {  // a refusal: the parent's own load reports it
    }
    const char ok = 1;
    if (::write(done[1], &ok, 1) != 1) ::_exit(1);
    std::fflush(stdout);  // what the plugin printed through stdio
    ::_exit(0);
  }
  ::close(out[1]), ::close(done[1]);
  if (pid < 0) {
    ::close(out[0]), ::close(done[0]);
    return;
  }
  std::string printed;
  bool ok = false, timed_out = false;
  pollfd fds[2] = {{out[0], POLLIN, 0}, {done[0], POLLIN, 0}};
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(kLoadTimeoutMs);
  while (fds[0].fd >= 0 || fds[1].fd >= 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          until - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    const int n = ::poll(fds, 2, static_cast<int>(left));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    for (int k = 0; k < 2; ++k) {
      if (fds[k].fd < 0 || fds[k].revents == 0) continue;
      char buf[256];
      const ssize_t r = ::read(fds[k].fd, buf, sizeof buf);
      if (r <= 0) {
        fds[k].fd = -1;  // poll skips negative descriptors
        continue;
      }
      if (k == 0 && printed.size() < 4096) printed.append(buf, static_cast<size_t>(r));
      if (k == 1) ok = true;
    }
  }
  ::close(out[0]), ::close(done[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out)
    throw InputError(where + " hangs while loading (not loaded within " +
                     std::to_string(kLoadTimeoutMs / 1000) + " s)");
  if (!ok && WIFSIGNALED(status))
    throw InputError(where + " crashes while loading: signal " + std::to_string(WTERMSIG(status)) +
                     " (" + ::strsignal(WTERMSIG(status)) + ")");
  if (!ok && WIFEXITED(status))
    throw InputError(where + " calls exit(" + std::to_string(WEXITSTATUS(status)) +
                     ") while loading");
  if (!printed.empty()) {
    std::string first = printed.substr(0, printed.find('\n'));
    if (first.size() > 60) first = first.substr(0, 60) + "...";
    throw InputError(where + " writes to stdout while loading (\"" + first +
                     "\"); stabfuzz's stdout is its report: print to stderr instead");
  }
}

// Entry i of the table: entries lie target_size bytes apart, which later ABI versions may grow.
const stabfuzz_target& target_entry(const stabfuzz_plugin& table, uint32_t i) {
  return *reinterpret_cast<const stabfuzz_target*>(reinterpret_cast<const char*>(table.targets) +
                                                   size_t{i} * table.target_size);
}

// InputError unless the entry `id` (family/variant) can join the registry: a known family, a
// well-formed variant, a valid dtype mask, a native entry point, the family's arity, and an id
// neither registered nor among the plugin's `loaded` targets.
void check_entry(const Registry& registry, const stabfuzz_target& e, const std::string& family,
                 const std::string& variant, const std::string& id,
                 const std::vector<Target>& loaded, const std::string& where) {
  const Family* fam = registry.find_family(family);
  if (!fam)
    throw InputError(where + ": target '" + id + "' names unknown family '" + family +
                     "' (stabfuzz --list shows the families)");
  if (!valid_variant(variant))
    throw InputError(where + ": target '" + id +
                     "' has a malformed variant (letters, digits, _ - . and inner /)");
  if (e.dtypes == 0 || (e.dtypes & ~uint32_t{STABFUZZ_ALL_DTYPES}))
    throw InputError(where + ": target '" + id + "' declares a bad dtype mask 0x" + [&] {
      char b[16];
      std::snprintf(b, sizeof b, "%x", e.dtypes);
      return std::string(b);
    }() + " (bits of f64 1, f32 2, f16 4, bf16 8)");
  if (!e.native) throw InputError(where + ": target '" + id + "' has no native entry point");
  const size_t arity = family_arity(*fam);
  if (e.arity >= 0 && static_cast<size_t>(e.arity) != arity)
    throw InputError(where + ": target '" + id + "' reads " + std::to_string(e.arity) +
                     " input tensor(s), but " + family + " passes " + std::to_string(arity));
  if (registry.find_target(id).second)
    throw InputError(where + ": target '" + id + "' is already registered");
  for (const auto& t : loaded)
    if (t.id == id) throw InputError(where + ": target '" + id + "' is registered twice");
}

// The target `id` that calls the entry's functions across the C boundary, each call in its own
// sink.
Target make_target(const stabfuzz_target& e, const std::string& id, const std::string& lib_name) {
  Target t;
  t.id = id;
  t.kind = TargetKind::library;
  t.library = "plugin";
  t.description = std::string(e.description ? e.description : "") + " [plugin " + lib_name + "]";
  for (DType d : kAllDTypes)
    if (e.dtypes & STABFUZZ_DTYPE_BIT(static_cast<uint32_t>(d))) t.dtypes.push_back(d);
  t.isolated = true;
  const stabfuzz_target entry_copy = e;
  t.native = [entry_copy, id](const Input& in) {
    CInput c(in);
    Collected col;
    const stabfuzz_sink sink = sink_for(col);
    const int rc = entry_copy.native(&c.c, &sink);
    check_call(rc, col, id, col.outputs);
    return std::move(col.out);
  };
  if (e.cestac)
    t.cestac = [entry_copy, id](const Input& in, const CestacRequest& req) {
      CInput c(in);
      Collected col;
      const stabfuzz_sink sink = sink_for(col);
      const stabfuzz_cestac_config cfg{req.seed, req.stream, req.config.cancel_digits,
                                       req.config.detect ? 1 : 0};
      const int rc = entry_copy.cestac(&c.c, &cfg, &sink);
      check_call(rc, col, id, col.cestac);
      return std::move(col.c);
    };
  return t;
}

}  // namespace

std::vector<std::string> load(Registry& registry, const std::string& path) {
  const std::string where = "plugin " + path;
  probe_load(path, where);
  const stabfuzz_plugin& table = open_plugin(path, where);
  const std::string lib_name = std::filesystem::path(path).filename().string();
  std::vector<Target> targets;
  std::vector<std::string> families;
  for (uint32_t i = 0; i < table.n_targets; ++i) {
    const stabfuzz_target& e = target_entry(table, i);
    const std::string family = e.family ? e.family : "";
    const std::string variant = e.variant ? e.variant : "";
    const std::string id = family + "/" + variant;
    check_entry(registry, e, family, variant, id, targets, where);
    targets.push_back(make_target(e, id, lib_name));
    families.push_back(family);
  }
  std::vector<std::string> ids;
  for (size_t i = 0; i < targets.size(); ++i) {
    ids.push_back(targets[i].id);
    try {
      registry.add_target(families[i], std::move(targets[i]));
    } catch (const std::logic_error& err) {
      throw InputError(where + ": " + err.what());
    }
  }
  return ids;
}

}  // namespace stabfuzz::plugin
