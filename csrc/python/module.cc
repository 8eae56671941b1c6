// opforge._C: the kernel factory, kernel instances and their launch, for Python.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <structmember.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "core/blas.h"
#include "core/factory.h"
#include "core/runtime.h"
#include "python/memory.h"
#include "opforge/kernel.h"
#include "opforge/parallel.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace py = pybind11;

namespace opforge {
namespace {

// Launches smaller than this keep the GIL: releasing and re-taking it costs more than the work.
constexpr int64_t kReleaseGilElements = 1 << 14;
constexpr int kMaxStackTensors = 16;  // Adam takes 10 inputs

// Attributes converted once from a Python dict and owned for the kernel's lifetime.
class OwnedAttrs {
 public:
  explicit OwnedAttrs(const py::dict& attrs) {
    for (auto item : attrs) {
      if (item.second.is_none()) continue;
      OpfAttr a{};
      names_.push_back(py::cast<std::string>(item.first));
      a.name = names_.back().c_str();
      Fill(&a, names_.back(), item.second);
      attrs_.push_back(a);
    }
  }
  const OpfAttr* data() const { return attrs_.data(); }
  int32_t size() const { return static_cast<int32_t>(attrs_.size()); }

 private:
  void Fill(OpfAttr* a, const std::string& name, py::handle v) {
    if (py::isinstance<py::bool_>(v)) {
      a->kind = kOpfAttrBool;
      a->i = v.cast<bool>() ? 1 : 0;
    } else if (py::isinstance<py::int_>(v)) {
      a->kind = kOpfAttrInt;
      a->i = v.cast<int64_t>();
    } else if (py::isinstance<py::float_>(v)) {
      a->kind = kOpfAttrFloat;
      a->f = v.cast<double>();
    } else if (py::isinstance<py::str>(v)) {
      a->kind = kOpfAttrStr;
      strs_.push_back(v.cast<std::string>());
      a->s = strs_.back().c_str();
    } else if (py::isinstance<py::tuple>(v) || py::isinstance<py::list>(v)) {
      auto seq = py::reinterpret_borrow<py::sequence>(v);
      bool all_int = true;
      for (auto x : seq) all_int = all_int && py::isinstance<py::int_>(x) && !py::isinstance<py::bool_>(x);
      if (all_int) {
        ints_.push_back(seq.cast<std::vector<int64_t>>());
        a->kind = kOpfAttrInts;
        a->ints = ints_.back().data();
        a->len = static_cast<int64_t>(ints_.back().size());
      } else {
        floats_.push_back(seq.cast<std::vector<double>>());
        a->kind = kOpfAttrFloats;
        a->floats = floats_.back().data();
        a->len = static_cast<int64_t>(floats_.back().size());
      }
    } else {
      throw py::type_error("the attr '" + name + "' has type '" + std::string(py::str(py::type::handle_of(v).attr("__name__"))) +
                           "', which a C++ kernel cannot receive (int, float, bool, str or a tuple of them)");
    }
  }

  std::deque<std::string> names_;
  std::deque<std::string> strs_;
  std::deque<std::vector<int64_t>> ints_;
  std::deque<std::vector<double>> floats_;
  std::vector<OpfAttr> attrs_;
};

struct PlannedTensor {
  std::vector<int64_t> shape;
  int32_t type_id;
  py::dtype np_dtype;
  int64_t numel;
  uintptr_t align;  // what the data pointer must be a multiple of
};

// Kernels read elements as T (complex ones as 8-byte words), so data must be aligned to the item size,
// up to 8. NumPy can make arrays that are not (views of raw buffers at odd offsets), and its ALIGNED
// flag asks less of complex64 (4 bytes).
inline uintptr_t RequiredAlignment(int64_t itemsize) {
  return static_cast<uintptr_t>(std::clamp<int64_t>(itemsize, 1, 8));
}

// One kernel specialised for fixed attrs and input metas (built once, launched many times).
class KernelInstance {
 public:
  KernelInstance(size_t index, const std::string& op_name, const std::vector<std::vector<int64_t>>& in_shapes,
                 const std::vector<int32_t>& in_types, const std::vector<py::dtype>& in_np,
                 const std::vector<std::vector<int64_t>>& out_shapes, const std::vector<int32_t>& out_types,
                 const std::vector<py::dtype>& out_np, const py::dict& attrs, const std::vector<int>& inplace)
      : op_name_(op_name), attrs_(attrs), inplace_(inplace) {
    if (in_types.size() != in_shapes.size() || in_np.size() != in_shapes.size() ||
        out_types.size() != out_shapes.size() || out_np.size() != out_shapes.size()) {
      throw py::value_error("For '" + op_name_ + "', the plan needs one shape, type id and NumPy dtype per operand.");
    }
    const KernelEntry& entry = KernelFactory::Instance().entry(index);
    def_ = entry.def;
    library_ = entry.library;
    for (size_t i = 0; i < in_shapes.size(); ++i) {
      inputs_.push_back(Plan(in_shapes[i], in_types[i], in_np[i], "input", i));
    }
    for (size_t i = 0; i < out_shapes.size(); ++i) {
      outputs_.push_back(Plan(out_shapes[i], out_types[i], out_np[i], "output", i));
    }
    CheckAgainstDef(in_types, in_np, out_types, out_np);
    if (inplace_.empty()) inplace_.assign(outputs_.size(), -1);
    if (inplace_.size() != outputs_.size()) throw py::value_error("inplace map must have one entry per output");
    for (int src : inplace_) {
      if (src >= static_cast<int>(inputs_.size())) throw py::value_error("inplace map names a missing input");
    }
    for (const auto& t : outputs_) total_elements_ += t.numel;
    std::vector<OpfTensor> in = Metas(inputs_), out = Metas(outputs_);
    char err[2048] = {0};
    kernel_ = def_->create(op_name_.c_str(), in.data(), static_cast<int32_t>(in.size()), out.data(),
                                 static_cast<int32_t>(out.size()), attrs_.data(), attrs_.size(), err, sizeof(err));
    if (kernel_ == nullptr) throw KernelError(err);
  }

