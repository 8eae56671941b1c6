// The global kernel factory of the opforge core: every kernel library's definitions, merged.
#pragma once

#include <sys/types.h>

#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "opforge/kernel.h"

namespace opforge {

struct KernelEntry {
  const OpfKernelDef* def;
  std::shared_ptr<void> library;  // keeps a loaded user library alive while its kernels exist
  std::string source;             // "builtin" or the library's path
};

// What LoadLibrary did: the library's entries, and whether they were imported by an earlier load.
struct LoadedLibrary {
  bool already_loaded;
  std::vector<size_t> indices;
};

// Thread-safe. Entries are only ever appended and never move, so a reference from entry() stays
// valid for the life of the process, however many libraries are loaded after it was taken.
class KernelFactory {
 public:
  static KernelFactory& Instance();

  // Adds a library's table; returns the indices of the new entries. Adds nothing if any
  // definition has another ABI version.
  std::vector<size_t> Import(const OpfKernelDef* const* defs, int32_t count, std::shared_ptr<void> library,
                             const std::string& source);
  // dlopen()s a kernel library and imports what it registered. Loading a file that is already
  // loaded (by any path to it) imports nothing and returns the first load's entries. Throws with
  // the loader's message.
  LoadedLibrary LoadLibrary(const std::string& path);

  const KernelEntry& entry(size_t index) const;
  size_t size() const;

 private:
  using FileId = std::pair<dev_t, ino_t>;

  mutable std::mutex mu_;            // guards entries_
  std::deque<KernelEntry> entries_;  // a deque: push_back never moves the elements
  std::mutex load_mu_;               // serialises LoadLibrary and guards the two maps below
  std::map<FileId, std::vector<size_t>> by_file_;
  std::map<void*, std::vector<size_t>> by_handle_;
};

}  // namespace opforge
