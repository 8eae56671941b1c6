"""Each operator's ONNX rule: ``rule(builder, *args)`` -> the ONNX value name of each output.

Tensor arguments arrive as value names, Python arguments (an axis, a shape, a dtype) as values; the
node's primitive (its attributes) is ``b.prim`` and its outputs' recorded (shape, dtype) ``b.out``.
Opset 18. A case ONNX cannot express is refused with ``b.refuse``, naming the operator.
"""

from __future__ import annotations

import math

import numpy as np

from opforge import dtype as mstype
from opforge.geometry import conv_output_and_pads, strided_slice_walk
from opforge.ir.onnx import Builder, register

INT64_MAX = np.iinfo(np.int64).max

# -- elementwise ---------------------------------------------------------------------------------

_UNARY = {
    "ReLU": "Relu",
    "Sigmoid": "Sigmoid",
    "Tanh": "Tanh",
    "Exp": "Exp",
    "Log": "Log",
    "Sqrt": "Sqrt",
    "Abs": "Abs",
    "Neg": "Neg",
    "Erf": "Erf",
    "Floor": "Floor",
    "Ceil": "Ceil",
    "Reciprocal": "Reciprocal",
    "Sin": "Sin",
    "Cos": "Cos",
    "Tan": "Tan",
    "Asin": "Asin",
    "ACos": "Acos",
    "Atan": "Atan",
    "Sinh": "Sinh",
    "Cosh": "Cosh",
    "Asinh": "Asinh",
    "Acosh": "Acosh",
    "Atanh": "Atanh",
    "Sign": "Sign",
    "Round": "Round",
    "Rint": "Round",
    "Softplus": "Softplus",
    "Softsign": "Softsign",
    "Mish": "Mish",
    "IsNan": "IsNaN",
    "LogicalNot": "Not",
}


def _unary(onnx_op: str):
    return lambda b, x: b.node(onnx_op, [x])


for _op, _onnx_op in _UNARY.items():
    register(_op)(_unary(_onnx_op))

_BINARY = {
    "Add": "Add",
    "Sub": "Sub",
    "Mul": "Mul",
    "RealDiv": "Div",
    "Maximum": "Max",
    "Minimum": "Min",
    "Pow": "Pow",
}
_COMPARE = {
    "Equal": "Equal",
    "Less": "Less",
    "Greater": "Greater",
    "LessEqual": "LessOrEqual",
    "GreaterEqual": "GreaterOrEqual",
}
_LOGICAL = {"LogicalAnd": "And", "LogicalOr": "Or", "LogicalXor": "Xor"}


def _operands(b: Builder, x, y, dtype) -> list:
    """Both operands as values of ``dtype`` (the operator's promoted type): Python numbers become
    constants of it, Tensors of another dtype are cast."""
    out = []
    for v in (x, y):
        if not isinstance(v, str):
            out.append(b.const(np.asarray(v, dtype.np_dtype)))
        elif b.meta(v)[1] != dtype:
            out.append(b.node("Cast", [v], to=b.elem(dtype)))
        else:
            out.append(v)
    return out


def _promoted(b: Builder, x, y):
    types = [b.meta(v)[1] for v in (x, y) if isinstance(v, str)]
    return types[0] if len(types) == 1 else mstype.promote_types(*types)


def _binary(onnx_op: str):
    return lambda b, x, y: b.node(onnx_op, _operands(b, x, y, b.out[0][1]))


def _compare(onnx_op: str):
    return lambda b, x, y: b.node(onnx_op, _operands(b, x, y, _promoted(b, x, y)))


for _op, _onnx_op in _BINARY.items():
    register(_op)(_binary(_onnx_op))
for _op, _onnx_op in {**_COMPARE, **_LOGICAL}.items():
    register(_op)(_compare(_onnx_op))


@register("Div")
def _div(b, x, y):
    dtype = b.out[0][1]
    if dtype.kind != "f":
        b.refuse(f"integer division (dtype {dtype}) truncates differently in ONNX; cast to float first")
    return b.node("Div", _operands(b, x, y, dtype))


@register("NotEqual")
def _not_equal(b, x, y):
    return b.node("Not", [b.node("Equal", _operands(b, x, y, _promoted(b, x, y)))])