  ~KernelInstance() {
    if (kernel_ != nullptr) def_->destroy(kernel_);
  }

  KernelInstance(const KernelInstance&) = delete;
  KernelInstance& operator=(const KernelInstance&) = delete;

  // Runs the kernel on NumPy arrays; returns one array or a tuple of them. This is the hot path
  // of every primitive call: raw NumPy API, no temporaries, messages built only on failure.
  py::object Launch(const py::tuple& args) {
    return LaunchArrays(&PyTuple_GET_ITEM(args.ptr(), 0), static_cast<size_t>(PyTuple_GET_SIZE(args.ptr())));
  }

  // The same on a C array of array objects (the dispatcher's fast path has no tuple to build).
  py::object LaunchArrays(PyObject* const* args, size_t n_in) {
    const size_t n_out = outputs_.size();
    if (n_in != inputs_.size()) {
      throw py::value_error("For '" + op_name_ + "', the kernel expects " + std::to_string(inputs_.size()) +
                            " inputs, but got " + std::to_string(n_in) + ".");
    }
    if (n_in > kMaxStackTensors || n_out > kMaxStackTensors) throw py::value_error("too many kernel operands");
    std::array<OpfTensor, kMaxStackTensors> in{}, out{};
    std::array<py::object, kMaxStackTensors> out_arrays;
    for (size_t i = 0; i < n_in; ++i) in[i] = Check(args[i], i);
    const auto& api = py::detail::npy_api::get();
    for (size_t i = 0; i < n_out; ++i) {
      const PlannedTensor& t = outputs_[i];
      if (inplace_[i] >= 0) {
        PyObject* target = args[inplace_[i]];
        if (!(py::detail::array_proxy(target)->flags & py::detail::npy_api::NPY_ARRAY_WRITEABLE_)) {
          throw py::value_error("For '" + op_name_ + "', the input " + std::to_string(inplace_[i]) +
                                " is written in place, but its array is read-only.");
        }
        out_arrays[i] = py::reinterpret_borrow<py::object>(target);
      } else {
        PyObject* descr = t.np_dtype.inc_ref().ptr();  // NewFromDescr steals a reference
        out_arrays[i] = py::reinterpret_steal<py::object>(
            memory::NewArray(api, descr, static_cast<int>(t.shape.size()), t.shape.data(), t.numel));
        if (!out_arrays[i]) throw py::error_already_set();
      }
      void* data = py::detail::array_proxy(out_arrays[i].ptr())->data;
      if (!Aligned(data, t)) ThrowMisaligned("For '" + op_name_ + "', the kernel's output " + std::to_string(i), t);
      out[i] = Tensor(data, t);
    }
    char err[2048];
    err[0] = '\0';
    int32_t status;
    if (total_elements_ >= kReleaseGilElements) {
      py::gil_scoped_release release;
      status = def_->launch(kernel_, in.data(), static_cast<int32_t>(n_in), out.data(),
                                  static_cast<int32_t>(n_out), err, sizeof(err));
    } else {
      status = def_->launch(kernel_, in.data(), static_cast<int32_t>(n_in), out.data(),
                                  static_cast<int32_t>(n_out), err, sizeof(err));
    }
    if (status != 0) throw KernelError(err);
    if (n_out == 1) return std::move(out_arrays[0]);
    py::tuple result(n_out);
    for (size_t i = 0; i < n_out; ++i) result[i] = std::move(out_arrays[i]);
    return std::move(result);
  }

