"""MindSpore operator classes that opforge builds from other primitives, with no kernel of their own:
``Zeros``, ``Ones`` (Fill), ``Depend`` (graph-mode ordering: eagerly its first input) and ``Print``.
They are constructed and called as MindSpore's (``ops.Zeros()((2, 3), mstype.float32)``)."""

from __future__ import annotations

import numpy as np

from opforge import dtype as mstype
from opforge.ops import functional as F
from opforge.tensor import Tensor

__all__ = ["Zeros", "Ones", "Depend", "Print"]


class _Filled:
    value = 0

    def __call__(self, size, type=None):  # noqa: A002 (MindSpore's argument name)
        return F._filled(self.__class__.__name__, size, type, self.value)


class Zeros(_Filled):
    """``Zeros()(size, type)``: a tensor of ``size`` (an int or a tuple) filled with 0, of ``type``."""

    value = 0


class Ones(_Filled):
    """``Ones()(shape, type)``: a tensor of ``shape`` (an int or a tuple) filled with 1, of ``type``."""

    value = 1


class Depend:
    """``Depend()(value, expr)``: ``value``. In MindSpore's graph mode it orders ``expr`` before the users
    of ``value``; calls run in program order here (eagerly and in a trace), so ``expr`` has run already."""

    def __call__(self, value, expr):
        return value


class Print:
    """``Print()(*inputs)``: prints the Tensors (their values) and strings, one line each, as MindSpore's
    Print in PyNative mode; returns None."""

    def __call__(self, *inputs):
        for x in inputs:
            if isinstance(x, Tensor):
                print(f"Tensor(shape={list(x.shape)}, dtype={x.dtype}, value=\n{np.array2string(x.asnumpy())})")
            elif isinstance(x, (str, int, float, bool, mstype.Type)):
                print(x)
            else:
                raise TypeError(
                    f"For 'Print', each input must be a Tensor, a string or a number, but got {type(x).__name__}."
                )
