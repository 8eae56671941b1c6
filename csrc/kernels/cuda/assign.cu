// Assign: variable = value (CopyKernel into the variable); AssignSub: variable = variable - value
// (SameShapeBinaryKernel with SubOp, writing into the variable: elementwise, so in place is safe).
#include "copy.cuh"
#include "elementwise.cuh"
#include "opforge/functors/arithmetic.h"
