// Pooled NumPy arrays and opforge._C.memory, the Python face of the caching allocator.
#include "python/memory.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <atomic>
#include <limits>
#include <string>
#include <vector>

#include "core/allocator.h"

namespace py = pybind11;

namespace opforge {
namespace memory {
namespace {

// The base object of a pooled array: owns one block and hands it back to the pool when it dies
// (always with the GIL held; the pool itself does not need it).
struct PooledBlockObject {
  PyObject_HEAD
  void* ptr;
  size_t block_bytes;
  size_t requested;
};

PyTypeObject* g_block_type = nullptr;

std::atomic<size_t> g_min_pooled{kDefaultMinPooledBytes};
std::atomic<bool> g_enabled{true};

// min_pooled when enabled, else "never": the hot path reads one atomic.
void UpdateThreshold() {
  internal::g_pool_threshold.store(g_enabled.load() ? g_min_pooled.load() : std::numeric_limits<size_t>::max());
}

void BlockDealloc(PyObject* self) {
  auto* b = reinterpret_cast<PooledBlockObject*>(self);
  PyTypeObject* type = Py_TYPE(self);
  if (b->ptr != nullptr) CachingAllocator::Instance().Free(b->ptr, b->block_bytes, b->requested);
  b->ptr = nullptr;
  type->tp_free(self);
  Py_DECREF(type);  // instances of a heap type hold a reference to it
}

PyObject* BlockRepr(PyObject* self) {
  auto* b = reinterpret_cast<PooledBlockObject*>(self);
  return PyUnicode_FromFormat("<opforge PooledBlock: %zu bytes in a %zu-byte block>", b->requested, b->block_bytes);
}

PyTypeObject* MakeBlockType() {
  static PyType_Slot slots[] = {
      {Py_tp_dealloc, reinterpret_cast<void*>(&BlockDealloc)},
      {Py_tp_repr, reinterpret_cast<void*>(&BlockRepr)},
      {Py_tp_doc, const_cast<char*>("Owner of a pooled array's memory: the block returns to opforge's pool when the "
                                    "last array viewing it dies.")},
      {0, nullptr},
  };
  unsigned int flags = Py_TPFLAGS_DEFAULT;
#ifdef Py_TPFLAGS_DISALLOW_INSTANTIATION
  flags |= Py_TPFLAGS_DISALLOW_INSTANTIATION;
#endif
  static PyType_Spec spec = {"opforge._C.memory.PooledBlock", static_cast<int>(sizeof(PooledBlockObject)), 0, flags,
                             slots};
  PyObject* type = PyType_FromSpec(&spec);
  if (type == nullptr) throw py::error_already_set();
  return reinterpret_cast<PyTypeObject*>(type);
}

// NumPy's NPY_ITEM_REFCOUNT | NPY_ITEM_IS_POINTER | NPY_NEEDS_INIT: such items (objects, strings) must
// start zeroed, which a reused block is not, so their arrays keep NumPy's allocation.
constexpr uint64_t kNeedsZeroedMemory = 0x01 | 0x04 | 0x08;

// The item size of `descr`, or 0 when its arrays must not be pooled.
size_t PoolableItemSize(const py::detail::npy_api& api, PyObject* descr) {
  if (api.PyArray_RUNTIME_VERSION_ < 0x12) {
    const auto* d = py::detail::array_descriptor1_proxy(descr);
    return (static_cast<uint64_t>(static_cast<unsigned char>(d->flags)) & kNeedsZeroedMemory) ? 0 : d->elsize;
  }
  const auto* d = py::detail::array_descriptor2_proxy(descr);
  return (d->flags & kNeedsZeroedMemory) ? 0 : static_cast<size_t>(d->elsize);
}

PyObject* NewPooledArray(const py::detail::npy_api& api, PyObject* descr, int nd, const int64_t* shape,
                         size_t nbytes) {
  size_t block_bytes = 0;
  void* data = CachingAllocator::Instance().Allocate(nbytes, &block_bytes);
  if (data == nullptr) {
    Py_DECREF(descr);
    return PyErr_NoMemory();
  }
  auto* owner = PyObject_New(PooledBlockObject, g_block_type);
  if (owner == nullptr) {
    CachingAllocator::Instance().Free(data, block_bytes, nbytes);
    Py_DECREF(descr);
    return nullptr;
  }
  owner->ptr = data;
  owner->block_bytes = block_bytes;
  owner->requested = nbytes;
  constexpr int kFlags = py::detail::npy_api::NPY_ARRAY_C_CONTIGUOUS_ | py::detail::npy_api::NPY_ARRAY_ALIGNED_ |
                         py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  PyObject* array = api.PyArray_NewFromDescr_(api.PyArray_Type_, descr, nd, reinterpret_cast<const Py_intptr_t*>(shape),
                                              nullptr, data, kFlags, nullptr);
  if (array == nullptr) {
    Py_DECREF(owner);
    return nullptr;
  }
  // Steals `owner`, also when it fails.
  if (api.PyArray_SetBaseObject_(array, reinterpret_cast<PyObject*>(owner)) != 0) {
    Py_DECREF(array);
    return nullptr;
  }
  return array;
}

py::dict StatsDict() {
  const PoolStats s = CachingAllocator::Instance().Stats();
  py::dict d;
  d["bytes_in_use"] = s.bytes_in_use;
  d["requested_bytes_in_use"] = s.requested_bytes_in_use;
  d["bytes_cached"] = s.bytes_cached;
  d["bytes_reserved"] = s.bytes_in_use + s.bytes_cached;
  d["peak_bytes_in_use"] = s.peak_bytes_in_use;
  d["blocks_in_use"] = s.blocks_in_use;
  d["blocks_cached"] = s.blocks_cached;
  d["allocations"] = s.hits + s.misses;
  d["hits"] = s.hits;
  d["misses"] = s.misses;
  d["frees"] = s.frees;
  d["releases"] = s.releases;
  d["max_cached_bytes"] = s.max_cached_bytes;
  d["min_pooled_bytes"] = g_min_pooled.load();
  d["enabled"] = g_enabled.load();
  return d;
}

py::object Empty(const std::vector<int64_t>& shape, const py::object& dtype) {
  int64_t numel = 1;
  for (int64_t d : shape) {
    if (d < 0) throw py::value_error("memory.empty: negative dimensions are not allowed, but got " + std::to_string(d));
    if (__builtin_mul_overflow(numel, d, &numel)) throw py::value_error("memory.empty: the array is too big");
  }
  py::dtype dt = py::dtype::from_args(dtype);
  PyObject* array =
      NewArray(py::detail::npy_api::get(), dt.release().ptr(), static_cast<int>(shape.size()), shape.data(), numel);
  if (array == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(array);
}

}  // namespace

namespace internal {

std::atomic<size_t> g_pool_threshold{kDefaultMinPooledBytes};

PyObject* NewLargeArray(const py::detail::npy_api& api, PyObject* descr, int nd, const int64_t* shape,
                        int64_t numel) {
  size_t nbytes = 0;
  const bool overflow = __builtin_mul_overflow(static_cast<size_t>(numel), PoolableItemSize(api, descr), &nbytes);
  if (nbytes < g_pool_threshold.load(std::memory_order_relaxed) || nbytes == 0 || overflow ||
      g_block_type == nullptr) {
    return api.PyArray_NewFromDescr_(api.PyArray_Type_, descr, nd, reinterpret_cast<const Py_intptr_t*>(shape),
                                     nullptr, nullptr, 0, nullptr);
  }
  return NewPooledArray(api, descr, nd, shape, nbytes);
}

}  // namespace internal
}  // namespace memory

void BindMemory(py::module_& m) {
  using memory::CachingAllocator;
  py::module_ mem = m.def_submodule("memory", "The caching allocator of kernel outputs (see opforge.memory).");
  memory::g_block_type = memory::MakeBlockType();
  mem.attr("PooledBlock") = py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(memory::g_block_type));
  mem.attr("BLOCK_ALIGNMENT") = memory::kBlockAlignment;