 private:
  // Sizes are checked once here, so neither the kernels nor the launch can overflow computing them.
  PlannedTensor Plan(const std::vector<int64_t>& shape, int32_t type_id, const py::dtype& np_dtype, const char* what,
                     size_t i) const {
    const std::string where = "For '" + op_name_ + "', the " + what + " " + std::to_string(i) + " shape " +
                              ShapeToString(shape);
    for (int64_t d : shape) {
      if (d < 0) throw py::value_error(where + " must have no negative dims.");
    }
    int64_t numel = 0, nbytes = 0;
    if (!CheckedNumel(shape, &numel)) throw py::value_error(where + " has more elements than fit in int64.");
    const int64_t itemsize = np_dtype.itemsize();
    if (__builtin_mul_overflow(numel, itemsize, &nbytes)) {
      throw py::value_error(where + " of " + std::to_string(itemsize) + "-byte items has more bytes than fit in int64.");
    }
    return PlannedTensor{shape, type_id, np_dtype, numel, RequiredAlignment(itemsize)};
  }
  static OpfTensor Tensor(void* data, const PlannedTensor& t) {
    return OpfTensor{data, t.shape.data(), static_cast<int32_t>(t.shape.size()), t.type_id};
  }
  static std::vector<OpfTensor> Metas(const std::vector<PlannedTensor>& ts) {
    std::vector<OpfTensor> v;
    for (const auto& t : ts) v.push_back(Tensor(nullptr, t));
    return v;
  }

  // The C++ side trusts nothing: type, dtype, contiguity and shape are checked on every launch.
  OpfTensor Check(PyObject* obj, size_t i) const {
    const PlannedTensor& want = inputs_[i];
    const auto& api = py::detail::npy_api::get();
    if (!api.PyArray_Check_(obj)) throw py::type_error(Where(i) + " must be a numpy.ndarray.");
    auto* a = py::detail::array_proxy(obj);
    if (a->descr != want.np_dtype.ptr() && !api.PyArray_EquivTypes_(a->descr, want.np_dtype.ptr())) {
      throw py::type_error(Where(i) + " must have dtype " + std::string(py::str(want.np_dtype)) + ", but got " +
                           std::string(py::str(a->descr)) + ".");
    }
    if (!(a->flags & py::detail::npy_api::NPY_ARRAY_C_CONTIGUOUS_)) {
      throw py::value_error(Where(i) + " must be C-contiguous.");
    }
    bool same = a->nd == static_cast<int>(want.shape.size());
    for (int d = 0; same && d < a->nd; ++d) same = a->dimensions[d] == want.shape[d];
    if (!same) throw py::value_error(Where(i) + " must have shape " + ShapeToString(want.shape) + ".");
    if (!Aligned(a->data, want)) ThrowMisaligned(Where(i), want);
    return Tensor(a->data, want);
  }

  // The planned metas must be what the kernel was registered for: a mismatch would make it read
  // memory as the wrong type.
  void CheckAgainstDef(const std::vector<int32_t>& in_types, const std::vector<py::dtype>& in_np,
                       const std::vector<int32_t>& out_types, const std::vector<py::dtype>& out_np) const {
    const OpfKernelDef* d = def_;
    std::string where = "For '" + op_name_ + "', the kernel " + d->op_name;
    if (in_types.size() != in_np.size() || out_types.size() != out_np.size()) {
      throw py::value_error(where + " was given type ids and NumPy dtypes of different lengths.");
    }
    if (!d->all_same && static_cast<int32_t>(in_types.size()) != d->n_inputs) {
      throw py::value_error(where + " takes " + std::to_string(d->n_inputs) + " inputs, but the plan has " +
                            std::to_string(in_types.size()) + ".");
    }
    if (static_cast<int32_t>(out_types.size()) != d->n_outputs) {
      throw py::value_error(where + " has " + std::to_string(d->n_outputs) + " outputs, but the plan has " +
                            std::to_string(out_types.size()) + ".");
    }
    for (size_t i = 0; i < in_types.size(); ++i) {
      int32_t want = d->all_same ? d->input_types[0] : d->input_types[i];
      CheckType(where + ": input " + std::to_string(i), want, in_types[i], in_np[i]);
    }
    for (size_t i = 0; i < out_types.size(); ++i) {
      CheckType(where + ": output " + std::to_string(i), d->output_types[i], out_types[i], out_np[i]);
    }
  }

  static void CheckType(const std::string& where, int32_t want, int32_t got, const py::dtype& np_dtype) {
    if (want != got) {
      throw py::type_error(where + " must be " + TypeIdName(want) + ", but got " + TypeIdName(got) + ".");
    }
    if (np_dtype.itemsize() != TypeIdSize(want)) {
      throw py::type_error(where + " is " + TypeIdName(want) + ", but its NumPy dtype " +
                           std::string(py::str(np_dtype)) + " has another item size.");
    }
  }

  static bool Aligned(const void* data, const PlannedTensor& t) {
    return (reinterpret_cast<uintptr_t>(data) & (t.align - 1)) == 0;
  }
  [[noreturn]] static void ThrowMisaligned(const std::string& where, const PlannedTensor& t) {
    throw py::value_error(where + " must have its data aligned to " + std::to_string(t.align) +
                          " bytes, but the array's data is not (a copy of the array is aligned).");
  }

  std::string Where(size_t i) const { return "For '" + op_name_ + "', the kernel's input " + std::to_string(i); }

