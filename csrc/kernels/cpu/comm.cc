// AllReduce on the CPU: MPI_Iallreduce called directly, with no Python between the call and MPI.
//
// opforge links no MPI: the MPI library that mpi4py loaded is found again with dlopen(RTLD_NOLOAD)
// and its functions with dlsym. opforge.communication tells this file, through the C functions
// below (ctypes), the library's path, the MPI handles of the dtypes and ops, and each group's
// communicator (mpi4py's `comm.handle`: an int in the MPICH ABI, which the mpich wheel has). The
// kernel then does what the Python kernels of opforge/communication/mpi.py do: the header check
// (an MPI_Iallgather of 13 int64 per rank) unless switched off, the payload, a wait that polls
// MPI_Test until a deadline (OPFORGE_COMM_TIMEOUT), float16 and bfloat16 reduced in float32.
#include <dlfcn.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "opforge/half.h"
#include "opforge/kernel.h"

namespace opforge {
namespace {

// The MPICH ABI: handles are ints; MPI_Request too; a status is 5 ints (20 bytes, padded here).
using MpiHandle = int;
struct MpiStatus {
  int words[8];
};
using IallreduceFn = int (*)(const void*, void*, int, MpiHandle, MpiHandle, MpiHandle, int*);
using AllreduceFn = int (*)(const void*, void*, int, MpiHandle, MpiHandle, MpiHandle);
using IallgatherFn = int (*)(const void*, int, MpiHandle, void*, int, MpiHandle, MpiHandle, int*);
using TestFn = int (*)(int*, int*, MpiStatus*);

struct Group {
  MpiHandle comm = 0;
  int rank = 0, size = 1, world_rank = 0;
  double timeout = 300.0;
  bool check = true;
  std::string display;  // the name in messages
};

struct MpiState {
  std::mutex mu;
  IallreduceFn iallreduce = nullptr;
  AllreduceFn allreduce = nullptr;
  IallgatherFn iallgather = nullptr;
  TestFn test = nullptr;
  MpiHandle types[kNumberTypeEnd] = {};  // by opforge type id; 0: none
  MpiHandle int64_type = 0;
  MpiHandle ops[4] = {};  // sum, max, min, prod
  std::unordered_map<std::string, std::shared_ptr<const Group>> groups;
  std::atomic<uint64_t> generation{1};
};

MpiState& State() {
  static MpiState* state = new MpiState();  // never destroyed: kernels may run during interpreter exit
  return *state;
}

constexpr int kHeader = 13, kMaxDims = 8;

// The world group's names (opforge.communication.management._WORLD_NAMES) all mean "world".
std::string GroupKey(const std::string& name) {
  if (name == "hccl_world_group" || name == "nccl_world_group" || name == "mccl_world_group") return "world";
  return name;
}

int OpIndex(const std::string& op) {
  if (op == "sum") return 0;
  if (op == "max") return 1;
  if (op == "min") return 2;
  if (op == "prod") return 3;
  return -1;
}

const char* kDtypeNames[] = {"?",       "bool",     "int8",    "int16",     "int32",     "int64",
                             "uint8",   "uint16",   "uint32",  "uint64",    "float16",   "bfloat16",
                             "float32", "float64",  "complex64", "complex128"};

std::string Describe(const int64_t* h) {
  const int64_t code = h[2], ndim = h[3];
  std::string s = (code > 0 && code < kNumberTypeEnd) ? kDtypeNames[code] : "?";
  s += "[";
  for (int64_t d = 0; d < ndim && d < kMaxDims; ++d) s += (d ? ", " : "") + std::to_string(h[5 + d]);
  return s + (ndim > kMaxDims ? " (dims 8.. folded)]" : "]");
}

std::string FormatSeconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", s);
  return buf;
}

// MPI_Test calls before the wait yields the core between polls: ranks may share cores (more ranks than
// cores), and a rank that spins on a core its partner needs keeps the partner from arriving until the
// scheduler preempts it (3 ranks on 2 cores: an AllReduce 5-8x slower than mpi4py's, which yields too).
constexpr uint64_t kSpinsBeforeYield = 1024;

void Wait(const std::string& op, const Group& g, int* request) {
  MpiState& st = State();
  int done = 0;
  MpiStatus status;
  if (st.test(request, &done, &status) != 0) throw KernelError("For '" + op + "', MPI_Test failed.");
  if (done) return;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(g.timeout);
  for (uint64_t spins = 1;; ++spins) {
    if (st.test(request, &done, &status) != 0) throw KernelError("For '" + op + "', MPI_Test failed.");
    if (done) return;
    if (spins > kSpinsBeforeYield) std::this_thread::yield();  // sched_yield: no sleep, no timer slack
    if ((spins & 1023) == 0 && std::chrono::steady_clock::now() > deadline) {
      throw KernelError("For '" + op + "', rank " + std::to_string(g.world_rank) + " waited " +
                        FormatSeconds(g.timeout) + " s (OPFORGE_COMM_TIMEOUT) for the other ranks of the group '" +
                        g.display + "' (" + std::to_string(g.size) +
                        " ranks): one of them did not call it, died or hangs.");
    }
  }
}

template <typename T, typename W>
class AllReduceCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    op_ = ctx.op_name();
    group_ = GroupKey(ctx.GetStr("group"));
    const std::string reduce = ctx.GetStr("op");
    op_index_ = OpIndex(reduce);
    OPF_CHECK(op_index_ >= 0, "For '" << op_ << "', the 'op' must be sum, max, min or prod, but got " << reduce << ".");
    const TensorMeta& x = ctx.input(0);
    OPF_CHECK(ctx.output(0).shape == x.shape, "For '" << op_ << "', the output shape must be the input's.");
    n_ = x.numel();
    OPF_CHECK(n_ < (int64_t{1} << 31), "For '" << op_ << "', MPI counts are ints: at most 2**31 - 1 elements, but got "
                                               << n_ << ".");
    header_[0] = 1;  // the kind (mpi.py: AllReduce)
    header_[1] = op_index_ + 1;
    header_[2] = TypeIdOf<T>::value;
    header_[3] = x.ndim();
    header_[4] = n_ * static_cast<int64_t>(sizeof(T));
    for (int64_t d = 0; d < x.ndim() && d < kMaxDims; ++d) header_[5 + d] = x.shape[d];
    if (x.ndim() > kMaxDims) {
      int64_t folded = 1;
      for (int64_t d = kMaxDims - 1; d < x.ndim(); ++d) folded *= x.shape[d];
      header_[5 + kMaxDims - 1] = folded;
    }
    if (!std::is_same<T, W>::value) SetWorkspaceBytes(2 * n_ * static_cast<int64_t>(sizeof(W)));
  }

  void Launch(const KernelArgs& args) override {
    MpiState& st = State();
    const uint64_t generation = st.generation.load(std::memory_order_acquire);
    if (generation != generation_) {
      std::lock_guard<std::mutex> lock(st.mu);
      auto it = st.groups.find(group_);
      group_ptr_ = it == st.groups.end() ? nullptr : it->second;
      generation_ = generation;
    }
    if (!group_ptr_ || !st.iallreduce) {
      throw KernelError("For '" + op_ +
                        "', the communication service is not initialized: call opforge.communication.init() first "
                        "(under mpiexec for several ranks).");
    }
    const Group& g = *group_ptr_;
    // After the header exchange every rank of the group has arrived, so the payload can take MPI's
    // blocking all-reduce (faster than the non-blocking one for large buffers) without risking a hang;
    // without the exchange it polls a non-blocking one until the deadline.
    const bool arrived = g.check && g.size > 1;
    if (arrived) CheckSame(g);
    if constexpr (std::is_same<T, W>::value) {
      Reduce(g, args.input<T>(0), args.output<T>(0), arrived);
    } else {  // float16 and bfloat16: reduced in float32, rounded once at the end
      W* wide = args.workspace<W>();
      const T* x = args.input<T>(0);
      for (int64_t i = 0; i < n_; ++i) wide[i] = static_cast<W>(x[i]);
      Reduce(g, wide, wide + n_, arrived);
      T* out = args.output<T>(0);
      for (int64_t i = 0; i < n_; ++i) out[i] = static_cast<T>(wide[n_ + i]);
    }
  }

 private:
  void Reduce(const Group& g, const void* in, void* out, bool blocking) {
    MpiState& st = State();
    const MpiHandle type = st.types[TypeIdOf<W>::value], op = st.ops[op_index_];
    if (blocking) {
      if (st.allreduce(in, out, static_cast<int>(n_), type, op, g.comm) != 0)
        throw KernelError("For '" + op_ + "', MPI_Allreduce failed.");
      return;
    }
    int request = 0;
    if (st.iallreduce(in, out, static_cast<int>(n_), type, op, g.comm, &request) != 0)
      throw KernelError("For '" + op_ + "', MPI_Iallreduce failed.");
    Wait(op_, g, &request);
  }

  void CheckSame(const Group& g) {
    MpiState& st = State();
    rows_.resize(static_cast<size_t>(g.size) * kHeader);
    int request = 0;
    if (st.iallgather(header_, kHeader, st.int64_type, rows_.data(), kHeader, st.int64_type, g.comm, &request) != 0)
      throw KernelError("For '" + op_ + "', MPI_Iallgather failed.");
    Wait(op_, g, &request);
    bool same = true;
    for (int r = 0; r < g.size && same; ++r) same = std::memcmp(&rows_[r * kHeader], header_, sizeof(header_)) == 0;
    if (same) return;
    std::string parts;
    for (int r = 0; r < g.size; ++r) {
      const int64_t* h = &rows_[r * kHeader];
      parts += (r ? "; rank " : "rank ") + std::to_string(r) + ": ";
      if (h[0] != header_[0]) {
        parts += "another collective (or attrs)";
        continue;
      }
      parts += Describe(h) + (h[1] != header_[1] ? " (other attrs)" : "");
    }
    throw KernelError("For '" + op_ + "', the ranks of the group '" + g.display +
                      "' must call it with the same attrs, dtypes and shapes, but got " + parts + ".");
  }

  std::string op_, group_;
  int op_index_ = 0;
  int64_t n_ = 0;
  int64_t header_[kHeader] = {};
  std::vector<int64_t> rows_;
  uint64_t generation_ = 0;
  std::shared_ptr<const Group> group_ptr_;
};

