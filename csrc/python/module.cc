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
#include "python/device_launch.h"
#include "python/launchable.h"
#include "python/memory.h"
#include "python/slots.h"
#include "python/tape.h"
#include "opforge/broadcast_plan.h"
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
class KernelInstance : public Launchable {
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
    if (def_->abi_version >= 2 && def_->workspace_bytes != nullptr) workspace_shape_ = def_->workspace_bytes(kernel_);
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
  // `reuse`: an array for output 0 that nothing else references (a trace's arena), or null.
  py::object LaunchArrays(PyObject* const* args, size_t n_in, PyObject* reuse = nullptr) override {
    const size_t n_out = outputs_.size();
    if (n_in != inputs_.size()) {
      throw py::value_error("For '" + op_name_ + "', the kernel expects " + std::to_string(inputs_.size()) +
                            " inputs, but got " + std::to_string(n_in) + ".");
    }
    // Up to kMaxStackTensors operands on the stack; more (Concat, AddN, Split of many) on the heap.
    std::array<OpfTensor, kMaxStackTensors> in_stack{}, out_stack{};
    std::array<py::object, kMaxStackTensors> out_stack_arrays;
    std::vector<OpfTensor> in_heap, out_heap;
    std::vector<py::object> out_heap_arrays;
    OpfTensor* in = in_stack.data();
    OpfTensor* out = out_stack.data();
    py::object* out_arrays = out_stack_arrays.data();
    if (n_in > kMaxStackTensors) {
      in_heap.resize(n_in);
      in = in_heap.data();
    }
    if (n_out + 1 > kMaxStackTensors) {
      out_heap.resize(n_out + 1);
      out_heap_arrays.resize(n_out);
      out = out_heap.data();
      out_arrays = out_heap_arrays.data();
    }
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
      } else if (i == 0 && reuse != nullptr) {
        out_arrays[i] = py::reinterpret_borrow<py::object>(reuse);
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
    py::object workspace;  // kept alive through the launch; back to the allocator's cache after
    if (workspace_shape_ > 0) {
      const auto& uint8 = py::dtype::of<uint8_t>();
      workspace = py::reinterpret_steal<py::object>(
          memory::NewArray(api, uint8.inc_ref().ptr(), 1, &workspace_shape_, workspace_shape_));
      if (!workspace) throw py::error_already_set();
      out[n_out] = OpfTensor{py::detail::array_proxy(workspace.ptr())->data, &workspace_shape_, 1, kNumberTypeUInt8};
    }
    char err[2048];
    err[0] = '\0';
    int32_t status;
    if (total_elements_ >= kReleaseGilElements) {
      py::gil_scoped_release release;
      status = def_->launch(kernel_, in, static_cast<int32_t>(n_in), out,
                                  static_cast<int32_t>(n_out), err, sizeof(err));
    } else {
      status = def_->launch(kernel_, in, static_cast<int32_t>(n_in), out,
                                  static_cast<int32_t>(n_out), err, sizeof(err));
    }
    if (status == kLaunchCommunicationError) throw CommunicationError(err);
    if (status != kLaunchOk) throw KernelError(err);
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
    const bool variadic_outs = d->all_same && d->n_outputs == 1;  // Split, Unstack: as many as planned
    if (!variadic_outs && static_cast<int32_t>(out_types.size()) != d->n_outputs) {
      throw py::value_error(where + " has " + std::to_string(d->n_outputs) + " outputs, but the plan has " +
                            std::to_string(out_types.size()) + ".");
    }
    for (size_t i = 0; i < in_types.size(); ++i) {
      int32_t want = d->all_same ? d->input_types[0] : d->input_types[i];
      CheckType(where + ": input " + std::to_string(i), want, in_types[i], in_np[i]);
    }
    for (size_t i = 0; i < out_types.size(); ++i) {
      CheckType(where + ": output " + std::to_string(i), d->output_types[variadic_outs ? 0 : i], out_types[i],
                out_np[i]);
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

 public:
  // A kernel whose one output is input `view_of` in another shape (Reshape, ExpandDims, Squeeze):
  // callers that know the input is never written in place (not a Parameter) take View instead of a launch.
  int view_of() const override { return view_of_; }
  // The (type, shape) of output 0 when the kernel allocates it (one output, not written in place):
  // the key under which a trace's arena keeps buffers for it. Empty otherwise.
  std::vector<int64_t> ArenaKey() const override {
    if (outputs_.size() != 1 || inplace_[0] >= 0 || view_of_ >= 0) return {};
    std::vector<int64_t> key{outputs_[0].type_id};
    key.insert(key.end(), outputs_[0].shape.begin(), outputs_[0].shape.end());
    return key;
  }
  void set_view_of(int input) {
    if (input >= 0 && (outputs_.size() != 1 || static_cast<size_t>(input) >= inputs_.size() ||
                       inputs_[input].numel != outputs_[0].numel || inputs_[input].type_id != outputs_[0].type_id)) {
      throw py::value_error("For '" + op_name_ + "', only a kernel whose one output has the input's elements and "
                            "dtype can give a view of it.");
    }
    view_of_ = input;
  }
  // The output as a view of the input array `array` (it was checked as a launch checks it).
  py::object View(PyObject* array) const override {
    Check(array, static_cast<size_t>(view_of_));
    std::vector<Py_intptr_t> dims(outputs_[0].shape.begin(), outputs_[0].shape.end());
    py::detail::npy_api::PyArray_Dims shape{dims.data(), static_cast<int>(dims.size())};
    PyObject* view = py::detail::npy_api::get().PyArray_Newshape_(array, &shape, 0);  // 0: C order
    if (view == nullptr) throw py::error_already_set();
    return py::reinterpret_steal<py::object>(view);
  }

 private:
  int view_of_ = -1;
  // The definition, and the library that holds its code: the instance keeps the library loaded.
  const OpfKernelDef* def_ = nullptr;
  std::shared_ptr<void> library_;
  std::string op_name_;
  OwnedAttrs attrs_;
  std::vector<int> inplace_;
  std::vector<PlannedTensor> inputs_;
  std::vector<PlannedTensor> outputs_;
  int64_t total_elements_ = 0;
  int64_t workspace_shape_ = 0;  // bytes of scratch memory per launch (ABI 2), passed as out[n_out]
  void* kernel_ = nullptr;
};

// ---------------------------------------------------------------------------------------------
// The fast call path. Primitive.__call__ is PrimitiveCall below: for a call whose cached plan is a
// FastPlan (every argument a Tensor or a weak Python number, no casts, a C++ kernel, new outputs)
// it builds the cache key, finds the plan, launches and wraps the outputs without running Python
// code. With an interpreter installed on the thread (a tape, a profiler) such a call goes straight
// to its process_primitive. Anything else (constants, keywords, NumPy scalars) goes to
// Primitive._call.

struct TensorLayout {  // where opforge.Tensor keeps its slots, read from the class's member descriptors
  PyTypeObject* type = nullptr;
  Py_ssize_t data_offset = 0;
  Py_ssize_t meta_offset = 0;
};

TensorLayout g_tensor;
PyObject* g_placeholder_error = nullptr;  // opforge.tensor.PlaceholderError, set with the fast path
// The innermost interpreter of this thread (a tape, a profiler, a tracer), or null for plain eager
// calls. Owned (one reference). Per thread, so gradients taken in several threads never meet.
thread_local PyObject* t_interpreter = nullptr;
PyObject* g_slow_call = nullptr;  // Primitive._call
PyObject* g_plans_name = nullptr;  // "_plans", interned
PyObject* g_adopt_name = nullptr;  // "_adopt_plans", interned
PyTypeObject* g_fast_plan_type = nullptr;

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

// ("weak", type) for a Python number (borrowed; as opforge.dispatch.plan.plan_key keys the weak
// scalars of dtype groups), else null. ArgKey: the same, or a Tensor's meta.
PyObject* g_weak_keys[4] = {nullptr, nullptr, nullptr, nullptr};  // bool, int, float, complex

inline PyObject* WeakKey(PyObject* arg) {
  PyTypeObject* type = Py_TYPE(arg);
  if (type == &PyFloat_Type) return g_weak_keys[2];
  if (type == &PyLong_Type) return g_weak_keys[1];
  if (type == &PyBool_Type) return g_weak_keys[0];
  if (type == &PyComplex_Type) return g_weak_keys[3];
  return nullptr;
}

inline PyObject* ArgKey(PyObject* arg) {
  return PyObject_TypeCheck(arg, g_tensor.type) ? Slot(arg, g_tensor.meta_offset) : WeakKey(arg);
}

// A weak Python scalar joining a dtype group, made a 0-d array of the group's dtype on each call.
// Common conversions (bool, int and float into bool, integer and float32/64 arrays) are done
// here; the rest, and every value that would not convert cleanly (an int out of the dtype's range,
// a float overflowing float32), go to the plan's Python converter, which raises the operator's own
// errors. Arrays of recent values are kept (read-only, by the value's bits), so a loop using one
// constant converts it once.
class ScalarSlot {
 public:
  // `host`: the kernel reads NumPy arrays (made here where possible); else a device's arrays, which
  // `convert` makes (and this slot keeps, by value, as it keeps NumPy ones).
  ScalarSlot(size_t position, const py::dtype& dtype, py::object convert, bool host)
      : position_(position), dtype_(dtype), kind_(dtype.kind()), itemsize_(dtype.itemsize()),
        convert_(std::move(convert)), host_(host) {}

  // A new reference to the 0-d array for `value`, or null with a Python error set.
  PyObject* Convert(PyObject* value) {
    uint64_t bits = 0;
    const bool keyed = Bits(value, &bits);
    if (keyed) {
      for (const auto& e : cache_) {
        if (e.array && e.bits == bits) return e.array.inc_ref().ptr();
      }
    }
    PyObject* array = host_ ? Direct(value) : nullptr;
    if (array == nullptr && !PyErr_Occurred()) array = ByPython(value);
    if (array == nullptr) return nullptr;
    if (keyed) {
      if (host_) py::detail::array_proxy(array)->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
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
    if (array != nullptr && host_ && !py::detail::npy_api::get().PyArray_Check_(array)) {
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
  bool host_;
  std::array<Entry, 4> cache_;
  size_t next_ = 0;
};

using Operand = std::pair<size_t, Py_ssize_t>;  // (argument position, element index or -1)

class FastPlan {
 public:
  // `scalars`: (position, NumPy dtype) of each argument that is a weak Python scalar (the others
  // are Tensors); `convert(position, value)` makes the arrays the plan does not make itself.
  // `written` (a trace's in-place steps, run by a Program only): for each output, the argument it is
  // written into (the Parameter the step returns), or -1; every such argument's version moves on.
  // `take` (a call with constants the kernel never sees, a shape, an axis, or with a tuple of
  // Tensors): the operands the kernel reads, in order, each (position, -1) for an argument or
  // (position, index) for an element of a tuple or list argument; empty: every argument.
  // `also_written`: the operands an in-place step writes but does not return (ApplyMomentum's
  // accumulation), whose versions move on too.
  FastPlan(py::object instance, std::vector<py::object> out_metas,
           const std::vector<std::pair<size_t, py::dtype>>& scalars, py::object convert,
           std::vector<int64_t> written, std::vector<Operand> take, std::vector<int64_t> also_written)
      : instance_(std::move(instance)),
        kernel_(instance_.cast<Launchable*>()),
        metas_(std::move(out_metas)),
        written_(std::move(written)),
        also_written_(std::move(also_written)),
        take_(std::move(take)) {
    if (metas_.empty() || metas_.size() > static_cast<size_t>(kMaxStackTensors)) {
      throw py::value_error("a FastPlan needs 1 to 16 outputs");
    }
    if (!written_.empty() && written_.size() != metas_.size()) {
      throw py::value_error("a FastPlan's 'written' names an argument or -1 per output");
    }
    for (int64_t w : written_) {
      if (w >= kMaxStackTensors) throw py::value_error("a FastPlan writes a missing argument");
    }
    if (!also_written_.empty() && written_.empty()) throw py::value_error("'also_written' is for an in-place FastPlan");
    for (int64_t w : also_written_) {
      if (w < 0 || w >= kMaxStackTensors) throw py::value_error("a FastPlan writes a missing argument");
    }
    if (take_.size() > static_cast<size_t>(kMaxStackTensors)) throw py::value_error("too many kernel operands");
    if (!scalars.empty() && !take_.empty()) throw py::value_error("a FastPlan takes scalars or a 'take', not both");
    if (!scalars.empty() && convert.is_none()) throw py::value_error("a FastPlan with scalars needs a converter");
    for (const auto& [position, dtype] : scalars) {
      if (position >= static_cast<size_t>(kMaxStackTensors)) throw py::value_error("too many kernel operands");
      slots_.emplace_back(position, dtype, convert, dynamic_cast<KernelInstance*>(kernel_) != nullptr);
    }
  }

  py::object Run(PyObject* const* args, size_t n) {
    if (n > static_cast<size_t>(kMaxStackTensors)) throw py::value_error("too many kernel operands");
    if (!written_.empty()) throw py::type_error("a FastPlan writing its arguments runs in a trace's Program only");
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
    const size_t n_operands = Operands(n);
    std::array<PyObject*, kMaxStackTensors> tensors{};
    for (size_t k = 0; k < n_operands; ++k) {
      if (arrays[k] != nullptr) continue;
      tensors[k] = TensorOperand(args, n, k);
      if (Slot(tensors[k], g_tensor.data_offset) == nullptr) {
        // A placeholder (Tensor(shape=[None, 3], dtype=...), an output of eval_shape) has no data.
        PyErr_SetString(g_placeholder_error ? g_placeholder_error : PyExc_RuntimeError,
                        ("the input " + std::to_string(Arg(k).first) +
                         " is a placeholder Tensor: it has no data to run a kernel on. Give it data, or run the "
                         "code under opforge.eval_shape to get the output shapes and dtypes.")
                            .c_str());
        throw py::error_already_set();
      }
      arrays[k] = Slot(tensors[k], g_tensor.data_offset);
    }
    const int view = kernel_->view_of();
    // (a view is of a Tensor operand: one made from a Python number, or a Parameter, is launched)
    const bool as_view = view >= 0 && static_cast<size_t>(view) < n_operands && tensors[view] != nullptr &&
                         Py_TYPE(tensors[view]) == g_tensor.type;
    py::object out = as_view ? kernel_->View(arrays[view])
                         : kernel_->LaunchArrays(arrays.data(), n_operands);
    if (metas_.size() == 1) return py::reinterpret_steal<py::object>(NewTensor(out.ptr(), metas_[0].ptr()));
    py::tuple result(metas_.size());
    for (size_t i = 0; i < metas_.size(); ++i) {
      PyTuple_SET_ITEM(result.ptr(), i, NewTensor(PyTuple_GET_ITEM(out.ptr(), i), metas_[i].ptr()));
    }
    return std::move(result);
  }

  py::object kernel_label = py::none();  // what the profiler reports

  // The call's argument (position, -1) or element of one (position, index) that is operand `k`.
  Operand Arg(size_t k) const { return take_.empty() ? Operand{k, -1} : take_[k]; }
  // Whether the kernel reads the call's argument `position`, or elements of it.
  bool Takes(size_t position) const {
    return take_.empty() ||
           std::any_of(take_.begin(), take_.end(), [position](const Operand& o) { return o.first == position; });
  }
  size_t Operands(size_t n_args) const { return take_.empty() ? n_args : take_.size(); }

 private:
  friend class Program;
  py::object instance_;
  Launchable* kernel_;  // a KernelInstance or a DeviceLaunch, kept alive by instance_
  std::vector<py::object> metas_;
  std::deque<ScalarSlot> slots_;  // a deque: slots never move once made
  std::vector<int64_t> written_;  // per output: the operand it is written into, or -1 (empty: none)
  std::vector<int64_t> also_written_;  // operands written in place but not returned
  std::vector<Operand> take_;  // the arguments the kernel reads (empty: all)

  // Operand `k` of a call (borrowed): a Tensor, or a TypeError.
  PyObject* TensorOperand(PyObject* const* args, size_t n, size_t k) const {
    const auto [position, index] = Arg(k);
    PyObject* arg = position < n ? args[position] : nullptr;
    if (arg != nullptr && index >= 0) {
      const bool fits = (PyTuple_Check(arg) || PyList_Check(arg)) && index < Py_SIZE(arg);
      arg = !fits ? nullptr : PyTuple_Check(arg) ? PyTuple_GET_ITEM(arg, index) : PyList_GET_ITEM(arg, index);
    }
    if (arg == nullptr || !PyObject_TypeCheck(arg, g_tensor.type)) throw py::type_error("a FastPlan takes Tensors only");
    return arg;
  }
};

PyObject* ConstantKey(PyObject* value);
bool IsConstant(PyObject* value);
PyObject* g_tensors_str = nullptr;  // "tensors", interned

// The cache key of a tuple or list of Tensors (AddN's, Concat's), ("tensors", type, (metas...)) (a new
// reference), or null with no error set when `value` is not a non-empty one.
// Whether `value` is a non-empty tuple or list of Tensors.
bool IsTensorSequence(PyObject* value) {
  if ((!PyTuple_CheckExact(value) && !PyList_CheckExact(value)) || Py_SIZE(value) == 0) return false;
  for (Py_ssize_t i = 0; i < Py_SIZE(value); ++i) {
    if (!PyObject_TypeCheck(PySequence_Fast_GET_ITEM(value, i), g_tensor.type)) return false;
  }
  return true;
}

PyObject* SequenceKey(PyObject* value) {
  if (!IsTensorSequence(value)) return nullptr;
  const Py_ssize_t n = Py_SIZE(value);
  py::object metas = py::reinterpret_steal<py::object>(PyTuple_New(n));
  if (!metas) {
    PyErr_Clear();
    return nullptr;
  }
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* meta = Slot(PySequence_Fast_GET_ITEM(value, i), g_tensor.meta_offset);
    Py_INCREF(meta);
    PyTuple_SET_ITEM(metas.ptr(), i, meta);
  }
  PyObject* key = PyTuple_Pack(3, g_tensors_str, reinterpret_cast<PyObject*>(Py_TYPE(value)), metas.ptr());
  if (key == nullptr) PyErr_Clear();
  return key;
}
PyObject* g_weak_positions_name = nullptr;  // "_weak_positions", interned

// The positions where the primitive's class takes a Python number as a weak scalar of a dtype group
// (Primitive._weak_positions, a bit mask); a number anywhere else is a constant, keyed by value.
uint64_t WeakPositions(PyObject* primitive) {
  PyObject* mask = _PyType_Lookup(Py_TYPE(primitive), g_weak_positions_name);  // borrowed
  return mask != nullptr && PyLong_CheckExact(mask) ? PyLong_AsUnsignedLongLongMask(mask) : 0;
}

// The cache key of a call, as opforge.dispatch.plan.plan_key gives it (a new reference): per
// argument a Tensor's meta, ("weak", type) for a weak Python number, ConstantKey for a constant.
// Null with no error set when an argument has no key here (NumPy scalars, tuples of Tensors: the
// Python path keys those).
PyObject* CallKey(PyObject* primitive, PyObject* const* args, Py_ssize_t n) {
  PyObject* key = PyTuple_New(n);
  if (key == nullptr) {
    PyErr_Clear();
    return nullptr;
  }
  uint64_t weak = 0;
  bool weak_read = false;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* k = nullptr;
    if (PyObject_TypeCheck(args[i], g_tensor.type)) {
      k = Slot(args[i], g_tensor.meta_offset);
    } else if ((k = WeakKey(args[i])) != nullptr) {
      if (!weak_read) {
        weak = WeakPositions(primitive);
        weak_read = true;
      }
      if (i >= 64 || ((weak >> i) & 1) == 0) k = nullptr;  // a number where a constant goes
    }
    if (k != nullptr) {
      Py_INCREF(k);
    } else if ((k = SequenceKey(args[i])) == nullptr) {
      k = ConstantKey(args[i]);
    }
    if (k == nullptr) {
      Py_DECREF(key);
      return nullptr;
    }
    PyTuple_SET_ITEM(key, i, k);
  }
  return key;
}

// The key of a primitive's attrs, which every new instance computes on its first call (see
// opforge.dispatch.plan.freeze_attrs): (bytes, others). The bytes encode each attr in order, its
// name and its value: str, int (of int64), bool, None, bytes, float (its 8 bytes, so -0.0 and 0.0
// differ and a NaN equals itself), lists and tuples of those; a tag names the type, a length
// precedes every variable part, so two encodings are equal only for equal attrs of equal types.
// Any other value is encoded as a reference into `others`, fallback(prim_name, name, value) each.
// One bytes object hashes and compares far faster than a tuple of tuples.
PyTypeObject* g_dtype_class = nullptr;  // opforge.dtype.Type (set_dtype_class)

class AttrsEncoder {
 public:
  // Without a fallback, Attr fails (no error set) on a value that needs one.
  AttrsEncoder(PyObject* fallback, PyObject* prim_name) : fallback_(fallback), prim_name_(prim_name) {}

  bool Attr(PyObject* name, PyObject* value) {
    if (!PyUnicode_CheckExact(name)) return Other(name, name, 'N');
    return Str('n', name) && Value(name, value, 0);
  }

  // One value alone (a call's constant), tagged apart from an attrs encoding.
  bool Constant(PyObject* value) {
    Tag('c');
    return Value(nullptr, value, 0);
  }

  // The bytes alone when no value needed the fallback, else (bytes, others).
  PyObject* Key() {
    py::object bytes = py::reinterpret_steal<py::object>(PyBytes_FromStringAndSize(Data(), static_cast<Py_ssize_t>(size_)));
    if (!bytes || !others_) return bytes.release().ptr();
    py::object others = py::reinterpret_steal<py::object>(PyList_AsTuple(others_.ptr()));
    return others ? PyTuple_Pack(2, bytes.ptr(), others.ptr()) : nullptr;
  }

 private:
  // The encoding is written to a buffer on the stack while it fits (the attrs of most operators).
  void Put(const void* data, size_t n) {
    if (heap_.empty() && size_ + n <= sizeof(stack_)) {
      std::memcpy(stack_ + size_, data, n);
    } else {
      if (heap_.empty()) heap_.assign(stack_, size_);
      heap_.append(static_cast<const char*>(data), n);
    }
    size_ += n;
  }
  const char* Data() const { return heap_.empty() ? stack_ : heap_.data(); }
  void Tag(char tag) { Put(&tag, 1); }

  template <typename T>
  void Raw(T v) {
    Put(&v, sizeof(v));
  }

  bool Str(char tag, PyObject* s) {
    Py_ssize_t size = 0;
    const char* data = PyUnicode_AsUTF8AndSize(s, &size);
    if (data == nullptr) return false;
    Tag(tag);
    Raw<int64_t>(size);
    Put(data, static_cast<size_t>(size));
    return true;
  }

  bool Value(PyObject* name, PyObject* v, int depth) {
    PyTypeObject* type = Py_TYPE(v);
    if (type == &PyUnicode_Type) return Str('s', v);
    if (type == &PyBool_Type) {
      Tag(v == Py_True ? 'T' : 'F');
      return true;
    }
    if (v == Py_None) {
      Tag('z');
      return true;
    }
    if (type == &PyFloat_Type) {
      Tag('f');
      Raw<double>(PyFloat_AS_DOUBLE(v));
      return true;
    }
    if (type == &PyLong_Type) {
      int overflow = 0;
      const long long i = PyLong_AsLongLongAndOverflow(v, &overflow);
      if (i == -1 && PyErr_Occurred()) return false;
      if (overflow != 0) return Other(name, v, 'o');
      Tag('i');
      Raw<int64_t>(i);
      return true;
    }
    if (type == &PyBytes_Type) {
      Tag('y');
      Raw<int64_t>(PyBytes_GET_SIZE(v));
      Put(PyBytes_AS_STRING(v), static_cast<size_t>(PyBytes_GET_SIZE(v)));
      return true;
    }
    if (g_dtype_class != nullptr && PyObject_TypeCheck(v, g_dtype_class)) return Dtype(name, v);
    if ((type == &PyList_Type || type == &PyTuple_Type) && depth < 8 && fallback_ == nullptr) {
      // No Python code runs in this pass, so the sequence cannot change while it is read.
      const Py_ssize_t n = PySequence_Fast_GET_SIZE(v);
      Tag(type == &PyList_Type ? 'l' : 't');
      Raw<int64_t>(n);
      for (Py_ssize_t i = 0; i < n; ++i) {
        if (!Value(name, PySequence_Fast_GET_ITEM(v, i), depth + 1)) return false;
      }
      return true;
    }
    if ((type == &PyList_Type || type == &PyTuple_Type) && depth < 8) {
      py::object items = py::reinterpret_steal<py::object>(PySequence_Tuple(v));  // a list may change
      if (!items) return false;
      Tag(type == &PyList_Type ? 'l' : 't');
      Raw<int64_t>(PyTuple_GET_SIZE(items.ptr()));
      for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(items.ptr()); ++i) {
        if (!Value(name, PyTuple_GET_ITEM(items.ptr(), i), depth + 1)) return false;
      }
      return true;
    }
    return Other(name, v, 'o');
  }

  // An opforge dtype (one object per dtype, compared by identity) by its C++ type id.
  bool Dtype(PyObject* name, PyObject* v) {
    static PyObject* const type_id_str = PyUnicode_InternFromString("type_id");
    py::object id = py::reinterpret_steal<py::object>(PyObject_GetAttr(v, type_id_str));
    if (!id || !PyLong_CheckExact(id.ptr())) {
      PyErr_Clear();
      return Other(name, v, 'o');
    }
    Tag('d');
    Raw<int64_t>(PyLong_AsLongLong(id.ptr()));
    return !PyErr_Occurred();
  }

  bool Other(PyObject* name, PyObject* v, char tag) {
    if (fallback_ == nullptr) return false;
    if (!others_) others_ = py::list();
    py::object frozen =
        py::reinterpret_steal<py::object>(PyObject_CallFunctionObjArgs(fallback_, prim_name_, name, v, nullptr));
    if (!frozen || PyList_Append(others_.ptr(), frozen.ptr()) != 0) return false;
    Tag(tag);
    Raw<int64_t>(PyList_GET_SIZE(others_.ptr()) - 1);
    return true;
  }

  PyObject* fallback_;
  PyObject* prim_name_;
  char stack_[512];
  std::string heap_;  // the encoding once it outgrows stack_
  size_t size_ = 0;
  py::object others_;  // a list, made on the first value that needs the fallback
};

// The cache key of a constant argument (an axis, a shape, a flag): its encoding as an attr value
// (a new bytes object), or null with no error set when the encoding cannot take it (the Python path
// keys it then with opforge.dispatch.plan.freeze). plan_key uses this same key, so both paths meet.
PyObject* ConstantKey(PyObject* value) {
  AttrsEncoder encoder(nullptr, nullptr);
  PyObject* key = encoder.Constant(value) ? encoder.Key() : nullptr;
  if (key == nullptr) PyErr_Clear();
  return key;
}

// Whether ConstantKey takes `value` (encoded on the stack; no key made).
bool IsConstant(PyObject* value) {
  AttrsEncoder encoder(nullptr, nullptr);
  const bool taken = encoder.Constant(value);
  if (!taken) PyErr_Clear();
  return taken;
}

PyObject* g_freeze = nullptr;  // opforge.dispatch.plan.freeze, the fallback of FreezeAttrs

// The key of `attrs` (a dict), or null with an error set.
PyObject* FreezeAttrs(PyObject* prim_name, PyObject* attrs) {
  if (g_freeze == nullptr || !PyDict_Check(attrs)) {
    PyErr_SetString(PyExc_TypeError, "freeze_attrs(prim_name, attrs: dict), after set_attrs_fallback(freeze)");
    return nullptr;
  }
  try {
    {  // Common attrs: no Python code runs, so the dict can be iterated as it is.
      AttrsEncoder encoder(nullptr, prim_name);
      Py_ssize_t pos = 0;
      PyObject *name = nullptr, *value = nullptr;
      bool done = true;
      while (done && PyDict_Next(attrs, &pos, &name, &value)) done = encoder.Attr(name, value);
      if (done) return encoder.Key();
      if (PyErr_Occurred()) return nullptr;
    }
    // A snapshot of the items: the fallback runs Python code, which must not meet a dict being iterated.
    py::object items = py::reinterpret_steal<py::object>(PyDict_Items(attrs));
    if (!items) return nullptr;
    AttrsEncoder encoder(g_freeze, prim_name);
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(items.ptr()); ++i) {
      PyObject* item = PyList_GET_ITEM(items.ptr(), i);
      if (!encoder.Attr(PyTuple_GET_ITEM(item, 0), PyTuple_GET_ITEM(item, 1))) return nullptr;
    }
    return encoder.Key();
  } catch (...) {
    py::detail::try_translate_exceptions();
    return nullptr;
  }
}

// The key under which primitives share plans: (class, name, frozen attrs, device). A new reference,
// or null with an error set (a TypeError for attrs that have no key).
PyObject* AttrsKey(PyObject* prim) {
  static PyObject* const name_str = PyUnicode_InternFromString("name");
  static PyObject* const attrs_str = PyUnicode_InternFromString("attrs");
  static PyObject* const device_str = PyUnicode_InternFromString("_device");
  py::object name = py::reinterpret_steal<py::object>(PyObject_GetAttr(prim, name_str));
  py::object attrs = py::reinterpret_steal<py::object>(name ? PyObject_GetAttr(prim, attrs_str) : nullptr);
  py::object device = py::reinterpret_steal<py::object>(attrs ? PyObject_GetAttr(prim, device_str) : nullptr);
  if (!device) return nullptr;
  py::object frozen = py::reinterpret_steal<py::object>(FreezeAttrs(name.ptr(), attrs.ptr()));
  if (!frozen) return nullptr;
  PyObject* key = PyTuple_Pack(4, reinterpret_cast<PyObject*>(Py_TYPE(prim)), name.ptr(), frozen.ptr(), device.ptr());
  if (key != nullptr && PyObject_Hash(key) == -1) Py_CLEAR(key);  // a value freeze kept but cannot hash
  return key;
}


// `self._plans` (a new reference) when it is a dict, else null with no error set.
PyObject* PlansOf(PyObject* self) {
  PyObject* plans = PyObject_GetAttr(self, g_plans_name);
  if (plans != nullptr && PyDict_Check(plans)) return plans;
  Py_XDECREF(plans);
  PyErr_Clear();
  return nullptr;
}

PyObject* g_shared_plans = nullptr;  // opforge.primitives.primitive._shared_plans
PyObject* g_attrs_key_name = nullptr;  // "_attrs_key", interned

// Primitive._adopt_plans in C for the common case (the shared dict of these attrs exists; anything
// else is left to the Python method): the dict `self._plans` became (a new reference), or null when
// it stayed `current`. No error is left set: the slow path meets the same error and reports it.
PyObject* Adopt(PyObject* self, PyObject* current) {
  py::object key = py::reinterpret_steal<py::object>(PyObject_GetAttr(self, g_attrs_key_name));
  if (key && key.is_none() && g_shared_plans != nullptr) {
    key = py::reinterpret_steal<py::object>(AttrsKey(self));
    if (key && PyObject_SetAttr(self, g_attrs_key_name, key.ptr()) != 0) key = py::object();
  }
  PyObject* plans = key && PyTuple_Check(key.ptr()) ? PyDict_GetItemWithError(g_shared_plans, key.ptr()) : nullptr;
  if (plans == nullptr) {  // a new dict, attrs without a key, an error: Python decides
    PyErr_Clear();
    PyObject* adopted = PyObject_CallMethodNoArgs(self, g_adopt_name);
    PyErr_Clear();
    Py_XDECREF(adopted);
    return adopted == Py_True ? PlansOf(self) : nullptr;
  }
  if (plans == current || PyObject_SetAttr(self, g_plans_name, plans) != 0) {
    PyErr_Clear();
    return nullptr;
  }
  Py_INCREF(plans);
  return plans;
}

// The plan under `key` in `plans` (a new reference), or null with no error set.
PyObject* Get(PyObject* plans, PyObject* key) {
  PyObject* plan = PyDict_GetItemWithError(plans, key);
  if (plan == nullptr) PyErr_Clear();
  Py_XINCREF(plan);
  return plan;
}

// The cached plan for a call of `self` with these arguments (a new reference), or null with no
// error set: not all of them are Tensors and Python numbers, or no plan is cached for their metas.
// On a miss the instance adopts the plans shared by the instances with its attrs (Adopt), so the
// first call of a new instance already finds them.
PyObject* FindPlan(PyObject* self, PyObject* const* args, Py_ssize_t n) {
  py::object key = py::reinterpret_steal<py::object>(CallKey(self, args, n));
  if (!key) return nullptr;
  py::object plans = py::reinterpret_steal<py::object>(PlansOf(self));
  if (!plans) return nullptr;
  PyObject* plan = PyDict_GET_SIZE(plans.ptr()) != 0 ? Get(plans.ptr(), key.ptr()) : nullptr;
  if (plan == nullptr) {
    py::object adopted = py::reinterpret_steal<py::object>(Adopt(self, plans.ptr()));
    if (adopted) plan = Get(adopted.ptr(), key.ptr());
  }
  return plan;
}

// Runs `plan` on the call's arguments; `tuple`, when given, holds the same arguments.
PyObject* RunPlan(PyObject* plan, PyObject* const* args, Py_ssize_t n, PyObject* tuple = nullptr) {
  try {
    if (Py_TYPE(plan) == g_fast_plan_type) {
      auto* fast = py::handle(plan).cast<FastPlan*>();
      return fast->Run(args, static_cast<size_t>(n)).release().ptr();
    }
    if (tuple != nullptr) return PyObject_CallOneArg(plan, tuple);
    tuple = PyTuple_New(n);
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

// A trace replayed in C++ (opforge/dispatch/trace.py): the recorded steps run one after the other
// on an environment of slots (the function's input Tensors, then every step's outputs). A step whose
// plan is a FastPlan launches its kernel directly on the slots' arrays, its weak scalars converted
// once when the program is built; any other plan is called with a tuple of its arguments. No
// Python code runs between steps, and the environment is local to each run (threads may share a
// program).
// A fused elementwise kernel (opforge/kernels/cpu/fused.py), called without a Python frame:
// fn(inputs, outputs, scalars, n), the C entry of a library the fuser built, at `address`.
using FusedEntry = void (*)(const void* const*, void* const*, const double*, int64_t);
PyTypeObject* g_fused_call_type = nullptr;

class FusedCall {
 public:
  FusedCall(uintptr_t address, py::object keep_alive, size_t n_inputs, std::vector<py::object> out_metas,
            const std::vector<py::dtype>& out_dtypes, const std::vector<std::vector<int64_t>>& out_shapes,
            std::vector<double> scalars, int64_t n)
      : entry_(reinterpret_cast<FusedEntry>(address)), keep_alive_(std::move(keep_alive)), n_inputs_(n_inputs),
        metas_(std::move(out_metas)), scalars_(std::move(scalars)), n_(n) {
    if (address == 0 || metas_.size() != out_dtypes.size() || metas_.size() != out_shapes.size() || metas_.empty()) {
      throw py::value_error("FusedCall(address, keep_alive, n_inputs, metas, dtypes, shapes, scalars, n)");
    }
    for (size_t i = 0; i < metas_.size(); ++i) {
      int64_t numel = 1;
      for (int64_t d : out_shapes[i]) numel *= d;
      outputs_.push_back(PlannedTensor{out_shapes[i], 0, out_dtypes[i], numel, 1});
    }
    if (scalars_.empty()) scalars_.push_back(0.0);  // (the entry reads no scalar then)
  }

  // The outputs (a tuple of Tensors) of the kernel on `args`, a tuple of n_inputs Tensors.
  py::object Call(PyObject* args) {
    if (!PyTuple_Check(args) || static_cast<size_t>(PyTuple_GET_SIZE(args)) != n_inputs_) {
      throw py::type_error("a fused kernel takes a tuple of " + std::to_string(n_inputs_) + " Tensors");
    }
    std::vector<py::object> arrays(n_inputs_);
    std::vector<const void*> in(std::max<size_t>(n_inputs_, 1));
    for (size_t i = 0; i < n_inputs_; ++i) {
      PyObject* t = PyTuple_GET_ITEM(args, static_cast<Py_ssize_t>(i));
      if (!PyObject_TypeCheck(t, g_tensor.type) || Slot(t, g_tensor.data_offset) == nullptr) {
        throw py::type_error("a fused kernel takes Tensors with data");
      }
      py::array a = py::array::ensure(py::handle(Slot(t, g_tensor.data_offset)), py::array::c_style);
      if (!a) throw py::error_already_set();
      in[i] = a.data();
      arrays[i] = std::move(a);
    }
    const auto& api = py::detail::npy_api::get();
    std::vector<py::object> outs(outputs_.size());
    std::vector<void*> out(outputs_.size());
    for (size_t i = 0; i < outputs_.size(); ++i) {
      const PlannedTensor& t = outputs_[i];
      outs[i] = py::reinterpret_steal<py::object>(memory::NewArray(api, t.np_dtype.inc_ref().ptr(),
                                                                   static_cast<int>(t.shape.size()), t.shape.data(),
                                                                   t.numel));
      if (!outs[i]) throw py::error_already_set();
      out[i] = py::detail::array_proxy(outs[i].ptr())->data;
    }
    if (n_ >= kReleaseGilElements) {
      py::gil_scoped_release unlocked;
      entry_(in.data(), out.data(), scalars_.data(), n_);
    } else {
      entry_(in.data(), out.data(), scalars_.data(), n_);
    }
    py::tuple result(outs.size());
    for (size_t i = 0; i < outs.size(); ++i) {
      PyTuple_SET_ITEM(result.ptr(), static_cast<Py_ssize_t>(i), NewTensor(outs[i].ptr(), metas_[i].ptr()));
    }
    return std::move(result);
  }

 private:
  static constexpr int64_t kReleaseGilElements = 1 << 15;  // (releasing costs more than a tiny loop)
  FusedEntry entry_;
  py::object keep_alive_;  // the library's handle: its code stays mapped
  size_t n_inputs_;
  std::vector<py::object> metas_;
  std::vector<PlannedTensor> outputs_;
  std::vector<double> scalars_;
  int64_t n_;
};

PyObject* FusedCallCall(PyObject* self, PyObject* args, PyObject* kwargs) {
  if ((kwargs != nullptr && PyDict_GET_SIZE(kwargs) != 0) || PyTuple_GET_SIZE(args) != 1) {
    PyErr_SetString(PyExc_TypeError, "a fused kernel is called with one tuple of Tensors: run(inputs)");
    return nullptr;
  }
  try {
    return py::handle(self).cast<FusedCall*>()->Call(PyTuple_GET_ITEM(args, 0)).release().ptr();
  } catch (py::error_already_set& e) {
    e.restore();
    return nullptr;
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
    return nullptr;
  }
}

class Program {
 public:
  // steps: [(plan, sources, outputs[, release])]; a source is a slot (int), ("const", value) or
  // ("seq", is_list, (sources...)) (a tuple or list of them: Concat's, AddN's; the plan takes it);
  // outputs is a slot, None, or a tuple of slots / None; release lists the slots to drop after the step.
  // returns: the slots Run gives back, in order (the function's outputs).
  Program(size_t n_slots, const py::list& steps, std::vector<size_t> returns)
      : n_slots_(n_slots), slot_arena_(n_slots, -1), returns_(std::move(returns)) {
    for (size_t slot : returns_) {
      if (slot >= n_slots_) throw py::value_error("a trace's program returns a missing slot");
    }
    for (const auto& item : steps) {
      auto t = item.cast<py::tuple>();
      Step step;
      step.plan = t[0];
      step.fast = Py_TYPE(step.plan.ptr()) == g_fast_plan_type ? step.plan.cast<FastPlan*>() : nullptr;
      size_t position = 0;
      for (const auto& src : t[1].cast<py::list>()) {
        step.sources.push_back(MakeSource(step, src, position++));
      }
      if (step.fast != nullptr && step.fast->Operands(step.sources.size()) > static_cast<size_t>(kMaxStackTensors)) {
        step.fast = nullptr;
      }
      if (step.fast != nullptr && !TakesTensors(step)) step.fast = nullptr;  // the plan is called instead
      if (t.size() > 3) {
        for (const auto& r : t[3].cast<py::list>()) step.release.push_back(SlotIndex(r));
      }
      py::object outs = t[2];
      if (outs.is_none()) {
        step.single = false;
      } else if (PyLong_Check(outs.ptr())) {
        step.outputs.push_back(SlotIndex(outs));
      } else {
        step.single = false;
        for (const auto& o : outs.cast<py::tuple>()) step.outputs.push_back(o.is_none() ? -1 : static_cast<int64_t>(SlotIndex(o)));
      }
      if (step.fast != nullptr && step.outputs.size() == 1 && step.single && step.fast->written_.empty()) {
        std::vector<int64_t> key = step.fast->kernel_->ArenaKey();
        if (!key.empty()) {
          step.arena = ArenaIndex(key);
          slot_arena_[static_cast<size_t>(step.outputs[0])] = step.arena;
        }
      }
      steps_.push_back(std::move(step));
    }
  }

  // Runs on `inputs` (the Tensors of slots 0..n-1); returns the values of the returned slots (a list).
  py::list Run(const py::tuple& inputs) {
    const size_t n_in = static_cast<size_t>(PyTuple_GET_SIZE(inputs.ptr()));
    if (n_in > n_slots_) throw py::value_error("a trace's program got more inputs than it has slots");
    std::vector<py::object> env(n_slots_);
    for (size_t i = 0; i < n_in; ++i) env[i] = inputs[i];
    for (const Step& step : steps_) {
      if (step.fast != nullptr) {
        RunFast(step, env);
      } else {
        RunPlanStep(step, env);
      }
      // Values no later step reads: their buffers go back to the arena (or the allocator) now, so the
      // next step's output reuses memory still in cache (and the peak is the live set's, not the sum).
      for (size_t slot : step.release) Release(env, slot);
    }
    py::list out(returns_.size());
    for (size_t k = 0; k < returns_.size(); ++k) {
      const py::object& v = env[returns_[k]];
      PyList_SET_ITEM(out.ptr(), static_cast<Py_ssize_t>(k), (v ? v : py::none()).inc_ref().ptr());
    }
    return out;
  }

  size_t size() const { return steps_.size(); }
  // Per step: whether it runs without entering Python (a FastPlan whose every argument it takes).
  std::vector<bool> native() const {
    std::vector<bool> out;
    for (const Step& step : steps_) out.push_back(step.fast != nullptr || Py_TYPE(step.plan.ptr()) == g_fused_call_type);
    return out;
  }

 private:
  enum class Kind { kSlot, kTensor, kArray, kObject, kSeq };
  struct Source {
    Kind kind;
    size_t slot = 0;
    py::object value;  // a constant: a Tensor, a 0-d array (a FastPlan's scalar) or any Python value
    std::vector<Source> items = {};  // kSeq: the sequence's elements (a list when is_list)
    bool is_list = false;
  };
  struct Step {
    py::object plan;
    FastPlan* fast = nullptr;
    std::vector<Source> sources;
    std::vector<int64_t> outputs;
    std::vector<size_t> release;  // slots dropped after this step (their last reader)
    bool single = true;
    int arena = -1;  // the arena list its output's buffer comes from, or -1 (allocated)
  };

  // The arena: buffers of released intermediates, kept across replays by (type, shape), so a replay
  // allocates only what it returns. A buffer is reused only while nothing else references it (a
  // view of it, a Tensor kept by a Python step): its reference count tells.
  int ArenaIndex(const std::vector<int64_t>& key) {
    auto found = std::find(arena_keys_.begin(), arena_keys_.end(), key);
    if (found != arena_keys_.end()) return static_cast<int>(found - arena_keys_.begin());
    arena_keys_.push_back(key);
    arena_.emplace_back();
    return static_cast<int>(arena_.size() - 1);
  }

  // A free buffer of list `index` (a new reference), or null.
  PyObject* TakeBuffer(int index) {
    auto& free = arena_[static_cast<size_t>(index)];
    while (!free.empty()) {
      py::object buffer = std::move(free.back());
      free.pop_back();
      if (Py_REFCNT(buffer.ptr()) == 1) return buffer.release().ptr();
    }
    return nullptr;
  }

  // Drops slot `slot`; an intermediate's buffer that nothing else holds goes back to its arena list.
  void Release(std::vector<py::object>& env, size_t slot) {
    const int index = slot_arena_[slot];
    PyObject* tensor = env[slot].ptr();
    if (index < 0 || tensor == nullptr || Py_REFCNT(tensor) != 1 || Py_TYPE(tensor) != g_tensor.type) {
      env[slot] = py::object();
      return;
    }
    py::object buffer = py::reinterpret_borrow<py::object>(Slot(tensor, g_tensor.data_offset));
    env[slot] = py::object();
    if (buffer && Py_REFCNT(buffer.ptr()) == 1 && arena_[static_cast<size_t>(index)].size() < kMaxArenaBuffers) {
      arena_[static_cast<size_t>(index)].push_back(std::move(buffer));
    }
  }

  static constexpr size_t kMaxArenaBuffers = 8;  // per (type, shape): a bound, should a replay misbehave
  size_t n_slots_;
  std::vector<int> slot_arena_;
  std::vector<size_t> returns_;
  std::vector<std::vector<int64_t>> arena_keys_;
  std::vector<std::vector<py::object>> arena_;

  size_t SlotIndex(const py::handle& h) const {
    const auto slot = h.cast<int64_t>();
    if (slot < 0 || static_cast<size_t>(slot) >= n_slots_) throw py::value_error("a trace step names a missing slot");
    return static_cast<size_t>(slot);
  }

  Source MakeSource(Step& step, const py::handle& src, size_t position) const {
    if (PyLong_Check(src.ptr())) return Source{Kind::kSlot, SlotIndex(src), py::object()};
    auto encoded = src.cast<py::tuple>();
    if (encoded.size() == 3 && py::str(encoded[0]).cast<std::string>() == "seq") {
      // A FastPlan takes the elements of a tuple of Tensors only through its 'take': else the plan,
      // called with the tuple built, does.
      if (step.fast != nullptr && (step.fast->take_.empty() || !step.fast->Takes(position))) step.fast = nullptr;
      Source seq{Kind::kSeq, 0, py::object()};
      seq.is_list = encoded[1].cast<bool>();
      for (const auto& item : encoded[2].cast<py::tuple>()) seq.items.push_back(MakeSource(step, item, position));
      return seq;
    }
    py::object value = encoded[1];
    if (PyObject_TypeCheck(value.ptr(), g_tensor.type)) return Source{Kind::kTensor, 0, value};
    if (step.fast != nullptr && !step.fast->Takes(position)) return Source{Kind::kObject, 0, value};
    if (step.fast != nullptr) {
      for (auto& slot : step.fast->slots_) {
        if (slot.position() == position) {
          py::object array = py::reinterpret_steal<py::object>(slot.Convert(value.ptr()));
          if (!array) throw py::error_already_set();
          return Source{Kind::kArray, 0, array};
        }
      }
      step.fast = nullptr;  // a constant the FastPlan does not take: call the plan as Python does
    }
    return Source{Kind::kObject, 0, value};
  }

  static PyObject* TensorData(PyObject* t) {
    if (!PyObject_TypeCheck(t, g_tensor.type) || Slot(t, g_tensor.data_offset) == nullptr) {
      throw py::type_error("a trace step expected a Tensor in its slot");
    }
    return Slot(t, g_tensor.data_offset);
  }

  // The source of operand `k` of a FastPlan step: an argument, or an element of a sequence argument.
  static const Source& OperandSource(const Step& step, size_t k) {
    const auto [position, index] = step.fast->Arg(k);
    const Source& s = step.sources[position];
    return index >= 0 ? s.items[static_cast<size_t>(index)] : s;
  }

  // Whether each operand of a step's FastPlan with a 'take' is a source holding a Tensor.
  static bool TakesTensors(const Step& step) {
    for (const auto& [position, index] : step.fast->take_) {
      if (position >= step.sources.size()) return false;
      const Source& s = step.sources[position];
      const bool seq = s.kind == Kind::kSeq;
      if (seq != (index >= 0) || (seq && static_cast<size_t>(index) >= s.items.size())) return false;
      const Kind kind = seq ? s.items[static_cast<size_t>(index)].kind : s.kind;
      if (kind != Kind::kSlot && kind != Kind::kTensor) return false;
    }
    return true;
  }

  void RunFast(const Step& step, std::vector<py::object>& env) {
    std::array<PyObject*, kMaxStackTensors> arrays{};
    const FastPlan& fast = *step.fast;
    const size_t n = fast.Operands(step.sources.size());
    for (size_t i = 0; i < n; ++i) {
      const Source& s = OperandSource(step, i);
      switch (s.kind) {
        case Kind::kSlot: arrays[i] = TensorData(env[s.slot].ptr()); break;
        case Kind::kTensor: arrays[i] = TensorData(s.value.ptr()); break;
        default: arrays[i] = s.value.ptr(); break;
      }
    }
    const Launchable* kernel = fast.kernel_;
    const int view = kernel->view_of();
    PyObject* viewed = nullptr;  // the Tensor a view would be of: never a Parameter (written in place)
    if (view >= 0) {
      const Source& s = OperandSource(step, static_cast<size_t>(view));
      if (s.kind == Kind::kSlot) viewed = env[s.slot].ptr();
      if (s.kind == Kind::kTensor) viewed = s.value.ptr();
    }
    py::object out;
    if (viewed != nullptr && Py_TYPE(viewed) == g_tensor.type) {
      out = kernel->View(arrays[view]);
    } else {
      py::object reuse = step.arena >= 0 ? py::reinterpret_steal<py::object>(TakeBuffer(step.arena)) : py::object();
      out = step.fast->kernel_->LaunchArrays(arrays.data(), n, reuse.ptr());
    }
    const auto& metas = step.fast->metas_;
    if (!step.fast->written_.empty()) {
      StoreWritten(step, out, arrays, env);
      return;
    }
    if (metas.size() == 1) {
      if (!step.outputs.empty()) {
        env[static_cast<size_t>(step.outputs[0])] =
            py::reinterpret_steal<py::object>(NewTensor(out.ptr(), metas[0].ptr()));
      }
      return;
    }
    for (size_t i = 0; i < metas.size() && i < step.outputs.size(); ++i) {
      if (step.outputs[i] < 0) continue;
      env[static_cast<size_t>(step.outputs[i])] =
          py::reinterpret_steal<py::object>(NewTensor(PyTuple_GET_ITEM(out.ptr(), i), metas[i].ptr()));
    }
  }

  // An in-place step's outputs: each written output is the argument (a Parameter) the kernel wrote into,
  // whose version moves on (as the Python plan's wrapper does: a backward pass that saved it raises).
  void StoreWritten(const Step& step, const py::object& out, const std::array<PyObject*, kMaxStackTensors>& arrays,
                    std::vector<py::object>& env) {
    const auto& written = step.fast->written_;
    const size_t n_out = written.size();
    for (size_t i = 0; i < n_out; ++i) {
      PyObject* array = n_out == 1 ? out.ptr() : PyTuple_GET_ITEM(out.ptr(), static_cast<Py_ssize_t>(i));
      const int64_t w = written[i];
      py::object value;
      if (w < 0) {
        value = py::reinterpret_steal<py::object>(NewTensor(array, step.fast->metas_[i].ptr()));
      } else {
        if (array != arrays[static_cast<size_t>(w)]) throw std::runtime_error("an in-place kernel returned a new array");
        const Source& s = OperandSource(step, static_cast<size_t>(w));
        value = s.kind == Kind::kSlot ? env[s.slot] : s.value;
      }
      if (i < step.outputs.size() && step.outputs[i] >= 0) env[static_cast<size_t>(step.outputs[i])] = value;
    }
    // Each written argument once, returned or not, as the wrapper bumps each written position.
    for (int64_t w : written) {
      if (w >= 0) BumpVersion(step, static_cast<size_t>(w), env);
    }
    for (int64_t w : step.fast->also_written_) BumpVersion(step, static_cast<size_t>(w), env);
  }

  // The written argument `w` (a Parameter): its version moves on.
  void BumpVersion(const Step& step, size_t w, const std::vector<py::object>& env) {
    static PyObject* const version_str = PyUnicode_InternFromString("_version");
    const Source& s = OperandSource(step, w);
    PyObject* param = s.kind == Kind::kSlot ? env[s.slot].ptr() : s.value.ptr();
    py::object version = py::reinterpret_steal<py::object>(PyObject_GetAttr(param, version_str));
    if (!version) throw py::error_already_set();
    py::object next = py::reinterpret_steal<py::object>(PyNumber_Add(version.ptr(), py::int_(1).ptr()));
    if (!next || PyObject_SetAttr(param, version_str, next.ptr()) != 0) throw py::error_already_set();
  }

  // The value of a source for a plan's call (a new reference): a slot's Tensor, a constant, or the tuple
  // or list of a sequence's values.
  static PyObject* Value(const Source& s, const std::vector<py::object>& env) {
    if (s.kind == Kind::kSeq) {
      const auto n = static_cast<Py_ssize_t>(s.items.size());
      py::object seq = py::reinterpret_steal<py::object>(s.is_list ? PyList_New(n) : PyTuple_New(n));
      if (!seq) throw py::error_already_set();
      for (Py_ssize_t i = 0; i < n; ++i) {
        PyObject* item = Value(s.items[static_cast<size_t>(i)], env);
        if (s.is_list) {
          PyList_SET_ITEM(seq.ptr(), i, item);
        } else {
          PyTuple_SET_ITEM(seq.ptr(), i, item);
        }
      }
      return seq.release().ptr();
    }
    PyObject* v = s.kind == Kind::kSlot ? env[s.slot].ptr() : s.value.ptr();
    if (v == nullptr) throw py::value_error("a trace step reads a slot no step has written");
    Py_INCREF(v);
    return v;
  }

  static void RunPlanStep(const Step& step, std::vector<py::object>& env) {
    const size_t n = step.sources.size();
    py::tuple args(n);
    for (size_t i = 0; i < n; ++i) PyTuple_SET_ITEM(args.ptr(), static_cast<Py_ssize_t>(i), Value(step.sources[i], env));
    py::object out = py::reinterpret_steal<py::object>(PyObject_CallOneArg(step.plan.ptr(), args.ptr()));
    if (!out) throw py::error_already_set();
    if (step.single) {
      env[static_cast<size_t>(step.outputs[0])] = std::move(out);
      return;
    }
    if (step.outputs.empty()) return;
    if (!PyTuple_Check(out.ptr()) && !PyList_Check(out.ptr())) throw py::type_error("a trace step expected a tuple");
    py::sequence seq = py::reinterpret_borrow<py::sequence>(out);
    for (size_t i = 0; i < step.outputs.size() && i < seq.size(); ++i) {
      if (step.outputs[i] >= 0) env[static_cast<size_t>(step.outputs[i])] = seq[i];
    }
  }

  std::vector<Step> steps_;
};

// Whether Primitive._call would pass every argument on as it is: a Tensor, a Python number, a tuple
// of Tensors or a constant that ConstantKey takes (no NumPy scalar to make a Python number first).
bool AllPlain(PyObject* const* args, Py_ssize_t n) {
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (ArgKey(args[i]) == nullptr && !IsTensorSequence(args[i]) && !IsConstant(args[i])) return false;
  }
  return true;
}

PyObject* g_process_name = nullptr;  // "process_primitive", interned
PyObject* g_constant_inputs_name = nullptr;  // "constant_inputs", interned

// Whether a Tensor sits where the primitive takes a Python value (Primitive.constant_inputs, pairs of
// (position, name)): Primitive._call folds it to its value, so the call takes the Python path.
bool FoldsConstants(PyObject* primitive, PyObject* const* args, Py_ssize_t n) {
  PyObject* constants = PyObject_GetAttr(primitive, g_constant_inputs_name);
  if (constants == nullptr) {
    PyErr_Clear();
    return false;
  }
  bool folds = false;
  if (PyTuple_Check(constants)) {
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(constants) && !folds; ++k) {
      PyObject* pair = PyTuple_GET_ITEM(constants, k);
      if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) < 1) continue;
      const Py_ssize_t i = PyLong_AsSsize_t(PyTuple_GET_ITEM(pair, 0));
      if (i == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        continue;
      }
      folds = i >= 0 && i < n && PyObject_TypeCheck(args[i], g_tensor.type);
    }
  }
  Py_DECREF(constants);
  return folds;
}

