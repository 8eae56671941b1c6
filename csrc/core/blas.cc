#include "core/blas.h"

#include "core/lapack.h"
#include "core/runtime.h"
#include "opforge/parallel.h"

#include <dlfcn.h>

#include <algorithm>
#include <climits>
#include <stdexcept>
#include <thread>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace opforge {
namespace blas {
namespace {

// cblas_?gemm of an LP64 (32-bit int) BLAS.
using SgemmFn = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*,
                         int);
using DgemmFn = void (*)(int, int, int, int, int, int, double, const double*, int, const double*, int, double,
                         double*, int);
using SetThreadsFn = void (*)(int);

// OpenBLAS's hook for running its parallel jobs on the caller's threads (0.3.27 and later).
using DojobFn = void (*)(int thread_num, void* jobdata, int dojob_data);
using ThreadsCallbackFn = void (*)(int sync, DojobFn dojob, int numjobs, size_t jobdata_elsize, void* jobdata,
                                   int dojob_data);
using SetThreadsCallbackFn = void (*)(ThreadsCallbackFn);

// OpenBLAS runs on one thread (SplitGemm below splits the GEMMs), but something else (threadpoolctl) may
// raise its count; then its parallel jobs run on opforge's OpenMP threads, so BLAS and the elementwise kernels
// share one pool: two pools on the same cores spin against each other (on 2 cores a training
// step ran 2x slower on 2 threads than with OpenMP on 1). The jobs of a GEMM wait for each other,
// so they must all run at once: each on a thread of the team, and any the team lacks (nested
// in another parallel region, a thread limit) on a thread of its own. A forked child never enters
// OpenMP (libgomp's pool does not survive fork), so its jobs run on threads of their own.
void RunJobs(int /*sync*/, DojobFn dojob, int numjobs, size_t elsize, void* jobdata, int dojob_data) {
  auto job = [&](int i) { dojob(i, static_cast<char*>(jobdata) + static_cast<size_t>(i) * elsize, dojob_data); };
  auto run_rest_on_threads = [&](int first) {
    std::vector<std::thread> extra;
    for (int i = first + 1; i < numjobs; ++i) extra.emplace_back(job, i);
    if (first < numjobs) job(first);
    for (auto& t : extra) t.join();
  };
#ifdef _OPENMP
  if (!omp_in_parallel() && !runtime::ForkedChild()) {
#pragma omp parallel num_threads(numjobs)
    {
      const int t = omp_get_thread_num(), team = omp_get_num_threads();
      if (t < team - 1 || team == numjobs) {
        job(t);
      } else {  // the last thread of a smaller team: the remaining jobs, all at once
        run_rest_on_threads(t);
      }
    }
    return;
  }
#endif
  run_rest_on_threads(0);
}

SgemmFn g_sgemm = nullptr;
DgemmFn g_dgemm = nullptr;
SetThreadsFn g_set_threads = nullptr;
using GetThreadsFn = int (*)();
GetThreadsFn g_get_threads = nullptr;
using CoreNameFn = char* (*)();
CoreNameFn g_core_name = nullptr;

void* Resolve(void* handle, const std::string& name) {
  void* sym = dlsym(handle, name.c_str());
  if (sym == nullptr) throw std::runtime_error("BLAS library has no symbol '" + name + "'");
  return sym;
}

int CheckedInt(int64_t v, const char* what) {
  if (v < 0 || v > INT_MAX) {
    throw std::runtime_error(std::string("MatMul: ") + what + " = " + std::to_string(v) +
                             " does not fit the 32-bit BLAS interface");
  }
  return static_cast<int>(v);
}

}  // namespace

void Load(const std::string& path, const std::string& prefix) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    throw std::runtime_error("cannot load BLAS '" + path + "': " + (why ? why : "unknown error"));
  }
  g_sgemm = reinterpret_cast<SgemmFn>(Resolve(handle, prefix + "cblas_sgemm"));
  g_dgemm = reinterpret_cast<DgemmFn>(Resolve(handle, prefix + "cblas_dgemm"));
  g_set_threads = reinterpret_cast<SetThreadsFn>(dlsym(handle, (prefix + "openblas_set_num_threads").c_str()));
  g_get_threads = reinterpret_cast<GetThreadsFn>(dlsym(handle, (prefix + "openblas_get_num_threads").c_str()));
  g_core_name = reinterpret_cast<CoreNameFn>(dlsym(handle, (prefix + "openblas_get_corename").c_str()));
  auto set_callback = reinterpret_cast<SetThreadsCallbackFn>(
      dlsym(handle, (prefix + "openblas_set_threads_callback_function").c_str()));
  if (set_callback != nullptr) set_callback(RunJobs);
  if (g_set_threads != nullptr) g_set_threads(1);  // opforge's threads split the GEMMs (SplitGemm)
  lapack::Load(handle, prefix);
}

bool Loaded() { return g_sgemm != nullptr; }

std::string CoreName() {
  const char* name = g_core_name != nullptr ? g_core_name() : nullptr;
  return name != nullptr ? name : "";
}

void SetNumThreads(int n) {
  if (g_set_threads != nullptr) g_set_threads(n);
}

