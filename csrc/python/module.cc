// opforge._C: the kernel factory, kernel instances and their launch, for Python.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <array>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "core/blas.h"
#include "core/factory.h"
#include "opforge/kernel.h"

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
};

// One kernel specialised for fixed attrs and input metas (built once, launched many times).
class KernelInstance {
 public:
  KernelInstance(size_t index, const std::string& op_name, const std::vector<std::vector<int64_t>>& in_shapes,
                 const std::vector<int32_t>& in_types, const std::vector<py::dtype>& in_np,
                 const std::vector<std::vector<int64_t>>& out_shapes, const std::vector<int32_t>& out_types,
                 const std::vector<py::dtype>& out_np, const py::dict& attrs, const std::vector<int>& inplace)
      : entry_(KernelFactory::Instance().entry(index)), op_name_(op_name), attrs_(attrs), inplace_(inplace) {
    for (size_t i = 0; i < in_shapes.size(); ++i) inputs_.push_back(Plan(in_shapes[i], in_types[i], in_np[i]));
    for (size_t i = 0; i < out_shapes.size(); ++i) outputs_.push_back(Plan(out_shapes[i], out_types[i], out_np[i]));
    CheckAgainstDef(in_types, in_np, out_types, out_np);
    if (inplace_.empty()) inplace_.assign(outputs_.size(), -1);
    if (inplace_.size() != outputs_.size()) throw py::value_error("inplace map must have one entry per output");
    for (int src : inplace_) {
      if (src >= static_cast<int>(inputs_.size())) throw py::value_error("inplace map names a missing input");
    }
    for (const auto& t : outputs_) total_elements_ += t.numel;
    std::vector<OpfTensor> in = Metas(inputs_), out = Metas(outputs_);
    char err[2048] = {0};
    kernel_ = entry_.def->create(op_name_.c_str(), in.data(), static_cast<int32_t>(in.size()), out.data(),
                                 static_cast<int32_t>(out.size()), attrs_.data(), attrs_.size(), err, sizeof(err));
    if (kernel_ == nullptr) throw KernelError(err);
  }

  ~KernelInstance() {
    if (kernel_ != nullptr) entry_.def->destroy(kernel_);
  }

  KernelInstance(const KernelInstance&) = delete;
  KernelInstance& operator=(const KernelInstance&) = delete;

  // Runs the kernel on NumPy arrays; returns one array or a tuple of them. This is the hot path
  // of every primitive call: raw NumPy API, no temporaries, messages built only on failure.
  py::object Launch(const py::tuple& args) {
    const size_t n_in = args.size(), n_out = outputs_.size();
    if (n_in != inputs_.size()) {
      throw py::value_error("For '" + op_name_ + "', the kernel expects " + std::to_string(inputs_.size()) +
                            " inputs, but got " + std::to_string(n_in) + ".");
    }
    if (n_in > kMaxStackTensors || n_out > kMaxStackTensors) throw py::value_error("too many kernel operands");
    std::array<OpfTensor, kMaxStackTensors> in{}, out{};
    std::array<py::object, kMaxStackTensors> out_arrays;
    for (size_t i = 0; i < n_in; ++i) in[i] = Check(args[i].ptr(), i);
    const auto& api = py::detail::npy_api::get();
    for (size_t i = 0; i < n_out; ++i) {
      const PlannedTensor& t = outputs_[i];
      if (inplace_[i] >= 0) {
        PyObject* target = args[inplace_[i]].ptr();
        if (!(py::detail::array_proxy(target)->flags & py::detail::npy_api::NPY_ARRAY_WRITEABLE_)) {
          throw py::value_error("For '" + op_name_ + "', the input " + std::to_string(inplace_[i]) +
                                " is written in place, but its array is read-only.");
        }
        out_arrays[i] = py::reinterpret_borrow<py::object>(target);
      } else {
        PyObject* descr = t.np_dtype.inc_ref().ptr();  // NewFromDescr steals a reference
        out_arrays[i] = py::reinterpret_steal<py::object>(api.PyArray_NewFromDescr_(
            api.PyArray_Type_, descr, static_cast<int>(t.shape.size()),
            reinterpret_cast<const Py_intptr_t*>(t.shape.data()), nullptr, nullptr, 0, nullptr));
        if (!out_arrays[i]) throw py::error_already_set();
      }
      out[i] = Tensor(py::detail::array_proxy(out_arrays[i].ptr())->data, t);
    }
    char err[2048];
    err[0] = '\0';
    int32_t status;
    if (total_elements_ >= kReleaseGilElements) {
      py::gil_scoped_release release;
      status = entry_.def->launch(kernel_, in.data(), static_cast<int32_t>(n_in), out.data(),
                                  static_cast<int32_t>(n_out), err, sizeof(err));
    } else {
      status = entry_.def->launch(kernel_, in.data(), static_cast<int32_t>(n_in), out.data(),
                                  static_cast<int32_t>(n_out), err, sizeof(err));
    }
    if (status != 0) throw KernelError(err);
    if (n_out == 1) return std::move(out_arrays[0]);
    py::tuple result(n_out);
    for (size_t i = 0; i < n_out; ++i) result[i] = std::move(out_arrays[i]);
    return std::move(result);
  }

