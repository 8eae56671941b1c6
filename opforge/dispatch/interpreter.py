"""Interpreters: what happens to a primitive call (as JAX's ``bind`` /
``process_primitive``).

``Primitive.__call__`` hands every call to the innermost interpreter of the calling thread. With
none installed the call runs eagerly (and cached all-Tensor calls never leave C). A tape, a
profiler or a tracer installs itself with ``with interpreter:`` and usually passes the call down
to its ``parent`` before or after doing its own work, so they stack: a profiled gradient of a
gradient records on both tapes and times every kernel once.

The stack is per thread (it lives in the C core, where the fast path checks it), so interpreters in
one thread never see another thread's calls. Primitives import this module; the interpreters
(autodiff, profiler) import the primitives, never the other way round.
"""

from __future__ import annotations

from opforge import _C
from opforge.dispatch.plan import check_no_placeholders

__all__ = ["Interpreter", "EvalInterpreter", "EVAL", "current_interpreter", "backward_pass"]


class Interpreter:
    """Base class. Subclasses override ``process_primitive`` and call ``self.parent``'s."""

    parent: Interpreter | None = None
    # An interpreter that only observes calls (a profiler): a trace (opforge.jit) may start above it,
    # and it sees the replays call by call.
    observer: bool = False
    # An interpreter recording calls to differentiate them (a gradient's tape)
    differentiates: bool = False

    def process_primitive(self, prim, args: tuple):
        """Handle ``prim(*args)`` (arguments bound by position); returns the call's outputs."""
        return self.parent.process_primitive(prim, args)

    def swap_tensors(self, updated, old) -> None:
        """``updated`` was assigned into in place (``Tensor.__setitem__``): its contents and those of
        ``old`` (the new value's Tensor, computed by primitive calls) were swapped, so ``updated`` holds
        the new value and ``old`` the value ``updated`` had. An interpreter that knows tensors by identity
        swaps them too; one that only observes calls has nothing to do; any other refuses."""
        if not self.observer:
            raise TypeError(
                f"For 'Tensor.__setitem__', assigning into a Tensor in place is not supported under "
                f"{type(self).__name__}: compute the updated tensor instead (ops.setitem)."
            )

    def __enter__(self):
        if self.parent is not None:
            raise RuntimeError(f"{type(self).__name__} is already active; an interpreter is entered once at a time.")
        previous = _C.set_interpreter(self)
        self.parent = EVAL if previous is None else previous
        if self.differentiates:
            for below in self.parent.enclosing():
                below.note_differentiation()
        return self

    def note_differentiation(self) -> None:
        """A gradient's tape was entered above this interpreter (a parallel network's call is then a training
        one: ``sharding.virtual_output``)."""

    def note_backward(self, running: bool) -> None:
        """A backward pass starts (``running``) or ends on this thread with this interpreter active: the calls
        between are bprops (a parallel call lays no Parameter out from them: ``ShardInterpreter``)."""

    def __exit__(self, *exc) -> None:
        if _C.current_interpreter() is not self:
            raise RuntimeError(f"{type(self).__name__} exited out of order: interpreters nest like with-blocks.")
        parent, self.parent = self.parent, None
        _C.set_interpreter(None if parent is EVAL else parent)

    def enclosing(self):
        """This interpreter and those under it, innermost first (while active)."""
        interp = self
        while interp is not None and interp is not EVAL:
            yield interp
            interp = interp.parent


class EvalInterpreter(Interpreter):
    """The bottom of every stack: run the call's plan."""

    def process_primitive(self, prim, args: tuple):
        try:
            out = _C.run_cached(prim, args)  # the C fast path's lookup, under any interpreter
            return out if out is not None else prim._plan_for(args)(args)
        except AttributeError:  # a cached plan read the data of a placeholder: say which
            check_no_placeholders(prim, args)
            raise
        except TypeError:  # a kernel handed a parallel network's split output (under a tape): say so
            prim._raise_if_sharded(args)
            raise


EVAL = EvalInterpreter()


def current_interpreter():
    """This thread's innermost interpreter, or None when calls run eagerly."""
    return _C.current_interpreter()


def backward_pass(run):
    """``run()`` as a backward pass, the active interpreters told (``note_backward``)."""
    active = list(current_interpreter().enclosing()) if current_interpreter() is not None else []
    for interp in active:
        interp.note_backward(True)
    try:
        return run()
    finally:
        for interp in active:
            interp.note_backward(False)
