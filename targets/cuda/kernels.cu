// Host side of the CUDA reference kernels: launch plans, device memory, DStoch state slots,
// the per-thread instability flags reduced after each launch, and CUDA-event timing.
#include <cuda_runtime.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "targets/cuda/kernels.h"
#include "targets/cuda/kernels_device.cuh"
#include "targets/cuda/launch_plan.h"

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

// The inputs, one owned buffer each: those already allocated are freed when a later cudaMalloc or
// copy throws.
template <class B>
struct DeviceInputs {
  std::vector<std::unique_ptr<DeviceBuffer<B>>> bufs;
  explicit DeviceInputs(const Problem& p) {
    for (const auto& x : p.x) {
      const std::vector<B> h = narrow<B>(x);
      bufs.push_back(std::make_unique<DeviceBuffer<B>>(h.size()));
      if (!h.empty())
        check(cudaMemcpy(bufs.back()->p, h.data(), h.size() * sizeof(B), cudaMemcpyHostToDevice),
              "copy in");
    }
  }
  const B* operator[](size_t k) const { return bufs.at(k)->p; }
};

// The block the host launches gemm with is the one the kernel is compiled for.
static_assert(gpu::kGemmTile == kGemmSide);

template <class F>
KernelLimits limits_of(F* kernel) {
  cudaFuncAttributes a{};
  check(cudaFuncGetAttributes(&a, kernel), "cudaFuncGetAttributes");
  KernelLimits l;
  l.max_threads = a.maxThreadsPerBlock;
  l.static_smem = a.sharedSizeBytes;
  l.max_dynamic_smem = static_cast<size_t>(a.maxDynamicSharedSizeBytes);
  return l;
}

// The limits of kernel k over its native and DStoch instantiations for base type B: both launch
// with one plan, so that the CESTAC run follows the native kernel's reduction tree.
template <class B>
KernelLimits kernel_limits(Kernel k) {
  using S = DStoch<B, kLanes>;
  auto both = [](KernelLimits a, KernelLimits b) {
    a.max_threads = std::min(a.max_threads, b.max_threads);
    a.static_smem = std::max(a.static_smem, b.static_smem);
    a.max_dynamic_smem = std::min(a.max_dynamic_smem, b.max_dynamic_smem);
    return a;
  };
  switch (k) {
    case Kernel::softmax:
      return both(limits_of(gpu::softmax_kernel<B>), limits_of(gpu::softmax_kernel<S>));
    case Kernel::log_softmax:
      return both(limits_of(gpu::log_softmax_kernel<B>), limits_of(gpu::log_softmax_kernel<S>));
    case Kernel::layer_norm:
      return both(limits_of(gpu::layer_norm_kernel<B>), limits_of(gpu::layer_norm_kernel<S>));
    case Kernel::rms_norm:
      return both(limits_of(gpu::rms_norm_kernel<B>), limits_of(gpu::rms_norm_kernel<S>));
    case Kernel::sum:
      return both(limits_of(gpu::sum_kernel<B>), limits_of(gpu::sum_kernel<S>));
    case Kernel::var:
      return both(limits_of(gpu::var_kernel<B>), limits_of(gpu::var_kernel<S>));
    case Kernel::gemm:
      return both(limits_of(gpu::gemm_kernel<B>), limits_of(gpu::gemm_kernel<S>));
    case Kernel::attention:
      return both(limits_of(gpu::attention_kernel<B>), limits_of(gpu::attention_kernel<S>));
  }
  return {};
}

DeviceLimits device_limits() {
  int dev = 0;
  check(cudaGetDevice(&dev), "cudaGetDevice");
  auto attr = [&](cudaDeviceAttr a) {
    int v = 0;
    check(cudaDeviceGetAttribute(&v, a, dev), "cudaDeviceGetAttribute");
    return v;
  };
  DeviceLimits d;
  d.max_grid[0] = static_cast<unsigned>(attr(cudaDevAttrMaxGridDimX));
  d.max_grid[1] = static_cast<unsigned>(attr(cudaDevAttrMaxGridDimY));
  d.max_grid[2] = static_cast<unsigned>(attr(cudaDevAttrMaxGridDimZ));
  d.max_threads_per_block = attr(cudaDevAttrMaxThreadsPerBlock);
  d.max_smem_per_block = static_cast<size_t>(attr(cudaDevAttrMaxSharedMemoryPerBlock));
  return d;
}

// The plan of kernel k for base type B, its values value_size bytes (B or DStoch<B, kLanes>).
template <class B>
Plan plan_of(Kernel k, const Problem& p, size_t value_size) {
  return plan_for(k, p, value_size, kernel_limits<B>(k), device_limits());
}

dim3 dims(const Dims& d) { return dim3(d.x, d.y, d.z); }

