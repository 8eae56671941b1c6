// The opforge kernel ABI and the C++ API a kernel author writes against.
//
// A kernel library (opforge's own extension, or a user's .so compiled on the fly) registers
// its kernels with MS_REG_CPU_KERNEL into a registry local to that library, and exports one
// C function, opforge_kernel_defs(), listing them. opforge's core loads the library and
// imports the list into its global factory. Only plain C structs and function pointers
// cross the library boundary, so libraries built separately (even by another compiler)
// work together, and no C++ exception ever crosses it.
#pragma once

#include <cstdint>
#include <cstring>
#include <deque>
#include <exception>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "opforge/kernel_attr.h"
#include "opforge/type_id.h"

// 2 added OpfKernelDef::workspace_bytes; libraries of version 1 still load (they have no workspace).
#define OPFORGE_KERNEL_ABI_VERSION 2
#define OPFORGE_KERNEL_ABI_MIN_VERSION 1
#define OPFORGE_EXPORT __attribute__((visibility("default")))
#define OPFORGE_HIDDEN __attribute__((visibility("hidden")))

extern "C" {

// A dense, C-contiguous tensor. At kernel creation `data` is null: only the meta is known.
typedef struct OpfTensor {
  void* data;
  const int64_t* shape;
  int32_t ndim;
  int32_t dtype;  // an opforge::TypeId
} OpfTensor;

enum OpfAttrKind : int32_t {
  kOpfAttrInt = 0,
  kOpfAttrFloat = 1,
  kOpfAttrBool = 2,
  kOpfAttrStr = 3,
  kOpfAttrInts = 4,
  kOpfAttrFloats = 5,
};

// One attribute of the primitive (or a constant input such as ReduceSum's axis).
typedef struct OpfAttr {
  const char* name;
  int32_t kind;
  int64_t i;
  double f;
  const char* s;
  const int64_t* ints;
  const double* floats;
  int64_t len;
} OpfAttr;

typedef struct OpfKernelDef {
  int32_t abi_version;
  const char* op_name;
  const char* backend;
  int32_t n_inputs;
  const int32_t* input_types;
  int32_t n_outputs;
  const int32_t* output_types;
  int32_t all_same;
  // Builds a kernel for these metas and attrs; returns null and fills err on failure.
  void* (*create)(const char* op_name, const OpfTensor* in, int32_t n_in, const OpfTensor* out,
                  int32_t n_out, const OpfAttr* attrs, int32_t n_attrs, char* err, int64_t err_len);
  // Runs it; returns 0 on success, otherwise fills err.
  int32_t (*launch)(void* kernel, const OpfTensor* in, int32_t n_in, const OpfTensor* out,
                    int32_t n_out, char* err, int64_t err_len);
  void (*destroy)(void* kernel);
  // Version 2: the bytes of scratch memory the kernel asked for in Init (0: none). The core then
  // passes a workspace of that size as out[n_out] to launch (one past the outputs).
  int64_t (*workspace_bytes)(void* kernel);
} OpfKernelDef;

}  // extern "C"

namespace opforge {

// Throw this (or any std::exception) from Init or Launch: the message reaches Python.
class KernelError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throw this from a collective's Launch when the ranks disagree, one does not come in time or the
// communication library fails: Python gets opforge.communication.CommunicationError (a KernelError).
class CommunicationError : public KernelError {
 public:
  using KernelError::KernelError;
};

// What a kernel's launch returns: 0, or the kind of the error whose message it wrote.
enum LaunchStatus : int32_t { kLaunchOk = 0, kLaunchKernelError = 1, kLaunchCommunicationError = 2 };

namespace detail {

// The message of a failed OPF_CHECK. Its members are out of line, so each check costs the function
// holding it a few calls on its cold path instead of an inlined std::ostringstream: over hundreds of
// kernel types, those inlined streams were a large share of the build time.
class OPFORGE_HIDDEN CheckMessage {
 public:
  __attribute__((noinline)) CheckMessage& operator<<(const char* s) {
    text_ += s;
    return *this;
  }
  __attribute__((noinline)) CheckMessage& operator<<(const std::string& s) {
    text_ += s;
    return *this;
  }
  // Integers through std::to_string, without a stream: on the H200 machine's build (g++ 13.3), a
  // stream formatting an int64 in a kernel's Launch crashed (SparseSoftmaxCrossEntropyWithLogits'
  // label check); the stream stays for the other types (floats keep its 6-digit format).
  template <typename T>
  __attribute__((noinline)) CheckMessage& operator<<(const T& v) {
    if constexpr (std::is_integral<T>::value && !std::is_same<T, char>::value && !std::is_same<T, bool>::value) {
      text_ += std::to_string(v);
    } else {
      std::ostringstream oss;
      oss << v;
      text_ += oss.str();
    }
    return *this;
  }
  [[noreturn]] __attribute__((noinline)) void Throw() const { throw KernelError(text_); }

