"""A GPU trace replayed as one device graph (a CUDA graph): every kernel of a replay launched by one call.

A trace whose every step runs on the GPU replays its first calls as any trace (kernels compiled, the
memory pool settled). The replay number ``CAPTURE_AT`` runs on the runtime's graph stream and is then
captured (``GpuRuntime.capture``): the steps run once more in recording mode on inputs of their own
(*static inputs*), so the graph holds every kernel with its arguments and addresses, and nothing runs.
From then on a replay copies the call's inputs into the static ones, launches the graph, and returns
copies of the graph's outputs (the next launch overwrites them). Host work between kernels, a Tensor
made per call, the launch glue of each kernel: all gone from the replay.

What a graph cannot hold is found by the capture, which then gives up, and the trace replays as before;
``Trace.explain()`` says why (``why_not``). Nor is a graph captured where copying the inputs and outputs
would cost more than the launches it saves (``COPY_BYTES_PER_STEP``: a few large elementwise kernels).

- a step on another device, or an input that is a Parameter (its kernel would write the static copy);
- a copy to or from the host, or a synchronisation, inside a step (the runtime refuses them while
  recording);
- Tensor constants (Parameters) that got new arrays since the capture: the graph holds the old
  addresses, so it is captured again, at most ``MAX_CAPTURES`` times.

The Parameters the steps write have their versions bumped at each launch, as the plans do.
"""

from __future__ import annotations

import threading

from opforge import _C
from opforge.device import get_device
from opforge.device.gpu import GraphCaptureError
from opforge.dispatch import binding
from opforge.tensor import Parameter, Tensor

__all__ = ["CAPTURE_AT", "DeviceGraph", "for_program"]

CAPTURE_AT = 2  # the replay after which the graph is captured (the first ones compile and allocate)
MAX_CAPTURES = 3  # captures again after constants changed arrays, then gives up
# A launch saves the host time of each step (about 10 us) and costs a copy of the inputs and outputs:
# a graph is captured only where they come to at most this many bytes per step (a 20-call chain fused
# into one kernel on 64 MB tensors ran 2x slower as a graph, H200, 2026-11-27).
COPY_BYTES_PER_STEP = 4 << 20


def for_program(program: list):
    """A ``DeviceGraph`` for a compiled program whose every step runs on a GPU that can capture graphs,
    else None."""
    if not program:
        return None
    for step in program:
        if _backend(step) != "GPU":
            return None
    device = get_device("GPU")
    return DeviceGraph(program, device) if device.runtime.supports_graphs else None


def _backend(step) -> str | None:
    group = getattr(step, "group", None)  # a fused step
    if group is not None:
        return group.device.name
    label = getattr(step.plan, "kernel", None)
    return None if label is None else label.backend


