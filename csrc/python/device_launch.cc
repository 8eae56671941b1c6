// DeviceLaunch: one GPU call of fixed metas and attrs, as data. Its outputs and temporaries are
// allocated by the runtime (`runtime.empty`), its kernels launched in order through the runtime's
// native entry point: cuLaunchKernel for CUDA (CuPy's compiled functions), the host emulation's
// launcher in the tests. Both take kernel parameters as CUDA does: an array of pointers, each at
// the bytes of one parameter. A step may instead be a GEMM (MatMul), called through cuBLAS's
// cublasGemmEx / cublasGemmStridedBatchedEx or the emulation's functions of the same signatures.
// A step may also be a check (Gather's indices, a loss's labels): the kernels before it left the least
// position of a bad value in a device word, which is read back (a copy to the host, the one
// synchronisation of such a call) and, where it moved, handed to the step's Python error.
// While this thread captures a device graph, launches go through `runtime.launch` (a GEMM through
// its Python fallback, `runtime.matmul`; a check through its own, which the graph runs after each
// launch) instead, so the runtime sees (and records) each of them.
#include "python/device_launch.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "opforge/kernel.h"
#include "python/launchable.h"

namespace py = pybind11;

namespace opforge {
namespace device_launch {
namespace {

constexpr size_t kMaxParams = 64;  // kernel parameters of one launch
thread_local int g_paused = 0;     // > 0 while this thread captures a device graph
std::atomic<uint64_t> g_launches{0};  // native launches made, for tests and the bench

// The runtime's native entry points (GpuRuntime.native_function).
enum class EntryKind { kDriver, kHost };
using HostLaunch = int (*)(const unsigned* grid, const unsigned* block, void** args, size_t shared);
using HostError = const char* (*)();
using DriverLaunch = int (*)(void* function, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                             unsigned bz, unsigned shared, void* stream, void** params, void** extra);
using DriverError = int (*)(int status, const char** message);
// cuBLAS's GEMMs (GpuRuntime.native_gemm): cublasGemmEx, cublasGemmStridedBatchedEx, cublasSetStream_v2.
using GemmEx = int (*)(void* handle, int op_a, int op_b, int m, int n, int k, const void* alpha, const void* a,
                       int a_type, int lda, const void* b, int b_type, int ldb, const void* beta, void* c, int c_type,
                       int ldc, int compute, int algo);
using GemmStridedEx = int (*)(void* handle, int op_a, int op_b, int m, int n, int k, const void* alpha,
                              const void* a, int a_type, int lda, long long stride_a, const void* b, int b_type,
                              int ldb, long long stride_b, const void* beta, void* c, int c_type, int ldc,
                              long long stride_c, int batch, int compute, int algo);
using SetStream = int (*)(void* handle, void* stream);
// The driver's copy to the host and stream synchronisation (GpuRuntime.native_read).
using CopyToHost = int (*)(void* dst, uintptr_t src, size_t bytes, void* stream);
using SyncStream = int (*)(void* stream);
constexpr int kGemmDefaultAlgo = -1;

// A GEMM step's fixed arguments (opforge/device/cublas.py's GemmPlan): row-major out = op(a) @ op(b) as
// column-major out^T = op(b)^T op(a)^T, so b is cuBLAS's first operand.
struct Gemm {
  int op_b = 0, op_a = 0, n = 0, m = 0, k = 0, ldb = 0, lda = 0, ldc = 0, batch = 0, data_type = 0, compute = 0;
  long long stride_b = 0, stride_a = 0, stride_c = 0;
  std::max_align_t alpha{}, beta{};  // 1 and 0 in the compute type's scalar
  void* gemm = nullptr;              // GemmEx (batch 1)
  void* strided = nullptr;           // GemmStridedEx
  py::object handle;                 // () -> the thread's cuBLAS handle; None on the host
  void* set_stream = nullptr;
  py::object fallback;               // (a, b, out) through the runtime, while a graph is captured
  std::array<size_t, 3> offsets{};   // bytes from each array's start to its operand (a sample of a batch)
};

struct Param {
  enum Kind { kInput, kOutput, kTemp, kValue } kind;
  size_t index = 0;        // of the input, output or temporary
  size_t offset = 0;       // kValue: where its bytes start in the step's value storage
};

// A check step's fixed parts: the device word (a uint64 temporary) holds the least bad position, or
// `none` where every value was good.
struct Check {
  uint64_t none = 0;
  py::object error;     // (position, inputs) -> the exception to raise
  py::object fallback;  // (word, inputs): the same check through the runtime (after a graph's launch)
  EntryKind kind = EntryKind::kHost;
  void* copy = nullptr;  // CopyToHost (driver)
  void* sync = nullptr;  // SyncStream (driver)
};

struct Step {
  bool is_gemm = false;   // a GEMM (gemm below, params a, b, out) instead of a kernel launch
  bool is_check = false;  // a check (check below, param the word)
  Gemm gemm;
  Check check;
  py::object function;  // the runtime's function (kept alive; the fallback launches it)
  std::string name;
  EntryKind kind = EntryKind::kHost;
  void* entry = nullptr;
  void* handle = nullptr;  // the CUfunction (driver)
  void* error = nullptr;
  std::array<unsigned, 3> grid{}, block{};
  unsigned shared = 0;
  std::vector<Param> params;
  std::vector<std::max_align_t> values;  // the constant parameters' bytes, aligned for any type
  py::tuple fallback_values;             // the same constants as the runtime's launch takes them
};

struct Buffer {
  py::tuple empty_args;  // (shape, dtype) for runtime.empty
  int64_t input = -1;    // an output written into this input (an optimizer's Parameter), not allocated
};

uintptr_t Address(const py::handle& value) {
  return static_cast<uintptr_t>(value.cast<unsigned long long>());
}

class DeviceLaunch : public Launchable {
 public:
  // outputs, temps: [(shape, NumPy dtype)], an output ("in", i) being input i, written in place;
  // steps: [(function, grid, block, shared, params)], a param being ("in", i), ("out", j), ("tmp", k)
  // or a NumPy scalar passed by value.
  DeviceLaunch(std::string op_name, py::object runtime, size_t n_inputs, const py::list& outputs,
               const py::list& temps, const py::list& steps)
      : op_name_(std::move(op_name)), runtime_(std::move(runtime)), n_inputs_(n_inputs) {
    empty_ = runtime_.attr("empty");
    launch_ = runtime_.attr("launch");
    for (const auto& name : runtime_.attr("native_pointer").cast<py::tuple>()) {
      pointer_path_.push_back(py::reinterpret_steal<py::object>(PyUnicode_InternFromString(name.cast<std::string>().c_str())));
    }
    py::object stream = runtime_.attr("native_stream");
    if (!stream.is_none()) stream_ = stream;
    outputs_ = Buffers(outputs, true);
    temps_ = Buffers(temps, false);
    if (outputs_.empty()) throw py::value_error("For '" + op_name_ + "', a DeviceLaunch needs an output.");
    for (const auto& item : steps) steps_.push_back(MakeStep(item.cast<py::tuple>()));
  }