 private:
  std::string text_;
};

}  // namespace detail

#define OPF_CHECK(cond, msg)                                     \
  do {                                                           \
    if (!(cond)) (::opforge::detail::CheckMessage() << msg).Throw(); \
  } while (0)

inline std::string ShapeToString(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// The number of elements of `shape`, or false when a dim is negative or the product overflows int64.
inline bool CheckedNumel(const std::vector<int64_t>& shape, int64_t* numel) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return false;
  }
  *numel = n;
  return true;
}

struct TensorMeta {
  std::vector<int64_t> shape;
  TypeId dtype = kTypeUnknown;

  // KernelContext has checked the shapes it hands out, so this throws only for a meta built elsewhere.
  int64_t numel() const {
    int64_t n = 0;
    OPF_CHECK(CheckedNumel(shape, &n), "the shape " << ShapeToString(shape)
                                                    << " has a negative dim or more elements than fit in int64");
    return n;
  }
  int64_t ndim() const { return static_cast<int64_t>(shape.size()); }
};

// What a kernel sees once, at creation: the op, the input/output metas and the attrs.
class KernelContext {
 public:
  KernelContext(const char* op_name, const OpfTensor* in, int32_t n_in, const OpfTensor* out,
                int32_t n_out, const OpfAttr* attrs, int32_t n_attrs)
      : op_name_(op_name), attrs_(attrs), n_attrs_(n_attrs) {
    for (int32_t i = 0; i < n_in; ++i) inputs_.push_back(ToMeta(in[i], "input", i));
    for (int32_t i = 0; i < n_out; ++i) outputs_.push_back(ToMeta(out[i], "output", i));
  }

  const std::string& op_name() const { return op_name_; }
  size_t num_inputs() const { return inputs_.size(); }
  size_t num_outputs() const { return outputs_.size(); }
  const TensorMeta& input(size_t i) const { return inputs_.at(i); }
  const TensorMeta& output(size_t i) const { return outputs_.at(i); }

  bool HasAttr(const std::string& name) const { return Find(name) != nullptr; }

  int64_t GetInt(const std::string& name) const {
    const OpfAttr& a = Require(name);
    OPF_CHECK(a.kind == kOpfAttrInt || a.kind == kOpfAttrBool,
              Where(name) << "must be int, but got " << KindName(a.kind) << ".");
    return a.i;
  }
  double GetFloat(const std::string& name) const {
    const OpfAttr& a = Require(name);
    if (a.kind == kOpfAttrInt) return static_cast<double>(a.i);
    OPF_CHECK(a.kind == kOpfAttrFloat, Where(name) << "must be float, but got " << KindName(a.kind) << ".");
    return a.f;
  }
  bool GetBool(const std::string& name) const {
    const OpfAttr& a = Require(name);
    OPF_CHECK(a.kind == kOpfAttrBool, Where(name) << "must be bool, but got " << KindName(a.kind) << ".");
    return a.i != 0;
  }
  std::string GetStr(const std::string& name) const {
    const OpfAttr& a = Require(name);
    OPF_CHECK(a.kind == kOpfAttrStr, Where(name) << "must be str, but got " << KindName(a.kind) << ".");
    return a.s;
  }
  std::vector<int64_t> GetInts(const std::string& name) const {
    const OpfAttr& a = Require(name);
    if (a.kind == kOpfAttrInt) return {a.i};
    OPF_CHECK(a.kind == kOpfAttrInts, Where(name) << "must be a tuple of int, but got " << KindName(a.kind) << ".");
    return std::vector<int64_t>(a.ints, a.ints + a.len);
  }
  std::vector<double> GetFloats(const std::string& name) const {
    const OpfAttr& a = Require(name);
    OPF_CHECK(a.kind == kOpfAttrFloats, Where(name) << "must be a tuple of float, but got " << KindName(a.kind) << ".");
    return std::vector<double>(a.floats, a.floats + a.len);
  }

