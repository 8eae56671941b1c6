// SeLU, CeLU, Softsign, HShrink, SoftShrink, Mish: the math of opforge/functors/nn_activation.h in
// the unary loop of elementwise.cuh (registrations: opforge/kernels/gpu/nn_activation.py).
#include "elementwise.cuh"
#include "opforge/functors/nn_activation.h"
