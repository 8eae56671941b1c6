// The host emulation of CUDA used by the tests: a .cu file of opforge compiles as host C++ with this
// header forced in front (g++ -include), and opf_emu::Launch runs a kernel the way a GPU would, block by
// block with the grid and block sizes of the real launch.
//
// The threads of a block run concurrently as cooperative fibers (one stack each, switched by a few lines
// of assembly on x86-64, ucontext elsewhere). A thread runs until it reaches a synchronisation point:
//   __syncthreads()                 every thread of the block must arrive, then all go on;
//   __shfl*_sync, __ballot_sync, __any_sync, __all_sync, __syncwarp
//                                   the lanes of its warp (32 threads) exchange values there.
// Between synchronisation points the threads run in a shuffled order (a new permutation every round,
// seeded per launch; OPF_EMU_SEED fixes the seed), so a kernel that reads shared memory another thread
// writes without a barrier between them gives different results from run to run, and the tests catch
// it. A thread that exits while others wait at a barrier, lanes of one warp at different intrinsics, or a
// deadlock end the launch with an error naming the kernel's block and threads (opf_emu_error).
// `__shared__` variables (static and `extern`, the launch's dynamic size) are per block: slots of one
// arena per host thread, since blocks run one after another, filled with a poison pattern before each
// block (NaN in every float type, near the maximum in every integer type of 16 bits or more), so a kernel
// that reads shared memory its block never wrote gives wrong results. Atomics are plain
// read-modify-writes: fibers never preempt each other. The first block of a launch runs on fibers;
// when none of its threads reached a synchronisation point (the grid-stride loops of most kernels), the
// other blocks run their threads one after another on the caller's stack, which is several times
// faster. A thread of such a block that then synchronises is an error (a barrier in some blocks only).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>
#if !defined(__x86_64__)
#include <ucontext.h>
#endif

// Under ThreadSanitizer (scripts/tsan.sh) each fiber is a TSan fiber, switched without synchronisation,
// so accesses of two threads of a block race unless a barrier or warp op orders them: those release and
// acquire a sync object per generation. The emulation's own bookkeeping is not instrumented (OPF_EMU_QUIET).
#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#define OPF_EMU_TSAN 1
#define OPF_EMU_QUIET __attribute__((no_sanitize_thread, noinline))
#else
#define OPF_EMU_TSAN 0
#define OPF_EMU_QUIET
#endif

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
// A marker runtime.py rewrites (see "Shared memory" below); left in place it fails to compile.
#define __shared__ __opf_emu_shared__
#define __align__(n) __attribute__((aligned(n)))
#define __restrict__

struct dim3 {
  unsigned x = 1, y = 1, z = 1;
};

namespace opf_emu {

inline thread_local dim3 thread_index, block_index, block_dim, grid_dim;

// ---------------------------------------------------------------------------------------------
// Shared memory. runtime.py rewrites each declaration of the preprocessed unit (C++ has no per-block
// storage class): `__shared__ T name[N];` into a reference to a slot of this host thread's arena,
//   auto& name = opf_emu::SharedStatic([]() -> auto& { static T name[N]; return name; }());
// (the lambda's static is never used: its address names the declaration, one per template instance),
// and `extern __shared__ T buf[];` into `T* const buf = opf_emu::DynamicShared();`, the launch's dynamic
// shared memory. Both are poisoned before every block, so what a block reads before writing is not what
// the previous block left. Slots are laid out afresh by each launch, so a kernel without shared memory
// (the grid-stride loops) poisons nothing.

// Bytes FF 7F repeated from even addresses: the 16-bit word 0x7FFF, so float16, bfloat16, float32 and
// float64 read a NaN, and int16/int32/int64 read a value near their maximum (0x7FFF, 0x7FFF7FFF, ...).
OPF_EMU_QUIET inline void Poison(void* begin, size_t bytes) {
  auto* p = static_cast<unsigned char*>(begin);
  auto* end = p + bytes;
  if (p < end && (reinterpret_cast<uintptr_t>(p) & 1)) *p++ = 0x7F;
  for (; p + 1 < end; p += 2) {
    p[0] = 0xFF;
    p[1] = 0x7F;
  }
  if (p < end) *p = 0xFF;
}

constexpr size_t kSharedBytes = 48 * 1024;  // static + dynamic shared memory of a block without opting in
constexpr size_t kSharedAlign = 16;

struct alignas(kSharedAlign) SharedChunk {
  unsigned char bytes[kSharedAlign];
};

struct SharedMemory {
  std::vector<SharedChunk> arena = std::vector<SharedChunk>(kSharedBytes / sizeof(SharedChunk));  // the
                                                          // static variables, in the order first met
  std::pair<const void*, size_t> slots[256];              // declaration -> offset in the arena
  size_t slot_count = 0;
  size_t used = 0;                                         // bytes of the arena this launch has laid out
  std::vector<SharedChunk> dynamic;                        // the launch's dynamic shared memory
  size_t dynamic_bytes = 0;
  bool overflow = false;  // static + dynamic past kSharedBytes: the launch fails after the block

