// Fork server of isolated targets: one child per target x dtype, calls framed over a socket pair.
#include "harness/campaign/isolate.h"

#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <stdexcept>

#include "harness/pipeline/evaluate.h"

namespace stabfuzz::campaign {

using pipeline::evaluate;

std::string_view failure_name(Failure f) {
  switch (f) {
    case Failure::none:
      return "none";
    case Failure::crash:
      return "crash";
    case Failure::timeout:
      return "timeout";
    case Failure::exception:
      return "exception";
    case Failure::stdout_write:
      return "stdout";
  }
  return "?";
}

namespace {

// ---- framing: little helpers over a byte string ---------------------------------------------

struct Writer {
  std::string buf;
  template <class T>
  void put(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    buf.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  template <class T>
  void put_vec(const std::vector<T>& v) {
    put<uint64_t>(v.size());
    if (!v.empty()) buf.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  }
  void put_str(const std::string& s) {
    put<uint64_t>(s.size());
    buf += s;
  }
};

struct Reader {
  const std::string& buf;
  size_t pos = 0;
  void need(size_t n) {
    if (buf.size() - pos < n) throw std::runtime_error("isolate: truncated message");
  }
  template <class T>
  T get() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, buf.data() + pos, sizeof v);
    pos += sizeof v;
    return v;
  }
  template <class T>
  std::vector<T> get_vec() {
    const auto n = get<uint64_t>();
    if (n > (buf.size() - pos) / sizeof(T)) throw std::runtime_error("isolate: truncated message");
    std::vector<T> v(n);
    if (n) std::memcpy(v.data(), buf.data() + pos, n * sizeof(T));
    pos += n * sizeof(T);
    return v;
  }
  std::string get_str() {
    const auto n = get<uint64_t>();
    need(n);
    std::string s = buf.substr(pos, n);
    pos += n;
    return s;
  }
};

bool send_all(int fd, const std::string& payload) {
  const uint64_t n = payload.size();
  std::string msg(reinterpret_cast<const char*>(&n), sizeof n);
  msg += payload;
  for (size_t off = 0; off < msg.size();) {
    const ssize_t w = ::send(fd, msg.data() + off, msg.size() - off, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    off += static_cast<size_t>(w);
  }
  return true;
}

enum class Read { ok, eof, timeout };

// Reads n bytes before `deadline` (none when has_deadline is false).
Read read_n(int fd, char* dst, size_t n, bool has_deadline,
            std::chrono::steady_clock::time_point deadline) {
  for (size_t off = 0; off < n;) {
    int wait_ms = -1;
    if (has_deadline) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                            deadline - std::chrono::steady_clock::now())
                            .count();
      if (left <= 0) return Read::timeout;
      wait_ms = static_cast<int>(std::min<int64_t>(left, 1 << 30));
    }
    pollfd p{fd, POLLIN, 0};
    const int r = ::poll(&p, 1, wait_ms);
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) return Read::timeout;
    if (r < 0) return Read::eof;
    const ssize_t got = ::read(fd, dst + off, n - off);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (got <= 0) return Read::eof;
    off += static_cast<size_t>(got);
  }
  return Read::ok;
}

Read read_msg(int fd, std::string& out, bool has_deadline,
              std::chrono::steady_clock::time_point deadline) {
  uint64_t n = 0;
  if (Read r = read_n(fd, reinterpret_cast<char*>(&n), sizeof n, has_deadline, deadline);
      r != Read::ok)
    return r;
  out.resize(n);
  return n ? read_n(fd, out.data(), n, has_deadline, deadline) : Read::ok;
}

// ---- the call: input and request out, result back -----------------------------------------

void put_input(Writer& w, const Input& in, const CestacRequest* req) {
  w.put<uint8_t>(static_cast<uint8_t>(in.dtype));
  w.put<uint64_t>(in.args.size());
  for (const auto& t : in.args) {
    w.put_vec(t.shape);
    w.put_vec(t.values);
  }
  w.put<uint64_t>(in.params.size());
  for (const auto& [k, v] : in.params) {
    w.put_str(k);
    w.put(v);
  }
  w.put<uint8_t>(req != nullptr);
  if (req) {
    w.put(req->seed);
    w.put(req->stream);
    w.put<int32_t>(req->config.cancel_digits);
    w.put<uint8_t>(req->config.detect);
  }
}

