#include "core/factory.h"

#include <dlfcn.h>

#include <stdexcept>

namespace opforge {

KernelFactory& KernelFactory::Instance() {
  static KernelFactory factory;
  return factory;
}

std::vector<size_t> KernelFactory::Import(const OpfKernelDef* const* defs, int32_t count,
                                          std::shared_ptr<void> library, const std::string& source) {
  std::vector<size_t> added;
  for (int32_t i = 0; i < count; ++i) {
    const OpfKernelDef* def = defs[i];
    if (def->abi_version != OPFORGE_KERNEL_ABI_VERSION) {
      throw std::runtime_error("kernel library '" + source + "' was built for kernel ABI version " +
                               std::to_string(def->abi_version) + ", but this opforge uses version " +
                               std::to_string(OPFORGE_KERNEL_ABI_VERSION) + "; rebuild it.");
    }
    added.push_back(entries_.size());
    entries_.push_back(KernelEntry{def, library, source});
  }
  return added;
}

std::vector<size_t> KernelFactory::LoadLibrary(const std::string& path) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    throw std::runtime_error("cannot load kernel library '" + path + "': " + (why ? why : "unknown error"));
  }
  std::shared_ptr<void> library(handle, [](void* h) { dlclose(h); });
  using TableFn = const OpfKernelDef* const* (*)(int32_t*);
  auto table = reinterpret_cast<TableFn>(dlsym(handle, "opforge_kernel_defs"));
  if (table == nullptr) {
    throw std::runtime_error("kernel library '" + path +
                             "' registers no kernels: it exports no opforge_kernel_defs (did it include "
                             "opforge/kernel.h and use MS_REG_CPU_KERNEL?)");
  }
  int32_t count = 0;
  const OpfKernelDef* const* defs = table(&count);
  return Import(defs, count, library, path);
}

}  // namespace opforge
