// The autodiff tape's hot paths in C; the semantics are opforge/bprop/tape.py's (its docstrings).
#include "python/tape.h"

#include "python/slots.h"

namespace py = pybind11;

namespace opforge {
namespace tape {
namespace {

// What the C tape needs from Python, set once by opforge.bprop.tape (configure_tape).
struct TapeConfig {
  PyTypeObject* tape_type = nullptr;  // Tape
  PyObject* eval = nullptr;  // the bottom interpreter (EVAL)
  PyTypeObject* tensor_type = nullptr;
  Py_ssize_t meta_offset = 0;
  PyTypeObject* parameter_type = nullptr;
  Py_ssize_t version_offset = 0;
  PyObject* diff_dtypes = nullptr;  // frozenset of the dtypes gradients flow through
  PyObject* state = nullptr;  // the threading.local whose `needs` and `reached` bprops read (needs_input_grad,
                              // output_grad_reached)
  // Python helpers for the rare paths: add, zeros_like, get_bprop, _check_versions, _check_grads,
  // _accumulate_sequence, _add_note
  PyObject* add = nullptr;
  PyObject* zeros_like = nullptr;
  PyObject* get_bprop = nullptr;
  PyObject* check_versions = nullptr;
  PyObject* check_grads = nullptr;
  PyObject* accumulate_sequence = nullptr;
  PyObject* add_note = nullptr;
  PyObject* tracked_name = nullptr;
  PyObject* records_name = nullptr;
  PyObject* parent_name = nullptr;
  PyObject* needs_name = nullptr;
  PyObject* reached_name = nullptr;
  PyObject* prim_name = nullptr;
  PyObject* signature_name = nullptr;
  PyObject* bound_inputs_name = nullptr;
};

TapeConfig g_tape;

// A new reference to id(obj), the key of the tape's dicts.
inline PyObject* IdOf(PyObject* obj) { return PyLong_FromVoidPtr(obj); }

// 1 when id(obj) is a key of `dict`, 0 when not, -1 on error.
int HasId(PyObject* dict, PyObject* obj) {
  PyObject* key = IdOf(obj);
  if (key == nullptr) return -1;
  const int found = PyDict_Contains(dict, key);
  Py_DECREF(key);
  return found;
}

inline bool IsSequence(PyObject* obj) { return PyTuple_CheckExact(obj) || PyList_CheckExact(obj); }

// 1 when `arg` (a Tensor, or a tuple/list of them) holds a tracked tensor, 0 when not, -1 on error.
int ReadsTracked(PyObject* tracked, PyObject* arg) {
  if (!IsSequence(arg)) return HasId(tracked, arg);
  PyObject* fast = PySequence_Fast(arg, "");
  if (fast == nullptr) return -1;
  int found = 0;
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(fast) && found == 0; ++i) {
    found = HasId(tracked, PySequence_Fast_GET_ITEM(fast, i));
  }
  Py_DECREF(fast);
  return found;
}

// 1 when `t` is a Tensor of a dtype gradients flow through, 0 when not, -1 on error.
int Differentiable(PyObject* t) {
  if (!PyObject_TypeCheck(t, g_tape.tensor_type)) return 0;
  PyObject* meta = Slot(t, g_tape.meta_offset);
  if (meta == nullptr || !PyTuple_Check(meta) || PyTuple_GET_SIZE(meta) < 1) return 0;
  return PySet_Contains(g_tape.diff_dtypes, PyTuple_GET_ITEM(meta, 0));
}

// tracked[id(out)] = out for a differentiable output not tracked yet.
int Track(PyObject* tracked, PyObject* out) {
  const int differentiable = Differentiable(out);
  if (differentiable <= 0) return differentiable;
  PyObject* key = IdOf(out);
  if (key == nullptr) return -1;
  int status = PyDict_Contains(tracked, key);
  if (status == 0) status = PyDict_SetItem(tracked, key, out);
  Py_DECREF(key);
  return status < 0 ? -1 : 0;
}

// The arguments with the primitive's defaults filled in (a new reference).
PyObject* BoundArguments(PyObject* prim, PyObject* args) {
  PyObject* signature = PyObject_GetAttr(prim, g_tape.signature_name);
  if (signature == nullptr) return nullptr;
  const Py_ssize_t n = PyObject_Length(signature);
  Py_DECREF(signature);
  if (n < 0) return nullptr;
  if (PyTuple_GET_SIZE(args) >= n) {
    Py_INCREF(args);
    return args;
  }
  return PyObject_CallMethodObjArgs(prim, g_tape.bound_inputs_name, args, nullptr);
}

// ((index, version), ...) of the Parameters among `args`, or None (a new reference).
PyObject* Versions(PyObject* args) {
  PyObject* versions = nullptr;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(args); ++i) {
    PyObject* a = PyTuple_GET_ITEM(args, i);
    if (!PyObject_TypeCheck(a, g_tape.parameter_type)) continue;
    if (versions == nullptr && (versions = PyList_New(0)) == nullptr) return nullptr;
    PyObject* version = Slot(a, g_tape.version_offset);
    PyObject* pair = Py_BuildValue("(nO)", i, version != nullptr ? version : Py_None);
    if (pair == nullptr || PyList_Append(versions, pair) < 0) {
      Py_XDECREF(pair);
      Py_DECREF(versions);
      return nullptr;
    }
    Py_DECREF(pair);
  }
  if (versions == nullptr) Py_RETURN_NONE;
  PyObject* tuple = PyList_AsTuple(versions);
  Py_DECREF(versions);
  return tuple;
}

int RecordInto(PyObject* tracked, PyObject* records, PyObject* prim, PyObject* args, PyObject* out) {
  int reads = 0;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(args) && reads == 0; ++i) {
    reads = ReadsTracked(tracked, PyTuple_GET_ITEM(args, i));
  }
  if (reads <= 0) return reads;
  PyObject* bound = BoundArguments(prim, args);
  if (bound == nullptr) return -1;
  int status = 0;
  if (PyTuple_Check(out)) {
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(out) && status == 0; ++i) status = Track(tracked, PyTuple_GET_ITEM(out, i));
  } else {
    status = Track(tracked, out);
  }
  PyObject* versions = status == 0 ? Versions(bound) : nullptr;
  if (versions != nullptr) {
    PyObject* record = PyTuple_Pack(4, prim, bound, out, versions);
    status = record != nullptr ? PyList_Append(records, record) : -1;
    Py_XDECREF(record);
    Py_DECREF(versions);
  } else {
    status = -1;
  }
  Py_DECREF(bound);
  return status;
}