  py::object LaunchArrays(PyObject* const* args, size_t n_in, PyObject* /*reuse*/) override {
    if (n_in != n_inputs_) {
      throw py::value_error("For '" + op_name_ + "', the kernel expects " + std::to_string(n_inputs_) +
                            " inputs, but got " + std::to_string(n_in) + ".");
    }
    std::vector<py::object> outs = Allocate(outputs_, args), temps = Allocate(temps_, args);
    if (g_paused > 0) {
      LaunchThroughRuntime(args, outs, temps);
    } else {
      LaunchNatively(args, outs, temps);
    }
    if (outs.size() == 1) return std::move(outs[0]);
    py::tuple result(outs.size());
    for (size_t i = 0; i < outs.size(); ++i) result[i] = std::move(outs[i]);
    return std::move(result);
  }

  py::object Launch(const py::tuple& arrays) {
    return LaunchArrays(&PyTuple_GET_ITEM(arrays.ptr(), 0), static_cast<size_t>(PyTuple_GET_SIZE(arrays.ptr())),
                        nullptr);
  }

  size_t launches() const {
    size_t n = 0;
    for (const Step& step : steps_) n += step.is_check ? 0 : 1;
    return n;
  }

 private:
  std::vector<Buffer> Buffers(const py::list& specs, bool outputs) const {
    std::vector<Buffer> out;
    for (const auto& item : specs) {
      auto spec = item.cast<py::tuple>();
      if (outputs && py::isinstance<py::str>(spec[0])) {
        const auto input = spec[1].cast<int64_t>();
        if (spec[0].cast<std::string>() != "in" || input < 0 || static_cast<size_t>(input) >= n_inputs_) {
          throw py::value_error("For '" + op_name_ + "', an output written in place names a missing input");
        }
        out.push_back(Buffer{py::tuple(), input});
        continue;
      }
      out.push_back(Buffer{py::make_tuple(py::tuple(spec[0]), py::dtype::from_args(spec[1])), -1});
    }
    return out;
  }

