// Host side of the CUDA reference kernels: launch plans, device memory, DStoch state slots,
// the per-thread instability flags reduced after each launch, and CUDA-event timing.
#include <cuda_runtime.h>

#include <algorithm>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "targets/cuda/kernels.h"
#include "targets/cuda/kernels_device.cuh"

namespace stabfuzz::cuda {
namespace {

using gpu::DStoch;
using gpu::DThreadState;

void check(cudaError_t err, const char* what) {
  if (err != cudaSuccess)
    throw std::runtime_error(std::string("CUDA: ") + what + ": " + cudaGetErrorString(err));
}

// Device buffer owned for one call.
template <class T>
struct DeviceBuffer {
  T* p = nullptr;
  size_t n = 0;
  explicit DeviceBuffer(size_t count) : n(count) {
    if (n) check(cudaMalloc(&p, n * sizeof(T)), "cudaMalloc");
  }
  ~DeviceBuffer() {
    if (p) cudaFree(p);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

template <class B>
std::vector<B> narrow(const std::vector<double>& v) {
  std::vector<B> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = static_cast<B>(v[i]);  // inputs are exact in B
  return out;
}

template <class B>
struct DeviceInputs {
  std::vector<DeviceBuffer<B>*> bufs;
  explicit DeviceInputs(const Problem& p) {
    for (const auto& x : p.x) {
      const std::vector<B> h = narrow<B>(x);
      bufs.push_back(new DeviceBuffer<B>(h.size()));
      if (!h.empty())
        check(cudaMemcpy(bufs.back()->p, h.data(), h.size() * sizeof(B), cudaMemcpyHostToDevice),
              "copy in");
    }
  }
  ~DeviceInputs() {
    for (auto* b : bufs) delete b;
  }
  const B* operator[](size_t k) const { return bufs.at(k)->p; }
};

int next_pow2(int v) {
  int p = 1;
  while (p < v) p *= 2;
  return p;
}

struct Plan {
  dim3 grid, block;
  size_t smem = 0;
  size_t outputs = 0;
  size_t scratch = 0;  // T values of scratch (var: the scaled row, attention: the scores)
  int n = 0;           // row length
};

Plan plan_for(Kernel k, const Problem& p, size_t value_size) {
  Plan pl;
  auto need = [&](bool ok, const char* what) {
    if (!ok) throw std::invalid_argument(std::string(kernel_name(k)) + "/cuda: " + what);
  };
  switch (k) {
    case Kernel::softmax:
    case Kernel::log_softmax:
    case Kernel::layer_norm:
    case Kernel::rms_norm:
    case Kernel::sum:
    case Kernel::var: {
      need(p.x.size() == 1 && p.rows >= 1 && p.x[0].size() % p.rows == 0, "one row tensor");
      const size_t n = p.x[0].size() / p.rows;
      need(n >= 1 && n <= (size_t{1} << 24), "row length in [1, 2^24]");
      need(p.rows <= 2147483647u, "too many rows");
      pl.n = static_cast<int>(n);
      pl.grid = dim3(static_cast<unsigned>(p.rows));
      pl.block = dim3(static_cast<unsigned>(std::clamp(next_pow2((pl.n + 7) / 8), 32, 1024)));
      pl.smem = 32 * (value_size + sizeof(int)) + 16;
      pl.outputs = (k == Kernel::sum || k == Kernel::var) ? p.rows : p.rows * n;
      pl.scratch = k == Kernel::var ? p.rows * n : 0;
      break;
    }
    case Kernel::gemm:
      need(p.x.size() == 2 && p.x[0].size() == p.m * p.k && p.x[1].size() == p.k * p.n,
           "A [m,k], B [k,n]");
      need(p.m >= 1 && p.n >= 1 && p.k >= 1 && p.k <= 8 * 65535, "1 <= k <= 524280");
      pl.grid =
          dim3(static_cast<unsigned>((p.n + 15) / 16), static_cast<unsigned>((p.m + 15) / 16));
      pl.block = dim3(16, 16);
      pl.outputs = p.m * p.n;
      break;
    case Kernel::attention:
      need(p.x.size() == 3 && p.x[0].size() == p.s * p.d && p.x[1].size() == p.t * p.d &&
               p.x[2].size() == p.t * p.dv,
           "Q [s,d], K [t,d], V [t,dv]");
      need(p.s >= 1 && p.t >= 1 && p.d >= 1 && p.d <= 8 * 65535 && p.t <= 8 * 65535, "sizes");
      need(!p.causal || p.s == p.t, "causal needs s = t");
      pl.grid = dim3(static_cast<unsigned>(p.s));
      pl.block = dim3(128);
      pl.smem = 32 * (value_size + sizeof(int)) + 16;
      pl.outputs = p.s * p.dv;
      pl.scratch = p.s * p.t;
      break;
  }
  return pl;
}

template <class T>
void launch(Kernel k, const Plan& pl, const Problem& p, const DeviceInputs<gpu::scalar_of_t<T>>& in,
            T* out, T* scratch) {
  using B = gpu::scalar_of_t<T>;
  switch (k) {
    case Kernel::softmax:
      gpu::softmax_kernel<T><<<pl.grid, pl.block, pl.smem>>>(in[0], out, pl.n);
      break;
    case Kernel::log_softmax:
      gpu::log_softmax_kernel<T><<<pl.grid, pl.block, pl.smem>>>(in[0], out, pl.n);
      break;
    case Kernel::layer_norm:
      gpu::layer_norm_kernel<T>
          <<<pl.grid, pl.block, pl.smem>>>(in[0], out, pl.n, static_cast<B>(p.eps));
      break;
    case Kernel::rms_norm:
      gpu::rms_norm_kernel<T>
          <<<pl.grid, pl.block, pl.smem>>>(in[0], out, pl.n, static_cast<B>(p.eps));
      break;
    case Kernel::sum:
      gpu::sum_kernel<T><<<pl.grid, pl.block, pl.smem>>>(in[0], out, pl.n);
      break;
    case Kernel::var:
      gpu::var_kernel<T>
          <<<pl.grid, pl.block, pl.smem>>>(in[0], out, scratch, pl.n, static_cast<B>(p.unbiased));
      break;
    case Kernel::gemm:
      gpu::gemm_kernel<T><<<pl.grid, pl.block>>>(in[0], in[1], out, static_cast<int>(p.m),
                                                 static_cast<int>(p.k), static_cast<int>(p.n));
      break;
    case Kernel::attention:
      gpu::attention_kernel<T><<<pl.grid, pl.block, pl.smem>>>(
          in[0], in[1], in[2], out, scratch, static_cast<int>(p.t), static_cast<int>(p.d),
          static_cast<int>(p.dv), static_cast<B>(p.scale), p.causal ? 1 : 0);
      break;
  }
  check(cudaGetLastError(), "kernel launch");
}

__global__ void init_states(DThreadState* st, uint64_t count, uint64_t launch_key,
                            int cancel_digits, int detect) {
  const uint64_t t = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x;
  if (t < count)
    st[t] = gpu::make_thread_state(cestac::thread_key(launch_key, t), cancel_digits, detect != 0);
}

uint64_t threads_of(const Plan& pl) {
  return uint64_t(pl.grid.x) * pl.grid.y * pl.grid.z * pl.block.x * pl.block.y * pl.block.z;
}

// g_dstoch_states is one device symbol: one DStoch launch at a time per process.
std::mutex& dstoch_mutex() {
  static std::mutex m;
  return m;
}

void prepare_states(DeviceBuffer<DThreadState>& states, uint64_t seed, uint64_t stream,
                    int cancel_digits, bool detect) {
  const uint64_t count = states.n;
  init_states<<<static_cast<unsigned>((count + 255) / 256), 256>>>(
      states.p, count, cestac::stream_key(seed, stream), cancel_digits, detect ? 1 : 0);
  check(cudaGetLastError(), "state init");
  check(cudaMemcpyToSymbol(gpu::g_dstoch_states, &states.p, sizeof(states.p)), "state symbol");
}

template <class B>
std::vector<double> native_as(Kernel k, const Problem& p) {
  const Plan pl = plan_for(k, p, sizeof(B));
  DeviceInputs<B> in(p);
  DeviceBuffer<B> out(pl.outputs), scratch(pl.scratch);
  launch<B>(k, pl, p, in, out.p, scratch.p);
  std::vector<B> h(pl.outputs);
  check(cudaMemcpy(h.data(), out.p, h.size() * sizeof(B), cudaMemcpyDeviceToHost), "copy out");
  return std::vector<double>(h.begin(), h.end());
}

template <class B>
DeviceCestac cestac_as(Kernel k, const Problem& p, uint64_t seed, uint64_t stream,
                       int cancel_digits, bool detect) {
  using S = DStoch<B, kLanes>;
  const Plan pl = plan_for(k, p, sizeof(S));
  DeviceInputs<B> in(p);
  DeviceBuffer<S> out(pl.outputs), scratch(pl.scratch);
  DeviceCestac r;
  r.threads = threads_of(pl);
  DeviceBuffer<DThreadState> states(r.threads);
  {
    std::lock_guard<std::mutex> lock(dstoch_mutex());
    prepare_states(states, seed, stream, cancel_digits, detect);
    launch<S>(k, pl, p, in, out.p, scratch.p);
    check(cudaDeviceSynchronize(), "kernel");
  }
  std::vector<S> h(pl.outputs);
  check(cudaMemcpy(h.data(), out.p, h.size() * sizeof(S), cudaMemcpyDeviceToHost), "copy out");
  r.samples.reserve(h.size() * kLanes);
  for (const S& v : h)
    for (int i = 0; i < kLanes; ++i) r.samples.push_back(v.s[i]);
  std::vector<DThreadState> hs(r.threads);
  check(cudaMemcpy(hs.data(), states.p, hs.size() * sizeof(DThreadState), cudaMemcpyDeviceToHost),
        "copy flags");
  std::vector<uint32_t> flags(hs.size());
  for (size_t t = 0; t < hs.size(); ++t) flags[t] = hs[t].flags;
  cestac::reduce_flags(flags.data(), flags.size(), r.counts.data());
  return r;
}

double median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v.empty()
             ? 0.0
             : (v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]));
}

template <class B>
KernelTiming time_as(Kernel k, const Problem& p, int reps) {
  using S = DStoch<B, kLanes>;
  KernelTiming t;
  cudaEvent_t e0, e1;
  check(cudaEventCreate(&e0), "event");
  check(cudaEventCreate(&e1), "event");
  auto timed = [&](auto&& body) {
    std::vector<float> ms;
    for (int r = 0; r <= reps; ++r) {  // launch 0 warms up
      check(cudaEventRecord(e0), "event record");
      body();
      check(cudaEventRecord(e1), "event record");
      check(cudaEventSynchronize(e1), "event sync");
      float x = 0;
      check(cudaEventElapsedTime(&x, e0, e1), "elapsed");
      if (r > 0) ms.push_back(x);
    }
    return median(ms);
  };
  DeviceInputs<B> in(p);
  {
    const Plan pl = plan_for(k, p, sizeof(B));
    DeviceBuffer<B> out(pl.outputs), scratch(pl.scratch);
    t.native_ms = timed([&] { launch<B>(k, pl, p, in, out.p, scratch.p); });
  }
  {
    const Plan pl = plan_for(k, p, sizeof(S));
    DeviceBuffer<S> out(pl.outputs), scratch(pl.scratch);
    DeviceBuffer<DThreadState> states(threads_of(pl));
    std::lock_guard<std::mutex> lock(dstoch_mutex());
    // State initialization counts: it is part of every CESTAC launch.
    t.cestac_ms = timed([&] {
      prepare_states(states, 1, 0, 4, true);
      launch<S>(k, pl, p, in, out.p, scratch.p);
    });
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  return t;
}

}  // namespace

const char* kernel_name(Kernel k) {
  switch (k) {
    case Kernel::softmax:
      return "softmax";
    case Kernel::log_softmax:
      return "log_softmax";
    case Kernel::layer_norm:
      return "layer_norm";
    case Kernel::rms_norm:
      return "rms_norm";
    case Kernel::sum:
      return "sum";
    case Kernel::var:
      return "var";
    case Kernel::gemm:
      return "gemm";
    case Kernel::attention:
      return "attention";
  }
  return "?";
}

std::vector<double> run_native(Kernel k, const Problem& p, bool f64) {
  return f64 ? native_as<double>(k, p) : native_as<float>(k, p);
}

DeviceCestac run_cestac(Kernel k, const Problem& p, bool f64, uint64_t seed, uint64_t stream,
                        int cancel_digits, bool detect) {
  return f64 ? cestac_as<double>(k, p, seed, stream, cancel_digits, detect)
             : cestac_as<float>(k, p, seed, stream, cancel_digits, detect);
}

KernelTiming time_kernel(Kernel k, const Problem& p, bool f64, int reps) {
  return f64 ? time_as<double>(k, p, reps) : time_as<float>(k, p, reps);
}

int device_count(std::string* why) {
  int n = 0;
  const cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    if (why) *why = cudaGetErrorString(err);
    return 0;
  }
  if (n == 0 && why) *why = "no CUDA device";
  return n;
}

}  // namespace stabfuzz::cuda