@register("SquaredDifference")
def _squared_difference(b, x, y):
    d = b.node("Sub", _operands(b, x, y, b.out[0][1]))
    return b.node("Mul", [d, d])


@register("Square")
def _square(b, x):
    return b.node("Mul", [x, x])


@register("Rsqrt")
def _rsqrt(b, x):
    return b.node("Reciprocal", [b.node("Sqrt", [x])])


@register("Expm1")
def _expm1(b, x):
    return b.node("Sub", [b.node("Exp", [x]), b.operand(1, x)])


@register("Log1p")
def _log1p(b, x):
    return b.node("Log", [b.node("Add", [x, b.operand(1, x)])])


@register("ReLU6")
def _relu6(b, x):
    return b.node("Clip", [x, b.operand(0, x), b.operand(6, x)])


@register("Elu")
def _elu(b, x):
    return b.node("Elu", [x], alpha=float(b.prim.alpha))


@register("CeLU")
def _celu(b, x):
    return b.node("Celu", [x], alpha=float(b.prim.alpha))


@register("SeLU")
def _selu(b, x):
    return b.node("Selu", [x], alpha=1.67326324, gamma=1.05070098)


@register("HSigmoid")
def _hsigmoid(b, x):
    return b.node("HardSigmoid", [x], alpha=1 / 6, beta=0.5)


@register("HSwish")
def _hswish(b, x):
    return b.node("HardSwish", [x])


@register("HShrink")
def _hshrink(b, x):
    lambd = float(b.prim.lambd)
    keep = b.node("Greater", [b.node("Abs", [x]), b.operand(lambd, x)])
    return b.node("Where", [keep, x, b.operand(0, x)])


@register("SoftShrink")
def _softshrink(b, x):
    return b.node("Shrink", [x], lambd=float(b.prim.lambd), bias=float(b.prim.lambd))


@register("GeLU")
def _gelu(b, x):
    # MindSpore's tanh form: x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
    cube = b.node("Mul", [b.node("Mul", [x, x]), x])
    inner = b.node("Add", [x, b.node("Mul", [cube, b.operand(0.044715, x)])])
    t = b.node("Tanh", [b.node("Mul", [inner, b.operand(math.sqrt(2 / math.pi), x)])])
    half = b.node("Mul", [x, b.operand(0.5, x)])
    return b.node("Mul", [half, b.node("Add", [t, b.operand(1, x)])])


@register("IsFinite")
def _isfinite(b, x):
    return b.node("Not", [b.node("Or", [b.node("IsNaN", [x]), b.node("IsInf", [x])])])


@register("Select")
def _select(b, cond, x, y):
    return b.node("Where", [cond, *_operands(b, x, y, b.out[0][1])])


@register("Cast")
def _cast(b, x, dtype):
    return b.node("Cast", [x], to=b.elem(mstype.to_dtype(dtype)))


@register("ZerosLike", "OnesLike")
def _like(b, x):
    shape, dtype = b.out[0]
    value = 0 if type(b.prim).__name__ == "ZerosLike" else 1
    return b.node("Expand", [b.const(np.asarray(value, dtype.np_dtype)), b.node("Shape", [x])])


# -- linear algebra and the network layers --------------------------------------------------------


def _swap_last(b, x):
    rank = len(b.meta(x)[0])
    perm = list(range(rank - 2)) + [rank - 1, rank - 2]
    return b.node("Transpose", [x], perm=perm)


@register("MatMul", "BatchMatMul")
def _matmul(b, x, y):
    if b.prim.attrs.get("transpose_a"):
        x = _swap_last(b, x)
    if b.prim.attrs.get("transpose_b"):
        y = _swap_last(b, y)
    return b.node("MatMul", [x, y])


@register("BiasAdd")
def _bias_add(b, x, bias):
    rank = len(b.meta(x)[0])
    if rank > 2 and b.prim.attrs.get("data_format", "NCHW").startswith("NC"):
        bias = b.node("Unsqueeze", [bias, b.ints(range(1, rank - 1))])  # (C,) -> (C, 1, ..., 1)
    return b.node("Add", [x, bias])


def _spatial(values) -> list:
    return [int(v) for v in tuple(values)[-2:]]