  Step MakeStep(const py::tuple& item) const {
    if ((item.size() == 4 || item.size() == 5) && py::isinstance<py::str>(item[0]) &&
        item[0].cast<std::string>() == "gemm") {
      return MakeGemmStep(item);
    }
    if (item.size() == 5 && py::isinstance<py::str>(item[0]) && item[0].cast<std::string>() == "check") {
      return MakeCheckStep(item);
    }
    if (item.size() != 5) throw py::value_error("a DeviceLaunch step is (function, grid, block, shared, params)");
    Step step;
    step.function = item[0];
    step.name = py::str(py::getattr(step.function, "name", py::str("?")));
    auto target = runtime_.attr("native_function")(step.function).cast<py::tuple>();
    const auto kind = target[0].cast<std::string>();
    if (kind != "driver" && kind != "host") throw py::value_error("a native entry point is 'driver' or 'host'");
    step.kind = kind == "driver" ? EntryKind::kDriver : EntryKind::kHost;
    step.entry = reinterpret_cast<void*>(Address(target[1]));
    step.handle = reinterpret_cast<void*>(Address(target[2]));
    step.error = reinterpret_cast<void*>(Address(target[3]));
    if (step.entry == nullptr) throw py::value_error("the runtime gave no native entry point");
    step.grid = item[1].cast<std::array<unsigned, 3>>();
    step.block = item[2].cast<std::array<unsigned, 3>>();
    step.shared = item[3].cast<unsigned>();
    auto params = item[4].cast<py::list>();
    if (params.size() > kMaxParams) throw py::value_error("a kernel takes at most 64 parameters here");
    std::vector<std::string> bytes;  // each constant's bytes, packed below
    std::vector<py::object> fallback;
    for (const auto& p : params) {
      if (py::isinstance<py::tuple>(p)) {
        step.params.push_back(ArrayParam(p.cast<py::tuple>()));
        fallback.push_back(py::reinterpret_borrow<py::object>(p));  // replaced by the array at launch
      } else {
        py::buffer_info info = py::array::ensure(p).request();
        const auto* data = static_cast<const char*>(info.ptr);
        std::string b(data, data + info.size * info.itemsize);
        if (b.empty()) b.push_back('\0');  // an empty struct is one byte in C++
        step.params.push_back(Param{Param::kValue, bytes.size(), 0});
        bytes.push_back(std::move(b));
        fallback.push_back(py::reinterpret_borrow<py::object>(p));
      }
    }
    size_t total = 0;
    std::vector<size_t> offsets;
    for (const auto& b : bytes) {
      offsets.push_back(total);
      total += (b.size() + alignof(std::max_align_t) - 1) / alignof(std::max_align_t) * alignof(std::max_align_t);
    }
    step.values.resize(total / sizeof(std::max_align_t) + 1);
    auto* base = reinterpret_cast<char*>(step.values.data());
    for (auto& param : step.params) {
      if (param.kind != Param::kValue) continue;
      const size_t k = param.index;
      param.offset = offsets[k];
      std::memcpy(base + param.offset, bytes[k].data(), bytes[k].size());
    }
    step.fallback_values = py::tuple(py::cast(fallback));
    return step;
  }

