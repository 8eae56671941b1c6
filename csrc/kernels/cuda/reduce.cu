// ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceAll, ReduceAny: the reducers of opforge/functors/reduce.h (shared with
// csrc/kernels/cpu/reduce.cc) in the passes of reduce.cuh. Instantiated by name
// (opforge/kernels/gpu/reduce.py registers which).
#include "reduce.cuh"