@register("Conv2D")
def _conv2d(b, x, w):
    attrs = b.prim.attrs
    if attrs.get("data_format", "NCHW") != "NCHW":
        b.refuse("only NCHW is exported")
    kw = {
        "strides": _spatial(attrs["stride"]),
        "dilations": _spatial(attrs["dilation"]),
        "group": int(attrs["group"]),
        "kernel_shape": _spatial(b.meta(w)[0]),
    }
    mode = attrs["pad_mode"].lower()
    if mode == "same":
        kw["auto_pad"] = "SAME_UPPER"
    elif mode == "pad":
        top, bottom, left, right = attrs["pad"]
        kw["pads"] = [top, left, bottom, right]
    return b.node("Conv", [x, w], **kw)


@register("Conv2DBackpropInput")
def _conv2d_backprop_input(b, dout, w, input_size):
    # ONNX's ConvTranspose with Conv2D's weight as it is ((C_out, C_in / group, kh, kw): ConvTranspose reads
    # it as (its input channels, its output channels / group, ...)); Conv2D's padding of the size asked
    # for, and what the forward Conv2D's floor dropped as output_padding (always under the stride)
    attrs = b.prim.attrs
    if attrs.get("format", "NCHW") != "NCHW":
        b.refuse("only NCHW is exported")
    size = [int(v) for v in input_size][2:]
    kernel, stride, dilation = _spatial(b.meta(w)[0]), _spatial(attrs["stride"]), _spatial(attrs["dilation"])
    explicit = [int(v) for v in attrs["pad"]]  # (top, bottom, left, right), the "pad" mode's
    begins, ends, extra = [], [], []
    for i, (n, k, st, d) in enumerate(zip(size, kernel, stride, dilation)):
        out, before, after = conv_output_and_pads(
            b.prim.name, n, k, st, d, attrs["pad_mode"], tuple(explicit[2 * i : 2 * i + 2])
        )
        begins.append(before)
        ends.append(after)
        extra.append(n - ((out - 1) * st + d * (k - 1) + 1 - before - after))
    kw = {"strides": stride, "dilations": dilation, "group": int(attrs["group"]), "kernel_shape": kernel}
    return b.node("ConvTranspose", [dout, w], pads=begins + ends, output_padding=extra, **kw)


def _pool(onnx_op: str):
    def rule(b, x):
        attrs = b.prim.attrs
        if attrs.get("data_format", "NCHW") != "NCHW":
            b.refuse("only NCHW is exported")
        kw = {"kernel_shape": _spatial(attrs["kernel_size"]), "strides": _spatial(attrs["strides"])}
        if attrs["pad_mode"].upper() == "SAME":
            kw["auto_pad"] = "SAME_UPPER"
        return b.node(onnx_op, [x], **kw)

    return rule


register("MaxPool")(_pool("MaxPool"))
register("AvgPool")(_pool("AveragePool"))  # count_include_pad=0: the window's real elements, as MindSpore


@register("AdaptiveAvgPool2D")
def _adaptive_avg_pool(b, x):
    in_shape, out_shape = b.meta(x)[0], b.out[0][0]
    if len(in_shape) == 3:  # (C, H, W): pooled as a batch of one
        pooled = _adaptive_avg_pool_4d(b, b.node("Unsqueeze", [x, b.ints([0])]), (1, *in_shape), (1, *out_shape))
        return b.node("Squeeze", [pooled, b.ints([0])])
    return _adaptive_avg_pool_4d(b, x, in_shape, out_shape)


