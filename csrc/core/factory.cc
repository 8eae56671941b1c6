#include "core/factory.h"

#include <dlfcn.h>
#include <limits.h>
#include <sys/stat.h>

#include <cstdlib>
#include <optional>
#include <stdexcept>

#include "core/runtime.h"

namespace opforge {
namespace {

// The file behind `path` as (device, inode), so two paths to one file (a symlink, "a/../b") match.
std::optional<std::pair<dev_t, ino_t>> IdentifyFile(const std::string& path) {
  char resolved[PATH_MAX];
  if (realpath(path.c_str(), resolved) == nullptr) return std::nullopt;
  struct stat st;
  if (stat(resolved, &st) != 0) return std::nullopt;
  return std::make_pair(st.st_dev, st.st_ino);
}

}  // namespace

KernelFactory& KernelFactory::Instance() {
  static KernelFactory factory;
  return factory;
}

const KernelEntry& KernelFactory::entry(size_t index) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (index >= entries_.size()) {
    throw std::out_of_range("kernel index " + std::to_string(index) + " is out of range: the factory has " +
                            std::to_string(entries_.size()) + " kernels");
  }
  return entries_[index];
}

size_t KernelFactory::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

std::vector<size_t> KernelFactory::Import(const OpfKernelDef* const* defs, int32_t count,
                                          std::shared_ptr<void> library, const std::string& source) {
  for (int32_t i = 0; i < count; ++i) {
    if (defs[i]->abi_version < OPFORGE_KERNEL_ABI_MIN_VERSION || defs[i]->abi_version > OPFORGE_KERNEL_ABI_VERSION) {
      throw std::runtime_error("kernel library '" + source + "' was built for kernel ABI version " +
                               std::to_string(defs[i]->abi_version) + ", but this opforge loads versions " +
                               std::to_string(OPFORGE_KERNEL_ABI_MIN_VERSION) + " to " +
                               std::to_string(OPFORGE_KERNEL_ABI_VERSION) + "; rebuild it.");
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<size_t> added;
  added.reserve(static_cast<size_t>(count));
  for (int32_t i = 0; i < count; ++i) {
    added.push_back(entries_.size());
    entries_.push_back(KernelEntry{defs[i], library, source});
  }
  return added;
}

LoadedLibrary KernelFactory::LoadLibrary(const std::string& path) {
  std::lock_guard<std::mutex> load_lock(load_mu_);
  const auto file = IdentifyFile(path);
  if (file) {
    auto known = by_file_.find(*file);
    if (known != by_file_.end()) return {true, known->second};
  }
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    throw std::runtime_error("cannot load kernel library '" + path + "': " + (why ? why : "unknown error"));
  }
  // The loader may hand back a library it already has (e.g. found through the search path, or a
  // file replaced on disk under a loaded name): its kernels are in the factory already.
  auto known = by_handle_.find(handle);
  if (known != by_handle_.end()) {
    dlclose(handle);  // drop the reference this dlopen added
    if (file) by_file_[*file] = known->second;
    return {true, known->second};
  }
  std::shared_ptr<void> library(handle, [](void* h) { dlclose(h); });
  using TableFn = const OpfKernelDef* const* (*)(int32_t*);
  auto table = reinterpret_cast<TableFn>(dlsym(handle, "opforge_kernel_defs"));
  if (table == nullptr) {
    throw std::runtime_error("kernel library '" + path +
                             "' registers no kernels: it exports no opforge_kernel_defs (did it include "
                             "opforge/kernel.h and use MS_REG_CPU_KERNEL?)");
  }
  runtime::Bind(handle);
  int32_t count = 0;
  const OpfKernelDef* const* defs = table(&count);
  std::vector<size_t> added = Import(defs, count, library, path);
  by_handle_[handle] = added;
  if (file) by_file_[*file] = added;
  return {false, added};
}

}  // namespace opforge