int GetNumThreads() { return g_get_threads != nullptr ? g_get_threads() : 0; }

static void RequireLoaded() {
  if (!Loaded()) throw std::runtime_error("MatMul needs BLAS, but no BLAS library was loaded");
}

namespace {

// One GEMM across opforge's threads: OpenBLAS on one thread, each thread a block of C's rows of its own (of
// its columns when C is wider than tall), in multiples of kBlock. OpenBLAS's own threads share packed panels
// and wait for each other inside every GEMM: on cores that other processes keep busy, one descheduled
// thread stalls the others (the Transformer encoder layer of bench_models spent 8x longer in MatMul on 2
// threads than on 1 on a shared 2-core machine); here a GEMM synchronises once, at its end. Inside a
// parallel region (a kernel's own split) it runs on the calling thread. `call(m, n, a, b, c)` runs one block.
template <typename T, typename Call>
void SplitGemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b,
               int64_t ldb, T* c, int64_t ldc, Call call) {
  constexpr int64_t kBlock = 16;                     // a few of OpenBLAS's register tiles
  constexpr int64_t kSerialMacs = int64_t{1} << 21;  // below, a second thread costs about what it saves
  const bool by_rows = m >= n;
  const int64_t len = by_rows ? m : n, blocks = (len + kBlock - 1) / kBlock;
  bool nested = false;
#ifdef _OPENMP
  nested = omp_in_parallel();
#endif
  // Something (threadpoolctl) may have raised OpenBLAS's count since Load: back to one (not from inside a
  // region, where the threads of a kernel's own split would race on it; those kernels hold BlasOneThread).
  if (!nested && g_get_threads != nullptr && g_set_threads != nullptr && g_get_threads() != 1) g_set_threads(1);
  if (nested || runtime::NumThreads() <= 1 || blocks < 2 || m * n * k < kSerialMacs) {
    call(m, n, a, b, c);
    return;
  }
  ParallelFor(blocks, 1, [&](int64_t begin, int64_t end) {
    const int64_t lo = begin * kBlock, hi = std::min(len, end * kBlock);
    if (by_rows) {
      call(hi - lo, n, a + (trans_a ? lo : lo * lda), b, c + lo * ldc);
    } else {
      call(m, hi - lo, a, b + (trans_b ? lo * ldb : lo), c + lo);
    }
  });
}

// Whether C = A @ B^T (a Dense layer's x @ W^T) runs faster as C^T = B @ A^T, transposed after: with few rows
// of C and many columns, OpenBLAS's kernels (AVX2 and AVX-512 alike) pack this form better. Measured on
// Zen 5, 1 thread: x[64, 784] @ W[256, 784]^T 141 -> 126 us with the copy, [32, 1024] @ [1024, 1024]^T
// 540 -> 360 us; other forms or squarer shapes gain nothing.
bool TransposedFormIsFaster(bool trans_a, bool trans_b, int64_t m, int64_t n) {
  return !trans_a && trans_b && m <= 64 && n >= 4 * m;
}

// c[i * ldc + j] = ct[j * m + i] for an [n, m] ct.
template <typename T>
void TransposeInto(const T* ct, int64_t m, int64_t n, T* c, int64_t ldc) {
  constexpr int64_t kTile = 16;
  for (int64_t j0 = 0; j0 < n; j0 += kTile) {
    const int64_t j1 = std::min(n, j0 + kTile);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = j0; j < j1; ++j) c[i * ldc + j] = ct[j * m + i];
    }
  }
}

// A GEMM through OpenBLAS's `gemm` (cblas_sgemm or cblas_dgemm), its sizes checked for the 32-bit interface.
template <typename T, typename GemmFn>
void Gemm(GemmFn gemm, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
          const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  RequireLoaded();
  const int ik = CheckedInt(k, "k"), ia = CheckedInt(lda, "lda"), ib = CheckedInt(ldb, "ldb");
  const int ic = CheckedInt(ldc, "ldc");
  CheckedInt(m, "m");
  CheckedInt(n, "n");
  const bool transposed = beta == T(0) && TransposedFormIsFaster(trans_a, trans_b, m, n);
  SplitGemm<T>(trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc,
               [&](int64_t mm, int64_t nn, const T* aa, const T* bb, T* cc) {
                 if (transposed) {  // C^T [nn, mm] = B [nn, k] @ A^T, then into C
                   thread_local std::vector<T> ct;
                   ct.resize(static_cast<size_t>(mm * nn));
                   gemm(kRowMajor, kNoTrans, kTrans, static_cast<int>(nn), static_cast<int>(mm), ik, alpha, bb, ib,
                        aa, ia, T(0), ct.data(), static_cast<int>(mm));
                   TransposeInto(ct.data(), mm, nn, cc, ldc);
                   return;
                 }
                 gemm(kRowMajor, trans_a ? kTrans : kNoTrans, trans_b ? kTrans : kNoTrans, static_cast<int>(mm),
                      static_cast<int>(nn), ik, alpha, aa, ia, bb, ib, beta, cc, ic);
               });
}

}  // namespace

void Sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
           const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  Gemm(g_sgemm, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void Dgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
           int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  Gemm(g_dgemm, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace blas
}  // namespace opforge
