// The collectives on the CPU (AllReduce, ReduceScatter, AllGather, AlltoAll): MPI called directly, with
// no Python between the call and MPI (a sharded network's redistributions run from C++, eagerly and in a
// trace's replay).
//
// opforge links no MPI: the MPI library that mpi4py loaded is found again with dlopen(RTLD_NOLOAD)
// and its functions with dlsym. opforge.communication tells this file, through the C functions
// below (ctypes), the library's path, the MPI handles of the dtypes and ops, and each group's
// communicator (mpi4py's `comm.handle`: an int in the MPICH ABI, which the mpich wheel has). The
// kernels then do what the Python kernels of opforge/communication/mpi.py do: the header check
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
using AllgatherFn = int (*)(const void*, int, MpiHandle, void*, int, MpiHandle, MpiHandle);
using ReduceScatterBlockFn = int (*)(const void*, void*, int, MpiHandle, MpiHandle, MpiHandle);
using IreduceScatterBlockFn = int (*)(const void*, void*, int, MpiHandle, MpiHandle, MpiHandle, int*);
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
  IallgatherFn iallgather = nullptr, ialltoall = nullptr;  // (MPI_Ialltoall has MPI_Iallgather's arguments)
  AllgatherFn allgather = nullptr, alltoall = nullptr;
  ReduceScatterBlockFn reduce_scatter_block = nullptr;
  IreduceScatterBlockFn ireduce_scatter_block = nullptr;
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
  if (st.test(request, &done, &status) != 0) throw CommunicationError("For '" + op + "', MPI_Test failed.");
  if (done) return;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(g.timeout);
  for (uint64_t spins = 1;; ++spins) {
    if (st.test(request, &done, &status) != 0) throw CommunicationError("For '" + op + "', MPI_Test failed.");
    if (done) return;
    if (spins > kSpinsBeforeYield) std::this_thread::yield();  // sched_yield: no sleep, no timer slack
    if ((spins & 1023) == 0 && std::chrono::steady_clock::now() > deadline) {
      throw CommunicationError("For '" + op + "', rank " + std::to_string(g.world_rank) + " waited " +
                               FormatSeconds(g.timeout) +
                               " s (OPFORGE_COMM_TIMEOUT) for the other ranks of the group '" + g.display + "' (" +
                               std::to_string(g.size) + " ranks): one of them did not call it, died or hangs.");
    }
  }
}

// What every collective kernel shares: the group looked up again when groups changed, the header check
// (mpi.py's header of input 0: kind, attr code, dtype, ndim, nbytes, dims), and MPI's return codes.
class CollectiveCpuKernel : public CpuKernel {
 protected:
  void InitCollective(const KernelContext& ctx, int kind, int code) {
    op_ = ctx.op_name();
    group_ = GroupKey(ctx.GetStr("group"));
    const TensorMeta& x = ctx.input(0);
    header_[0] = kind;
    header_[1] = code;
    header_[2] = x.dtype;
    header_[3] = x.ndim();
    header_[4] = x.numel() * TypeIdSize(x.dtype);
    for (int64_t d = 0; d < x.ndim() && d < kMaxDims; ++d) header_[5 + d] = x.shape[d];
    if (x.ndim() > kMaxDims) {
      int64_t folded = 1;
      for (int64_t d = kMaxDims - 1; d < x.ndim(); ++d) folded *= x.shape[d];
      header_[5 + kMaxDims - 1] = folded;
    }
  }

  // MPI counts are ints.
  int Count(int64_t n) const {
    OPF_CHECK(n < (int64_t{1} << 31), "For '" << op_ << "', MPI counts are ints: at most 2**31 - 1 elements, but got "
                                              << n << ".");
    return static_cast<int>(n);
  }

  // The group, after the header exchange when it runs. ``arrived``: every rank of the group has arrived,
  // so the payload may take MPI's blocking call (faster than the non-blocking one for large buffers)
  // without risking a hang; otherwise it polls a non-blocking one until the deadline.
  const Group& Begin(bool* arrived) {
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
    *arrived = g.check && g.size > 1;
    if (*arrived) CheckSame(g);
    return g;
  }

  void Check(int rc, const char* fn) const {
    if (rc != 0) throw CommunicationError("For '" + op_ + "', " + fn + " failed.");
  }

  std::string op_;

 private:
  void CheckSame(const Group& g) {
    MpiState& st = State();
    rows_.resize(static_cast<size_t>(g.size) * kHeader);
    int request = 0;
    Check(st.iallgather(header_, kHeader, st.int64_type, rows_.data(), kHeader, st.int64_type, g.comm, &request),
          "MPI_Iallgather");
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
    throw CommunicationError("For '" + op_ + "', the ranks of the group '" + g.display +
                             "' must call it with the same attrs, dtypes and shapes, but got " + parts + ".");
  }

