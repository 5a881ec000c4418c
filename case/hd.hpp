// Host/device qualifiers so the same generator code compiles with g++ and nvcc.
#pragma once
#if defined(__CUDACC__)
#define FLCE_HD __host__ __device__ __forceinline__
#else
#define FLCE_HD inline
#endif