// grads[key] = g, or add(grads[key], g) when it holds one already.
int Accumulate(PyObject* grads, PyObject* key, PyObject* g) {
  PyObject* prev = PyDict_GetItemWithError(grads, key);  // borrowed
  if (prev == nullptr) return PyErr_Occurred() ? -1 : PyDict_SetItem(grads, key, g);
  PyObject* sum = PyObject_CallFunctionObjArgs(g_tape.add, prev, g, nullptr);
  if (sum == nullptr) return -1;
  const int status = PyDict_SetItem(grads, key, sum);
  Py_DECREF(sum);
  return status;
}

// The gradient of a tape record's output(s): a Tensor, a tuple (zeros where an output got none), or
// None when no output got one (a new reference; null on error). `*reached` (a new reference when the
// gradient is a tuple, else None): per output, whether it got a gradient rather than zeros.
PyObject* OutputGradient(PyObject* grads, PyObject* out, PyObject** reached) {
  *reached = Py_NewRef(Py_None);
  if (!PyTuple_Check(out)) {
    PyObject* key = IdOf(out);
    if (key == nullptr) return nullptr;
    PyObject* dout = PyDict_GetItemWithError(grads, key);
    Py_DECREF(key);
    if (dout == nullptr) {
      if (PyErr_Occurred()) return nullptr;
      Py_RETURN_NONE;
    }
    Py_INCREF(dout);
    return dout;
  }
  const Py_ssize_t n = PyTuple_GET_SIZE(out);
  PyObject* douts = PyTuple_New(n);
  if (douts == nullptr) return nullptr;
  bool any = false;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* o = PyTuple_GET_ITEM(out, i);
    PyObject* key = IdOf(o);
    PyObject* d = key != nullptr ? PyDict_GetItemWithError(grads, key) : nullptr;
    Py_XDECREF(key);
    if (d == nullptr && PyErr_Occurred()) {
      Py_DECREF(douts);
      return nullptr;
    }
    any = any || d != nullptr;
    Py_XINCREF(d);
    PyTuple_SET_ITEM(douts, i, d);  // (null for now: filled below)
  }
  if (!any) {
    Py_DECREF(douts);  // (its items are all null)
    Py_RETURN_NONE;
  }
  PyObject* flags = PyTuple_New(n);
  if (flags == nullptr) {
    Py_DECREF(douts);
    return nullptr;
  }
  for (Py_ssize_t i = 0; i < n; ++i) {
    const bool got = PyTuple_GET_ITEM(douts, i) != nullptr;
    PyTuple_SET_ITEM(flags, i, Py_NewRef(got ? Py_True : Py_False));
    if (got) continue;
    PyObject* zeros = PyObject_CallOneArg(g_tape.zeros_like, PyTuple_GET_ITEM(out, i));
    if (zeros == nullptr) {
      Py_DECREF(douts);  // (null items are skipped)
      Py_DECREF(flags);
      return nullptr;
    }
    PyTuple_SET_ITEM(douts, i, zeros);
  }
  Py_SETREF(*reached, flags);
  return douts;
}