  std::string group_;
  int64_t header_[kHeader] = {};
  std::vector<int64_t> rows_;
  uint64_t generation_ = 0;
  std::shared_ptr<const Group> group_ptr_;
};

// A reducing collective's op attr: its index in MpiState::ops.
int ReduceOpIndex(const KernelContext& ctx) {
  const std::string reduce = ctx.GetStr("op");
  const int index = OpIndex(reduce);
  OPF_CHECK(index >= 0,
            "For '" << ctx.op_name() << "', the 'op' must be sum, max, min or prod, but got " << reduce << ".");
  return index;
}

template <typename T, typename W>
void Widen(const T* x, W* wide, int64_t n) {
  for (int64_t i = 0; i < n; ++i) wide[i] = static_cast<W>(x[i]);
}

template <typename W, typename T>
void Narrow(const W* wide, T* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(wide[i]);
}

// A reducing collective (T reduced as W: float16 and bfloat16 in float32, rounded once at the end): the
// header check, the widening and the narrowing; `Reduce` is the MPI call, `n_in_` and `n_out_` elements.
template <typename T, typename W>
class ReducingCpuKernel : public CollectiveCpuKernel {
 public:
  void Launch(const KernelArgs& args) override {
    bool arrived = false;
    const Group& g = Begin(&arrived);
    CheckGroup(g);
    if constexpr (std::is_same<T, W>::value) {
      Reduce(g, args.input<T>(0), args.output<T>(0), arrived);
    } else {
      W* wide = args.workspace<W>();
      Widen(args.input<T>(0), wide, n_in_);
      Reduce(g, wide, wide + n_in_, arrived);
      Narrow(wide + n_in_, args.output<T>(0), n_out_);
    }
  }

 protected:
  void InitReducing(const KernelContext& ctx, int kind) {
    op_index_ = ReduceOpIndex(ctx);
    InitCollective(ctx, kind, op_index_ + 1);
    n_in_ = ctx.input(0).numel();
    n_out_ = ctx.output(0).numel();
    Count(n_in_);
    if (!std::is_same<T, W>::value) SetWorkspaceBytes((n_in_ + n_out_) * static_cast<int64_t>(sizeof(W)));
  }

  virtual void CheckGroup(const Group& g) { (void)g; }
  // The MPI call: blocking (every rank has arrived) or polled until the deadline.
  virtual void Reduce(const Group& g, const void* in, void* out, bool blocking) = 0;

  MpiHandle type() const { return State().types[TypeIdOf<W>::value]; }
  MpiHandle op() const { return State().ops[op_index_]; }

  int op_index_ = 0;
  int64_t n_in_ = 0, n_out_ = 0;
};

// AllReduce: every rank gets the elementwise reduction.
template <typename T, typename W>
class AllReduceCpuKernel : public ReducingCpuKernel<T, W> {
 public:
  void Init(const KernelContext& ctx) override {
    this->InitReducing(ctx, 1);
    OPF_CHECK(ctx.output(0).shape == ctx.input(0).shape,
              "For '" << this->op_ << "', the output shape must be the input's.");
  }

 private:
  void Reduce(const Group& g, const void* in, void* out, bool blocking) override {
    MpiState& st = State();
    const int n = static_cast<int>(this->n_in_);
    if (blocking) return this->Check(st.allreduce(in, out, n, this->type(), this->op(), g.comm), "MPI_Allreduce");
    int request = 0;
    this->Check(st.iallreduce(in, out, n, this->type(), this->op(), g.comm, &request), "MPI_Iallreduce");
    Wait(this->op_, g, &request);
  }
};

// ReduceScatter: the reduction over the ranks, rank i keeping block i of dim 0.
template <typename T, typename W>
class ReduceScatterCpuKernel : public ReducingCpuKernel<T, W> {
 public:
  void Init(const KernelContext& ctx) override { this->InitReducing(ctx, 2); }

 private:
  void CheckGroup(const Group& g) override {
    if (this->n_out_ * g.size == this->n_in_) return;
    throw CommunicationError("For '" + this->op_ + "', the output must be 1/" + std::to_string(g.size) +
                             " of the input (the group's size), but got " + std::to_string(this->n_out_) +
                             " of " + std::to_string(this->n_in_) + " elements.");
  }

  void Reduce(const Group& g, const void* in, void* out, bool blocking) override {
    MpiState& st = State();
    const int n = static_cast<int>(this->n_out_);
    if (blocking) {
      return this->Check(st.reduce_scatter_block(in, out, n, this->type(), this->op(), g.comm),
                         "MPI_Reduce_scatter_block");
    }
    int request = 0;
    this->Check(st.ireduce_scatter_block(in, out, n, this->type(), this->op(), g.comm, &request),
                "MPI_Ireduce_scatter_block");
    Wait(this->op_, g, &request);
  }
};

