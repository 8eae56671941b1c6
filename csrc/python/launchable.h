// What the C call path runs: a kernel fixed to its metas and attrs, launched on a call's arrays.
// Two kinds: a C++ kernel of the factory on host arrays (KernelInstance, module.cc) and a device
// kernel launched on a GPU runtime's arrays (DeviceLaunch, device_launch.cc).
#pragma once

#include <Python.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

namespace opforge {

class Launchable {
 public:
  virtual ~Launchable() = default;
  // The output array, or a tuple of them. `reuse`: an array for output 0 that nothing else
  // references (a trace's arena), or null; a kernel that keeps no arena ignores it.
  virtual pybind11::object LaunchArrays(PyObject* const* args, size_t n_in, PyObject* reuse = nullptr) = 0;
  // The input the one output is a view of (Reshape and the like), or -1.
  virtual int view_of() const { return -1; }
  // The output as a view of `array` (only when view_of() >= 0).
  virtual pybind11::object View(PyObject* /*array*/) const { throw std::logic_error("this kernel gives no views"); }
  // The (type, shape) a trace's arena keeps output 0's buffers under; empty: none.
  virtual std::vector<int64_t> ArenaKey() const { return {}; }
};

}  // namespace opforge
