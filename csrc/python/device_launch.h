// Device kernels launched from C: a GPU call's outputs allocated, its arguments packed and its
// kernels launched with no Python frame (the runtime's allocator is the one Python call left).
#pragma once

#include <pybind11/pybind11.h>

namespace opforge {
namespace device_launch {

// _C.DeviceLaunch and _C.pause_device_launches.
// (module.cc binds Launchable, the base class, first.)
void Bind(pybind11::module_& m);

}  // namespace device_launch
}  // namespace opforge
