"""amp's "auto" level (MindSpore 2.x's ``auto_mixed_precision(network, "auto")``): a rule per operator, applied
to every primitive call the network makes, in whatever cell or function it is.

* an operator of ``AUTO_WHITE_LIST`` (the matrix products and convolutions) computes in the low dtype: its
  float inputs are cast to it, and so is its output;
* an operator of ``AUTO_BLACK_LIST`` (exp, log, pow, norms, softmax, reductions, losses) computes in float32;
* an operator of ``AUTO_PROMOTE_LIST`` computes in the widest float dtype of its inputs;
* any other operator runs on its inputs as they come.

The network's outputs are not cast back (a float16 MatMul at the end gives a float16 output, as in
MindSpore). ``AutoMixedPrecision`` is the interpreter that casts (each Cast recorded by the tape or the trace
beneath it, so gradients come back to float32 Parameters in float32); inputs an operator writes in place
are never cast. The lists are MindSpore 2.5's, by operator name; opforge's ``Conv2DTranspose`` is its
``Conv2DBackpropInput``, which the white list names too.
"""

from __future__ import annotations

import functools

from opforge import dtype as mstype
from opforge.dispatch.interpreter import Interpreter
from opforge.nn.cell import Cell
from opforge.nn.mixed_precision import kept_positions
from opforge.primitives.array_ops import Cast

__all__ = ["AUTO_WHITE_LIST", "AUTO_BLACK_LIST", "AUTO_PROMOTE_LIST", "AutoMixedPrecision", "auto_cast"]

AUTO_WHITE_LIST = (
    "Conv2D", "Conv3D", "Conv2DTranspose", "Conv2DBackpropInput", "Conv3DTranspose", "Convolution", "MatMul",
    "MatMulExt", "BatchMatMul", "BatchMatMulExt", "PReLU", "Einsum", "Dense", "Addmm",
)  # fmt: skip
AUTO_BLACK_LIST = (
    "Pow", "ACos", "Asin", "Cosh", "Erfinv", "Exp", "Expm1", "Log", "Log1p", "Reciprocal", "Rsqrt", "Sinh", "Tan",
    "Softplus", "SoftplusExt", "LayerNorm", "LayerNormExt", "BatchNorm", "BatchNormExt", "GroupNorm", "KLDivLoss",
    "SmoothL1Loss", "MultilabelMarginLoss", "SoftMarginLoss", "TripletMarginLoss", "MultiMarginLoss",
    "BCEWithLogitsLoss", "Pdist", "Cdist", "Renorm", "ReduceProd", "Softmax", "LogSoftmax", "CumProd", "CumSum",
    "CumsumExt", "ProdExt", "SumExt", "Norm", "MSELossExt",
)  # fmt: skip
AUTO_PROMOTE_LIST = (
    "Addcdiv",
    "Addcmul",
    "Cross",
    "Dot",
    "GridSampler2D",
    "GridSampler3D",
    "BiasAdd",
    "AddN",
    "Concat",
)

_cast = Cast()


def _floats(a) -> list:
    """The float Tensors of an argument: itself, or those of a tuple or list (Concat's, AddN's)."""
    if isinstance(a, (tuple, list)):
        return [t for t in a if getattr(t, "dtype", None) in mstype.float_type]
    return [a] if getattr(a, "dtype", None) in mstype.float_type else []


class AutoMixedPrecision(Interpreter):
    """Casts the float inputs of each white-, black- or promote-list operator to the dtype its rule says."""

    def __init__(self, dtype):
        self.rules = dict.fromkeys(AUTO_WHITE_LIST, dtype)
        self.rules.update(dict.fromkeys(AUTO_BLACK_LIST, mstype.float32))
        self.rules.update(dict.fromkeys(AUTO_PROMOTE_LIST, None))  # None: the widest float input

    def process_primitive(self, prim, args: tuple):
        if prim.name not in self.rules:
            return self.parent.process_primitive(prim, args)
        dst = self.rules[prim.name]
        if dst is None:
            dtypes = [t.dtype for a in args for t in _floats(a)]
            if not dtypes:
                return self.parent.process_primitive(prim, args)
            dst = functools.reduce(mstype.promote_types, dtypes)
        kept = kept_positions(prim)
        args = tuple(a if i in kept else self._cast(a, dst) for i, a in enumerate(args))
        return self.parent.process_primitive(prim, args)

    def _cast(self, a, dst):
        if isinstance(a, (tuple, list)):
            return type(a)(self._cast(t, dst) for t in a)
        if getattr(a, "dtype", None) in mstype.float_type and a.dtype is not dst:
            return self.parent.process_primitive(_cast, (a, dst))
        return a


class _AutoCell(Cell):
    """A network run under the "auto" level's operator rules."""

    def __init__(self, backbone: Cell, dtype):
        super().__init__(auto_prefix=False)
        self._backbone = backbone
        self.dtype = dtype
        object.__setattr__(self, "training", backbone.training)

    def construct(self, *args, **kwargs):
        with AutoMixedPrecision(self.dtype):
            return self._backbone(*args, **kwargs)


def auto_cast(network, dtype):
    """``network`` (a Cell or a function) run under the "auto" level's rules, in ``dtype``."""
    if isinstance(network, Cell):
        return _AutoCell(network, dtype)

    @functools.wraps(network)
    def run(*args, **kwargs):
        with AutoMixedPrecision(dtype):
            return network(*args, **kwargs)

    return run