  // ("in", i), ("out", j) or ("tmp", k), checked against the call's arrays.
  Param ArrayParam(const py::tuple& ref) const {
    const auto what = ref[0].cast<std::string>();
    const size_t index = ref[1].cast<size_t>();
    const size_t limit = what == "in" ? n_inputs_ : what == "out" ? outputs_.size() : temps_.size();
    if ((what != "in" && what != "out" && what != "tmp") || index >= limit) {
      throw py::value_error("For '" + op_name_ + "', a kernel parameter names a missing array");
    }
    return Param{what == "in" ? Param::kInput : what == "out" ? Param::kOutput : Param::kTemp, index, 0};
  }

  // ("gemm", plan, [a, b, out], fallback[, byte offsets of a, b, out]): plan is GemmPlan's fields in order
  // (cublas.py); the fallback takes the arrays themselves and applies the offsets itself.
  Step MakeGemmStep(const py::tuple& item) const {
    Step step;
    step.is_gemm = true;
    step.name = "GEMM";
    Gemm& g = step.gemm;
    auto plan = item[1].cast<py::tuple>();
    if (plan.size() != 16) throw py::value_error("a GEMM step's plan has GemmPlan's 16 fields");
    auto i = [&](size_t k) { return plan[k].cast<int>(); };
    auto ll = [&](size_t k) { return plan[k].cast<long long>(); };
    g.op_b = i(0), g.op_a = i(1), g.n = i(2), g.m = i(3), g.k = i(4);
    g.ldb = i(5), g.stride_b = ll(6), g.lda = i(7), g.stride_a = ll(8), g.ldc = i(9), g.stride_c = ll(10);
    g.batch = i(11), g.data_type = i(12), g.compute = i(13);
    for (auto [k, target] : {std::pair<size_t, std::max_align_t*>{14, &g.alpha}, {15, &g.beta}}) {
      const auto bytes = plan[k].cast<std::string>();
      if (bytes.size() > sizeof(std::max_align_t)) throw py::value_error("a GEMM scalar is at most 16 bytes");
      std::memcpy(target, bytes.data(), bytes.size());
    }
    auto entries = runtime_.attr("native_gemm")().cast<py::tuple>();
    g.gemm = reinterpret_cast<void*>(Address(entries[1]));
    g.strided = reinterpret_cast<void*>(Address(entries[2]));
    g.handle = entries[3];
    g.set_stream = reinterpret_cast<void*>(Address(entries[4]));
    if (g.gemm == nullptr || g.strided == nullptr) throw py::value_error("the runtime gave no native GEMM");
    auto params = item[2].cast<py::list>();
    if (params.size() != 3) throw py::value_error("a GEMM step's params are [a, b, out]");
    for (const auto& p : params) step.params.push_back(ArrayParam(p.cast<py::tuple>()));
    g.fallback = item[3];
    if (item.size() == 5) g.offsets = item[4].cast<std::array<size_t, 3>>();
    return step;
  }

  // ("check", word, none, error, fallback): word a ("tmp", k) of one uint64.
  Step MakeCheckStep(const py::tuple& item) const {
    Step step;
    step.is_check = true;
    step.name = "check";
    step.params.push_back(ArrayParam(item[1].cast<py::tuple>()));
    if (step.params[0].kind != Param::kTemp) throw py::value_error("a check step reads a temporary");
    Check& c = step.check;
    c.none = item[2].cast<uint64_t>();
    c.error = item[3];
    c.fallback = item[4];
    auto entries = runtime_.attr("native_read")().cast<py::tuple>();
    const auto kind = entries[0].cast<std::string>();
    if (kind != "driver" && kind != "host") throw py::value_error("a native read is 'driver' or 'host'");
    c.kind = kind == "driver" ? EntryKind::kDriver : EntryKind::kHost;
    c.copy = reinterpret_cast<void*>(Address(entries[1]));
    c.sync = reinterpret_cast<void*>(Address(entries[2]));
    if (c.kind == EntryKind::kDriver && (c.copy == nullptr || c.sync == nullptr)) {
      throw py::value_error("the runtime gave no native copy to the host");
    }
    return step;
  }