 private:
  // Every shape a kernel sees has a size that fits int64, so kernels may multiply its dims freely.
  TensorMeta ToMeta(const OpfTensor& t, const char* what, int32_t i) const {
    TensorMeta m;
    m.shape.assign(t.shape, t.shape + t.ndim);
    m.dtype = static_cast<TypeId>(t.dtype);
    int64_t n = 0;
    OPF_CHECK(CheckedNumel(m.shape, &n), "For '" << op_name_ << "', the " << what << " " << i << " shape "
                                                 << ShapeToString(m.shape)
                                                 << " has a negative dim or more elements than fit in int64.");
    return m;
  }
  static const char* KindName(int32_t kind) {
    static const char* const kNames[] = {"int", "float", "bool", "str", "tuple of int", "tuple of float"};
    return (kind >= 0 && kind <= kOpfAttrFloats) ? kNames[kind] : "unknown";
  }
  std::string Where(const std::string& name) const { return "For '" + op_name_ + "', the attr '" + name + "' "; }
  const OpfAttr* Find(const std::string& name) const {
    for (int32_t i = 0; i < n_attrs_; ++i)
      if (name == attrs_[i].name) return &attrs_[i];
    return nullptr;
  }
  const OpfAttr& Require(const std::string& name) const {
    const OpfAttr* a = Find(name);
    OPF_CHECK(a != nullptr, "For '" << op_name_ << "', the kernel needs the attr '" << name << "', but it was not given.");
    return *a;
  }

  std::string op_name_;
  std::vector<TensorMeta> inputs_;
  std::vector<TensorMeta> outputs_;
  const OpfAttr* attrs_;
  int32_t n_attrs_;
};

// What a kernel sees at every launch: the data pointers (metas are those given to Init).
class KernelArgs {
 public:
  KernelArgs(const OpfTensor* in, int32_t n_in, const OpfTensor* out, int32_t n_out, void* workspace = nullptr)
      : in_(in), n_in_(n_in), out_(out), n_out_(n_out), workspace_(workspace) {}

  // The scratch memory the kernel asked for in Init (CpuKernel::SetWorkspaceBytes), aligned for any
  // element type; null when it asked for none. Its contents are undefined at each launch's start.
  template <typename T>
  T* workspace() const {
    return static_cast<T*>(workspace_);
  }

  int32_t num_inputs() const { return n_in_; }
  int32_t num_outputs() const { return n_out_; }
  template <typename T>
  const T* input(int32_t i) const {
    return static_cast<const T*>(in_[i].data);
  }
  template <typename T>
  T* output(int32_t i) const {
    return static_cast<T*>(out_[i].data);
  }
  const OpfTensor& input_tensor(int32_t i) const { return in_[i]; }
  const OpfTensor& output_tensor(int32_t i) const { return out_[i]; }

 private:
  const OpfTensor* in_;
  int32_t n_in_;
  const OpfTensor* out_;
  int32_t n_out_;
  void* workspace_;
};

// Base class of every CPU kernel. Init runs once per (attrs, input metas); Launch per call.
class CpuKernel {
 public:
  virtual ~CpuKernel() = default;
  virtual void Init(const KernelContext& ctx) { (void)ctx; }
  virtual void Launch(const KernelArgs& args) = 0;

  int64_t workspace_bytes() const { return workspace_bytes_; }

 protected:
  // Called from Init with a size worked out from the metas (OneFlow's temp buffer): each launch then
  // gets that much scratch memory from the core's allocator through args.workspace<T>().
  void SetWorkspaceBytes(int64_t bytes) {
    OPF_CHECK(bytes >= 0, "the workspace size must be >= 0, but got " << bytes << ".");
    workspace_bytes_ = bytes;
  }

 private:
  int64_t workspace_bytes_ = 0;
};