  void StartLaunch(size_t dynamic_size) {
    slot_count = 0;
    used = 0;
    overflow = false;
    dynamic_bytes = dynamic_size;
    dynamic.resize((dynamic_size + sizeof(SharedChunk) - 1) / sizeof(SharedChunk));
  }
  void PoisonAll() {
    if (used > 0) Poison(arena.data(), used);
    if (dynamic_bytes > 0) Poison(dynamic.data(), dynamic_bytes);
  }
  OPF_EMU_QUIET void* Slot(const void* site, size_t bytes) {
    for (size_t i = 0; i < slot_count; ++i)
      if (slots[i].first == site) return reinterpret_cast<unsigned char*>(arena.data()) + slots[i].second;
    const size_t offset = (used + kSharedAlign - 1) / kSharedAlign * kSharedAlign;
    if (offset + bytes + dynamic_bytes > kSharedBytes || slot_count == std::size(slots)) {
      overflow = true;  // still a valid pointer, so the block can finish before the error is reported
      static thread_local std::vector<std::vector<SharedChunk>> spill;
      spill.emplace_back((bytes + sizeof(SharedChunk) - 1) / sizeof(SharedChunk));
      return spill.back().data();
    }
    slots[slot_count++] = {site, offset};
    used = offset + bytes;
    void* slot = reinterpret_cast<unsigned char*>(arena.data()) + offset;
    Poison(slot, bytes);
    return slot;
  }
};

inline thread_local SharedMemory shared_memory;

template <typename V>
V& SharedStatic(V& site) {
  return *static_cast<V*>(shared_memory.Slot(&site, sizeof(V)));
}

struct DynamicSharedPointer {
  template <typename T>
  operator T*() const {
    return shared_memory.dynamic_bytes > 0 ? reinterpret_cast<T*>(shared_memory.dynamic.data()) : nullptr;
  }
};
inline DynamicSharedPointer DynamicShared() { return {}; }

// ---------------------------------------------------------------------------------------------
// Context switching

#if defined(__x86_64__)
// Saves the callee-saved registers on the current stack, stores its pointer in *from, loads `to` and
// restores what is saved there (System V ABI: rbx, rbp, r12-r15; the rest are the caller's to save).
extern "C" void opf_emu_switch(void** from, void* to);
asm(R"(
  .text
  .globl opf_emu_switch
  .type opf_emu_switch,@function
opf_emu_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size opf_emu_switch, .-opf_emu_switch
  .section .note.GNU-stack,"",@progbits
  .text
)");
#endif

enum class Wait { kRunnable, kBarrier, kWarp, kDone };
enum class WarpOp { kNone, kShfl, kBallot, kSync };

struct Fiber {
  int tid = 0;  // linear thread index in the block
  dim3 index;
  Wait wait = Wait::kRunnable;
  WarpOp op = WarpOp::kNone;
  uint64_t value = 0;   // the lane's value at a warp op
  int src = 0;          // the lane it reads (shfl)
  unsigned mask = 0;    // the participating lanes
  uint64_t result = 0;  // what the warp op gives it
  unsigned barriers = 0, warp_ops = 0;  // passed so far: the generation of the next one (TSan's sync objects)
  void* tsan = nullptr;                 // its TSan fiber
#if defined(__x86_64__)
  void* sp = nullptr;
#else
  ucontext_t context;
#endif
  char* stack = nullptr;
};

// A fiber's stack. TSan's instrumentation and its reports (symbolised on the stack of the thread that
// races) need far more; the pages are not touched until used.
constexpr size_t kStackBytes = OPF_EMU_TSAN ? 4 * 1024 * 1024 : 64 * 1024;

struct Block;
inline thread_local Block* current_block = nullptr;

struct Block {
  std::vector<Fiber> fibers;
  Fiber* running = nullptr;
  std::string error;
  void (*body)(void*) = nullptr;  // runs the kernel for the thread in thread_index
  void* body_arg = nullptr;
#if defined(__x86_64__)
  void* scheduler_sp = nullptr;
#else
  ucontext_t scheduler;
#endif
  std::unique_ptr<char[]> stacks;  // not value-initialised: untouched pages cost no memory
  size_t stack_count = 0;
  // TSan: a fiber context per thread (kept between blocks: a finished fiber's shadow stack is empty), the
  // scheduler's, and the sync objects (start, end, barrier and per-warp generations modulo 2).
  std::vector<void*> tsan_fibers;
  void* tsan_scheduler = nullptr;
  char tsan_sync[4 + 2 * 32];  // addresses only: start, end, barrier x2, then warp x2 for up to 32 warps

