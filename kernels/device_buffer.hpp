// Owning, stream-ordered device allocation (cudaMallocAsync/cudaFreeAsync: no device-wide
// sync on free, and the pool makes repeated reference calls cheap) plus process-wide
// accounting of the bytes flce itself holds, so benchmarks can report peak extra memory
// without relying on cudaMemGetInfo (which a caching pool makes meaningless).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "case/dtype.hpp"

namespace flce {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  // Allocates `bytes` (0 allowed: no allocation) ordered on `stream`.
  DeviceBuffer(size_t bytes, cudaStream_t stream, const std::string& context = "");
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* get() const { return ptr_; }
  template <class T>
  T* as() const { return static_cast<T*>(ptr_); }
  size_t bytes() const { return bytes_; }
  cudaStream_t stream() const { return stream_; }
  void reset();  // frees now (stream-ordered)

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
  cudaStream_t stream_ = nullptr;
};

struct AllocStats {
  int64_t current_bytes = 0, peak_bytes = 0;
};
AllocStats alloc_stats();
void reset_alloc_peak();  // peak := current

// A typed view over a DeviceBuffer: dtype and row-major shape ({} = scalar).
struct DeviceTensor {
  DeviceBuffer buf;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  int64_t numel() const {
    int64_t n = 1;
    for (auto s : shape) n *= s;
    return n;
  }
  bool empty() const { return buf.get() == nullptr; }
  void* data() const { return buf.get(); }
};

size_t dtype_size(DType d);
DeviceTensor make_device_tensor(DType dtype, std::vector<int64_t> shape, cudaStream_t stream,
                                const std::string& context = "");

}  // namespace flce