  // The definition, and the library that holds its code: the instance keeps the library loaded.
  const OpfKernelDef* def_ = nullptr;
  std::shared_ptr<void> library_;
  std::string op_name_;
  OwnedAttrs attrs_;
  std::vector<int> inplace_;
  std::vector<PlannedTensor> inputs_;
  std::vector<PlannedTensor> outputs_;
  int64_t total_elements_ = 0;
  void* kernel_ = nullptr;
};

// ---------------------------------------------------------------------------------------------
// The fast call path. Primitive.__call__ is PrimitiveCall below: for a call whose cached plan is a
// FastPlan (every argument a Tensor, no casts, a C++ kernel, new outputs) it builds the cache key,
// finds the plan, launches and wraps the outputs without running Python code. Anything else (a
// first call, constants, keywords, an interpreter installed on this thread) goes to Primitive._call.

struct TensorLayout {  // where opforge.Tensor keeps its slots, read from the class's member descriptors
  PyTypeObject* type = nullptr;
  Py_ssize_t data_offset = 0;
  Py_ssize_t meta_offset = 0;
};

TensorLayout g_tensor;
// The innermost interpreter of this thread (a tape, a profiler, a tracer), or null for plain eager
// calls. Owned (one reference). Per thread, so gradients taken in several threads never meet.
thread_local PyObject* t_interpreter = nullptr;
PyObject* g_slow_call = nullptr;  // Primitive._call
PyObject* g_plans_name = nullptr;  // "_plans", interned
PyTypeObject* g_fast_plan_type = nullptr;

Py_ssize_t SlotOffset(PyTypeObject* type, const char* name) {
  PyObject* descr = PyDict_GetItemString(type->tp_dict, name);  // borrowed
  if (descr == nullptr || Py_TYPE(descr) != &PyMemberDescr_Type) {
    throw py::type_error(std::string("the Tensor class has no slot '") + name + "'");
  }
  return reinterpret_cast<PyMemberDescrObject*>(descr)->d_member->offset;
}

inline PyObject*& Slot(PyObject* obj, Py_ssize_t offset) {
  return *reinterpret_cast<PyObject**>(reinterpret_cast<char*>(obj) + offset);
}

// A Tensor around `array` with a precomputed meta tuple (dtype, shape, device): no Python code runs.
PyObject* NewTensor(PyObject* array, PyObject* meta) {
  PyObject* t = g_tensor.type->tp_alloc(g_tensor.type, 0);
  if (t == nullptr) throw py::error_already_set();
  Py_INCREF(array);
  Slot(t, g_tensor.data_offset) = array;
  Py_INCREF(meta);
  Slot(t, g_tensor.meta_offset) = meta;
  return t;
}

// The cache key of one argument (borrowed): a Tensor's meta, ("weak", type) for a Python number
// (as opforge.dispatch.plan.plan_key keys the weak scalars of dtype groups), else null.
PyObject* g_weak_keys[4] = {nullptr, nullptr, nullptr, nullptr};  // bool, int, float, complex

inline PyObject* ArgKey(PyObject* arg) {
  if (PyObject_TypeCheck(arg, g_tensor.type)) return Slot(arg, g_tensor.meta_offset);
  PyTypeObject* type = Py_TYPE(arg);
  if (type == &PyFloat_Type) return g_weak_keys[2];
  if (type == &PyLong_Type) return g_weak_keys[1];
  if (type == &PyBool_Type) return g_weak_keys[0];
  if (type == &PyComplex_Type) return g_weak_keys[3];
  return nullptr;
}

// A weak Python scalar joining a dtype group, made a 0-d array of the group's dtype on each call.
// Common conversions (bool, int and float into bool, integer and float32/64 arrays) are done
// here; the rest, and every value that would not convert cleanly (an int out of the dtype's range,
// a float overflowing float32), go to the plan's Python converter, which raises the operator's own
// errors. Arrays of recent values are kept (read-only, by the value's bits), so a loop using one
// constant converts it once.
class ScalarSlot {
 public:
  ScalarSlot(size_t position, const py::dtype& dtype, py::object convert)
      : position_(position), dtype_(dtype), kind_(dtype.kind()), itemsize_(dtype.itemsize()),
        convert_(std::move(convert)) {}

  // A new reference to the 0-d array for `value`, or null with a Python error set.
  PyObject* Convert(PyObject* value) {
    uint64_t bits = 0;
    const bool keyed = Bits(value, &bits);
    if (keyed) {
      for (const auto& e : cache_) {
        if (e.array && e.bits == bits) return e.array.inc_ref().ptr();
      }
    }
    PyObject* array = Direct(value);
    if (array == nullptr && !PyErr_Occurred()) array = ByPython(value);
    if (array == nullptr) return nullptr;
    if (keyed) {
      py::detail::array_proxy(array)->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
      Entry& e = cache_[next_++ % cache_.size()];
      e.bits = bits;
      e.array = py::reinterpret_borrow<py::object>(array);
    }
    return array;
  }

  size_t position() const { return position_; }

 private:
  struct Entry {
    uint64_t bits = 0;
    py::object array;
  };