// A call under an eager tape: the cached plan's result, recorded on the tape; None (a new reference)
// when the call has no cached plan yet; null on error.
PyObject* RecordedCall(PyObject* tape, PyObject* primitive, PyObject* call_args) {
  PyObject* const* items = &PyTuple_GET_ITEM(call_args, 0);
  const Py_ssize_t n = PyTuple_GET_SIZE(call_args);
  PyObject* plan = FindPlan(primitive, items, n);
  if (plan == nullptr) {
    PyErr_Clear();  // (as run_cached: the Python path finds or builds the plan, and reports)
    Py_RETURN_NONE;
  }
  PyObject* result = RunPlan(plan, items, n, call_args);
  Py_DECREF(plan);
  if (result != nullptr && tape::Record(tape, primitive, call_args, result) < 0) Py_CLEAR(result);
  return result;
}

PyObject* PrimitiveCall(PyObject* /*module*/, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  if (nargs >= 1 && kwnames == nullptr && t_interpreter == nullptr) {
    PyObject* plan = FindPlan(args[0], args + 1, nargs - 1);
    if (plan != nullptr) {
      PyObject* result = RunPlan(plan, args + 1, nargs - 1);
      Py_DECREF(plan);
      return result;
    }
  } else if (nargs >= 1 && kwnames == nullptr && AllPlain(args + 1, nargs - 1) &&
             !FoldsConstants(args[0], args + 1, nargs - 1)) {
    // Primitive._call's own work for these arguments: hand the call to the thread's interpreter.
    PyObject* call_args = PyTuple_New(nargs - 1);
    if (call_args == nullptr) return nullptr;
    for (Py_ssize_t i = 1; i < nargs; ++i) {
      Py_INCREF(args[i]);
      PyTuple_SET_ITEM(call_args, i - 1, args[i]);
    }
    if (tape::IsEagerTape(t_interpreter)) {  // Tape.process_primitive, in C: run the cached plan, record
      PyObject* result = RecordedCall(t_interpreter, args[0], call_args);
      if (result != Py_None) {
        Py_DECREF(call_args);
        return result;
      }
      Py_DECREF(result);  // no cached plan yet: the Python path builds it
    }
    PyObject* interpreter = t_interpreter;
    Py_INCREF(interpreter);  // the call may replace this thread's interpreter
    PyObject* result = PyObject_CallMethodObjArgs(interpreter, g_process_name, args[0], call_args, nullptr);
    Py_DECREF(interpreter);
    Py_DECREF(call_args);
    return result;
  }
  return PyObject_Vectorcall(g_slow_call, args, nargsf, kwnames);
}

