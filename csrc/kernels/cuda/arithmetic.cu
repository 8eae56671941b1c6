// Add, Sub, Mul, RealDiv, Maximum, Minimum, Equal (broadcasting), Square, Sqrt, SqrtGrad: the math
// of opforge/functors/arithmetic.h in the loops of elementwise.cuh.
#include "elementwise.cuh"
#include "opforge/functors/arithmetic.h"
