// The caching allocator: bucketed free lists over anonymous mmap()s (see allocator.h).
#include "core/allocator.h"

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <utility>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define OPF_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define OPF_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define OPF_POISON(p, n) ((void)(p), (void)(n))
#define OPF_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace opforge {
namespace memory {
namespace {

constexpr size_t kPage = 4096;

void* MapBlock(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
#ifdef MADV_HUGEPAGE
  // Large blocks in transparent huge pages where the system allows it (THP "madvise"), as NumPy does
  // for its own large arrays: a 64 MB MPI all-reduce into a block of 4 KiB pages ran 1.6x slower.
  if (bytes >= (size_t{4} << 20)) madvise(p, bytes, MADV_HUGEPAGE);
#endif
  return p;
}

void UnmapBlock(void* p, size_t bytes) {
  OPF_UNPOISON(p, bytes);  // the next mapping at this address starts clean
  munmap(p, bytes);
}

// Under AddressSanitizer only the requested bytes of a block are addressable: a kernel that writes
// past its output, or reads a cached (freed) block, is reported as it would be with malloc.
void HandOut(void* p, size_t nbytes, size_t block_bytes) {
  OPF_UNPOISON(p, nbytes);
  OPF_POISON(static_cast<char*>(p) + nbytes, block_bytes - nbytes);
}

// The default cap: 1 GiB, or a quarter of the physical memory on a smaller machine.
size_t DefaultMaxCached() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return kDefaultMaxCachedBytes;
  return std::min(kDefaultMaxCachedBytes, static_cast<size_t>(pages) * static_cast<size_t>(page) / 4);
}

}  // namespace

CachingAllocator::CachingAllocator() : max_cached_(DefaultMaxCached()) {}

CachingAllocator& CachingAllocator::Instance() {
  static CachingAllocator* pool = [] {
    auto* p = new CachingAllocator();  // leaked on purpose: see the header
    // A fork() while another thread holds the mutex would leave it locked forever in the child.
    pthread_atfork([] { Instance().mu_.lock(); }, [] { Instance().mu_.unlock(); },
                   [] { Instance().mu_.unlock(); });
    return p;
  }();
  return *pool;
}

size_t CachingAllocator::BucketSize(size_t nbytes) {
  if (nbytes <= 4 * kPage) return std::max<size_t>(1, (nbytes + kPage - 1) / kPage) * kPage;
  // Four steps per power of two: a step is a quarter of the power of two just below nbytes.
  int top = 63 - __builtin_clzll(static_cast<unsigned long long>(nbytes - 1));
  size_t step = size_t{1} << (top - 2);
  return (nbytes + step - 1) & ~(step - 1);
}

void* CachingAllocator::Allocate(size_t nbytes, size_t* block_bytes) {
  const size_t size = BucketSize(nbytes);
  *block_bytes = size;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = free_.find(size);
    if (it != free_.end() && !it->second.empty()) {
      void* p = it->second.back();
      it->second.pop_back();
      stats_.bytes_cached -= static_cast<int64_t>(size);
      stats_.blocks_cached -= 1;
      stats_.hits += 1;
      stats_.bytes_in_use += static_cast<int64_t>(size);
      stats_.requested_bytes_in_use += static_cast<int64_t>(nbytes);
      stats_.blocks_in_use += 1;
      stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
      HandOut(p, nbytes, size);
      return p;
    }
  }
  void* p = MapBlock(size);
  if (p == nullptr) {  // the cache may hold what the OS lacks
    EmptyCache();
    p = MapBlock(size);
    if (p == nullptr) return nullptr;
  }
  std::lock_guard<std::mutex> lock(mu_);
  stats_.misses += 1;
  stats_.bytes_in_use += static_cast<int64_t>(size);
  stats_.requested_bytes_in_use += static_cast<int64_t>(nbytes);
  stats_.blocks_in_use += 1;
  stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
  HandOut(p, nbytes, size);
  return p;
}

void CachingAllocator::Free(void* ptr, size_t block_bytes, size_t requested) {
  if (ptr == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.frees += 1;
    stats_.bytes_in_use -= static_cast<int64_t>(block_bytes);
    stats_.requested_bytes_in_use -= static_cast<int64_t>(requested);
    stats_.blocks_in_use -= 1;
    if (static_cast<size_t>(stats_.bytes_cached) + block_bytes <= max_cached_) {
      OPF_POISON(ptr, block_bytes);
      free_[block_bytes].push_back(ptr);
      stats_.bytes_cached += static_cast<int64_t>(block_bytes);
      stats_.blocks_cached += 1;
      return;
    }
    stats_.releases += 1;
  }
  UnmapBlock(ptr, block_bytes);
}

void CachingAllocator::TakeOverCap(size_t cap, std::vector<std::pair<void*, size_t>>* out) {
  // Largest buckets first: they free the most memory for the fewest future misses.
  for (auto it = free_.rbegin(); it != free_.rend() && static_cast<size_t>(stats_.bytes_cached) > cap; ++it) {
    std::vector<void*>& blocks = it->second;
    while (!blocks.empty() && static_cast<size_t>(stats_.bytes_cached) > cap) {
      out->emplace_back(blocks.back(), it->first);
      blocks.pop_back();
      stats_.bytes_cached -= static_cast<int64_t>(it->first);
      stats_.blocks_cached -= 1;
      stats_.releases += 1;
    }
  }
  for (auto it = free_.begin(); it != free_.end();) it = it->second.empty() ? free_.erase(it) : std::next(it);
}

size_t CachingAllocator::EmptyCache() {
  std::vector<std::pair<void*, size_t>> released;
  {
    std::lock_guard<std::mutex> lock(mu_);
    TakeOverCap(0, &released);
  }
  size_t bytes = 0;
  for (const auto& [p, size] : released) {
    UnmapBlock(p, size);
    bytes += size;
  }
  return bytes;
}

PoolStats CachingAllocator::Stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  PoolStats s = stats_;
  s.max_cached_bytes = static_cast<int64_t>(max_cached_);
  return s;
}

void CachingAllocator::ResetStats() {
  std::lock_guard<std::mutex> lock(mu_);
  stats_.hits = stats_.misses = stats_.frees = stats_.releases = 0;
  stats_.peak_bytes_in_use = stats_.bytes_in_use;
}

void CachingAllocator::SetMaxCachedBytes(size_t bytes) {
  std::vector<std::pair<void*, size_t>> released;
  {
    std::lock_guard<std::mutex> lock(mu_);
    max_cached_ = bytes;
    TakeOverCap(bytes, &released);
  }
  for (const auto& [p, size] : released) UnmapBlock(p, size);
}

size_t CachingAllocator::MaxCachedBytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return max_cached_;
}

}  // namespace memory
}  // namespace opforge