  // An int that fits int64 (no error left set), else false.
  static bool AsInt64(PyObject* v, long long* out) {
    int overflow = 0;
    *out = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow != 0 || (*out == -1 && PyErr_Occurred())) {
      PyErr_Clear();
      return false;
    }
    return true;
  }

  // The value's bits, its cache key (the plan's key fixes its Python type); false if it has none.
  static bool Bits(PyObject* v, uint64_t* bits) {
    if (PyFloat_CheckExact(v)) {
      const double d = PyFloat_AS_DOUBLE(v);
      std::memcpy(bits, &d, sizeof(d));
      return true;
    }
    long long i = 0;
    if (PyBool_Check(v)) {
      i = v == Py_True;
    } else if (!PyLong_CheckExact(v) || !AsInt64(v, &i)) {
      return false;
    }
    *bits = static_cast<uint64_t>(i);
    return true;
  }

  // Converted here, or null (no error set) when the Python converter must do it.
  PyObject* Direct(PyObject* v) const {
    const bool is_bool = PyBool_Check(v), is_float = PyFloat_CheckExact(v);
    long long i = 0;
    double d = 0.0;
    if (is_float) {
      d = PyFloat_AS_DOUBLE(v);
    } else if (is_bool) {
      i = v == Py_True;
    } else if (!PyLong_CheckExact(v) || !AsInt64(v, &i)) {
      return nullptr;
    }
    if (kind_ == 'f' && (itemsize_ == 4 || itemsize_ == 8)) {
      const double x = is_float ? d : static_cast<double>(i);  // as NumPy: an int goes through double
      if (itemsize_ == 8) return Filled(x);
      if (std::isfinite(x) && std::fabs(x) > static_cast<double>(std::numeric_limits<float>::max())) {
        return nullptr;  // NumPy warns that it overflows to inf: let it
      }
      return Filled(static_cast<float>(x));
    }
    if (is_float) return nullptr;
    if (kind_ == 'b' && itemsize_ == 1 && is_bool) return Filled(static_cast<uint8_t>(i));
    if (kind_ == 'i') {
      switch (itemsize_) {
        case 1: return InRange<int8_t>(i);
        case 2: return InRange<int16_t>(i);
        case 4: return InRange<int32_t>(i);
        case 8: return Filled(static_cast<int64_t>(i));
        default: return nullptr;
      }
    }
    if (kind_ == 'u' && i >= 0) {
      switch (itemsize_) {
        case 1: return InRange<uint8_t>(i);
        case 2: return InRange<uint16_t>(i);
        case 4: return InRange<uint32_t>(i);
        case 8: return Filled(static_cast<uint64_t>(i));
        default: return nullptr;
      }
    }
    return nullptr;
  }

  template <typename T>
  PyObject* InRange(long long i) const {
    if (i < static_cast<long long>(std::numeric_limits<T>::min()) ||
        i > static_cast<long long>(std::numeric_limits<T>::max())) {
      return nullptr;  // the Python converter raises the OverflowError naming the operator
    }
    return Filled(static_cast<T>(i));
  }

  template <typename T>
  PyObject* Filled(T value) const {
    const auto& api = py::detail::npy_api::get();
    PyObject* descr = dtype_.inc_ref().ptr();  // NewFromDescr steals a reference
    PyObject* array = api.PyArray_NewFromDescr_(api.PyArray_Type_, descr, 0, nullptr, nullptr, nullptr, 0, nullptr);
    if (array != nullptr) std::memcpy(py::detail::array_proxy(array)->data, &value, sizeof(T));
    return array;
  }

  PyObject* ByPython(PyObject* value) const {
    PyObject* array = PyObject_CallFunction(convert_.ptr(), "nO", static_cast<Py_ssize_t>(position_), value);
    if (array != nullptr && !py::detail::npy_api::get().PyArray_Check_(array)) {
      Py_DECREF(array);
      PyErr_SetString(PyExc_TypeError, "a FastPlan's scalar converter must return a numpy.ndarray");
      return nullptr;
    }
    return array;
  }

  size_t position_;
  py::dtype dtype_;
  char kind_;
  py::ssize_t itemsize_;
  py::object convert_;  // convert(position, value) -> 0-d array, raising the operator's errors
  std::array<Entry, 4> cache_;
  size_t next_ = 0;
};

class FastPlan {
 public:
  // `scalars`: (position, NumPy dtype) of each argument that is a weak Python scalar (the others
  // are Tensors); `convert(position, value)` makes the arrays the plan does not make itself.
  FastPlan(py::object instance, std::vector<py::object> out_metas,
           const std::vector<std::pair<size_t, py::dtype>>& scalars, py::object convert)
      : instance_(std::move(instance)), kernel_(instance_.cast<KernelInstance*>()), metas_(std::move(out_metas)) {
    if (metas_.empty() || metas_.size() > static_cast<size_t>(kMaxStackTensors)) {
      throw py::value_error("a FastPlan needs 1 to 16 outputs");
    }
    if (!scalars.empty() && convert.is_none()) throw py::value_error("a FastPlan with scalars needs a converter");
    for (const auto& [position, dtype] : scalars) {
      if (position >= static_cast<size_t>(kMaxStackTensors)) throw py::value_error("too many kernel operands");
      slots_.emplace_back(position, dtype, convert);
    }
  }