  std::vector<py::object> Allocate(const std::vector<Buffer>& buffers, PyObject* const* args) const {
    std::vector<py::object> out;
    out.reserve(buffers.size());
    for (const auto& b : buffers) {
      if (b.input >= 0) {
        out.push_back(py::reinterpret_borrow<py::object>(args[b.input]));
        continue;
      }
      PyObject* array = PyObject_Call(empty_.ptr(), b.empty_args.ptr(), nullptr);
      if (array == nullptr) throw py::error_already_set();
      out.push_back(py::reinterpret_steal<py::object>(array));
    }
    return out;
  }

  // The device address of a runtime array: the runtime's attribute path ends at an int or at a
  // NumPy array (the emulation's host buffer), whose data it is.
  void* Pointer(PyObject* array, const char* what, size_t i) const {
    py::object value = py::reinterpret_borrow<py::object>(array);
    for (const auto& name : pointer_path_) {
      PyObject* next = PyObject_GetAttr(value.ptr(), name.ptr());
      if (next == nullptr) {
        PyErr_Clear();
        throw py::type_error("For '" + op_name_ + "', the kernel's " + what + " " + std::to_string(i) +
                             " must be an array of the GPU runtime, but got " + Py_TYPE(array)->tp_name + ".");
      }
      value = py::reinterpret_steal<py::object>(next);
    }
    if (py::detail::npy_api::get().PyArray_Check_(value.ptr())) return py::detail::array_proxy(value.ptr())->data;
    void* address = PyLong_AsVoidPtr(value.ptr());
    if (address == nullptr && PyErr_Occurred()) throw py::error_already_set();
    return address;
  }

  void LaunchNatively(PyObject* const* args, const std::vector<py::object>& outs,
                      const std::vector<py::object>& temps) const {
    std::array<void*, kMaxParams> few{};  // the inputs' addresses: on the stack unless there are many (a Concat)
    std::vector<void*> many(n_inputs_ > kMaxParams ? n_inputs_ : 0);
    void** inputs = n_inputs_ > kMaxParams ? many.data() : few.data();
    std::vector<void*> out_ptrs(outs.size()), temp_ptrs(temps.size());
    for (size_t i = 0; i < n_inputs_; ++i) inputs[i] = Pointer(args[i], "input", i);
    for (size_t i = 0; i < outs.size(); ++i) out_ptrs[i] = Pointer(outs[i].ptr(), "output", i);
    for (size_t i = 0; i < temps.size(); ++i) temp_ptrs[i] = Pointer(temps[i].ptr(), "temporary", i);
    void* stream = nullptr;
    if (stream_) stream = reinterpret_cast<void*>(Address(stream_()));
    GemmHandle gemm_handle;  // the cuBLAS handle, looked up and set to the stream at the call's first GEMM
    for (const Step& step : steps_) {
      if (step.is_check) {
        RunCheck(step.check, temp_ptrs[step.params[0].index], stream, args);
        continue;
      }
      if (step.is_gemm) {
        RunGemm(step, Resolve(step.params[0], inputs, out_ptrs, temp_ptrs),
                Resolve(step.params[1], inputs, out_ptrs, temp_ptrs),
                Resolve(step.params[2], inputs, out_ptrs, temp_ptrs), stream, &gemm_handle);
        continue;
      }
      std::array<void*, kMaxParams> params{};
      // (the launch copies the parameters' bytes; nothing writes them)
      auto* values = reinterpret_cast<char*>(const_cast<std::max_align_t*>(step.values.data()));
      for (size_t k = 0; k < step.params.size(); ++k) {
        const Param& p = step.params[k];
        switch (p.kind) {
          case Param::kInput: params[k] = &inputs[p.index]; break;
          case Param::kOutput: params[k] = &out_ptrs[p.index]; break;
          case Param::kTemp: params[k] = &temp_ptrs[p.index]; break;
          case Param::kValue: params[k] = values + p.offset; break;
        }
      }
      Run(step, params.data(), stream);
    }
  }

  static void* Resolve(const Param& p, void* const* inputs, const std::vector<void*>& outs,
                       const std::vector<void*>& temps) {
    return p.kind == Param::kInput ? inputs[p.index] : p.kind == Param::kOutput ? outs[p.index] : temps[p.index];
  }

  struct GemmHandle {
    bool ready = false;
    void* handle = nullptr;
    int status = 0;  // cublasSetStream's
  };