Input get_input(Reader& r, CestacRequest& req, bool& has_req) {
  Input in;
  in.dtype = static_cast<DType>(r.get<uint8_t>());
  const auto nargs = r.get<uint64_t>();
  for (uint64_t k = 0; k < nargs; ++k) {
    Tensor t;
    t.shape = r.get_vec<int64_t>();
    t.values = r.get_vec<double>();
    in.args.push_back(std::move(t));
  }
  const auto nparams = r.get<uint64_t>();
  for (uint64_t k = 0; k < nparams; ++k) {
    std::string name = r.get_str();
    in.params.emplace_back(std::move(name), r.get<double>());
  }
  has_req = r.get<uint8_t>() != 0;
  if (has_req) {
    req.seed = r.get<uint64_t>();
    req.stream = r.get<uint64_t>();
    req.config.cancel_digits = r.get<int32_t>();
    req.config.detect = r.get<uint8_t>() != 0;
  }
  return in;
}

std::string serve_one(const Target& t, const std::string& msg) {
  Writer w;
  try {
    Reader r{msg};
    CestacRequest req;
    bool has_req = false;
    const Input in = get_input(r, req, has_req);
    const std::vector<double> out = t.native(in);
    w.put<uint8_t>(0);
    w.put_vec(out);
    const bool cestac = has_req && static_cast<bool>(t.cestac);
    w.put<uint8_t>(cestac);
    if (cestac) {
      const CestacOutput c = t.cestac(in, req);
      w.put_vec(c.mean);
      w.put_vec(c.digits);
      w.put_vec(c.noisy);
      w.put<uint64_t>(c.log.sites.size());
      for (const auto& s : c.log.sites) {
        w.put<uint8_t>(static_cast<uint8_t>(s.kind));
        w.put<uint64_t>(s.address);
        w.put<uint64_t>(s.count);
      }
      for (auto n : c.log.counts) w.put<uint64_t>(n);
    }
  } catch (const std::exception& e) {
    w = Writer{};
    w.put<uint8_t>(1);
    w.put_str(e.what());
  }
  return w.buf;
}

// What the call wrote on stdout (an in-memory file in the child): the first bytes, then emptied.
// The bytes are also copied to stderr, where the user sees them as before.
std::string take_stdout(int mem) {
  std::fflush(stdout);
  std::cout.flush();
  const off_t size = ::lseek(STDOUT_FILENO, 0, SEEK_CUR);
  if (size <= 0) return {};
  std::string head(static_cast<size_t>(std::min<off_t>(size, 4096)), '\0');
  const ssize_t got = ::pread(mem, head.data(), head.size(), 0);
  head.resize(got > 0 ? static_cast<size_t>(got) : 0);
  if (!head.empty() && ::write(STDERR_FILENO, head.data(), head.size()) < 0) {
  }
  if (::ftruncate(mem, 0) != 0 || ::lseek(STDOUT_FILENO, 0, SEEK_SET) != 0) {
  }
  std::string shown;
  for (char c : head.substr(0, 60)) shown += (c >= 0x20 && c < 0x7f) ? c : '.';
  return "wrote " + std::to_string(size) + " bytes to stdout: \"" + shown +
         (size > 60 ? "...\"" : "\"");
}

[[noreturn]] void child_main(const Target& t, int fd) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive stabfuzz (a hung child would)
  // The target's stdout goes to an in-memory file: stdout is the run's report, and a library that
  // writes there is a finding (kind crash, failure "stdout"), not a line in the report.
  const int mem = ::memfd_create("stabfuzz-child-stdout", MFD_CLOEXEC);
  ::dup2(mem >= 0 ? mem : STDERR_FILENO, STDOUT_FILENO);
  std::string msg;
  while (read_msg(fd, msg, false, {}) == Read::ok) {
    std::string reply = serve_one(t, msg);
    if (mem >= 0)
      if (std::string wrote = take_stdout(mem); !wrote.empty()) {
        Writer w;
        w.put<uint8_t>(2);
        w.put_str(wrote);
        reply = std::move(w.buf);
      }
    if (!send_all(fd, reply)) break;
  }
  ::_exit(0);  // no atexit handlers, no flush of the parent's buffers
}