// Per argument: whether its gradient is used (tracked, or a sequence with a tracked element).
PyObject* Needs(PyObject* tracked, PyObject* args) {
  const Py_ssize_t n = PyTuple_GET_SIZE(args);
  PyObject* needs = PyTuple_New(n);
  if (needs == nullptr) return nullptr;
  for (Py_ssize_t i = 0; i < n; ++i) {
    const int found = ReadsTracked(tracked, PyTuple_GET_ITEM(args, i));
    if (found < 0) {
      Py_DECREF(needs);  // (null items are skipped)
      return nullptr;
    }
    PyTuple_SET_ITEM(needs, i, Py_NewRef(found ? Py_True : Py_False));
  }
  return needs;
}

// bprop(*args, out, dout), with the bprop's operator noted on an exception it raises.
PyObject* CallBprop(PyObject* prim, PyObject* args, PyObject* out, PyObject* dout) {
  PyObject* bprop = PyObject_CallOneArg(g_tape.get_bprop, prim);
  if (bprop == nullptr) return nullptr;
  const Py_ssize_t n = PyTuple_GET_SIZE(args);
  PyObject* call = PyTuple_New(n + 2);
  if (call == nullptr) {
    Py_DECREF(bprop);
    return nullptr;
  }
  for (Py_ssize_t i = 0; i < n; ++i) PyTuple_SET_ITEM(call, i, Py_NewRef(PyTuple_GET_ITEM(args, i)));
  PyTuple_SET_ITEM(call, n, Py_NewRef(out));
  PyTuple_SET_ITEM(call, n + 1, Py_NewRef(dout));
  PyObject* grads = PyObject_Call(bprop, call, nullptr);
  Py_DECREF(call);
  Py_DECREF(bprop);
  if (grads == nullptr) {
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    PyErr_NormalizeException(&type, &value, &traceback);
    if (value != nullptr) {
      PyObject* noted = PyObject_CallFunctionObjArgs(g_tape.add_note, value, prim, nullptr);
      Py_XDECREF(noted);
      PyErr_Clear();
    }
    PyErr_Restore(type, value, traceback);
  }
  return grads;
}

// Whether `g` is a Tensor of `a`'s dtype and shape (the fast form of _check_grads).
bool Matches(PyObject* a, PyObject* g) {
  if (!PyObject_TypeCheck(g, g_tape.tensor_type) || !PyObject_TypeCheck(a, g_tape.tensor_type)) return false;
  PyObject* gm = Slot(g, g_tape.meta_offset);
  PyObject* am = Slot(a, g_tape.meta_offset);
  if (gm == nullptr || am == nullptr || PyTuple_GET_SIZE(gm) < 2 || PyTuple_GET_SIZE(am) < 2) return false;
  if (PyTuple_GET_ITEM(gm, 0) != PyTuple_GET_ITEM(am, 0)) return false;
  const int same = PyObject_RichCompareBool(PyTuple_GET_ITEM(gm, 1), PyTuple_GET_ITEM(am, 1), Py_EQ);
  if (same < 0) PyErr_Clear();
  return same == 1;
}