#define REG_ALL_REDUCE(T, W, TID) \
  MS_REG_CPU_KERNEL(AllReduce, KernelAttr().AddInputAttr(TID).AddOutputAttr(TID), AllReduceCpuKernel<T, W>)

REG_ALL_REDUCE(int8_t, int8_t, kNumberTypeInt8);
REG_ALL_REDUCE(int16_t, int16_t, kNumberTypeInt16);
REG_ALL_REDUCE(int32_t, int32_t, kNumberTypeInt32);
REG_ALL_REDUCE(int64_t, int64_t, kNumberTypeInt64);
REG_ALL_REDUCE(uint8_t, uint8_t, kNumberTypeUInt8);
REG_ALL_REDUCE(uint16_t, uint16_t, kNumberTypeUInt16);
REG_ALL_REDUCE(uint32_t, uint32_t, kNumberTypeUInt32);
REG_ALL_REDUCE(uint64_t, uint64_t, kNumberTypeUInt64);
REG_ALL_REDUCE(float16, float, kNumberTypeFloat16);
REG_ALL_REDUCE(bfloat16, float, kNumberTypeBFloat16);
REG_ALL_REDUCE(float, float, kNumberTypeFloat32);
REG_ALL_REDUCE(double, double, kNumberTypeFloat64);

}  // namespace
}  // namespace opforge