def _adaptive_avg_pool_4d(b, x, in_shape, out_shape):
    if tuple(out_shape[-2:]) == (1, 1):
        return b.node("GlobalAveragePool", [x])
    if any(i % o for i, o in zip(in_shape[-2:], out_shape[-2:])):
        b.refuse(f"an output size {tuple(out_shape[-2:])} that does not divide the input's {tuple(in_shape[-2:])}")
    k = [i // o for i, o in zip(in_shape[-2:], out_shape[-2:])]
    return b.node("AveragePool", [x], kernel_shape=k, strides=k)


@register("BatchNorm")
def _batch_norm(b, x, scale, offset, mean, variance):
    eps = float(b.prim.attrs["epsilon"])
    if b.prim.attrs.get("is_training"):
        return _batch_norm_batch_statistics(b, x, scale, offset, eps)
    y = b.node("BatchNormalization", [x, scale, offset, mean, variance], epsilon=eps)
    return [y, mean, variance, mean, variance]  # in inference the statistics pass through


def _batch_norm_batch_statistics(b, x, scale, offset, eps):
    """is_training=True (a training-mode BatchNorm, or ``use_batch_statistics=True`` in inference, as
    CycleGAN's generators use it): y normalised with the batch's mean and biased variance per channel,
    which are its other outputs. The moving statistics' update is a write to weights, which an ONNX
    graph has no place for: it is left out with the nodes no output reads (``onnx._live``)."""
    shape = b.meta(x)[0]
    axes = b.ints([0, *range(2, len(shape))])
    channel = b.ints([1, shape[1]] + [1] * (len(shape) - 2))  # (C,) -> (1, C, 1, ..., 1)
    mean = b.node("ReduceMean", [x, axes], keepdims=1)
    centered = b.node("Sub", [x, mean])
    var = b.node("ReduceMean", [b.node("Mul", [centered, centered]), axes], keepdims=1)
    inv_std = b.node("Reciprocal", [b.node("Sqrt", [b.node("Add", [var, b.operand(eps, x)])])])
    y = b.node("Mul", [b.node("Mul", [centered, inv_std]), b.node("Reshape", [scale, channel])])
    y = b.node("Add", [y, b.node("Reshape", [offset, channel])])
    stats = [b.node("Reshape", [v, b.ints([shape[1]])]) for v in (mean, var)]
    return [y, *stats, *stats]


@register("LayerNorm")
def _layer_norm(b, x, gamma, beta):
    attrs = b.prim.attrs
    rank = len(b.meta(x)[0])
    axis, params_axis = attrs["begin_norm_axis"] % rank, attrs["begin_params_axis"] % rank
    if params_axis != axis:
        b.refuse("begin_params_axis other than begin_norm_axis")
    eps = float(attrs["epsilon"])
    y, mean, inv_std = b.node("LayerNormalization", [x, gamma, beta], n_out=3, axis=axis, epsilon=eps)
    # ONNX gives the statistics in float32 (stash_type 1), opforge in the input's dtype (float16 too)
    eps32 = b.const(np.asarray(eps, np.float32))
    variance = b.node("Sub", [b.node("Reciprocal", [b.node("Mul", [inv_std, inv_std])]), eps32])
    stats = b.out[1][1]
    if stats != mstype.float32:
        mean, variance = (b.node("Cast", [v], to=b.elem(stats)) for v in (mean, variance))
    return [y, mean, variance]


def _on_vector(b, x, build):
    """``build(x)`` on a rank-0 ``x`` seen as a 1-vector (ONNX's axis operators want rank >= 1), its
    result reshaped to the recorded output shape."""
    if b.meta(x)[0]:
        return build(x)
    return b.node("Reshape", [build(b.node("Reshape", [x, b.ints([1])])), b.ints(b.out[0][0])])


@register("Softmax")
def _softmax(b, x):
    axis = b.prim.attrs["axis"]
    axis = axis[0] if isinstance(axis, (tuple, list)) else axis
    return _on_vector(b, x, lambda v: b.node("Softmax", [v], axis=int(axis) if b.meta(x)[0] else 0))


@register("LogSoftmax")
def _log_softmax(b, x):
    axis = int(b.prim.attrs["axis"]) if b.meta(x)[0] else 0
    return _on_vector(b, x, lambda v: b.node("LogSoftmax", [v], axis=axis))


@register("LSTMLayer")
def _lstm_layer(b, x, h0, c0, w_ih, w_hh, bias):
    # ONNX's LSTM, one direction: its gates in the order i, o, f, c (opforge's i, f, g, o), its weights and
    # states with a leading direction dim, the bias split into W's and R's (R's zeros)
    if any(b.needed[3:]):
        b.refuse("its gates and cell states (what its backward pass reads) are not an ONNX LSTM's outputs")
    hidden = b.meta(h0)[0][1]

    def iofc(v):  # rows (i, f, g, o) -> (i, o, f, g), with the direction dim in front
        i, f, g, o = b.node("Split", [v, b.ints([hidden] * 4)], n_out=4, axis=0)
        return b.node("Unsqueeze", [b.node("Concat", [i, o, f, g], axis=0), b.ints([0])])

    zeros = b.const(np.zeros((1, 4 * hidden), b.meta(bias)[1].np_dtype))
    biases = b.node("Concat", [iofc(bias), zeros], axis=1)
    states = [b.node("Unsqueeze", [v, b.ints([0])]) for v in (h0, c0)]
    direction = "reverse" if b.prim.attrs["reverse"] else "forward"
    inputs = [x, iofc(w_ih), iofc(w_hh), biases, "", *states]
    y, h_n, c_n = b.node("LSTM", inputs, n_out=3, hidden_size=int(hidden), direction=direction)
    y = b.node("Squeeze", [y, b.ints([1])])  # [seq, 1, batch, hidden]
    return [y, *(b.node("Squeeze", [v, b.ints([0])]) for v in (h_n, c_n)), None, None]


@register("Dropout")
def _dropout(b, x):
    if float(b.prim.attrs["keep_prob"]) != 1.0:
        b.refuse("a training-mode Dropout (export the network after set_train(False))")
    return [b.node("Identity", [x]), b.node("Expand", [b.const(np.asarray(True)), b.node("Shape", [x])])]


# -- shapes and indexing ---------------------------------------------------------------------------


@register("Reshape")
def _reshape(b, x, shape):
    return b.node("Reshape", [x, b.ints(b.out[0][0])])


@register("Transpose")
def _transpose(b, x, perm):
    if not perm:
        return b.node("Identity", [x])
    return b.node("Transpose", [x], perm=[int(p) % len(perm) for p in perm])


@register("ExpandDims")
def _expand_dims(b, x, axis):
    return b.node("Unsqueeze", [x, b.ints([axis])])


@register("Squeeze")
def _squeeze(b, x):
    return b.node("Reshape", [x, b.ints(b.out[0][0])])


@register("BroadcastTo")
def _broadcast_to(b, x):
    return b.node("Expand", [x, b.ints(b.out[0][0])])


@register("Tile")
def _tile(b, x, multiples):
    rank = len(b.meta(x)[0])
    multiples = tuple(multiples)
    if len(multiples) > rank:  # MindSpore lines the input up with the multiples' trailing dims
        x = b.node("Reshape", [x, b.ints((1,) * (len(multiples) - rank) + tuple(b.meta(x)[0]))])
    return b.node("Tile", [x, b.ints(multiples)])


@register("Concat")
def _concat(b, inputs):
    return b.node("Concat", list(inputs), axis=int(b.prim.attrs["axis"]))


@register("Stack")
def _stack(b, inputs):
    axis = int(b.prim.attrs["axis"])
    axes = b.ints([axis])
    return b.node("Concat", [b.node("Unsqueeze", [v, axes]) for v in inputs], axis=axis)


@register("Split")
def _split(b, x):
    n = int(b.prim.attrs["output_num"])
    sizes = b.ints([shape[int(b.prim.attrs["axis"])] for shape, _ in b.out])
    return b.node("Split", [x, sizes], n_out=n, axis=int(b.prim.attrs["axis"])) if n > 1 else [b.node("Identity", [x])]


@register("Unstack")
def _unstack(b, x):
    axis = int(b.prim.attrs["axis"])
    n = b.meta(x)[0][axis]
    parts = b.node("Split", [x, b.ints([1] * n)], n_out=n, axis=axis) if n > 1 else [x]
    return [b.node("Squeeze", [p, b.ints([axis])]) for p in parts]


@register("Gather")
def _gather(b, params, indices, axis, *batch_dims):
    if batch_dims and batch_dims[0]:
        b.refuse("batch_dims other than 0")
    return b.node("Gather", [params, indices], axis=int(axis))


@register("Slice")
def _slice(b, x, begin, size):
    shape = b.meta(x)[0]
    if not shape:
        return b.node("Identity", [x])
    begin = [int(v) for v in begin]
    ends = [d if s == -1 else bg + s for bg, s, d in zip(begin, size, shape)]
    return b.node("Slice", [x, b.ints(begin), b.ints(ends)])


@register("StridedSlice")
def _strided_slice(b, x, begin, end, strides):
    # the masks resolved as the kernels do: a (start, step, length) walk per dim, then the result's shape
    shape = b.meta(x)[0]
    walk, _ = strided_slice_walk(b.prim.name, list(shape), tuple(begin), tuple(end), tuple(strides), b.prim.masks())
    if not walk:
        return b.node("Reshape", [x, b.ints(b.out[0][0])])
    starts = [start if length else 0 for start, _, length in walk]
    ends = [_slice_end(start, step, length) for start, step, length in walk]
    steps = [step for _, step, _ in walk]
    sliced = b.node("Slice", [x, b.ints(starts), b.ints(ends), b.ints(range(len(walk))), b.ints(steps)])
    return b.node("Reshape", [sliced, b.ints(b.out[0][0])])


def _slice_end(start: int, step: int, length: int) -> int:
    if not length:
        return 0
    end = start + step * length
    return end if end >= 0 else -INT64_MAX  # past index 0 going down (a plain -1 would mean the last)


@register("Pad")
def _pad(b, x):
    paddings = [tuple(int(v) for v in p) for p in b.prim.attrs["paddings"]]
    pads = [p[0] for p in paddings] + [p[1] for p in paddings]
    return b.node("Pad", [x, b.ints(pads)], mode="constant")


@register("OneHot")
def _one_hot(b, indices, depth, on_value, off_value):
    # ONNX Runtime's OneHot takes int64 indices and int32/int64/float32 values: others go through float32
    dtype = b.out[0][1]
    via = dtype if dtype in (mstype.float32, mstype.int32, mstype.int64) else mstype.float32
    pair = [b.node("Reshape", [v, b.ints([1])]) for v in _operands(b, off_value, on_value, dtype)]
    values = b.node("Concat", [b.node("Cast", [v], to=b.elem(via)) for v in pair], axis=0)
    if depth == 0:  # an empty result (ONNX Runtime refuses a depth of 0)
        return b.const(np.zeros(b.out[0][0], dtype.np_dtype))
    rank = len(b.meta(indices)[0])
    indices = b.node("Cast", [indices if rank else b.node("Reshape", [indices, b.ints([1])])], to=b.elem(mstype.int64))
    # ONNX counts a negative index from the end; MindSpore gives it an all-off row, as ONNX does for depth
    negative = b.node("Less", [indices, b.ints(0)])
    indices = b.node("Where", [negative, b.ints(depth), indices])
    out = b.node("OneHot", [indices, b.ints([depth]), values], axis=int(b.prim.attrs["axis"]) if rank else -1)
    out = out if via == dtype else b.node("Cast", [out], to=b.elem(dtype))
    return out if rank else b.node("Reshape", [out, b.ints(b.out[0][0])])


# -- reductions -----------------------------------------------------------------------------------

_REDUCE = {
    "ReduceSum": "ReduceSum",
    "ReduceMean": "ReduceMean",
    "ReduceMax": "ReduceMax",
    "ReduceMin": "ReduceMin",
    "ReduceProd": "ReduceProd",
}


def _reduce(onnx_op: str):
    def rule(b, x, axis=()):
        if not b.meta(x)[0]:
            return b.node("Identity", [x])  # a reduction of one element
        axes = [axis] if isinstance(axis, int) else [int(a) for a in axis]
        keep = int(bool(b.prim.attrs.get("keep_dims", False)))
        inputs = [x, b.ints(axes)] if axes else [x]
        return b.node(onnx_op, inputs, keepdims=keep)

    return rule


for _op, _onnx_op in _REDUCE.items():
    register(_op)(_reduce(_onnx_op))


def _arg(onnx_op: str):
    def rule(b, x):
        axis = int(b.prim.attrs["axis"]) if b.meta(x)[0] else 0
        out = _on_vector(b, x, lambda v: b.node(onnx_op, [v], axis=axis, keepdims=0))
        dtype = b.out[0][1]
        return out if dtype == mstype.int64 else b.node("Cast", [out], to=b.elem(dtype))

    return rule


register("Argmax")(_arg("ArgMax"))
register("Argmin")(_arg("ArgMin"))


@register("TopK")
def _topk(b, x, k):
    # the k largest along the last dim, descending, ties the smaller index first: ONNX's TopK (largest,
    # sorted) gives that order, which opforge keeps for sorted=False too; indices int64 -> int32
    if not k:  # an empty result (ONNX Runtime refuses K = 0)
        return [b.const(np.zeros(shape, dt.np_dtype)) for shape, dt in b.out]
    values, indices = b.node("TopK", [x, b.ints([k])], n_out=2, axis=-1, largest=1, sorted=1)
    return [values, b.node("Cast", [indices], to=b.elem(b.out[1][1]))]