// The bprop's input gradients, accumulated into `grads` for the inputs in `needs`.
int AccumulateInputs(PyObject* grads, PyObject* tracked, PyObject* prim, PyObject* args, PyObject* in_grads,
                     PyObject* needs) {
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(args); ++i) {
    if (PyTuple_GET_ITEM(needs, i) != Py_True) continue;
    PyObject* a = PyTuple_GET_ITEM(args, i);
    PyObject* g = PyTuple_GET_ITEM(in_grads, i);
    if (IsSequence(a)) {
      PyObject* done = PyObject_CallFunctionObjArgs(g_tape.accumulate_sequence, prim, a, g, grads, tracked, g_tape.add,
                                                    nullptr);
      if (done == nullptr) return -1;
      Py_DECREF(done);
      continue;
    }
    if (!Matches(a, g)) {  // raises naming the operator and the input
      PyObject* checked = PyObject_CallFunctionObjArgs(g_tape.check_grads, prim, args, in_grads, needs, nullptr);
      if (checked == nullptr) return -1;
      Py_DECREF(checked);
    }
    PyObject* key = IdOf(a);
    if (key == nullptr) return -1;
    const int status = Accumulate(grads, key, g);
    Py_DECREF(key);
    if (status < 0) return -1;
  }
  return 0;
}

// Drops the gradients of a record's outputs that are not kept.
int DropUnkept(PyObject* grads, PyObject* keep, PyObject* out) {
  const Py_ssize_t n = PyTuple_Check(out) ? PyTuple_GET_SIZE(out) : 1;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* key = IdOf(PyTuple_Check(out) ? PyTuple_GET_ITEM(out, i) : out);
    if (key == nullptr) return -1;
    int kept = PySequence_Contains(keep, key);
    if (kept == 0 && PyDict_DelItem(grads, key) < 0) {
      if (PyErr_ExceptionMatches(PyExc_KeyError)) {
        PyErr_Clear();
      } else {
        kept = -1;
      }
    }
    Py_DECREF(key);
    if (kept < 0) return -1;
  }
  return 0;
}

// Reports each kept tensor whose gradient is final: `pending` is a list of (record index, id),
// increasing; those read first by a record above `index` are popped and passed to on_ready.
int ReportReady(PyObject* pending, Py_ssize_t index, PyObject* grads, PyObject* on_ready) {
  while (PyList_GET_SIZE(pending) > 0) {
    const Py_ssize_t last = PyList_GET_SIZE(pending) - 1;
    PyObject* entry = PyList_GET_ITEM(pending, last);
    const Py_ssize_t at = PyLong_AsSsize_t(PyTuple_GET_ITEM(entry, 0));
    if (at == -1 && PyErr_Occurred()) return -1;
    if (at <= index) break;
    PyObject* key = Py_NewRef(PyTuple_GET_ITEM(entry, 1));
    if (PyList_SetSlice(pending, last, last + 1, nullptr) < 0) {
      Py_DECREF(key);
      return -1;
    }
    PyObject* g = PyDict_GetItemWithError(grads, key);
    PyObject* done = g != nullptr ? PyObject_CallFunctionObjArgs(on_ready, key, g, nullptr) : nullptr;
    Py_DECREF(key);
    if (g != nullptr && done == nullptr) return -1;
    Py_XDECREF(done);
    if (g == nullptr && PyErr_Occurred()) return -1;
  }
  return 0;
}