  py::object Run(PyObject* const* args, size_t n) {
    if (n > static_cast<size_t>(kMaxStackTensors)) throw py::value_error("too many kernel operands");
    std::array<PyObject*, kMaxStackTensors> arrays{};
    std::array<py::object, kMaxStackTensors> converted;  // keeps the scalars' arrays alive
    for (auto& slot : slots_) {
      const size_t i = slot.position();
      if (i >= n || ArgKey(args[i]) == nullptr || PyObject_TypeCheck(args[i], g_tensor.type)) {
        throw py::type_error("a FastPlan takes a Python number in this position");
      }
      converted[i] = py::reinterpret_steal<py::object>(slot.Convert(args[i]));
      if (!converted[i]) throw py::error_already_set();
      arrays[i] = converted[i].ptr();
    }
    for (size_t i = 0; i < n; ++i) {
      if (arrays[i] != nullptr) continue;
      if (!PyObject_TypeCheck(args[i], g_tensor.type) || Slot(args[i], g_tensor.data_offset) == nullptr) {
        throw py::type_error("a FastPlan takes Tensors only");
      }
      arrays[i] = Slot(args[i], g_tensor.data_offset);
    }
    py::object out = kernel_->LaunchArrays(arrays.data(), n);
    if (metas_.size() == 1) return py::reinterpret_steal<py::object>(NewTensor(out.ptr(), metas_[0].ptr()));
    py::tuple result(metas_.size());
    for (size_t i = 0; i < metas_.size(); ++i) {
      PyTuple_SET_ITEM(result.ptr(), i, NewTensor(PyTuple_GET_ITEM(out.ptr(), i), metas_[i].ptr()));
    }
    return std::move(result);
  }

  py::object Call(const py::tuple& args) {
    return Run(&PyTuple_GET_ITEM(args.ptr(), 0), static_cast<size_t>(PyTuple_GET_SIZE(args.ptr())));
  }

  py::object kernel_label = py::none();  // what the profiler reports

 private:
  py::object instance_;
  KernelInstance* kernel_;
  std::vector<py::object> metas_;
  std::deque<ScalarSlot> slots_;  // a deque: slots never move once made
};

// The cache key of a call whose arguments are all Tensors or Python numbers: a tuple of ArgKeys.
PyObject* CallKey(PyObject* const* args, Py_ssize_t n) {
  PyObject* key = PyTuple_New(n);
  if (key == nullptr) return nullptr;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* k = ArgKey(args[i]);
    if (k == nullptr) {
      Py_DECREF(key);
      return nullptr;
    }
    Py_INCREF(k);
    PyTuple_SET_ITEM(key, i, k);
  }
  return key;
}

// Finds the plan for this call (borrowed from the instance's _plans dict, which `*plans` keeps alive).
PyObject* FindPlan(PyObject* self, PyObject* const* args, Py_ssize_t n, PyObject** plans) {
  PyObject* key = CallKey(args, n);
  if (key == nullptr) return nullptr;
  *plans = PyObject_GetAttr(self, g_plans_name);
  PyObject* plan = nullptr;
  if (*plans != nullptr && PyDict_Check(*plans)) plan = PyDict_GetItemWithError(*plans, key);
  Py_DECREF(key);
  PyErr_Clear();
  return plan;
}

PyObject* RunPlan(PyObject* plan, PyObject* const* args, Py_ssize_t n) {
  try {
    if (Py_TYPE(plan) == g_fast_plan_type) {
      auto* fast = py::handle(plan).cast<FastPlan*>();
      return fast->Run(args, static_cast<size_t>(n)).release().ptr();
    }
    PyObject* tuple = PyTuple_New(n);
    if (tuple == nullptr) return nullptr;
    for (Py_ssize_t i = 0; i < n; ++i) {
      Py_INCREF(args[i]);
      PyTuple_SET_ITEM(tuple, i, args[i]);
    }
    PyObject* result = PyObject_CallOneArg(plan, tuple);
    Py_DECREF(tuple);
    return result;
  } catch (...) {
    py::detail::try_translate_exceptions();
    return nullptr;
  }
}

PyObject* PrimitiveCall(PyObject* /*module*/, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  if (nargs >= 1 && kwnames == nullptr && t_interpreter == nullptr) {
    PyObject* plans = nullptr;
    PyObject* plan = FindPlan(args[0], args + 1, nargs - 1, &plans);
    if (plan != nullptr) {
      Py_INCREF(plan);
      Py_XDECREF(plans);
      PyObject* result = RunPlan(plan, args + 1, nargs - 1);
      Py_DECREF(plan);
      return result;
    }
    Py_XDECREF(plans);
  }
  return PyObject_Vectorcall(g_slow_call, args, nargsf, kwnames);
}

PyMethodDef g_primitive_call_def = {"__call__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(PrimitiveCall)),
                                    METH_FASTCALL | METH_KEYWORDS,
                                    "Call the primitive: the cached plan for these input metas, else Primitive._call."};

