// ReLU, Elu, Sigmoid, Tanh and their grads; Neg, Exp, Log: the math of
// opforge/functors/activation.h in the loops of elementwise.cuh. Instantiated by name
// (opforge/kernels/gpu/activation.py registers which).
#include "elementwise.cuh"
#include "opforge/functors/activation.h"