// One record of the backward pass: 0 (done or skipped) or -1 with an error set.
int BackwardStep(PyObject* record, PyObject* grads, PyObject* tracked, PyObject* keep) {
  PyObject* prim = PyTuple_GET_ITEM(record, 0);
  PyObject* args = PyTuple_GET_ITEM(record, 1);
  PyObject* out = PyTuple_GET_ITEM(record, 2);
  PyObject* versions = PyTuple_GET_ITEM(record, 3);
  PyObject* reached = nullptr;
  PyObject* dout = OutputGradient(grads, out, &reached);
  if (dout == nullptr || dout == Py_None) {
    Py_XDECREF(dout);
    Py_DECREF(reached);
    return dout == nullptr ? -1 : 0;
  }
  int status = 0;
  if (versions != Py_None) {
    PyObject* checked = PyObject_CallFunctionObjArgs(g_tape.check_versions, prim, args, versions, nullptr);
    status = checked != nullptr ? 0 : -1;
    Py_XDECREF(checked);
  }
  PyObject* needs = status == 0 ? Needs(tracked, args) : nullptr;
  if (needs == nullptr || PyObject_SetAttr(g_tape.state, g_tape.needs_name, needs) < 0 ||
      PyObject_SetAttr(g_tape.state, g_tape.reached_name, reached) < 0 ||
      PyObject_SetAttr(g_tape.state, g_tape.prim_name, prim) < 0) {
    Py_XDECREF(needs);
    Py_DECREF(reached);
    Py_DECREF(dout);
    return -1;
  }
  Py_DECREF(reached);
  PyObject* in_grads = CallBprop(prim, args, out, dout);
  Py_DECREF(dout);
  if (in_grads != nullptr && (!PyTuple_Check(in_grads) || PyTuple_GET_SIZE(in_grads) != PyTuple_GET_SIZE(args))) {
    PyObject* checked = PyObject_CallFunctionObjArgs(g_tape.check_grads, prim, args, in_grads, needs, nullptr);
    Py_DECREF(in_grads);
    in_grads = checked;
  }
  status = in_grads != nullptr ? 0 : -1;
  if (status == 0 && keep != Py_None) status = DropUnkept(grads, keep, out);
  if (status == 0) status = AccumulateInputs(grads, tracked, prim, args, in_grads, needs);
  Py_XDECREF(in_grads);
  Py_DECREF(needs);
  return status;
}

// backward(tape, outputs, senses, keep, pending, on_ready) of opforge/bprop/tape.py.
py::object Backward(py::object tape, py::tuple outputs, py::tuple senses, py::object keep, py::object pending,
                    py::object on_ready) {
  py::object tracked = tape.attr(g_tape.tracked_name);
  py::list records = tape.attr(g_tape.records_name);
  py::dict grads;
  for (size_t i = 0; i < std::min(outputs.size(), senses.size()); ++i) {
    PyObject* key = IdOf(outputs[i].ptr());
    if (key == nullptr) throw py::error_already_set();
    py::object k = py::reinterpret_steal<py::object>(key);
    const int found = PyDict_Contains(tracked.ptr(), key);
    if (found < 0 || (found == 1 && Accumulate(grads.ptr(), key, senses[i].ptr()) < 0)) throw py::error_already_set();
  }
  // The thread's state (`needs`, `reached`, `prim`) is set per record and restored at the end (passes nest).
  PyObject* saved[3] = {g_tape.needs_name, g_tape.reached_name, g_tape.prim_name};
  for (PyObject*& value : saved) {
    PyObject* name = value;
    value = PyObject_GetAttr(g_tape.state, name);
    if (value == nullptr) {
      PyErr_Clear();
      value = Py_NewRef(Py_None);
    }
  }
  int status = 0;
  const bool reporting = !on_ready.is_none();
  for (Py_ssize_t index = PyList_GET_SIZE(records.ptr()) - 1; index >= 0 && status == 0; --index) {
    if (reporting && ReportReady(pending.ptr(), index, grads.ptr(), on_ready.ptr()) < 0) {
      status = -1;
      break;
    }
    PyObject* record = Py_NewRef(PyList_GET_ITEM(records.ptr(), index));  // (a bprop may record on outer tapes)
    status = BackwardStep(record, grads.ptr(), tracked.ptr(), keep.ptr());
    Py_DECREF(record);
  }
  if (status == 0 && reporting) status = ReportReady(pending.ptr(), -1, grads.ptr(), on_ready.ptr());
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);  // (restoring the state must not lose the error)
  if (PyObject_SetAttr(g_tape.state, g_tape.needs_name, saved[0]) < 0) PyErr_Clear();
  if (PyObject_SetAttr(g_tape.state, g_tape.reached_name, saved[1]) < 0) PyErr_Clear();
  if (PyObject_SetAttr(g_tape.state, g_tape.prim_name, saved[2]) < 0) PyErr_Clear();
  for (PyObject* value : saved) Py_DECREF(value);
  PyErr_Restore(type, value, traceback);
  if (status < 0) throw py::error_already_set();
  return std::move(grads);
}

PyObject* Interned(const char* name) {
  PyObject* s = PyUnicode_InternFromString(name);
  if (s == nullptr) throw py::error_already_set();
  return s;
}

