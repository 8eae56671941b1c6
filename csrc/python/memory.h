// Pooled NumPy arrays for kernel outputs, and the Python bindings of the caching allocator.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>

namespace opforge {
namespace memory {

// A new C-contiguous array of `nd` dims `shape` (`numel` elements) and dtype `descr`, whose
// reference it steals, like PyArray_NewFromDescr. Arrays of at least the pooling threshold
// (64 KiB by default) take a block of the caching allocator, owned through the array's base (a
// PooledBlock that hands the block back when the last view dies); smaller ones are NumPy's
// own allocation. The contents are uninitialised. Returns a new reference, or null with a
// Python error set. `api` is pybind11's table of the NumPy C API (npy_api::get()).
PyObject* NewArray(const pybind11::detail::npy_api& api, PyObject* descr, int nd, const int64_t* shape,
                   int64_t numel);

}  // namespace memory

// Adds opforge._C.memory: stats, empty_cache, the limits and a pooled-array factory.
void BindMemory(pybind11::module_& m);

}  // namespace opforge
