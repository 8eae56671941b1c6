// Reading a Python class's __slots__ from C: the byte offset of a slot, and the slot of an object.
#pragma once

#include <Python.h>
#include <pybind11/pybind11.h>
#include <structmember.h>

#include <string>

namespace opforge {

// The offset of `type`'s slot `name` (its member descriptor); throws when the class has none.
inline Py_ssize_t SlotOffset(PyTypeObject* type, const char* name) {
  PyObject* descr = PyDict_GetItemString(type->tp_dict, name);  // borrowed
  if (descr == nullptr || Py_TYPE(descr) != &PyMemberDescr_Type) {
    throw pybind11::type_error(std::string("the class ") + type->tp_name + " has no slot '" + name + "'");
  }
  return reinterpret_cast<PyMemberDescrObject*>(descr)->d_member->offset;
}

inline PyObject*& Slot(PyObject* obj, Py_ssize_t offset) {
  return *reinterpret_cast<PyObject**>(reinterpret_cast<char*>(obj) + offset);
}

}  // namespace opforge