// Installs the fast path: returns the method to assign to Primitive.__call__.
py::object MakePrimitiveCall(py::object tensor_type, py::object slow_call) {
  if (!PyType_Check(tensor_type.ptr())) throw py::type_error("make_primitive_call(Tensor class, Primitive._call)");
  g_tensor.type = reinterpret_cast<PyTypeObject*>(tensor_type.ptr());
  g_tensor.data_offset = SlotOffset(g_tensor.type, "_data");
  g_tensor.meta_offset = SlotOffset(g_tensor.type, "_meta");
  g_slow_call = slow_call.inc_ref().ptr();
  g_plans_name = PyUnicode_InternFromString("_plans");
  PyTypeObject* weak_types[4] = {&PyBool_Type, &PyLong_Type, &PyFloat_Type, &PyComplex_Type};
  for (int i = 0; i < 4; ++i) {
    Py_XDECREF(g_weak_keys[i]);
    g_weak_keys[i] = Py_BuildValue("(sO)", "weak", reinterpret_cast<PyObject*>(weak_types[i]));
    if (g_weak_keys[i] == nullptr) throw py::error_already_set();
  }
  PyObject* fn = PyCFunction_New(&g_primitive_call_def, nullptr);
  if (fn == nullptr) throw py::error_already_set();
  PyObject* method = PyInstanceMethod_New(fn);
  Py_DECREF(fn);
  if (method == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(method);
}

// Tensor's arithmetic operators (`t + 1`, `2 * t`) in C: a call of the operator's primitive with no
// Python frame around it. The function's self is (primitive, reflected, fallback); an operand that
// is neither a Tensor nor a Python number (a NumPy array, a list) goes to `fallback(self, other)`,
// the operator written in Python.
PyObject* BinaryOperator(PyObject* data, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 2) {
    PyErr_Format(PyExc_TypeError, "a Tensor operator takes 2 arguments, but got %zd", nargs);
    return nullptr;
  }
  PyObject* fallback = PyTuple_GET_ITEM(data, 2);
  if (ArgKey(args[1]) == nullptr) return PyObject_Vectorcall(fallback, args, 2, nullptr);
  const bool reflected = PyTuple_GET_ITEM(data, 1) == Py_True;
  PyObject* call[3] = {PyTuple_GET_ITEM(data, 0), reflected ? args[1] : args[0], reflected ? args[0] : args[1]};
  return PrimitiveCall(nullptr, call, 3, nullptr);
}

std::deque<std::string> g_operator_names;  // each operator method's name, kept for its PyMethodDef
std::deque<PyMethodDef> g_operator_defs;

// The method `name` of Tensor: `self <op> other` calls `primitive` (`other <op> self` if reflected).
py::object MakeBinaryOperator(const std::string& name, py::object primitive, bool reflected, py::object fallback) {
  if (g_slow_call == nullptr) throw py::type_error("make_binary_operator needs make_primitive_call first");
  if (Py_TYPE(primitive.ptr())->tp_call == nullptr) throw py::type_error("the primitive must be callable");
  g_operator_names.push_back(name);
  g_operator_defs.push_back({g_operator_names.back().c_str(),
                             reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(BinaryOperator)),
                             METH_FASTCALL, "A Tensor operator: the primitive call (Python operands: weak scalars)."});
  py::tuple data = py::make_tuple(primitive, py::bool_(reflected), fallback);
  PyObject* fn = PyCFunction_New(&g_operator_defs.back(), data.ptr());
  if (fn == nullptr) throw py::error_already_set();
  PyObject* method = PyInstanceMethod_New(fn);
  Py_DECREF(fn);
  if (method == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(method);
}

// Installs `interpreter` (or None) as this thread's innermost interpreter; returns the previous one.
py::object SetInterpreter(py::object interpreter) {
  PyObject* previous = t_interpreter;
  t_interpreter = interpreter.is_none() ? nullptr : interpreter.inc_ref().ptr();
  return previous == nullptr ? py::none() : py::reinterpret_steal<py::object>(previous);
}

py::object CurrentInterpreter() {
  return t_interpreter == nullptr ? py::none() : py::reinterpret_borrow<py::object>(t_interpreter);
}

py::tuple DescribeEntry(size_t index) {
  const KernelEntry& e = KernelFactory::Instance().entry(index);
  const OpfKernelDef* d = e.def;
  std::vector<int32_t> ins(d->input_types, d->input_types + d->n_inputs);
  std::vector<int32_t> outs(d->output_types, d->output_types + d->n_outputs);
  return py::make_tuple(index, d->op_name, d->backend, py::tuple(py::cast(ins)), py::tuple(py::cast(outs)),
                        d->all_same != 0, e.source);
}

py::list Describe(const std::vector<size_t>& indices) {
  py::list out;
  for (size_t i : indices) out.append(DescribeEntry(i));
  return out;
}

void SetNumThreads(int n) {
  if (n < 1) throw py::value_error("num_threads must be >= 1, but got " + std::to_string(n));
  runtime::SetNumThreads(n);
  blas::SetNumThreads(n);  // OpenBLAS's count is process-wide already
}