  OPF_EMU_QUIET void Prepare(int n) {
    if (stack_count < static_cast<size_t>(n)) {
      stacks.reset(new char[static_cast<size_t>(n) * kStackBytes]);
      stack_count = static_cast<size_t>(n);
    }
    fibers.assign(static_cast<size_t>(n), Fiber{});
    for (int i = 0; i < n; ++i) fibers[i].stack = stacks.get() + static_cast<size_t>(i) * kStackBytes;
#if OPF_EMU_TSAN
    tsan_scheduler = __tsan_get_current_fiber();
    while (tsan_fibers.size() < static_cast<size_t>(n)) tsan_fibers.push_back(__tsan_create_fiber(0));
    for (int i = 0; i < n; ++i) fibers[i].tsan = tsan_fibers[i];
#endif
  }
  // After an error its fibers stopped inside the kernel: what they did comes before what the host does
  // next (as if they had finished), and their TSan contexts are not reused.
  OPF_EMU_QUIET void DropFibers() {
#if OPF_EMU_TSAN
    void** contexts = tsan_fibers.data();  // raw loops: std's helpers are instrumented, even in here
    void* end = EndSync();
    for (size_t i = 0, count = tsan_fibers.size(); i < count; ++i) {
      __tsan_switch_to_fiber(contexts[i], __tsan_switch_to_fiber_no_sync);
      __tsan_release(end);
    }
    __tsan_switch_to_fiber(tsan_scheduler, __tsan_switch_to_fiber_no_sync);
    __tsan_acquire(EndSync());
    for (void* f : tsan_fibers) __tsan_destroy_fiber(f);
    tsan_fibers.clear();
#endif
  }
  void* StartSync() { return &tsan_sync[0]; }
  void* EndSync() { return &tsan_sync[1]; }
  void* BarrierSync(unsigned generation) { return &tsan_sync[2 + generation % 2]; }
  void* WarpSync(int warp, unsigned generation) { return &tsan_sync[4 + 2 * warp + generation % 2]; }
};

// Happens-before edges for TSan (nothing otherwise).
inline void TsanRelease(void* sync) {
#if OPF_EMU_TSAN
  __tsan_release(sync);
#else
  (void)sync;
#endif
}
inline void TsanAcquire(void* sync) {
#if OPF_EMU_TSAN
  __tsan_acquire(sync);
#else
  (void)sync;
#endif
}

[[noreturn]] inline void FiberMain();

OPF_EMU_QUIET inline void StartFiber(Fiber* f) {
#if defined(__x86_64__)
  // A stack whose first switch "returns" into FiberMain, 16-byte aligned as a call would leave it.
  uintptr_t top = reinterpret_cast<uintptr_t>(f->stack + kStackBytes) & ~uintptr_t(15);
  void** sp = reinterpret_cast<void**>(top);
  *--sp = nullptr;                                        // FiberMain's (never used) return address
  *--sp = reinterpret_cast<void*>(&FiberMain);            // where the switch returns to
  for (int r = 0; r < 6; ++r) *--sp = nullptr;            // rbp, rbx, r12-r15
  f->sp = sp;
#else
  getcontext(&f->context);
  f->context.uc_stack.ss_sp = f->stack;
  f->context.uc_stack.ss_size = kStackBytes;
  f->context.uc_link = nullptr;
  makecontext(&f->context, reinterpret_cast<void (*)()>(&FiberMain), 0);
#endif
}

OPF_EMU_QUIET inline void SwitchToFiber(Block* b, Fiber* f) {
  b->running = f;
  thread_index = f->index;
#if OPF_EMU_TSAN
  __tsan_switch_to_fiber(f->tsan, __tsan_switch_to_fiber_no_sync);
#endif
#if defined(__x86_64__)
  opf_emu_switch(&b->scheduler_sp, f->sp);
#else
  swapcontext(&b->scheduler, &f->context);
#endif
  b->running = nullptr;
}

// From a fiber back to the scheduler (the fiber resumes here when it is switched to again).
OPF_EMU_QUIET inline void Yield() {
  Block* b = current_block;
  Fiber* f = b->running;
#if OPF_EMU_TSAN
  __tsan_switch_to_fiber(b->tsan_scheduler, __tsan_switch_to_fiber_no_sync);
#endif
#if defined(__x86_64__)
  opf_emu_switch(&f->sp, b->scheduler_sp);
#else
  swapcontext(&f->context, &b->scheduler);
#endif
  thread_index = f->index;
}

[[noreturn]] OPF_EMU_QUIET inline void FiberMain() {
  Block* b = current_block;
  TsanAcquire(b->StartSync());  // after what the host did before the block (poison, inputs)
  b->body(b->body_arg);
  TsanRelease(b->EndSync());  // before what the host does after it (next block, reading outputs)
  b->running->wait = Wait::kDone;
  Yield();
  std::abort();  // a finished fiber is never resumed
}

// ---------------------------------------------------------------------------------------------
// Synchronisation points (called from kernels)

inline bool InFiber() { return current_block != nullptr && current_block->running != nullptr; }
inline thread_local bool synced_outside = false;  // a block run without fibers reached a synchronisation point
inline thread_local bool synced = false;          // a thread of the block reached a synchronisation point

OPF_EMU_QUIET inline void Barrier() {
  synced = true;
  if (!InFiber()) {
    synced_outside = true;
    return;
  }
  Block* b = current_block;
  Fiber* f = b->running;
  void* sync = b->BarrierSync(f->barriers++);
  TsanRelease(sync);
  f->wait = Wait::kBarrier;
  Yield();
  TsanAcquire(sync);
}

OPF_EMU_QUIET inline uint64_t WarpExchange(WarpOp op, unsigned mask, uint64_t value, int src) {
  synced = true;
  if (!InFiber()) {
    synced_outside = true;
    return value;
  }
  Block* b = current_block;
  Fiber* f = b->running;
  f->wait = Wait::kWarp;
  f->op = op;
  f->mask = mask;
  f->value = value;
  f->src = src;
  void* sync = b->WarpSync(f->tid / 32, f->warp_ops++);
  TsanRelease(sync);
  Yield();
  TsanAcquire(sync);
  return f->result;
}

inline int LinearTid() {
  return static_cast<int>(thread_index.x + block_dim.x * (thread_index.y + block_dim.y * thread_index.z));
}
inline int LaneId() { return LinearTid() % 32; }

// The warp ops resolved: for each warp whose live lanes all wait at one op, give each its result.
OPF_EMU_QUIET inline bool ResolveWarps(Block* b) {
  bool progress = false;
  const int n = static_cast<int>(b->fibers.size());
  for (int w = 0; w < n; w += 32) {
    const int end = std::min(n, w + 32);
    bool any = false, all = true;
    WarpOp op = WarpOp::kNone;
    for (int t = w; t < end; ++t) {
      Fiber& f = b->fibers[t];
      if (f.wait == Wait::kDone) continue;
      if (f.wait != Wait::kWarp) {
        all = false;
        continue;
      }
      if (any && f.op != op) {
        b->error = "lanes of warp " + std::to_string(w / 32) + " wait at different warp intrinsics";
        return false;
      }
      any = true;
      op = f.op;
    }
    if (!any || !all) continue;
    uint64_t ballot = 0;
    for (int t = w; t < end; ++t) {
      Fiber& f = b->fibers[t];
      if (f.wait == Wait::kWarp && f.value) ballot |= uint64_t(1) << (t - w);
    }
    for (int t = w; t < end; ++t) {
      Fiber& f = b->fibers[t];
      if (f.wait != Wait::kWarp) continue;
      if (op == WarpOp::kShfl) {
        const int src = w + f.src;
        const bool live = f.src >= 0 && f.src < 32 && src < end && b->fibers[src].wait == Wait::kWarp;
        f.result = live ? b->fibers[src].value : f.value;
      } else if (op == WarpOp::kBallot) {
        f.result = ballot & f.mask;
      }
    }
    for (int t = w; t < end; ++t)  // released only once every lane has its result
      if (b->fibers[t].wait == Wait::kWarp) b->fibers[t].wait = Wait::kRunnable;
    progress = true;
  }
  return progress;
}

inline uint64_t NextSeed() {
  static std::atomic<uint64_t> launches{0};
  static const char* fixed = std::getenv("OPF_EMU_SEED");
  const uint64_t n = launches.fetch_add(1);
  return fixed ? std::strtoull(fixed, nullptr, 10) + n : 0x9e3779b97f4a7c15ULL * (n + 1);
}

// Runs one block on fibers; returns false with b->error set on a synchronisation error.
OPF_EMU_QUIET inline bool RunBlockOnFibers(Block* b, int n, std::mt19937_64& rng) {
  b->Prepare(n);
  TsanRelease(b->StartSync());
  for (int t = 0; t < n; ++t) {
    Fiber& f = b->fibers[t];
    f.tid = t;
    f.index = dim3{static_cast<unsigned>(t % block_dim.x), static_cast<unsigned>((t / block_dim.x) % block_dim.y),
                   static_cast<unsigned>(t / (block_dim.x * block_dim.y))};
    StartFiber(&f);
  }
  std::vector<int> order(static_cast<size_t>(n));
  for (int t = 0; t < n; ++t) order[t] = t;
  while (true) {
    std::shuffle(order.begin(), order.end(), rng);
    bool ran = false;
    for (int t : order) {
      Fiber& f = b->fibers[t];
      if (f.wait != Wait::kRunnable) continue;
      SwitchToFiber(b, &f);  // runs to its next synchronisation point or its end
      ran = true;
    }
    if (!b->error.empty()) return b->DropFibers(), false;
    int done = 0, at_barrier = 0;
    for (const Fiber& f : b->fibers) {
      done += f.wait == Wait::kDone;
      at_barrier += f.wait == Wait::kBarrier;
    }
    if (done == n) {
      TsanAcquire(b->EndSync());
      return true;
    }
    if (ResolveWarps(b) || ran) continue;
    if (!b->error.empty()) return b->DropFibers(), false;
    if (at_barrier + done == n && done == 0) {
      for (Fiber& f : b->fibers) f.wait = Wait::kRunnable;
      continue;
    }
    if (at_barrier + done == n) {
      b->error = std::to_string(done) + " thread(s) exited while " + std::to_string(at_barrier) +
                 " wait at __syncthreads() (a barrier every thread of the block must reach)";
    } else {
      b->error = "the block's threads wait at different synchronisation points (a barrier inside divergent "
                 "code, or a warp intrinsic some lanes never reach)";
    }
    b->DropFibers();
    return false;
  }
}

inline thread_local std::string last_error;
inline thread_local Block block_state;  // the fibers' stacks, reused by every launch of this thread

template <typename... A, std::size_t... I>
void Call(void (*kernel)(A...), void** args, std::index_sequence<I...>) {
  kernel(*static_cast<std::remove_cv_t<std::remove_reference_t<A>>*>(args[I])...);
}

template <typename... A>
struct Body {
  void (*kernel)(A...);
  void** args;
  static void Run(void* self) {
    auto* me = static_cast<Body*>(self);
    Call(me->kernel, me->args, std::index_sequence_for<A...>{});
  }
};

inline std::string BlockName(unsigned bx, unsigned by, unsigned bz) {
  return "block (" + std::to_string(bx) + ", " + std::to_string(by) + ", " + std::to_string(bz) + ")";
}

inline int SharedOverflow(unsigned bx, unsigned by, unsigned bz, size_t dynamic_bytes) {
  last_error = BlockName(bx, by, bz) + " uses more than " + std::to_string(kSharedBytes) +
               " bytes of shared memory (its static __shared__ variables and " + std::to_string(dynamic_bytes) +
               " dynamic bytes), more than a block gets without opting in";
  return 1;
}

// What a GPU refuses to launch (cudaErrorInvalidConfiguration / invalid value); empty when valid.
inline std::string InvalidLaunch(const unsigned* grid, const unsigned* block, size_t shared_bytes) {
  if (grid[0] == 0 || grid[1] == 0 || grid[2] == 0 || block[0] == 0 || block[1] == 0 || block[2] == 0)
    return "a grid or block with a zero dimension is an invalid launch on a GPU (launch nothing instead)";
  if (static_cast<uint64_t>(block[0]) * block[1] * block[2] > 1024)
    return "a block of more than 1024 threads is an invalid launch on a GPU";
  if (shared_bytes > kSharedBytes)
    return "a launch asks for " + std::to_string(shared_bytes) + " bytes of dynamic shared memory, more than the " +
           std::to_string(kSharedBytes) + " a block gets without opting in";
  return {};
}

// args[i] points at the bytes of parameter i, as cuLaunchKernel's kernelParams do; shared_bytes is the
// launch's dynamic shared memory. Returns 0, or 1 with the error in opf_emu_error().
template <typename... A>
int Launch(void (*kernel)(A...), const unsigned* grid, const unsigned* block, void** args, size_t shared_bytes) {
  last_error = InvalidLaunch(grid, block, shared_bytes);
  if (!last_error.empty()) return 1;
  SharedMemory& shared = shared_memory;
  shared.StartLaunch(shared_bytes);
  grid_dim = dim3{grid[0], grid[1], grid[2]};
  block_dim = dim3{block[0], block[1], block[2]};
  const int n = static_cast<int>(block[0] * block[1] * block[2]);
  Body<A...> body{kernel, args};
  Block& state = block_state;
  std::mt19937_64 rng(NextSeed());
  bool fibers = true;  // until the first block has shown the kernel never synchronises
  synced = synced_outside = false;
  for (unsigned bz = 0; bz < grid[2]; ++bz)
    for (unsigned by = 0; by < grid[1]; ++by)
      for (unsigned bx = 0; bx < grid[0]; ++bx) {
        block_index = dim3{bx, by, bz};
        shared.PoisonAll();  // every block starts with poisoned shared memory
        if (!fibers) {
          for (unsigned tz = 0; tz < block[2]; ++tz)
            for (unsigned ty = 0; ty < block[1]; ++ty)
              for (unsigned tx = 0; tx < block[0]; ++tx) {
                thread_index = dim3{tx, ty, tz};
                Call(kernel, args, std::index_sequence_for<A...>{});
              }
          if (shared.overflow) return SharedOverflow(bx, by, bz, shared_bytes);
          if (synced_outside) {
            last_error = BlockName(bx, by, bz) +
                         " reached a synchronisation point that the launch's first block never reached (a "
                         "barrier or warp intrinsic in some blocks only)";
            return 1;
          }
          continue;
        }
        state.error.clear();
        state.body = &Body<A...>::Run;
        state.body_arg = &body;
        current_block = &state;
        const bool ok = RunBlockOnFibers(&state, n, rng);
        current_block = nullptr;
        if (!ok) {
          last_error = BlockName(bx, by, bz) + " of " + std::to_string(n) + " threads: " + state.error;
          return 1;
        }
        if (shared.overflow) return SharedOverflow(bx, by, bz, shared_bytes);
        fibers = synced;
      }
  return 0;
}

template <typename T>
uint64_t Bits(T v) {
  static_assert(sizeof(T) <= 8, "warp intrinsics move values of at most 8 bytes");
  uint64_t out = 0;
  std::memcpy(&out, &v, sizeof(T));
  return out;
}

template <typename T>
T FromBits(uint64_t bits) {
  T v;
  std::memcpy(&v, &bits, sizeof(T));
  return v;
}

}  // namespace opf_emu

