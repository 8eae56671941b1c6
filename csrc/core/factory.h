// The global kernel factory of the opforge core: every kernel library's definitions, merged.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "opforge/kernel.h"

namespace opforge {

struct KernelEntry {
  const OpfKernelDef* def;
  std::shared_ptr<void> library;  // keeps a loaded user library alive while its kernels exist
  std::string source;             // "builtin" or the library's path
};

class KernelFactory {
 public:
  static KernelFactory& Instance();

  // Adds a library's table; returns the indices of the new entries.
  std::vector<size_t> Import(const OpfKernelDef* const* defs, int32_t count, std::shared_ptr<void> library,
                             const std::string& source);
  // dlopen()s a kernel library and imports what it registered. Throws with the loader's message.
  std::vector<size_t> LoadLibrary(const std::string& path);

  const KernelEntry& entry(size_t index) const { return entries_.at(index); }
  size_t size() const { return entries_.size(); }

 private:
  std::vector<KernelEntry> entries_;
};

}  // namespace opforge
