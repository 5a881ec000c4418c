#include "kernels/device_buffer.hpp"

#include <atomic>
#include <cstdio>

#include "kernels/cuda_check.hpp"

namespace flce {
namespace {
std::atomic<int64_t> g_current{0}, g_peak{0};

void account(int64_t delta) {
  int64_t now = g_current.fetch_add(delta) + delta;
  int64_t peak = g_peak.load();
  while (now > peak && !g_peak.compare_exchange_weak(peak, now)) {
  }
}
}  // namespace

DeviceBuffer::DeviceBuffer(size_t bytes, cudaStream_t stream, const std::string& context)
    : bytes_(bytes), stream_(stream) {
  if (bytes == 0) return;
  FLCE_CUDA_CHECK(cudaMallocAsync(&ptr_, bytes, stream),
                  "allocating " + std::to_string(bytes) + " bytes; " + context);
  account(static_cast<int64_t>(bytes));
}

DeviceBuffer::~DeviceBuffer() { reset(); }

void DeviceBuffer::reset() {
  if (ptr_) {
    // Destructors must not throw: report and carry on.
    cudaError_t e = cudaFreeAsync(ptr_, stream_);
    if (e != cudaSuccess) std::fprintf(stderr, "flce: cudaFreeAsync failed: %s\n", cudaGetErrorString(e));
    account(-static_cast<int64_t>(bytes_));
  }
  ptr_ = nullptr;
  bytes_ = 0;
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_), stream_(o.stream_) {
  o.ptr_ = nullptr;
  o.bytes_ = 0;
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    reset();
    ptr_ = o.ptr_;
    bytes_ = o.bytes_;
    stream_ = o.stream_;
    o.ptr_ = nullptr;
    o.bytes_ = 0;
  }
  return *this;
}

AllocStats alloc_stats() { return {g_current.load(), g_peak.load()}; }
void reset_alloc_peak() { g_peak.store(g_current.load()); }

size_t dtype_size(DType d) {
  switch (d) {
    case DType::F16:
    case DType::BF16: return 2;
    case DType::F32: return 4;
    case DType::F64:
    case DType::I64: return 8;
  }
  return 0;
}

DeviceTensor make_device_tensor(DType dtype, std::vector<int64_t> shape, cudaStream_t stream,
                                const std::string& context) {
  DeviceTensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.buf = DeviceBuffer(static_cast<size_t>(t.numel()) * dtype_size(dtype), stream, context);
  return t;
}

}  // namespace flce