// A test hook: runs a parallel region over n elements (ParallelFor's default grain) and returns
// how many threads it had, as a kernel's region would.
int ParallelTeamSize(int64_t n) {
  std::atomic<int> team{1};
  py::gil_scoped_release release;
  ParallelFor(n, kParallelGrain, [&](int64_t, int64_t) {
#ifdef _OPENMP
    const int here = omp_get_num_threads();
    int seen = team.load();
    while (here > seen && !team.compare_exchange_weak(seen, here)) {
    }
#endif
  });
  return team.load();
}

}  // namespace
}  // namespace opforge

PYBIND11_MODULE(_C, m) {
  using namespace opforge;
  m.doc() = "opforge core: kernel factory, kernel instances, BLAS and threads";
  py::register_exception<KernelError>(m, "KernelError", PyExc_RuntimeError);
  BindMemory(m);

  for (int32_t id = kNumberTypeBool; id < kNumberTypeEnd; ++id) {
    m.attr((std::string("kNumberType") + TypeIdName(id)).c_str()) = id;
  }
  m.attr("kTypeUnknown") = static_cast<int>(kTypeUnknown);
  m.attr("KERNEL_ABI_VERSION") = OPFORGE_KERNEL_ABI_VERSION;

  runtime::Init();
  // The core's own kernels enter the factory the same way a user's library does.
  {
    int32_t count = 0;
    const OpfKernelDef* const* defs = opforge_kernel_defs(&count);
    KernelFactory::Instance().Import(defs, count, nullptr, "builtin");
  }

  m.def("kernel_defs", []() {
    std::vector<size_t> all(KernelFactory::Instance().size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = i;
    return Describe(all);
  }, "Every registered kernel: (index, op, backend, input types, output types, all_same, source).");
  m.def(
      "load_library",
      [](const std::string& path) {
        const LoadedLibrary loaded = KernelFactory::Instance().LoadLibrary(path);
        return py::make_tuple(loaded.already_loaded, Describe(loaded.indices));
      },
      py::arg("path"),
      "Load a kernel library; returns (already_loaded, kernels). A file loaded before (by any path to it) "
      "is not imported again: already_loaded is True and the kernels are those of the first load.");
  m.def("load_blas", &blas::Load, py::arg("path"), py::arg("prefix"));
  m.def("blas_loaded", &blas::Loaded);
  m.def("set_num_threads", &SetNumThreads, py::arg("n"),
        "Set the threads every parallel kernel region (and BLAS) uses, in every thread of the process.");
  m.def("get_num_threads", &runtime::NumThreads, "The threads a parallel kernel region uses now.");
  m.def("in_forked_child", &runtime::ForkedChild,
        "True in a process forked from one that imported opforge: kernels run on one thread there.");
  m.def("_parallel_team_size", &ParallelTeamSize, py::arg("n"),
        "Test hook: the number of threads a parallel region over n elements runs on.");

  py::class_<KernelInstance>(m, "KernelInstance")
      .def(py::init<size_t, const std::string&, const std::vector<std::vector<int64_t>>&, const std::vector<int32_t>&,
                    const std::vector<py::dtype>&, const std::vector<std::vector<int64_t>>&,
                    const std::vector<int32_t>&, const std::vector<py::dtype>&, const py::dict&,
                    const std::vector<int>&>(),
           py::arg("index"), py::arg("op_name"), py::arg("in_shapes"), py::arg("in_types"), py::arg("in_dtypes"),
           py::arg("out_shapes"), py::arg("out_types"), py::arg("out_dtypes"), py::arg("attrs"),
           py::arg("inplace"))
      .def("launch", &KernelInstance::Launch, py::arg("inputs"));

  py::class_<FastPlan>(m, "FastPlan")
      .def(py::init<py::object, std::vector<py::object>, const std::vector<std::pair<size_t, py::dtype>>&,
                    py::object>(),
           py::arg("instance"), py::arg("out_metas"), py::arg("scalars") = std::vector<std::pair<size_t, py::dtype>>(),
           py::arg("convert") = py::none())
      .def("__call__", &FastPlan::Call, py::arg("args"))
      .def_readwrite("kernel", &FastPlan::kernel_label);
  g_fast_plan_type = reinterpret_cast<PyTypeObject*>(py::type::of<FastPlan>().ptr());
  m.def("make_primitive_call", &MakePrimitiveCall, py::arg("tensor_type"), py::arg("slow_call"),
        "The C implementation of Primitive.__call__ (the cached fast path).");
  m.def("make_binary_operator", &MakeBinaryOperator, py::arg("name"), py::arg("primitive"), py::arg("reflected"),
        py::arg("fallback"), "A Tensor operator method calling `primitive` through the fast path.");
  m.def("set_interpreter", &SetInterpreter, py::arg("interpreter"),
        "Install this thread's innermost interpreter (None: eager); returns the previous one.");
  m.def("current_interpreter", &CurrentInterpreter, "This thread's innermost interpreter, or None (eager).");
}