// Each emulated module is one translation unit (a .cu and its launchers), so this is defined once per library.
extern "C" __attribute__((visibility("default"), used)) const char* opf_emu_error() {
  return opf_emu::last_error.c_str();
}

#define threadIdx opf_emu::thread_index
#define blockIdx opf_emu::block_index
#define blockDim opf_emu::block_dim
#define gridDim opf_emu::grid_dim
#define warpSize 32

inline void __syncthreads() {
  opf_emu::Barrier();
}
inline void __syncwarp(unsigned mask = 0xffffffffu) {
  opf_emu::WarpExchange(opf_emu::WarpOp::kSync, mask, 0, 0);
}
inline void __threadfence() {}
inline void __threadfence_block() {}

inline int opf_emu_segment_lane(int lane, int width) { return lane - lane % width; }

template <typename T>
T __shfl_sync(unsigned mask, T var, int src_lane, int width = 32) {
  const int lane = opf_emu::LaneId();
  const int src = opf_emu_segment_lane(lane, width) + ((src_lane % width) + width) % width;
  return opf_emu::FromBits<T>(opf_emu::WarpExchange(opf_emu::WarpOp::kShfl, mask, opf_emu::Bits(var), src));
}
template <typename T>
T __shfl_xor_sync(unsigned mask, T var, int lane_mask, int width = 32) {
  const int lane = opf_emu::LaneId();
  const int base = opf_emu_segment_lane(lane, width);
  int src = lane ^ lane_mask;
  if (src < base || src >= base + width) src = lane;
  return opf_emu::FromBits<T>(opf_emu::WarpExchange(opf_emu::WarpOp::kShfl, mask, opf_emu::Bits(var), src));
}
template <typename T>
T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = 32) {
  const int lane = opf_emu::LaneId();
  const int base = opf_emu_segment_lane(lane, width);
  int src = lane + static_cast<int>(delta);
  if (src >= base + width) src = lane;
  return opf_emu::FromBits<T>(opf_emu::WarpExchange(opf_emu::WarpOp::kShfl, mask, opf_emu::Bits(var), src));
}
template <typename T>
T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = 32) {
  const int lane = opf_emu::LaneId();
  const int base = opf_emu_segment_lane(lane, width);
  int src = lane - static_cast<int>(delta);
  if (src < base) src = lane;
  return opf_emu::FromBits<T>(opf_emu::WarpExchange(opf_emu::WarpOp::kShfl, mask, opf_emu::Bits(var), src));
}
inline unsigned __ballot_sync(unsigned mask, int predicate) {
  return static_cast<unsigned>(opf_emu::WarpExchange(opf_emu::WarpOp::kBallot, mask, predicate != 0, 0));
}
inline int __any_sync(unsigned mask, int predicate) { return __ballot_sync(mask, predicate) != 0; }
inline int __all_sync(unsigned mask, int predicate) { return __ballot_sync(mask, predicate) == __ballot_sync(mask, 1); }
inline unsigned __activemask() { return 0xffffffffu; }