void Configure(py::object tape_type, py::object eval, py::object tensor_type, py::object parameter_type,
               py::object diff_dtypes, py::object state, py::dict helpers) {
  if (!PyType_Check(tape_type.ptr()) || !PyType_Check(tensor_type.ptr()) || !PyType_Check(parameter_type.ptr()) ||
      !PyFrozenSet_Check(diff_dtypes.ptr())) {
    throw py::type_error("configure_tape(Tape, EVAL, Tensor, Parameter, frozenset of dtypes, state, helpers)");
  }
  auto keep = [](py::handle h) { return h.inc_ref().ptr(); };
  g_tape.tape_type = reinterpret_cast<PyTypeObject*>(keep(tape_type));
  g_tape.eval = keep(eval);
  g_tape.tensor_type = reinterpret_cast<PyTypeObject*>(keep(tensor_type));
  g_tape.meta_offset = SlotOffset(g_tape.tensor_type, "_meta");
  g_tape.parameter_type = reinterpret_cast<PyTypeObject*>(keep(parameter_type));
  g_tape.version_offset = SlotOffset(g_tape.parameter_type, "_version");
  g_tape.diff_dtypes = keep(diff_dtypes);
  g_tape.state = keep(state);
  g_tape.add = keep(helpers["add"]);
  g_tape.zeros_like = keep(helpers["zeros_like"]);
  g_tape.get_bprop = keep(helpers["get_bprop"]);
  g_tape.check_versions = keep(helpers["check_versions"]);
  g_tape.check_grads = keep(helpers["check_grads"]);
  g_tape.accumulate_sequence = keep(helpers["accumulate_sequence"]);
  g_tape.add_note = keep(helpers["add_note"]);
  g_tape.tracked_name = Interned("tracked");
  g_tape.records_name = Interned("records");
  g_tape.parent_name = Interned("parent");
  g_tape.needs_name = Interned("needs");
  g_tape.reached_name = Interned("reached");
  g_tape.prim_name = Interned("prim");
  g_tape.signature_name = Interned("__mindspore_signature__");
  g_tape.bound_inputs_name = Interned("_bound_inputs");
}

}  // namespace

bool IsEagerTape(PyObject* interpreter) {
  if (g_tape.tape_type == nullptr || Py_TYPE(interpreter) != g_tape.tape_type) return false;
  PyObject* parent = PyObject_GetAttr(interpreter, g_tape.parent_name);
  if (parent == nullptr) {
    PyErr_Clear();
    return false;
  }
  const bool eager = parent == g_tape.eval;
  Py_DECREF(parent);
  return eager;
}

int Record(PyObject* tape, PyObject* prim, PyObject* args, PyObject* out) {
  PyObject* tracked = PyObject_GetAttr(tape, g_tape.tracked_name);
  PyObject* records = tracked != nullptr ? PyObject_GetAttr(tape, g_tape.records_name) : nullptr;
  int status = -1;
  if (records != nullptr && PyDict_Check(tracked) && PyList_Check(records)) {
    status = RecordInto(tracked, records, prim, args, out);
  } else if (records != nullptr) {
    PyErr_SetString(PyExc_TypeError, "a Tape's tracked must be a dict and its records a list");
  }
  Py_XDECREF(records);
  Py_XDECREF(tracked);
  return status;
}

void Bind(py::module_& m) {
  m.def("configure_tape", &Configure, py::arg("tape_type"), py::arg("eval"), py::arg("tensor_type"),
        py::arg("parameter_type"), py::arg("diff_dtypes"), py::arg("state"), py::arg("helpers"),
        "Give the C tape its classes and Python helpers (opforge.bprop.tape, at import).");
  m.def(
      "tape_record",
      [](py::object tape, py::object prim, py::tuple args, py::object out) {
        if (g_tape.tape_type == nullptr) throw py::type_error("the C tape is not configured");
        if (Record(tape.ptr(), prim.ptr(), args.ptr(), out.ptr()) < 0) throw py::error_already_set();
      },
      py::arg("tape"), py::arg("prim"), py::arg("args"), py::arg("out"), "Tape.record in C.");
  m.def("tape_backward", &Backward, py::arg("tape"), py::arg("outputs"), py::arg("senses"), py::arg("keep"),
        py::arg("pending"), py::arg("on_ready"), "The backward walk of opforge.bprop.tape.backward, in C.");
}

}  // namespace tape
}  // namespace opforge
