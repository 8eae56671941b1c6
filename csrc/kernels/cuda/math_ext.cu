// Sinh, Cosh, Tan, Asin, ACos, Atan, Asinh, Acosh, Atanh, Erfc, Rint, Trunc, Inv, Lgamma, Digamma, Erfinv; Invert, BitwiseAnd,
// BitwiseOr, BitwiseXor; SquaredDifference, Xdivy, Xlogy, DivNoNan, LogicalXor (broadcasting): the math
// of opforge/functors/math_ext.h in the loops of elementwise.cuh (opforge/kernels/gpu/math_ext.py).
#include "elementwise.cuh"
#include "opforge/functors/math_ext.h"