template <class T>
void launch(Kernel k, const Plan& pl, const Problem& p, const DeviceInputs<gpu::scalar_of_t<T>>& in,
            T* out, T* scratch) {
  using B = gpu::scalar_of_t<T>;
  const dim3 g = dims(pl.grid), b = dims(pl.block);
  switch (k) {
    case Kernel::softmax:
      gpu::softmax_kernel<T><<<g, b, pl.smem>>>(in[0], out, pl.n);
      break;
    case Kernel::log_softmax:
      gpu::log_softmax_kernel<T><<<g, b, pl.smem>>>(in[0], out, pl.n);
      break;
    case Kernel::layer_norm:
      gpu::layer_norm_kernel<T><<<g, b, pl.smem>>>(in[0], out, pl.n, static_cast<B>(p.eps));
      break;
    case Kernel::rms_norm:
      gpu::rms_norm_kernel<T><<<g, b, pl.smem>>>(in[0], out, pl.n, static_cast<B>(p.eps));
      break;
    case Kernel::sum:
      gpu::sum_kernel<T><<<g, b, pl.smem>>>(in[0], out, pl.n);
      break;
    case Kernel::var:
      gpu::var_kernel<T><<<g, b, pl.smem>>>(in[0], out, scratch, pl.n, static_cast<B>(p.unbiased));
      break;
    case Kernel::gemm:
      gpu::gemm_kernel<T><<<g, b>>>(in[0], in[1], out, static_cast<int>(p.m), static_cast<int>(p.k),
                                    static_cast<int>(p.n));
      break;
    case Kernel::attention:
      gpu::attention_kernel<T><<<g, b, pl.smem>>>(
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

// g_dstoch_states is one device symbol: one DStoch launch at a time per process.
std::mutex& dstoch_mutex() {
  static std::mutex m;
  return m;
}

// states: one per thread of the launch; blocks: state_init_blocks of its plan.
void prepare_states(DeviceBuffer<DThreadState>& states, unsigned blocks, uint64_t seed,
                    uint64_t stream, int cancel_digits, bool detect) {
  const uint64_t count = states.n;
  init_states<<<blocks, kInitThreads>>>(states.p, count, cestac::stream_key(seed, stream),
                                        cancel_digits, detect ? 1 : 0);
  check(cudaGetLastError(), "state init");
  check(cudaMemcpyToSymbol(gpu::g_dstoch_states, &states.p, sizeof(states.p)), "state symbol");
}

template <class B>
std::vector<double> native_as(Kernel k, const Problem& p) {
  const Plan pl = plan_of<B>(k, p, sizeof(B));
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
  const Plan pl = plan_of<B>(k, p, sizeof(S));
  const unsigned blocks = state_init_blocks(pl, device_limits());
  DeviceInputs<B> in(p);
  DeviceBuffer<S> out(pl.outputs), scratch(pl.scratch);
  DeviceCestac r;
  r.threads = threads_of(pl);
  DeviceBuffer<DThreadState> states(r.threads);
  {
    std::lock_guard<std::mutex> lock(dstoch_mutex());
    prepare_states(states, blocks, seed, stream, cancel_digits, detect);
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

// A CUDA event destroyed with its scope.
struct Event {
  cudaEvent_t e = nullptr;
  Event() { check(cudaEventCreate(&e), "event"); }
  ~Event() { cudaEventDestroy(e); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
};

template <class B>
KernelTiming time_as(Kernel k, const Problem& p, int reps) {
  using S = DStoch<B, kLanes>;
  const Plan native = plan_of<B>(k, p, sizeof(B)), stoch = plan_of<B>(k, p, sizeof(S));
  const unsigned blocks = state_init_blocks(stoch, device_limits());
  KernelTiming t;
  Event e0, e1;
  auto timed = [&](auto&& body) {
    std::vector<float> ms;
    for (int r = 0; r <= reps; ++r) {  // launch 0 warms up
      check(cudaEventRecord(e0.e), "event record");
      body();
      check(cudaEventRecord(e1.e), "event record");
      check(cudaEventSynchronize(e1.e), "event sync");
      float x = 0;
      check(cudaEventElapsedTime(&x, e0.e, e1.e), "elapsed");
      if (r > 0) ms.push_back(x);
    }
    return median(ms);
  };
  DeviceInputs<B> in(p);
  {
    DeviceBuffer<B> out(native.outputs), scratch(native.scratch);
    t.native_ms = timed([&] { launch<B>(k, native, p, in, out.p, scratch.p); });
  }
  {
    DeviceBuffer<S> out(stoch.outputs), scratch(stoch.scratch);
    DeviceBuffer<DThreadState> states(threads_of(stoch));
    std::lock_guard<std::mutex> lock(dstoch_mutex());
    // State initialization counts: it is part of every CESTAC launch.
    t.cestac_ms = timed([&] {
      prepare_states(states, blocks, 1, 0, 4, true);
      launch<S>(k, stoch, p, in, out.p, scratch.p);
    });
  }
  return t;
}

}  // namespace

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