namespace detail {

inline void CopyError(const char* msg, char* err, int64_t err_len) {
  if (err == nullptr || err_len <= 0) return;
  std::strncpy(err, msg, static_cast<size_t>(err_len - 1));
  err[err_len - 1] = '\0';
}

// Kernels derived from CpuKernel are created, launched and destroyed through the vtable by these
// functions, shared by every kernel of a library: per-type trampolines would each inline another
// copy of the kernel's Launch, which with hundreds of kernel types is most of a library's build time.
OPFORGE_HIDDEN __attribute__((noinline)) inline void* CreateKernel(CpuKernel* (*make)(), const char* op_name,
                                                                   const OpfTensor* in, int32_t n_in,
                                                                   const OpfTensor* out, int32_t n_out,
                                                                   const OpfAttr* attrs, int32_t n_attrs, char* err,
                                                                   int64_t err_len) {
  CpuKernel* k = nullptr;
  try {
    k = make();
    KernelContext ctx(op_name, in, n_in, out, n_out, attrs, n_attrs);
    k->Init(ctx);
    return k;
  } catch (const std::exception& e) {
    delete k;
    CopyError(e.what(), err, err_len);
  } catch (...) {
    delete k;
    CopyError("unknown C++ exception in kernel Init", err, err_len);
  }
  return nullptr;
}

OPFORGE_HIDDEN __attribute__((noinline)) inline int32_t LaunchKernel(void* kernel, const OpfTensor* in, int32_t n_in,
                                                                     const OpfTensor* out, int32_t n_out, char* err,
                                                                     int64_t err_len) {
  try {
    CpuKernel* k = static_cast<CpuKernel*>(kernel);
    void* workspace = k->workspace_bytes() > 0 ? out[n_out].data : nullptr;  // the core's, one past the outputs
    k->Launch(KernelArgs(in, n_in, out, n_out, workspace));
    return kLaunchOk;
  } catch (const CommunicationError& e) {
    CopyError(e.what(), err, err_len);
    return kLaunchCommunicationError;
  } catch (const std::exception& e) {
    CopyError(e.what(), err, err_len);
  } catch (...) {
    CopyError("unknown C++ exception in kernel Launch", err, err_len);
  }
  return kLaunchKernelError;
}

OPFORGE_HIDDEN __attribute__((noinline)) inline void DestroyKernel(void* kernel) {
  delete static_cast<CpuKernel*>(kernel);
}

OPFORGE_HIDDEN __attribute__((noinline)) inline int64_t KernelWorkspaceBytes(void* kernel) {
  return static_cast<CpuKernel*>(kernel)->workspace_bytes();
}

template <typename Kernel>
CpuKernel* NewKernel() {
  return new Kernel();
}

template <typename Kernel>
void* CreateCpuKernel(const char* op_name, const OpfTensor* in, int32_t n_in, const OpfTensor* out, int32_t n_out,
                      const OpfAttr* attrs, int32_t n_attrs, char* err, int64_t err_len) {
  return CreateKernel(&NewKernel<Kernel>, op_name, in, n_in, out, n_out, attrs, n_attrs, err, err_len);
}

// The same for a kernel class with Init and Launch that does not derive from CpuKernel.
template <typename Kernel>
struct Trampoline {
  static void* Create(const char* op_name, const OpfTensor* in, int32_t n_in, const OpfTensor* out,
                      int32_t n_out, const OpfAttr* attrs, int32_t n_attrs, char* err, int64_t err_len) {
    Kernel* k = nullptr;
    try {
      k = new Kernel();
      KernelContext ctx(op_name, in, n_in, out, n_out, attrs, n_attrs);
      k->Init(ctx);
      return k;
    } catch (const std::exception& e) {
      delete k;
      CopyError(e.what(), err, err_len);
    } catch (...) {
      delete k;
      CopyError("unknown C++ exception in kernel Init", err, err_len);
    }
    return nullptr;
  }

  static int32_t Launch(void* kernel, const OpfTensor* in, int32_t n_in, const OpfTensor* out, int32_t n_out,
                        char* err, int64_t err_len) {
    try {
      static_cast<Kernel*>(kernel)->Launch(KernelArgs(in, n_in, out, n_out));
      return 0;
    } catch (const std::exception& e) {
      CopyError(e.what(), err, err_len);
    } catch (...) {
      CopyError("unknown C++ exception in kernel Launch", err, err_len);
    }
    return 1;
  }

  static void Destroy(void* kernel) { delete static_cast<Kernel*>(kernel); }
};

// The registrations of one library. Hidden, so every shared library keeps its own.
struct LocalRegistry {
  std::deque<OpfKernelDef> defs;
  std::deque<std::vector<int32_t>> type_lists;
  std::deque<std::string> names;
  std::vector<const OpfKernelDef*> table;
};

OPFORGE_HIDDEN inline LocalRegistry& local_registry() {
  static LocalRegistry registry;
  return registry;
}

}  // namespace detail
}  // namespace opforge