  void RunGemm(const Step& step, void* a_array, void* b_array, void* out_array, void* stream, GemmHandle* h) const {
    g_launches.fetch_add(1, std::memory_order_relaxed);
    const Gemm& g = step.gemm;
    void* a = static_cast<char*>(a_array) + g.offsets[0];
    void* b = static_cast<char*>(b_array) + g.offsets[1];
    void* out = static_cast<char*>(out_array) + g.offsets[2];
    if (!h->ready) {  // once a call: the handle is the thread's, the stream the call's (an RNN has a GEMM a step)
      if (!g.handle.is_none()) {
        h->handle = PyLong_AsVoidPtr(g.handle().ptr());
        if (h->handle == nullptr && PyErr_Occurred()) throw py::error_already_set();
      }
      if (g.set_stream != nullptr) h->status = reinterpret_cast<SetStream>(g.set_stream)(h->handle, stream);
      h->ready = true;
    }
    void* handle = h->handle;
    int status = h->status;
    if (status == 0) {
      py::gil_scoped_release release;  // the emulation's GEMM runs here
      if (g.batch == 1) {
        status = reinterpret_cast<GemmEx>(g.gemm)(handle, g.op_b, g.op_a, g.n, g.m, g.k, &g.alpha, b, g.data_type,
                                                  g.ldb, a, g.data_type, g.lda, &g.beta, out, g.data_type, g.ldc,
                                                  g.compute, kGemmDefaultAlgo);
      } else {
        status = reinterpret_cast<GemmStridedEx>(g.strided)(
            handle, g.op_b, g.op_a, g.n, g.m, g.k, &g.alpha, b, g.data_type, g.ldb, g.stride_b, a, g.data_type,
            g.lda, g.stride_a, &g.beta, out, g.data_type, g.ldc, g.stride_c, g.batch, g.compute, kGemmDefaultAlgo);
      }
    }
    if (status != 0) {
      throw KernelError("For '" + op_name_ + "', cuBLAS's GEMM (" + std::to_string(g.m) + " x " +
                        std::to_string(g.n) + " x " + std::to_string(g.k) + ", batch " + std::to_string(g.batch) +
                        ") returned status " + std::to_string(status) + ".");
    }
  }

  void RunCheck(const Check& c, void* word, void* stream, PyObject* const* args) const {
    uint64_t first = c.none;
    if (c.kind == EntryKind::kHost) {
      std::memcpy(&first, word, sizeof(first));  // the emulation's launches have finished
    } else {
      int status;
      {
        py::gil_scoped_release release;
        status = reinterpret_cast<CopyToHost>(c.copy)(&first, reinterpret_cast<uintptr_t>(word), sizeof(first), stream);
        if (status == 0) status = reinterpret_cast<SyncStream>(c.sync)(stream);
      }
      if (status != 0) {
        throw KernelError("For '" + op_name_ + "', reading its check back from the GPU failed: CUDA error " +
                          std::to_string(status) + ".");
      }
    }
    if (first == c.none) return;
    py::object error = c.error(first, Inputs(args));
    if (!PyExceptionInstance_Check(error.ptr())) {
      throw KernelError("For '" + op_name_ + "', a check found a bad value at position " + std::to_string(first) + ".");
    }
    PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(error.ptr())), error.ptr());
    throw py::error_already_set();
  }

  py::tuple Inputs(PyObject* const* args) const {
    py::tuple inputs(n_inputs_);
    for (size_t i = 0; i < n_inputs_; ++i) inputs[i] = py::reinterpret_borrow<py::object>(args[i]);
    return inputs;
  }

  void Run(const Step& step, void** params, void* stream) const {
    g_launches.fetch_add(1, std::memory_order_relaxed);
    if (step.kind == EntryKind::kHost) {
      int status;
      {
        py::gil_scoped_release release;  // the emulation runs the whole grid here
        status = reinterpret_cast<HostLaunch>(step.entry)(step.grid.data(), step.block.data(), params, step.shared);
      }
      if (status != 0) {
        const char* message = step.error ? reinterpret_cast<HostError>(step.error)() : "it failed";
        throw KernelError("For '" + op_name_ + "', the kernel " + step.name + " failed: " + message + ".");
      }
      return;
    }
    const int status = reinterpret_cast<DriverLaunch>(step.entry)(
        step.handle, step.grid[0], step.grid[1], step.grid[2], step.block[0], step.block[1], step.block[2],
        step.shared, stream, params, nullptr);
    if (status != 0) {
      const char* message = nullptr;
      if (step.error != nullptr) reinterpret_cast<DriverError>(step.error)(status, &message);
      throw KernelError("For '" + op_name_ + "', launching the kernel " + step.name + " failed: CUDA error " +
                        std::to_string(status) + (message ? std::string(" (") + message + ")" : std::string()) + ".");
    }
  }

