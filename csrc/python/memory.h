// Pooled NumPy arrays for kernel outputs, and the Python bindings of the caching allocator.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace opforge {
namespace memory {
namespace internal {

// The pooling threshold in bytes; SIZE_MAX while pooling is off.
extern std::atomic<size_t> g_pool_threshold;

inline size_t ItemSize(const pybind11::detail::npy_api& api, PyObject* descr) {
  if (api.PyArray_RUNTIME_VERSION_ < 0x12) return pybind11::detail::array_descriptor1_proxy(descr)->elsize;
  return static_cast<size_t>(pybind11::detail::array_descriptor2_proxy(descr)->elsize);
}

// NewArray for arrays at or above the threshold.
PyObject* NewLargeArray(const pybind11::detail::npy_api& api, PyObject* descr, int nd, const int64_t* shape,
                        int64_t numel);

}  // namespace internal

// A new C-contiguous array of `nd` dims `shape` (`numel` elements) and dtype `descr`, whose
// reference it steals, like PyArray_NewFromDescr. Arrays of at least the pooling threshold
// (64 KiB by default) take a block of the caching allocator, owned through the array's base (a
// PooledBlock that hands the block back when the last view dies); smaller ones are NumPy's
// own allocation. The contents are uninitialised. Returns a new reference, or null with a
// Python error set. `api` is pybind11's table of the NumPy C API (npy_api::get()).
// Inline: below the threshold (every small output) this is PyArray_NewFromDescr plus one compare.
inline PyObject* NewArray(const pybind11::detail::npy_api& api, PyObject* descr, int nd, const int64_t* shape,
                          int64_t numel) {
  const size_t nbytes = static_cast<size_t>(numel) * internal::ItemSize(api, descr);
  if (nbytes < internal::g_pool_threshold.load(std::memory_order_relaxed)) {
    return api.PyArray_NewFromDescr_(api.PyArray_Type_, descr, nd, reinterpret_cast<const Py_intptr_t*>(shape),
                                     nullptr, nullptr, 0, nullptr);
  }
  return internal::NewLargeArray(api, descr, nd, shape, numel);
}

}  // namespace memory

// Adds opforge._C.memory: stats, empty_cache, the limits and a pooled-array factory.
void BindMemory(pybind11::module_& m);

}  // namespace opforge