// _C.run_cached(primitive, args): the call's cached plan run, whatever interpreter is installed
// (the bottom interpreter's eager evaluation); None when it has none yet.
PyObject* RunCached(PyObject* /*module*/, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 2 || !PyTuple_Check(args[1])) {
    PyErr_SetString(PyExc_TypeError, "run_cached(primitive, args: tuple)");
    return nullptr;
  }
  PyObject* const* items = &PyTuple_GET_ITEM(args[1], 0);
  const Py_ssize_t n = PyTuple_GET_SIZE(args[1]);
  PyObject* plan = FindPlan(args[0], items, n);
  if (plan == nullptr) Py_RETURN_NONE;
  PyObject* result = RunPlan(plan, items, n, args[1]);
  Py_DECREF(plan);
  return result;
}

PyMethodDef g_run_cached_def = {"run_cached", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(RunCached)),
                                METH_FASTCALL,
                                "run_cached(primitive, args): the cached plan's result, or None when there is none."};

// FastPlan's tp_call: plan(args) without pybind11's dispatch (the slow call path calls plans so).
PyObject* FastPlanCall(PyObject* self, PyObject* args, PyObject* kwargs) {
  if ((kwargs != nullptr && PyDict_GET_SIZE(kwargs) != 0) || PyTuple_GET_SIZE(args) != 1 ||
      !PyTuple_Check(PyTuple_GET_ITEM(args, 0))) {
    PyErr_SetString(PyExc_TypeError, "a FastPlan is called with one tuple of arguments: plan(args)");
    return nullptr;
  }
  PyObject* call_args = PyTuple_GET_ITEM(args, 0);
  return RunPlan(self, &PyTuple_GET_ITEM(call_args, 0), PyTuple_GET_SIZE(call_args), call_args);
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
  {
    py::object tensor_module = py::module_::import("opforge.tensor");
    if (py::hasattr(tensor_module, "PlaceholderError")) {
      g_placeholder_error = py::object(tensor_module.attr("PlaceholderError")).release().ptr();
    }
  }
  g_plans_name = PyUnicode_InternFromString("_plans");
  g_adopt_name = PyUnicode_InternFromString("_adopt_plans");
  g_attrs_key_name = PyUnicode_InternFromString("_attrs_key");
  g_process_name = PyUnicode_InternFromString("process_primitive");
  g_constant_inputs_name = PyUnicode_InternFromString("constant_inputs");
  g_weak_positions_name = PyUnicode_InternFromString("_weak_positions");
  g_tensors_str = PyUnicode_InternFromString("tensors");
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
  blas::SetNumThreads(1);  // OpenBLAS stays on one thread (threadpoolctl may have set it): blas::Sgemm splits
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
  auto& kernel_error = py::register_exception<KernelError>(m, "KernelError", PyExc_RuntimeError);
  // (registered after its base: pybind11 tries the translators newest first)
  auto& comm_error = py::register_exception<CommunicationError>(m, "CommunicationError", kernel_error.ptr());
  comm_error.attr("__doc__") =
      "A collective failed: ranks disagree on attrs, dtypes or shapes, a rank did not come in time, or the "
      "communication library failed.";
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
  m.def(
      "broadcast_plan",
      [](const std::string& op, const std::vector<int64_t>& a, const std::vector<int64_t>& b,
         const std::vector<int64_t>& out) {
        BroadcastPlan plan;
        plan.Init(op, a, b, out);
        return py::make_tuple(static_cast<int>(plan.kind), plan.numel, plan.shape, plan.a_strides, plan.b_strides);
      },
      py::arg("op"), py::arg("a"), py::arg("b"), py::arg("out"),
      "(kind, numel, shape, a_strides, b_strides) of BroadcastPlan: kind 0 same, 1 scalar a, 2 scalar b, "
      "3 general (merged dims and element strides, 0 where broadcast).");
  m.def("load_blas", &blas::Load, py::arg("path"), py::arg("prefix"));
  m.def("blas_loaded", &blas::Loaded);
  m.def("blas_core", &blas::CoreName, "The CPU kernels OpenBLAS runs (its core name), or '' when it cannot tell.");
  m.def("set_num_threads", &SetNumThreads, py::arg("n"),
        "Set the threads every parallel kernel region (and BLAS) uses, in every thread of the process.");
  m.def("get_num_threads", &runtime::NumThreads, "The threads a parallel kernel region uses now.");
  m.def("in_forked_child", &runtime::ForkedChild,
        "True in a process forked from one that imported opforge: kernels run on one thread there.");
  m.def("_parallel_team_size", &ParallelTeamSize, py::arg("n"),
        "Test hook: the number of threads a parallel region over n elements runs on.");

  py::class_<Launchable>(m, "Launchable", "A kernel fixed to its metas and attrs, which a FastPlan runs.");
  device_launch::Bind(m);
  py::class_<KernelInstance, Launchable>(m, "KernelInstance")
      .def(py::init<size_t, const std::string&, const std::vector<std::vector<int64_t>>&, const std::vector<int32_t>&,
                    const std::vector<py::dtype>&, const std::vector<std::vector<int64_t>>&,
                    const std::vector<int32_t>&, const std::vector<py::dtype>&, const py::dict&,
                    const std::vector<int>&>(),
           py::arg("index"), py::arg("op_name"), py::arg("in_shapes"), py::arg("in_types"), py::arg("in_dtypes"),
           py::arg("out_shapes"), py::arg("out_types"), py::arg("out_dtypes"), py::arg("attrs"),
           py::arg("inplace"))
      .def("launch", &KernelInstance::Launch, py::arg("inputs"))
      .def_property("view_of", &KernelInstance::view_of, &KernelInstance::set_view_of,
                    "The input the one output is a view of (Reshape and the like), or -1.")
      .def(
          "view", [](const KernelInstance& k, py::object array) { return k.View(array.ptr()); }, py::arg("array"),
          "The output as a view of the input array (view_of set).");

  py::class_<FastPlan>(m, "FastPlan", py::custom_type_setup([](PyHeapTypeObject* type) {
                         type->ht_type.tp_call = FastPlanCall;
                       }))
      .def(py::init<py::object, std::vector<py::object>, const std::vector<std::pair<size_t, py::dtype>>&,
                    py::object, std::vector<int64_t>, std::vector<Operand>, std::vector<int64_t>>(),
           py::arg("instance"), py::arg("out_metas"), py::arg("scalars") = std::vector<std::pair<size_t, py::dtype>>(),
           py::arg("convert") = py::none(), py::arg("written") = std::vector<int64_t>(),
           py::arg("take") = std::vector<Operand>(), py::arg("also_written") = std::vector<int64_t>())
      .def_readwrite("kernel", &FastPlan::kernel_label);
  g_fast_plan_type = reinterpret_cast<PyTypeObject*>(py::type::of<FastPlan>().ptr());
  py::class_<FusedCall>(m, "FusedCall", py::custom_type_setup([](PyHeapTypeObject* type) {
                          type->ht_type.tp_call = FusedCallCall;
                        }))
      .def(py::init<uintptr_t, py::object, size_t, std::vector<py::object>, const std::vector<py::dtype>&,
                    const std::vector<std::vector<int64_t>>&, std::vector<double>, int64_t>(),
           py::arg("address"), py::arg("keep_alive"), py::arg("n_inputs"), py::arg("out_metas"), py::arg("out_dtypes"),
           py::arg("out_shapes"), py::arg("scalars"), py::arg("n"));
  g_fused_call_type = reinterpret_cast<PyTypeObject*>(py::type::of<FusedCall>().ptr());
  py::class_<Program>(m, "Program")
      .def(py::init<size_t, const py::list&, std::vector<size_t>>(), py::arg("n_slots"), py::arg("steps"),
           py::arg("returns"))
      .def("run", &Program::Run, py::arg("inputs"), "Run the steps on the input Tensors; the returned slots' values.")
      .def("__len__", &Program::size)
      .def("native", &Program::native, "Per step: whether it runs without entering Python.");
  m.def("make_primitive_call", &MakePrimitiveCall, py::arg("tensor_type"), py::arg("slow_call"),
        "The C implementation of Primitive.__call__ (the cached fast path).");
  m.add_object("run_cached", py::reinterpret_steal<py::object>(PyCFunction_New(&g_run_cached_def, nullptr)));
  m.def("set_plan_sharing", [](py::dict shared_plans, py::object freeze) {
    Py_XDECREF(g_shared_plans);
    Py_XDECREF(g_freeze);
    g_shared_plans = shared_plans.inc_ref().ptr();
    g_freeze = freeze.inc_ref().ptr();
  }, py::arg("shared_plans"), py::arg("freeze"),
        "The dict of shared plans dicts, and freeze(prim_name, name, value) for the attrs keys cannot encode.");
  m.def("freeze_attrs", [](py::object prim_name, py::object attrs) {
    PyObject* key = FreezeAttrs(prim_name.ptr(), attrs.ptr());
    if (key == nullptr) throw py::error_already_set();
    return py::reinterpret_steal<py::object>(key);
  }, py::arg("prim_name"), py::arg("attrs"), "A hashable key of a primitive's attrs.");
  m.def("set_dtype_class", [](py::type cls) {
    Py_XDECREF(reinterpret_cast<PyObject*>(g_dtype_class));
    g_dtype_class = reinterpret_cast<PyTypeObject*>(cls.inc_ref().ptr());
  }, py::arg("cls"), "The class of opforge's dtypes: keys encode them by type id.");
  m.def("sequence_key", [](py::object value) {
    PyObject* key = SequenceKey(value.ptr());
    return key != nullptr ? py::reinterpret_steal<py::object>(key) : py::none();
  }, py::arg("value"), "The cache key of a non-empty tuple or list of Tensors, else None.");
  m.def("constant_key", [](py::object value) {
    PyObject* key = ConstantKey(value.ptr());
    return key != nullptr ? py::reinterpret_steal<py::object>(key) : py::none();
  }, py::arg("value"), "The cache key of a constant argument (bytes), or None where the Python path keys it.");
  m.def("attrs_key", [](py::object prim) {
    PyObject* key = AttrsKey(prim.ptr());
    if (key == nullptr) throw py::error_already_set();
    return py::reinterpret_steal<py::object>(key);
  }, py::arg("primitive"), "(class, name, frozen attrs, device): the key under which primitives share plans.");
  m.def("make_binary_operator", &MakeBinaryOperator, py::arg("name"), py::arg("primitive"), py::arg("reflected"),
        py::arg("fallback"), "A Tensor operator method calling `primitive` through the fast path.");
  m.def("set_interpreter", &SetInterpreter, py::arg("interpreter"),
        "Install this thread's innermost interpreter (None: eager); returns the previous one.");
  m.def("current_interpreter", &CurrentInterpreter, "This thread's innermost interpreter, or None (eager).");
  tape::Bind(m);
}