 private:
  static PlannedTensor Plan(const std::vector<int64_t>& shape, int32_t type_id, const py::dtype& np_dtype) {
    int64_t numel = 1;
    for (int64_t d : shape) numel *= d;
    return PlannedTensor{shape, type_id, np_dtype, numel};
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
    return Tensor(a->data, want);
  }

  // The planned metas must be what the kernel was registered for: a mismatch would make it read
  // memory as the wrong type.
  void CheckAgainstDef(const std::vector<int32_t>& in_types, const std::vector<py::dtype>& in_np,
                       const std::vector<int32_t>& out_types, const std::vector<py::dtype>& out_np) const {
    const OpfKernelDef* d = entry_.def;
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

  std::string Where(size_t i) const { return "For '" + op_name_ + "', the kernel's input " + std::to_string(i); }

  const KernelEntry& entry_;
  std::string op_name_;
  OwnedAttrs attrs_;
  std::vector<int> inplace_;
  std::vector<PlannedTensor> inputs_;
  std::vector<PlannedTensor> outputs_;
  int64_t total_elements_ = 0;
  void* kernel_ = nullptr;
};

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
#ifdef _OPENMP
  omp_set_num_threads(n);
#endif
  blas::SetNumThreads(n);
}

int GetNumThreads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

}  // namespace
}  // namespace opforge

PYBIND11_MODULE(_C, m) {
  using namespace opforge;
  m.doc() = "opforge core: kernel factory, kernel instances, BLAS and threads";
  py::register_exception<KernelError>(m, "KernelError", PyExc_RuntimeError);

  for (int32_t id = kNumberTypeBool; id < kNumberTypeEnd; ++id) {
    m.attr((std::string("kNumberType") + TypeIdName(id)).c_str()) = id;
  }
  m.attr("kTypeUnknown") = static_cast<int>(kTypeUnknown);
  m.attr("KERNEL_ABI_VERSION") = OPFORGE_KERNEL_ABI_VERSION;

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
  m.def("load_library", [](const std::string& path) { return Describe(KernelFactory::Instance().LoadLibrary(path)); },
        py::arg("path"), "Load a kernel library and return the kernels it registered.");
  m.def("load_blas", &blas::Load, py::arg("path"), py::arg("prefix"));
  m.def("blas_loaded", &blas::Loaded);
  m.def("set_num_threads", &SetNumThreads, py::arg("n"));
  m.def("get_num_threads", &GetNumThreads);

  py::class_<KernelInstance>(m, "KernelInstance")
      .def(py::init<size_t, const std::string&, const std::vector<std::vector<int64_t>>&, const std::vector<int32_t>&,
                    const std::vector<py::dtype>&, const std::vector<std::vector<int64_t>>&,
                    const std::vector<int32_t>&, const std::vector<py::dtype>&, const py::dict&,
                    const std::vector<int>&>(),
           py::arg("index"), py::arg("op_name"), py::arg("in_shapes"), py::arg("in_types"), py::arg("in_dtypes"),
           py::arg("out_shapes"), py::arg("out_types"), py::arg("out_dtypes"), py::arg("attrs"),
           py::arg("inplace"))
      .def("launch", &KernelInstance::Launch, py::arg("inputs"));
}
