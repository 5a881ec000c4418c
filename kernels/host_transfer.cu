#include "kernels/host_transfer.hpp"

#include <cstring>
#include <vector>

#include "kernels/cuda_check.hpp"
#include "kernels/reference_flce.hpp"

namespace flce {

Tensor64 tensor_to_host(const DeviceTensor& t, cudaStream_t s) {
  Tensor64 h;
  h.shape = t.shape;
  h.dtype = t.dtype;
  const int64_t n = t.numel();
  const size_t es = dtype_size(t.dtype);
  std::vector<unsigned char> raw(static_cast<size_t>(n) * es);
  if (n > 0)
    FLCE_CUDA_CHECK(cudaMemcpyAsync(raw.data(), t.data(), raw.size(), cudaMemcpyDeviceToHost, s), "tensor_to_host");
  FLCE_CUDA_CHECK(cudaStreamSynchronize(s), "tensor_to_host");
  h.data.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const unsigned char* p = raw.data() + static_cast<size_t>(i) * es;
    double v = 0;
    switch (t.dtype) {
      case DType::F32: { float f; std::memcpy(&f, p, 4); v = f; break; }
      case DType::F16: { uint16_t b; std::memcpy(&b, p, 2); v = f16_bits_to_f32(b); break; }
      case DType::BF16: { uint16_t b; std::memcpy(&b, p, 2); v = bf16_bits_to_f32(b); break; }
      case DType::F64: std::memcpy(&v, p, 8); break;
      case DType::I64: { int64_t q; std::memcpy(&q, p, 8); v = static_cast<double>(q); break; }
    }
    h.data[static_cast<size_t>(i)] = v;
  }
  return h;
}

DeviceTensor upload_f64(const Tensor64& t, cudaStream_t s) {
  DeviceTensor d = make_device_tensor(DType::F64, t.shape, s, "upload_f64");
  if (t.numel() != static_cast<int64_t>(t.data.size()))
    throw std::runtime_error("upload_f64: data size does not match shape");
  if (!t.data.empty())
    FLCE_CUDA_CHECK(cudaMemcpyAsync(d.data(), t.data.data(), t.data.size() * sizeof(double), cudaMemcpyHostToDevice, s),
                    "upload_f64");
  // The host vector may die right after return: finish the copy first.
  FLCE_CUDA_CHECK(cudaStreamSynchronize(s), "upload_f64");
  return d;
}

Outputs to_host(const ReferenceResult& r, cudaStream_t s) {
  Outputs o;
  for (auto& [name, t] : r.tensors) o[name] = tensor_to_host(t, s);
  return o;
}

}  // namespace flce