  // While a device graph is captured: each launch through the runtime, which records it.
  void LaunchThroughRuntime(PyObject* const* args, const std::vector<py::object>& outs,
                            const std::vector<py::object>& temps) const {
    for (const Step& step : steps_) {
      if (step.is_check) {
        step.check.fallback(temps[step.params[0].index], Inputs(args));
        continue;
      }
      if (step.is_gemm) {
        py::tuple arrays(3);
        for (size_t k = 0; k < 3; ++k) {
          const Param& p = step.params[k];
          arrays[k] = p.kind == Param::kInput ? py::reinterpret_borrow<py::object>(args[p.index])
                      : p.kind == Param::kOutput ? outs[p.index]
                                                 : temps[p.index];
        }
        step.gemm.fallback(*arrays);
        continue;
      }
      py::tuple values(step.params.size());
      for (size_t k = 0; k < step.params.size(); ++k) {
        const Param& p = step.params[k];
        py::object v;
        switch (p.kind) {
          case Param::kInput: v = py::reinterpret_borrow<py::object>(args[p.index]); break;
          case Param::kOutput: v = outs[p.index]; break;
          case Param::kTemp: v = temps[p.index]; break;
          case Param::kValue: v = step.fallback_values[k]; break;
        }
        values[k] = std::move(v);
      }
      launch_(step.function, py::make_tuple(step.grid[0], step.grid[1], step.grid[2]),
              py::make_tuple(step.block[0], step.block[1], step.block[2]), values, step.shared);
    }
  }

  std::string op_name_;
  py::object runtime_, empty_, launch_, stream_;
  std::vector<py::object> pointer_path_;
  size_t n_inputs_;
  std::vector<Buffer> outputs_, temps_;
  std::vector<Step> steps_;
};

}  // namespace

void Bind(py::module_& m) {
  py::class_<DeviceLaunch, Launchable>(m, "DeviceLaunch")
      .def(py::init<std::string, py::object, size_t, const py::list&, const py::list&, const py::list&>(),
           py::arg("op_name"), py::arg("runtime"), py::arg("n_inputs"), py::arg("outputs"), py::arg("temps"),
           py::arg("steps"),
           "A GPU call as data: outputs and temporaries [(shape, dtype)], allocated by runtime.empty (an output "
           "('in', i) is input i, written in place); steps "
           "[(function, grid, block, shared_mem, params)], each param ('in', i), ('out', j), ('tmp', k) or a NumPy "
           "scalar passed by value, or ('gemm', GemmPlan fields, [a, b, out], fallback(a, b, out)[, the operands' "
           "byte offsets]), or ('check', ('tmp', k), none, error(position, inputs), fallback(word, inputs)); launched "
           "through runtime.native_function's, runtime.native_gemm's and runtime.native_read's entry points.")
      .def("launch", &DeviceLaunch::Launch, py::arg("arrays"))
      .def_property_readonly("launches", &DeviceLaunch::launches, "Kernel launches per call.");
  m.def("device_launch_count", []() { return g_launches.load(std::memory_order_relaxed); },
        "The kernels DeviceLaunch objects launched natively in this process.");
  m.def(
      "pause_device_launches",
      [](bool pause) {
        const bool was = g_paused > 0;
        g_paused += pause ? 1 : -1;
        if (g_paused < 0) g_paused = 0;
        return was;
      },
      py::arg("pause"),
      "While paused (in this thread), DeviceLaunch launches through runtime.launch, which a device graph's capture "
      "records; pause(True) and pause(False) nest. Returns whether launches were paused before.");
}

}  // namespace device_launch
}  // namespace opforge
