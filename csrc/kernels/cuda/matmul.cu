// Integer MatMul and BatchMatMul on the GPU (cuBLAS has no wrapping integer GEMM; the floating types are
// cuBLAS's, opforge/kernels/gpu/matmul.py): a thread per output element, k ascending, products and sums
// wrapping modulo 2^bits as the CPU's IntGemm (AddOp, MulOp of functors/arithmetic.h).
#include "elementwise.cuh"
#include "opforge/cuda.h"
#include "opforge/functors/arithmetic.h"

namespace opforge {
namespace cuda {

// out [batch, m, n] = op(a) @ op(b), batch the product of the output's batch dims; `index` broadcasts the
// operands' batch dims onto the output's (elementwise.cuh's BroadcastIndex over matrices, so any broadcast
// of the batch dims is one launch).
template <typename T>
__global__ void IntMatMulKernel(const T* a, const T* b, T* out, int64_t batch, int64_t m, int64_t n, int64_t k,
                                BroadcastIndex index, int64_t trans_a, int64_t trans_b) {
  const AddOp add;
  const MulOp mul;
  const bool narrow = FitsIn32Bits(batch);
  OPF_GRID_STRIDE_LOOP(e, batch * m * n) {
    const int64_t j = e % n, i = (e / n) % m;
    int64_t a_matrix = 0, b_matrix = 0;
    index.Offsets(e / (m * n), narrow, &a_matrix, &b_matrix);
    const int64_t a_offset = a_matrix * m * k, b_offset = b_matrix * k * n;
    const T* as = a + a_offset;
    const T* bs = b + b_offset;
    T acc = T(0);
    for (int64_t p = 0; p < k; ++p) {
      const T x = trans_a ? as[p * m + i] : as[i * k + p];
      const T y = trans_b ? bs[j * k + p] : bs[p * n + j];
      acc = add(acc, mul(x, y));
    }
    out[e] = acc;
  }
}

}  // namespace cuda
}  // namespace opforge
