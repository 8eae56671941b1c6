// Integer MatMul and BatchMatMul on the GPU (cuBLAS has no wrapping integer GEMM; the floating types are
// cuBLAS's, opforge/kernels/gpu/matmul.py): a thread per output element, k ascending, products and sums
// wrapping modulo 2^bits as the CPU's IntGemm (AddOp, MulOp of functors/arithmetic.h).
#include "opforge/cuda.h"
#include "opforge/functors/arithmetic.h"

namespace opforge {
namespace cuda {

// The batch dims of a product (at most kMaxMatMulBatchDims): the output's, and each operand's element stride
// along them (0 where it broadcasts), so any broadcast of the batch dims is one launch.
constexpr int kMaxMatMulBatchDims = 8;
struct MatMulBatch {
  int64_t ndim;
  int64_t dim[kMaxMatMulBatchDims];
  int64_t a[kMaxMatMulBatchDims];
  int64_t b[kMaxMatMulBatchDims];
};

// out [batch, m, n] = op(a) @ op(b), batch the product of the output's batch dims.
template <typename T>
__global__ void IntMatMulKernel(const T* a, const T* b, T* out, int64_t batch, int64_t m, int64_t n, int64_t k,
                                MatMulBatch dims, int64_t trans_a, int64_t trans_b) {
  const AddOp add;
  const MulOp mul;
  OPF_GRID_STRIDE_LOOP(e, batch * m * n) {
    const int64_t j = e % n, i = (e / n) % m;
    int64_t s = e / (m * n), a_offset = 0, b_offset = 0;
    for (int64_t d = dims.ndim - 1; d >= 0; --d) {
      const int64_t index = s % dims.dim[d];
      s /= dims.dim[d];
      a_offset += index * dims.a[d];
      b_offset += index * dims.b[d];
    }
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
