// A caching allocator for kernel outputs and workspaces.
//
// Large buffers are carved from anonymous mmap()s, rounded up to a size bucket, and kept on a
// free list of their bucket when released, so the next request of that bucket reuses memory
// that is already mapped and faulted in (a fresh 64 MB buffer costs ~15,600 page faults).
//
// * Buckets: 4 KiB multiples up to 16 KiB, then four steps per power of two (a request is
//   rounded up by at most 25%, 12.5% on average). A request is served only by a block of its
//   own bucket: no splitting, so no fragmentation inside the pool.
// * Blocks are page aligned (so 64-byte aligned), never madvise(DONTNEED)ed while cached: reuse
//   takes no page faults. The first request of a bucket is a miss and maps fresh memory.
// * A cap on cached bytes: a released block that would take the cache over it goes back to the
//   OS at once. EmptyCache() returns every cached block to the OS; blocks in use are untouched.
// * Thread-safe: one mutex guards the free lists and counters; mmap/munmap run outside it.
//   Nothing here touches Python, so it may be called with or without the GIL.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

namespace opforge {
namespace memory {

constexpr size_t kBlockAlignment = 64;               // every block is at least this aligned
constexpr size_t kDefaultMinPooledBytes = 64 << 10;  // smaller arrays keep NumPy's allocator
constexpr size_t kDefaultMaxCachedBytes = size_t{1} << 30;

struct PoolStats {
  int64_t bytes_in_use = 0;            // bucket bytes of the blocks handed out and not yet released
  int64_t requested_bytes_in_use = 0;  // the bytes asked for by those blocks' owners
  int64_t bytes_cached = 0;            // bytes of free blocks kept for reuse
  int64_t peak_bytes_in_use = 0;       // highest bytes_in_use since the last ResetStats()
  int64_t blocks_in_use = 0;
  int64_t blocks_cached = 0;
  int64_t hits = 0;      // requests served from the cache
  int64_t misses = 0;    // requests that mapped fresh memory
  int64_t frees = 0;     // blocks released by their owners
  int64_t releases = 0;  // blocks returned to the OS (over the cap, EmptyCache, a lowered cap)
  int64_t max_cached_bytes = 0;
};

class CachingAllocator {
 public:
  // The process-wide pool. Never destroyed, so arrays that die during interpreter shutdown can
  // still hand their blocks back.
  static CachingAllocator& Instance();

  // The bucket a request of `nbytes` is served from (>= nbytes, a multiple of the page size).
  static size_t BucketSize(size_t nbytes);

  // A block of BucketSize(nbytes) bytes; null when the OS refuses even after the cache was emptied.
  // `*block_bytes` receives the bucket size, which Free needs back.
  void* Allocate(size_t nbytes, size_t* block_bytes);
  // Returns a block from Allocate; `requested` is the nbytes it was allocated with.
  void Free(void* ptr, size_t block_bytes, size_t requested);

  // Returns every cached block to the OS; returns the bytes released.
  size_t EmptyCache();
  PoolStats Stats() const;
  // Zeroes the counters and sets the peak to the bytes in use now.
  void ResetStats();

  // Beyond this many cached bytes, released blocks go back to the OS. Lowering it trims the cache.
  void SetMaxCachedBytes(size_t bytes);
  size_t MaxCachedBytes() const;

 private:
  CachingAllocator();
  void TakeOverCap(size_t cap, std::vector<std::pair<void*, size_t>>* out);  // mutex held

  mutable std::mutex mu_;
  std::map<size_t, std::vector<void*>> free_;  // bucket size -> cached blocks (LIFO)
  size_t max_cached_ = kDefaultMaxCachedBytes;
  PoolStats stats_;
};

// A workspace for C++ code of the core: a pooled buffer released when it goes out of scope.
class PooledBuffer {
 public:
  PooledBuffer() = default;
  explicit PooledBuffer(size_t nbytes) : requested_(nbytes) {
    if (nbytes > 0) data_ = CachingAllocator::Instance().Allocate(nbytes, &block_);
  }
  ~PooledBuffer() { Reset(); }
  PooledBuffer(const PooledBuffer&) = delete;
  PooledBuffer& operator=(const PooledBuffer&) = delete;
  PooledBuffer(PooledBuffer&& o) noexcept : data_(o.data_), block_(o.block_), requested_(o.requested_) {
    o.data_ = nullptr;
  }
  PooledBuffer& operator=(PooledBuffer&& o) noexcept {
    if (this != &o) {
      Reset();
      data_ = o.data_;
      block_ = o.block_;
      requested_ = o.requested_;
      o.data_ = nullptr;
    }
    return *this;
  }

  void* data() const { return data_; }
  size_t size() const { return requested_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }
  void Reset() {
    if (data_ != nullptr) CachingAllocator::Instance().Free(data_, block_, requested_);
    data_ = nullptr;
  }

 private:
  void* data_ = nullptr;
  size_t block_ = 0;
  size_t requested_ = 0;
};

}  // namespace memory
}  // namespace opforge