std::string describe_status(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* abbrev = sigabbrev_np(sig);
    return std::string("signal ") + (abbrev ? std::string("SIG") + abbrev : std::to_string(sig)) +
           " (" + strsignal(sig) + ")";
  }
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "ended";
}

}  // namespace

Isolator::Isolator(const Target& target, int64_t timeout_ms)
    : target_(target), timeout_ms_(timeout_ms) {}

Isolator::~Isolator() {
  if (pid_ > 0) stop(true);
}

void Isolator::start() {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    throw std::runtime_error(std::string("isolate: socketpair: ") + std::strerror(errno));
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);  // buffered output must not be written twice, by parent and child
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(sv[0]);
    ::close(sv[1]);
    throw std::runtime_error(std::string("isolate: fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::close(sv[0]);
    child_main(target_, sv[1]);
  }
  ::close(sv[1]);
  pid_ = pid;
  fd_ = sv[0];
  if (forks_++ > 0) ++restarts_;
}

std::string Isolator::stop(bool kill) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  int status = 0;
  if (kill) {
    ::kill(pid_, SIGKILL);
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  } else {
    // The socket closed: the child has ended or is ending; give it a second, then kill it.
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    pid_t r;
    while ((r = ::waitpid(pid_, &status, WNOHANG)) == 0 && std::chrono::steady_clock::now() < until)
      ::usleep(1000);
    if (r == 0) {
      ::kill(pid_, SIGKILL);
      while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
    }
  }
  pid_ = -1;
  return describe_status(status);
}

Attempt Isolator::run(const Input& in, const CestacRequest* req) {
  if (pid_ < 0) start();
  Writer w;
  put_input(w, in, req);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms_);
  Attempt a;
  std::string reply;
  const Read r = send_all(fd_, w.buf) ? read_msg(fd_, reply, timeout_ms_ > 0, deadline) : Read::eof;
  if (r == Read::timeout) {
    stop(true);
    a.failure = Failure::timeout;
    a.detail = "no result within " + std::to_string(timeout_ms_) + " ms (child killed)";
    return a;
  }
  if (r == Read::eof) {
    a.failure = Failure::crash;
    a.detail = stop(false);
    return a;
  }
  Reader rd{reply};
  if (const auto status = rd.get<uint8_t>(); status != 0) {
    a.failure = status == 2 ? Failure::stdout_write : Failure::exception;
    a.detail = rd.get_str();
    return a;
  }
  a.native = rd.get_vec<double>();
  a.has_cestac = rd.get<uint8_t>() != 0;
  if (a.has_cestac) {
    a.cestac.mean = rd.get_vec<double>();
    a.cestac.digits = rd.get_vec<double>();
    a.cestac.noisy = rd.get_vec<uint8_t>();
    const auto nsites = rd.get<uint64_t>();
    for (uint64_t i = 0; i < nsites; ++i) {
      cestac::SiteCount s{};
      s.kind = static_cast<cestac::Kind>(rd.get<uint8_t>());
      s.address = static_cast<uintptr_t>(rd.get<uint64_t>());
      s.count = rd.get<uint64_t>();
      a.cestac.log.sites.push_back(s);
    }
    for (auto& n : a.cestac.log.counts) n = rd.get<uint64_t>();
  }
  return a;
}

FindingKind Outcome::kind() const {
  switch (failure) {
    case Failure::none:
      return verdict.kind;
    case Failure::timeout:
      return FindingKind::hang;
    case Failure::crash:
    case Failure::exception:
    case Failure::stdout_write:
      return FindingKind::crash;
  }
  return FindingKind::crash;
}

Outcome evaluate_outcome(const Family& family, const Target& target, const Input& in,
                         const CestacRequest& req, Isolator* iso) {
  Outcome o;
  if (!iso) {
    o.verdict = evaluate(family, target, in, req);
    return o;
  }
  Attempt a = iso->run(in, target.cestac ? &req : nullptr);
  if (a.failure != Failure::none) {
    o.failure = a.failure;
    o.detail = std::move(a.detail);
    o.verdict.n = in.total_size();
    return o;
  }
  const OracleResult oracle = family.oracle(in);
  o.verdict = pipeline::decide(family, in, a.native, oracle, a.has_cestac ? &a.cestac : nullptr);
  return o;
}

}  // namespace stabfuzz::campaign
