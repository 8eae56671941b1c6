// The host emulation of CUDA used by the tests: a .cu file of opforge compiles as host C++ with
// this header forced in front (g++ -include), and opf_emu::Launch runs a kernel the way the GPU
// would, block by block and thread by thread, with the grid and block sizes of the real launch.
// Only kernels without shared memory or barriers can run here (each thread runs to the end
// before the next starts); those with them are listed in tests/emulation/runtime.py.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline

struct dim3 {
  unsigned x = 1, y = 1, z = 1;
};

namespace opf_emu {

inline thread_local dim3 thread_index, block_index, block_dim, grid_dim;

template <typename... A, std::size_t... I>
void Call(void (*kernel)(A...), void** args, std::index_sequence<I...>) {
  kernel(*static_cast<std::remove_cv_t<std::remove_reference_t<A>>*>(args[I])...);
}

// args[i] points at the bytes of parameter i, as cuLaunchKernel's kernelParams do.
template <typename... A>
void Launch(void (*kernel)(A...), const unsigned* grid, const unsigned* block, void** args) {
  grid_dim = dim3{grid[0], grid[1], grid[2]};
  block_dim = dim3{block[0], block[1], block[2]};
  for (unsigned bz = 0; bz < grid[2]; ++bz)
    for (unsigned by = 0; by < grid[1]; ++by)
      for (unsigned bx = 0; bx < grid[0]; ++bx)
        for (unsigned tz = 0; tz < block[2]; ++tz)
          for (unsigned ty = 0; ty < block[1]; ++ty)
            for (unsigned tx = 0; tx < block[0]; ++tx) {
              block_index = dim3{bx, by, bz};
              thread_index = dim3{tx, ty, tz};
              Call(kernel, args, std::index_sequence_for<A...>{});
            }
}

}  // namespace opf_emu

#define threadIdx opf_emu::thread_index
#define blockIdx opf_emu::block_index
#define blockDim opf_emu::block_dim
#define gridDim opf_emu::grid_dim