// AllGather: the ranks' inputs concatenated along dim 0 in rank order (moved as bytes: every dtype).
class AllGatherCpuKernel : public CollectiveCpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    InitCollective(ctx, 3, 0);
    bytes_ = ctx.input(0).numel() * TypeIdSize(ctx.input(0).dtype);
    out_bytes_ = ctx.output(0).numel() * TypeIdSize(ctx.output(0).dtype);
    Count(bytes_);
  }

  void Launch(const KernelArgs& args) override {
    bool arrived = false;
    const Group& g = Begin(&arrived);
    if (bytes_ * g.size != out_bytes_) {
      throw CommunicationError("For '" + op_ + "', the output must hold " + std::to_string(g.size) +
                               " inputs (the group's size), but got " + std::to_string(out_bytes_) +
                               " bytes for " + std::to_string(bytes_) + ".");
    }
    MpiState& st = State();
    const MpiHandle byte = st.types[kNumberTypeUInt8];
    const int count = static_cast<int>(bytes_);
    const void* in = args.input_tensor(0).data;
    void* out = args.output_tensor(0).data;
    if (arrived) return Check(st.allgather(in, count, byte, out, count, byte, g.comm), "MPI_Allgather");
    int request = 0;
    Check(st.iallgather(in, count, byte, out, count, byte, g.comm, &request), "MPI_Iallgather");
    Wait(op_, g, &request);
  }

 private:
  int64_t bytes_ = 0, out_bytes_ = 0;
};

// AlltoAll: x split along split_dim into the group's size of blocks, block j sent to rank j; the blocks
// received concatenated along concat_dim in rank order. Packed into send order, exchanged, unpacked.
class AlltoAllCpuKernel : public CollectiveCpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    const TensorMeta& x = ctx.input(0);
    const int64_t nd = x.ndim();
    OPF_CHECK(nd > 0, "For '" << ctx.op_name() << "', the 'x' must have at least 1 dim.");
    const int64_t split = ((ctx.GetInt("split_dim") % nd) + nd) % nd;
    const int64_t concat = ((ctx.GetInt("concat_dim") % nd) + nd) % nd;
    parts_ = ctx.GetInt("split_count");
    InitCollective(ctx, 5, static_cast<int>(split * 64 + concat));
    OPF_CHECK(parts_ > 0 && x.shape[split] % parts_ == 0,
              "For '" << op_ << "', dim " << split << " of 'x' must divide into " << parts_ << " blocks.");
    const int64_t item = TypeIdSize(x.dtype);
    std::vector<int64_t> block = x.shape;  // the shape of one block sent (and of one received)
    block[split] /= parts_;
    bytes_ = x.numel() * item;
    chunk_ = bytes_ / parts_;
    Count(chunk_);
    // Sending: block j of x is, for each index of the dims before split_dim, a run of `send_run_` bytes
    // at offset j * send_run_ within a row of parts_ * send_run_ bytes.
    send_rows_ = Product(x.shape, 0, split);
    send_run_ = Product(block, split, nd) * item;
    // Receiving: block r goes, for each index of the dims before concat_dim, to a run of `recv_run_`
    // bytes at offset r * recv_run_ within a row of parts_ * recv_run_ bytes of the output.
    recv_rows_ = Product(block, 0, concat);
    recv_run_ = Product(block, concat, nd) * item;
    SetWorkspaceBytes(2 * bytes_);
  }

  void Launch(const KernelArgs& args) override {
    bool arrived = false;
    const Group& g = Begin(&arrived);
    if (g.size != parts_) {
      throw CommunicationError("For '" + op_ + "', the 'split_count' must be the group's size " +
                               std::to_string(g.size) + ", but got " + std::to_string(parts_) + ".");
    }
    auto* send = args.workspace<char>();
    char* recv = send + bytes_;
    const auto* x = static_cast<const char*>(args.input_tensor(0).data);
    auto* out = static_cast<char*>(args.output_tensor(0).data);
    // (no bytes: no workspace either, and memcpy must not be given its null pointer)
    for (int64_t j = 0; bytes_ > 0 && j < parts_; ++j)
      for (int64_t o = 0; o < send_rows_; ++o)
        std::memcpy(send + j * chunk_ + o * send_run_, x + (o * parts_ + j) * send_run_, send_run_);
    Exchange(g, send, recv, arrived);
    for (int64_t r = 0; bytes_ > 0 && r < parts_; ++r)
      for (int64_t o = 0; o < recv_rows_; ++o)
        std::memcpy(out + (o * parts_ + r) * recv_run_, recv + r * chunk_ + o * recv_run_, recv_run_);
  }

 private:
  static int64_t Product(const std::vector<int64_t>& shape, int64_t from, int64_t to) {
    int64_t p = 1;
    for (int64_t d = from; d < to; ++d) p *= shape[d];
    return p;
  }

  void Exchange(const Group& g, const void* send, void* recv, bool blocking) {
    MpiState& st = State();
    const MpiHandle byte = st.types[kNumberTypeUInt8];
    const int count = static_cast<int>(chunk_);
    if (blocking) return Check(st.alltoall(send, count, byte, recv, count, byte, g.comm), "MPI_Alltoall");
    int request = 0;
    Check(st.ialltoall(send, count, byte, recv, count, byte, g.comm, &request), "MPI_Ialltoall");
    Wait(op_, g, &request);
  }

  int64_t parts_ = 1, bytes_ = 0, chunk_ = 0;
  int64_t send_rows_ = 1, send_run_ = 0, recv_rows_ = 1, recv_run_ = 0;
};