// ---- set up by opforge.communication (ctypes) --------------------------------------------------------

// Find MPI_Iallreduce, MPI_Iallgather and MPI_Test in the library mpi4py loaded; 0 on success.
extern "C" OPFORGE_EXPORT int opforge_comm_setup(const char* libmpi) {
  void* lib = dlopen(libmpi, RTLD_NOW | RTLD_NOLOAD);
  if (lib == nullptr) return 1;
  opforge::MpiState& st = opforge::State();
  std::lock_guard<std::mutex> lock(st.mu);
  st.iallreduce = reinterpret_cast<opforge::IallreduceFn>(dlsym(lib, "MPI_Iallreduce"));
  st.iallgather = reinterpret_cast<opforge::IallgatherFn>(dlsym(lib, "MPI_Iallgather"));
  st.test = reinterpret_cast<opforge::TestFn>(dlsym(lib, "MPI_Test"));
  st.allreduce = reinterpret_cast<opforge::AllreduceFn>(dlsym(lib, "MPI_Allreduce"));
  if (!st.iallreduce || !st.iallgather || !st.test || !st.allreduce) {
    st.iallreduce = nullptr;
    return 2;
  }
  return 0;
}

// The MPI datatype of each opforge type id (n entries from 0), the int64 type, and the four ops.
extern "C" OPFORGE_EXPORT void opforge_comm_set_handles(const int* types, int n, int int64_type, const int* ops) {
  opforge::MpiState& st = opforge::State();
  std::lock_guard<std::mutex> lock(st.mu);
  for (int i = 0; i < n && i < opforge::kNumberTypeEnd; ++i) st.types[i] = types[i];
  st.int64_type = int64_type;
  for (int i = 0; i < 4; ++i) st.ops[i] = ops[i];
}

// Add (or replace) a group; size 0 removes it. (Derived communicators' handles have the top bit set: the
// handle travels as unsigned and is used as the int the ABI says it is.)
extern "C" OPFORGE_EXPORT void opforge_comm_set_group(const char* key, const char* display, unsigned comm, int rank,
                                                      int size, int world_rank, double timeout, int check) {
  opforge::MpiState& st = opforge::State();
  std::lock_guard<std::mutex> lock(st.mu);
  if (size <= 0) {
    st.groups.erase(key);
  } else {
    auto g = std::make_shared<opforge::Group>();
    g->comm = static_cast<opforge::MpiHandle>(comm);
    g->rank = rank;
    g->size = size;
    g->world_rank = world_rank;
    g->timeout = timeout;
    g->check = check != 0;
    g->display = display;
    st.groups[key] = g;
  }
  st.generation.fetch_add(1, std::memory_order_acq_rel);
}