// The one symbol a kernel library exports. Emitted (`used`) in every translation unit that
// includes this header and merged by the linker, so a library needs no extra boilerplate.
extern "C" OPFORGE_EXPORT __attribute__((used)) inline const OpfKernelDef* const* opforge_kernel_defs(
    int32_t* count) {
  auto& r = opforge::detail::local_registry();
  *count = static_cast<int32_t>(r.table.size());
  return r.table.data();
}

namespace opforge {
namespace detail {

// Adds one kernel definition to the library's table. Out of line: one copy, not one per kernel type.
OPFORGE_HIDDEN __attribute__((noinline)) inline void AddKernelDef(const char* backend, const char* op_name,
                                                                  const KernelAttr& attr,
                                                                  decltype(OpfKernelDef::create) create,
                                                                  decltype(OpfKernelDef::launch) launch,
                                                                  decltype(OpfKernelDef::destroy) destroy,
                                                                  decltype(OpfKernelDef::workspace_bytes) workspace) {
  LocalRegistry& r = local_registry();
  r.names.emplace_back(op_name);
  r.names.emplace_back(backend);
  const char* backend_str = r.names.back().c_str();
  const char* name_str = r.names[r.names.size() - 2].c_str();
  r.type_lists.push_back(attr.inputs());
  const int32_t* in_types = r.type_lists.back().data();
  r.type_lists.push_back(attr.outputs());
  const int32_t* out_types = r.type_lists.back().data();
  OpfKernelDef def{};
  def.abi_version = OPFORGE_KERNEL_ABI_VERSION;
  def.op_name = name_str;
  def.backend = backend_str;
  def.n_inputs = static_cast<int32_t>(attr.inputs().size());
  def.input_types = in_types;
  def.n_outputs = static_cast<int32_t>(attr.outputs().size());
  def.output_types = out_types;
  def.all_same = attr.all_same() ? 1 : 0;
  def.create = create;
  def.launch = launch;
  def.destroy = destroy;
  def.workspace_bytes = workspace;
  r.defs.push_back(def);
  r.table.push_back(&r.defs.back());
}

template <typename Kernel>
void RegisterKernel(const char* backend, const char* op_name, const KernelAttr& attr) {
  if constexpr (std::is_base_of_v<CpuKernel, Kernel>) {
    AddKernelDef(backend, op_name, attr, &CreateCpuKernel<Kernel>, &LaunchKernel, &DestroyKernel,
                 &KernelWorkspaceBytes);
  } else {
    AddKernelDef(backend, op_name, attr, &Trampoline<Kernel>::Create, &Trampoline<Kernel>::Launch,
                 &Trampoline<Kernel>::Destroy, nullptr);
  }
}

template <typename Kernel>
struct Registrar {
  Registrar(const char* backend, const char* op_name, const KernelAttr& attr) {
    RegisterKernel<Kernel>(backend, op_name, attr);
  }
};

}  // namespace detail
}  // namespace opforge

#define OPFORGE_CONCAT_INNER_(a, b) a##b
#define OPFORGE_CONCAT_(a, b) OPFORGE_CONCAT_INNER_(a, b)

// OPFORGE_REG_KERNEL(backend, OpName, KernelAttr, KernelClass...). The KernelAttr expression is
// evaluated with namespace opforge in scope, so it reads as in MindSpore:
// KernelAttr().AddInputAttr(kNumberTypeFloat32)...
#define OPFORGE_REG_KERNEL(BACKEND, OPNAME, ATTR, ...)                                              \
  static const ::opforge::detail::Registrar<__VA_ARGS__> OPFORGE_CONCAT_(g_opforge_kernel_reg_,  \
                                                                        __COUNTER__)(            \
      BACKEND, #OPNAME, [] {                                                                     \
        using namespace ::opforge;                                                               \
        return ATTR;                                                                             \
      }())

// MindSpore's shape: MS_REG_CPU_KERNEL(Elu, KernelAttr().AddInputAttr(...).AddOutputAttr(...), EluKernel<float>)
#define MS_REG_CPU_KERNEL(OPNAME, ATTR, ...) OPFORGE_REG_KERNEL("CPU", OPNAME, ATTR, __VA_ARGS__)
#define MS_REG_CPU_KERNEL_T(OPNAME, ATTR, KERNEL, T) OPFORGE_REG_KERNEL("CPU", OPNAME, ATTR, KERNEL<T>)
#define OPFORGE_REG_CPU_KERNEL MS_REG_CPU_KERNEL