#define REG_REDUCING(T, W, TID)                                                                                   \
  MS_REG_CPU_KERNEL(AllReduce, KernelAttr().AddInputAttr(TID).AddOutputAttr(TID), AllReduceCpuKernel<T, W>);      \
  MS_REG_CPU_KERNEL(ReduceScatter, KernelAttr().AddInputAttr(TID).AddOutputAttr(TID), ReduceScatterCpuKernel<T, W>)

REG_REDUCING(int8_t, int8_t, kNumberTypeInt8);
REG_REDUCING(int16_t, int16_t, kNumberTypeInt16);
REG_REDUCING(int32_t, int32_t, kNumberTypeInt32);
REG_REDUCING(int64_t, int64_t, kNumberTypeInt64);
REG_REDUCING(uint8_t, uint8_t, kNumberTypeUInt8);
REG_REDUCING(uint16_t, uint16_t, kNumberTypeUInt16);
REG_REDUCING(uint32_t, uint32_t, kNumberTypeUInt32);
REG_REDUCING(uint64_t, uint64_t, kNumberTypeUInt64);
REG_REDUCING(float16, float, kNumberTypeFloat16);
REG_REDUCING(bfloat16, float, kNumberTypeBFloat16);
REG_REDUCING(float, float, kNumberTypeFloat32);
REG_REDUCING(double, double, kNumberTypeFloat64);

#define REG_MOVING(TID)                                                                          \
  MS_REG_CPU_KERNEL(AllGather, KernelAttr().AddInputAttr(TID).AddOutputAttr(TID), AllGatherCpuKernel); \
  MS_REG_CPU_KERNEL(AlltoAll, KernelAttr().AddInputAttr(TID).AddOutputAttr(TID), AlltoAllCpuKernel)

REG_MOVING(kNumberTypeBool);
REG_MOVING(kNumberTypeInt8);
REG_MOVING(kNumberTypeInt16);
REG_MOVING(kNumberTypeInt32);
REG_MOVING(kNumberTypeInt64);
REG_MOVING(kNumberTypeUInt8);
REG_MOVING(kNumberTypeUInt16);
REG_MOVING(kNumberTypeUInt32);
REG_MOVING(kNumberTypeUInt64);
REG_MOVING(kNumberTypeFloat16);
REG_MOVING(kNumberTypeBFloat16);
REG_MOVING(kNumberTypeFloat32);
REG_MOVING(kNumberTypeFloat64);
REG_MOVING(kNumberTypeComplex64);
REG_MOVING(kNumberTypeComplex128);

}  // namespace
}  // namespace opforge

// ---- set up by opforge.communication (ctypes) --------------------------------------------------------

// Find the MPI functions the kernels call in the library mpi4py loaded; 0 on success.
extern "C" OPFORGE_EXPORT int opforge_comm_setup(const char* libmpi) {
  void* lib = dlopen(libmpi, RTLD_NOW | RTLD_NOLOAD);
  if (lib == nullptr) return 1;
  opforge::MpiState& st = opforge::State();
  std::lock_guard<std::mutex> lock(st.mu);
  auto find = [lib](auto* fn, const char* name) {
    *fn = reinterpret_cast<std::remove_pointer_t<decltype(fn)>>(dlsym(lib, name));
    return *fn != nullptr;
  };
  const bool all = find(&st.iallreduce, "MPI_Iallreduce") & find(&st.allreduce, "MPI_Allreduce") &
                   find(&st.iallgather, "MPI_Iallgather") & find(&st.allgather, "MPI_Allgather") &
                   find(&st.ialltoall, "MPI_Ialltoall") & find(&st.alltoall, "MPI_Alltoall") &
                   find(&st.ireduce_scatter_block, "MPI_Ireduce_scatter_block") &
                   find(&st.reduce_scatter_block, "MPI_Reduce_scatter_block") & find(&st.test, "MPI_Test");
  if (!all) {
    st.iallreduce = nullptr;  // (the kernels' sign that MPI is not set up)
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
