#include "core/lapack.h"

#include <dlfcn.h>

#include <algorithm>
#include <climits>
#include <stdexcept>
#include <type_traits>

namespace opforge {
namespace lapack {
namespace {

constexpr int kRowMajor = 101;  // LAPACK_ROW_MAJOR

template <typename T>
struct Fns {
  using Getrf = int (*)(int, int, int, T*, int, int*);
  using Getri = int (*)(int, int, T*, int, const int*);
  using Potrf = int (*)(int, char, int, T*, int);
  using Gesdd = int (*)(int, char, int, int, T*, int, T*, T*, int, T*, int);
  using Geqrf = int (*)(int, int, int, T*, int, T*);
  using Orgqr = int (*)(int, int, int, int, T*, int, const T*);
  using Getrs = int (*)(int, char, int, int, const T*, int, const int*, T*, int);
  using Trsm = void (*)(int, int, int, int, int, int, int, T, const T*, int, T*, int);
  using Syevd = int (*)(int, char, char, int, T*, int, T*);
  Getrf getrf = nullptr;
  Getri getri = nullptr;
  Potrf potrf = nullptr;
  Gesdd gesdd = nullptr;
  Geqrf geqrf = nullptr;
  Orgqr orgqr = nullptr;
  Getrs getrs = nullptr;
  Trsm trsm = nullptr;
  Syevd syevd = nullptr;
};

Fns<float> g_float;
Fns<double> g_double;

template <typename T>
Fns<T>& Table() {
  if constexpr (std::is_same_v<T, float>) {
    return g_float;
  } else {
    return g_double;
  }
}

template <typename Fn>
void Resolve(void* handle, const std::string& name, Fn* fn) {
  *fn = reinterpret_cast<Fn>(dlsym(handle, name.c_str()));
}

template <typename T>
void LoadAll(void* handle, const std::string& prefix, char letter) {
  Fns<T>& f = Table<T>();
  const std::string p = prefix + "LAPACKE_" + letter;
  Resolve(handle, p + "getrf", &f.getrf);
  Resolve(handle, p + "getri", &f.getri);
  Resolve(handle, p + "potrf", &f.potrf);
  Resolve(handle, p + "gesdd", &f.gesdd);
  Resolve(handle, p + "geqrf", &f.geqrf);
  Resolve(handle, p + "orgqr", &f.orgqr);
  Resolve(handle, p + "getrs", &f.getrs);
  Resolve(handle, prefix + "cblas_" + letter + "trsm", &f.trsm);
  Resolve(handle, p + "syevd", &f.syevd);
}

// LAPACK's 32-bit sizes: a matrix dimension past INT_MAX is refused, not truncated.
int Dim(int64_t v) {
  if (v < 0 || v > INT_MAX) throw std::runtime_error("a matrix dimension does not fit LAPACK's 32-bit interface");
  return static_cast<int>(v);
}

template <typename Fn>
Fn Need(Fn fn, const char* name) {
  if (fn == nullptr) throw std::runtime_error(std::string("the loaded BLAS library has no LAPACKE ") + name);
  return fn;
}

}  // namespace

void Load(void* handle, const std::string& prefix) {
  LoadAll<float>(handle, prefix, 's');
  LoadAll<double>(handle, prefix, 'd');
}

template <typename T>
int Getrf(int64_t n, T* a, int32_t* ipiv) {
  return Need(Table<T>().getrf, "getrf")(kRowMajor, Dim(n), Dim(n), a, Dim(n), ipiv);
}

template <typename T>
int Getri(int64_t n, T* a, const int32_t* ipiv) {
  return Need(Table<T>().getri, "getri")(kRowMajor, Dim(n), a, Dim(n), ipiv);
}

template <typename T>
int Potrf(bool upper, int64_t n, T* a) {
  return Need(Table<T>().potrf, "potrf")(kRowMajor, upper ? 'U' : 'L', Dim(n), a, Dim(n));
}

template <typename T>
int Gesdd(char jobz, int64_t m, int64_t n, T* a, T* s, T* u, int64_t ldu, T* vt, int64_t ldvt) {
  return Need(Table<T>().gesdd, "gesdd")(kRowMajor, jobz, Dim(m), Dim(n), a, Dim(n), s, u, Dim(ldu), vt,
                                         Dim(ldvt));
}

template <typename T>
int Geqrf(int64_t m, int64_t n, T* a, int64_t lda, T* tau) {
  return Need(Table<T>().geqrf, "geqrf")(kRowMajor, Dim(m), Dim(n), a, Dim(lda), tau);
}

template <typename T>
int Orgqr(int64_t m, int64_t n, int64_t k, T* a, int64_t lda, const T* tau) {
  return Need(Table<T>().orgqr, "orgqr")(kRowMajor, Dim(m), Dim(n), Dim(k), a, Dim(lda), tau);
}

template <typename T>
int Getrs(char trans, int64_t n, int64_t nrhs, const T* a, const int32_t* ipiv, T* b) {
  return Need(Table<T>().getrs, "getrs")(kRowMajor, trans, Dim(n), Dim(nrhs), a, Dim(n), ipiv, b,
                                         Dim(std::max<int64_t>(nrhs, 1)));
}

template <typename T>
void Trsm(bool lower, bool transpose, int64_t n, int64_t nrhs, const T* a, T* b) {
  constexpr int kLeft = 141, kUpper = 121, kLower = 122, kNoTrans = 111, kTrans = 112, kNonUnit = 131;
  Need(Table<T>().trsm, "trsm")(kRowMajor, kLeft, lower ? kLower : kUpper, transpose ? kTrans : kNoTrans, kNonUnit,
                                Dim(n), Dim(nrhs), T(1), a, Dim(std::max<int64_t>(n, 1)), b,
                                Dim(std::max<int64_t>(nrhs, 1)));
}

template <typename T>
int Syevd(char jobz, char uplo, int64_t n, T* a, T* w) {
  return Need(Table<T>().syevd, "syevd")(kRowMajor, jobz, uplo, Dim(n), a, Dim(n), w);
}

#define OPF_LAPACK_INSTANTIATE(T)                                           \
  template int Getrf<T>(int64_t, T*, int32_t*);                             \
  template int Getri<T>(int64_t, T*, const int32_t*);                       \
  template int Potrf<T>(bool, int64_t, T*);                                 \
  template int Gesdd<T>(char, int64_t, int64_t, T*, T*, T*, int64_t, T*, int64_t); \
  template int Geqrf<T>(int64_t, int64_t, T*, int64_t, T*);                 \
  template int Orgqr<T>(int64_t, int64_t, int64_t, T*, int64_t, const T*);                 \
  template int Getrs<T>(char, int64_t, int64_t, const T*, const int32_t*, T*);             \
  template void Trsm<T>(bool, bool, int64_t, int64_t, const T*, T*);                       \
  template int Syevd<T>(char, char, int64_t, T*, T*)

OPF_LAPACK_INSTANTIATE(float);
OPF_LAPACK_INSTANTIATE(double);

}  // namespace lapack
}  // namespace opforge
