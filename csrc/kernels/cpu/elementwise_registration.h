// Registration macros of the elementwise C++ kernels (elemwise.cc, math_ext.cc, nn_activation.cc): one
// KernelAttr per dtype, every input and the output of that dtype. REG_BROADCAST needs kernels/cpu/broadcast.h.
#pragma once

#include "kernels/cpu/elementwise.h"

#define OPF_ID(T) ::opforge::TypeIdOf<T>::value
#define REG_UNARY(OP, FUNCTOR, T) \
  MS_REG_CPU_KERNEL(OP, KernelAttr().AddInputAttr(OPF_ID(T)).AddOutputAttr(OPF_ID(T)), UnaryCpuKernel<T, FUNCTOR>)
#define REG_BROADCAST(OP, FUNCTOR, T)                                                                     \
  MS_REG_CPU_KERNEL(OP, KernelAttr().AddInputAttr(OPF_ID(T)).AddInputAttr(OPF_ID(T)).AddOutputAttr(OPF_ID(T)), \
                    BroadcastBinaryCpuKernel<T, FUNCTOR>)
// REG (one of the above, or a file's own) for each float type.
#define REG_FLOATS(REG, OP, FUNCTOR) \
  REG(OP, FUNCTOR, float16);         \
  REG(OP, FUNCTOR, bfloat16);        \
  REG(OP, FUNCTOR, float);           \
  REG(OP, FUNCTOR, double)
