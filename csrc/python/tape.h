// The autodiff tape's hot paths in C (opforge/bprop/tape.py holds the tape and its rules): recording
// a call made under a tape, and the backward walk over the records.
#pragma once

#include <Python.h>
#include <pybind11/pybind11.h>

namespace opforge {
namespace tape {

// Whether `interpreter` is a plain Tape (not a subclass) directly over eager evaluation: the fast
// call path then runs the cached plan and records the call here, with no Python frame.
bool IsEagerTape(PyObject* interpreter);

// Tape.record(prim, args, out): 0, or -1 with a Python error set.
int Record(PyObject* tape, PyObject* prim, PyObject* args, PyObject* out);

// _C.configure_tape(...) and _C.tape_record / _C.tape_backward.
void Bind(pybind11::module_& m);

}  // namespace tape
}  // namespace opforge