  mem.def("stats", &memory::StatsDict, "The pool's counters as a dict.");
  mem.def("empty_cache", []() { return CachingAllocator::Instance().EmptyCache(); },
          "Return every cached block to the OS; returns the bytes released.");
  mem.def("reset_stats", []() { CachingAllocator::Instance().ResetStats(); },
          "Zero hits, misses, frees and releases; set the peak to the bytes in use now.");
  mem.def("set_max_cached_bytes", [](size_t n) { CachingAllocator::Instance().SetMaxCachedBytes(n); },
          py::arg("nbytes"));
  mem.def("get_max_cached_bytes", []() { return CachingAllocator::Instance().MaxCachedBytes(); });
  mem.def("set_min_pooled_bytes", [](size_t n) {
    memory::g_min_pooled.store(n);
    memory::UpdateThreshold();
  }, py::arg("nbytes"));
  mem.def("get_min_pooled_bytes", []() { return memory::g_min_pooled.load(); });
  mem.def("set_enabled", [](bool on) {
    memory::g_enabled.store(on);
    memory::UpdateThreshold();
  }, py::arg("enabled"));
  mem.def("is_enabled", []() { return memory::g_enabled.load(); });
  mem.def("bucket_size", &CachingAllocator::BucketSize, py::arg("nbytes"),
          "The block size a request of nbytes is served with.");
  mem.def("empty", &memory::Empty, py::arg("shape"), py::arg("dtype"),
          "An uninitialised C-contiguous array allocated the way kernel outputs are.");
}

}  // namespace opforge