namespace opf_emu {
// A read-modify-write of *address: plain, since fibers never preempt each other; under TSan a relaxed
// atomic compare-and-swap, so that atomics of two threads are not reported as a race.
template <typename T, typename F>
T AtomicUpdate(T* address, F update) {
#if OPF_EMU_TSAN
  T old;
  __atomic_load(address, &old, __ATOMIC_RELAXED);
  T next = update(old);
  while (!__atomic_compare_exchange(address, &old, &next, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
    next = update(old);
  return old;
#else
  const T old = *address;
  *address = update(old);
  return old;
#endif
}
}  // namespace opf_emu

template <typename T>
T atomicAdd(T* address, T value) {
  return opf_emu::AtomicUpdate(address, [&](T old) { return T(old + value); });
}
template <typename T>
T atomicSub(T* address, T value) {
  return opf_emu::AtomicUpdate(address, [&](T old) { return T(old - value); });
}
template <typename T>
T atomicMax(T* address, T value) {
  return opf_emu::AtomicUpdate(address, [&](T old) { return value > old ? value : old; });
}
template <typename T>
T atomicMin(T* address, T value) {
  return opf_emu::AtomicUpdate(address, [&](T old) { return value < old ? value : old; });
}
template <typename T>
T atomicExch(T* address, T value) {
  return opf_emu::AtomicUpdate(address, [&](T) { return value; });
}
template <typename T>
T atomicCAS(T* address, T compare, T value) {
  return opf_emu::AtomicUpdate(address, [&](T old) { return old == compare ? value : old; });
}