class DeviceGraph:
    """The device graph of one trace (see the module docstring)."""

    def __init__(self, program: list, device):
        self.device, self.runtime = device, device.runtime
        self.steps = len(program)
        self.constants = _tensor_constants(program)  # (tensor, its array when captured)
        self.written = _written_parameters(program)
        self.replays = 0  # since the last capture (or the trace)
        self.captures = 0
        self.graph = None
        self.static: list = []  # the graph's own inputs, which each launch's inputs are copied into
        self.outputs = None  # the graph's outputs, copied out after each launch
        self.why_not = None  # why the trace replays without a graph, once it is known
        self._lock = threading.Lock()

    def replay(self, run, inputs: list):
        """The trace's outputs for ``inputs``; ``run(inputs, each=None)`` is the trace's replay without a
        graph (``Trace.run_program``)."""
        with self._lock:  # one thread at a time copies into the static inputs, launches, copies out
            if self.graph is not None:
                if all(t._data is array for t, array in self.constants):
                    return self._launch(inputs)
                self.graph = None  # a Parameter got a new array: capture again
                self.replays = 0
            self.replays += 1
            if self.why_not is None and self.replays >= CAPTURE_AT:
                with self.runtime.graph_stream():  # the capture's allocations come from this stream's blocks
                    result = run(inputs)
                    self._capture(run, inputs, result)
                return result
        return run(inputs)

    def _capture(self, run, inputs: list, result) -> None:
        self.why_not = _refusal(inputs, self.device, self.captures)
        if self.why_not is not None:
            return
        copied = sum(t.nbytes for t in inputs) + sum(t.nbytes for t in _tensors(result))
        if copied > COPY_BYTES_PER_STEP * self.steps:
            self.why_not = (
                f"its inputs and outputs ({copied / 2**20:.1f} MiB) would take longer to copy in and out than the "
                f"launches of its {self.steps} steps take"
            )
            return
        device = self.device
        static = [Tensor._from_array(device.empty(t.shape, t.dtype.np_dtype), t.dtype, device) for t in inputs]
        at = []  # the step being recorded, named where the capture gives up
        _C.pause_device_launches(True)  # every launch through the runtime, which records it
        try:
            outputs, graph = self.runtime.capture(lambda: run(static, at.append))
        except GraphCaptureError as e:
            self.why_not = f"{e} (in {_name(at[-1]) if at else 'the program'})"
            return
        except Exception as e:  # the library refused something else: the call's result stands, without a graph
            self.why_not = f"{type(e).__name__}: {e} (in {_name(at[-1]) if at else 'the program'})"
            return
        finally:
            _C.pause_device_launches(False)
        self.captures += 1
        self.constants = [(t, t._data) for t, _ in self.constants]
        self.graph, self.static, self.outputs = graph, static, outputs

    def _launch(self, inputs: list):
        runtime = self.runtime
        for static, t in zip(self.static, inputs):
            runtime.copy(static._data, runtime.contiguous(t._data))
        self.graph.launch()
        for p in self.written:
            p._version += 1
        by_static = {id(s): t for s, t in zip(self.static, inputs)}
        return _fresh(self.outputs, by_static, self.device)

    def explain(self) -> str:
        if self.graph is not None:
            return f"replayed as one device graph (captured at call {CAPTURE_AT + 1})"
        if self.why_not is not None:
            return f"no device graph: {self.why_not}"
        return f"a device graph is captured at call {CAPTURE_AT + 1}"


def _name(step) -> str:
    return f"'{step.prim.name}'" if step.prim is not None else f"a fused kernel of {' '.join(step.group.ops)}"


def _refusal(inputs: list, device, captures: int):
    """Why these inputs cannot be replayed by a graph, or None."""
    if captures >= MAX_CAPTURES:
        return f"its Parameters got new arrays between calls {MAX_CAPTURES} times (Parameter.set_data)"
    for i, t in enumerate(inputs):
        if isinstance(t, Parameter):
            return f"input {i} is a Parameter (a kernel writing it would write the graph's copy)"
        if t._meta[2] is not device:
            return f"input {i} is on {t._meta[2].name}"
    return None


def _sources(sources):
    for s in sources:
        if s[0] == "seq":
            yield from _sources(s[2])
        else:
            yield s


def _tensor_constants(program: list) -> list:
    seen, out = set(), []
    for step in program:
        for s in _sources(step.sources):
            if s[0] == "const" and isinstance(s[1], Tensor) and id(s[1]) not in seen:
                seen.add(id(s[1]))
                out.append((s[1], s[1]._data))
    return out


def _written_parameters(program: list) -> list:
    out = []
    for step in program:
        if step.prim is None:
            continue  # a fused step writes only its outputs
        for i in binding.written_positions(step.prim._signature()):
            if i < len(step.sources) and step.sources[i][0] == "const" and isinstance(step.sources[i][1], Parameter):
                out.append(step.sources[i][1])
    return out


def _tensors(value):
    """The Tensors in an output structure."""
    if isinstance(value, Tensor):
        yield value
    elif value.__class__ in (tuple, list):
        for v in value:
            yield from _tensors(v)
    elif value.__class__ is dict:
        for v in value.values():
            yield from _tensors(v)


def _fresh(value, by_static: dict, device):
    """The graph's outputs as a call returns them: copies (the next launch overwrites the graph's own),
    Parameters themselves, the call's own inputs where the function returns an input."""
    if isinstance(value, Tensor):
        if isinstance(value, Parameter):
            return value
        mine = by_static.get(id(value))
        if mine is not None:
            return mine
        return Tensor._from_array(device.asarray(value._data, None), value.dtype, device)
    if value.__class__ in (tuple, list):
        return value.__class__(_fresh(v, by_static, device) for v in value)
    if value.__class__ is dict:
        return {k: _fresh(v, by_static, device) for k, v in value.items()}
    return value
