"""Neural-network operators: activations, BiasAdd, softmax and its losses, optimizer updates."""

from __future__ import annotations

from opforge import dtype as mstype
from opforge.dispatch import signature as sig
from opforge.primitives._utils import (
    _Operator,
    broadcast_shape,
    has_unknown,
    matmul_shape,
    merge_dim,
    merge_shapes,
    same_dim,
    same_shape,
)
from opforge.primitives.array_ops import Assign
from opforge.primitives.math_ops import Add, Mul
from opforge.primitives.primitive import Primitive, prim_attr_register
from opforge.primitives.validator import Rel
from opforge.primitives.validator import Validator as validator
from opforge.tensor import Tensor

__all__ = [
    "LSTMLayer",
    "GRULayer",
    "RNNLayer",
    "ReLU",
    "Elu",
    "Sigmoid",
    "Tanh",
    "BiasAdd",
    "Softmax",
    "LogSoftmax",
    "SoftmaxCrossEntropyWithLogits",
    "SparseSoftmaxCrossEntropyWithLogits",
    "ApplyGradientDescent",
    "FusedMatMulApplyGradientDescent",
    "ApplyMomentum",
    "Adam",
    "ApplyRMSProp",
    "ApplyCenteredRMSProp",
    "ApplyAdagrad",
    "AdamWeightDecay",
    "GeLU",
    "Softplus",
    "HSigmoid",
    "ReLU6",
    "HSwish",
    "SeLU",
    "CeLU",
    "Softsign",
    "HShrink",
    "SoftShrink",
    "Mish",
    "BatchNorm",
    "LayerNorm",
    "Dropout",
    "DropoutExt",
    "L2Loss",
    "SmoothL1Loss",
    "BCEWithLogitsLoss",
    "NLLLoss",
]


class _Activation(_Operator):
    """An elementwise activation: same shape and dtype out; floats unless stated otherwise."""

    valid_dtypes = mstype.float_type
    unknown_rank_ok = True

    def infer_shape(self, x_shape):
        return x_shape

    def infer_dtype(self, x_dtype):
        return validator.check_tensor_dtype_valid("input_x", x_dtype, self.valid_dtypes, self.name)


class ReLU(_Activation):
    r"""Rectified linear unit: :math:`y = \max(x, 0)`.

    Inputs: ``input_x`` of any number dtype. Output: same shape and dtype.
    """

    valid_dtypes = mstype.number_type

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["input_x"], outputs=["output"])


class Elu(_Activation):
    r"""Exponential linear unit:
    :math:`y = x` if :math:`x > 0`, else :math:`\alpha (e^x - 1)`.

    Attr ``alpha`` (float, default 1.0). Inputs: ``input_x`` float16, bfloat16, float32 or float64.
    """

    @prim_attr_register
    def __init__(self, alpha=1.0):
        validator.check_value_type("alpha", alpha, [float], self.name)
        self.init_prim_io_names(inputs=["input_x"], outputs=["output"])


class Sigmoid(_Activation):
    r"""Logistic sigmoid: :math:`y = 1 / (1 + e^{-x})`. dtypes: float16, bfloat16, float32, float64."""

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["input_x"], outputs=["output"])


class Tanh(_Activation):
    r"""Hyperbolic tangent: :math:`y = \tanh(x)`. dtypes: float16, bfloat16, float32, float64, complex64,
    complex128."""

    valid_dtypes = mstype.float_type + mstype.complex_type

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["input_x"], outputs=["output"])


class BiasAdd(_Operator):
    r"""Adds a 1-D bias along the channel axis: :math:`y[n, c, \ldots] = x[n, c, \ldots] + b[c]`.

    Attr ``data_format``: "NCHW" (channel axis 1, default) or "NHWC" (channel axis last).
    Inputs: ``input_x`` (ndim >= 2) and ``bias``, one dtype group (promoted as Add's, docs/dtypes.md):
    float16, bfloat16, float32, float64, int32 or int64.
    """

    __mindspore_signature__ = (
        sig.make_sig("input_x", dtype=sig.sig_dtype.T),
        sig.make_sig("bias", dtype=sig.sig_dtype.T),
    )

    @prim_attr_register
    def __init__(self, data_format="NCHW"):
        validator.check_string(data_format, ["NCHW", "NHWC"], "data_format", self.name)
        self.init_prim_io_names(inputs=["input_x", "bias"], outputs=["output"])

    def infer_shape(self, x_shape, b_shape):
        validator.check_int(len(x_shape), 2, Rel.GE, "input_x rank", self.name)
        validator.check_equal_int(len(b_shape), 1, "bias rank", self.name)
        channel = x_shape[1] if self.data_format == "NCHW" else x_shape[-1]
        if not same_dim(b_shape[0], channel):
            raise ValueError(
                f"For '{self.name}', the 'bias' length must equal the channel dimension {channel} of "
                f"'input_x' {list(x_shape)} ({self.data_format}), but got {b_shape[0]}."
            )
        out = list(x_shape)
        out[1 if self.data_format == "NCHW" else -1] = merge_dim(channel, b_shape[0])
        return out

    def infer_dtype(self, x_dtype, b_dtype):
        args = {"input_x": x_dtype, "bias": b_dtype}
        return validator.check_tensors_dtypes_same_and_valid(args, mstype.number_type, self.name)


# ---------------------------------------------------------------------------------------------
# Softmax and the softmax cross-entropy losses

# Softmax, the losses and the optimizers are defined for every float dtype; a backend without a
# kernel for one (bfloat16 on the CPU) runs it widened losslessly, by kernel selection.
_SOFTMAX_DTYPES = mstype.float_type
_PRIMITIVE_CALL = Primitive.__call__  # the C call path, which BatchNorm's own __call__ wraps
_LABEL_DTYPES = (mstype.int32, mstype.int64)


def _one_axis(prim_name: str, axis) -> int:
    """``axis`` given as an int or a tuple of one int (MindSpore accepts both), as an int."""
    validator.check_value_type("axis", axis, [int, tuple], prim_name)
    if isinstance(axis, tuple):
        if len(axis) != 1:
            raise ValueError(
                f"For '{prim_name}', the 'axis' must be an int or a tuple of one int, but got a tuple of "
                f"length {len(axis)}: {axis!r}."
            )
        validator.check_value_type("axis[0]", axis[0], [int], prim_name)
        return axis[0]
    return axis


class _SoftmaxBase(_Operator):
    def infer_shape(self, logits):
        validator.check_axis("axis", self.axis, len(logits), self.name)
        return logits

    def infer_dtype(self, logits):
        return validator.check_tensor_dtype_valid("logits", logits, _SOFTMAX_DTYPES, self.name)


class Softmax(_SoftmaxBase):
    r"""Softmax along ``axis``: :math:`y_i = e^{x_i - m} / \sum_j e^{x_j - m}` with
    :math:`m = \max_j x_j` (subtracting the maximum keeps it finite for large logits).

    Attr ``axis`` (int or a tuple of one int, default -1; stored as a 1-tuple like MindSpore).
    Inputs: ``logits`` of any rank, float16 (computed in float32), float32 or float64.
    Output: same shape and dtype. ``-inf`` entries give 0; a slice that is all ``-inf``, or holds
    NaN or ``+inf``, gives NaN, as the NumPy formula does.
    """

    @prim_attr_register
    def __init__(self, axis=-1):
        self.add_prim_attr("axis", (_one_axis(self.name, axis),))
        self.init_prim_io_names(inputs=["logits"], outputs=["output"])


class LogSoftmax(_SoftmaxBase):
    r"""Log-softmax along ``axis``: :math:`y_i = (x_i - m) - \log \sum_j e^{x_j - m}` with
    :math:`m = \max_j x_j`.

    Attr ``axis`` (int, or a tuple of one int which is stored as the int; default -1).
    Inputs: ``logits`` of any rank, float16 (computed in float32), float32 or float64.
    Output: same shape and dtype; ``-inf`` entries give ``-inf``, an all ``-inf`` slice NaN.
    """

    @prim_attr_register
    def __init__(self, axis=-1):
        self.add_prim_attr("axis", _one_axis(self.name, axis))
        self.init_prim_io_names(inputs=["logits"], outputs=["output"])


def _check_logits_2d(prim_name: str, logits) -> None:
    if len(logits) != 2:
        raise ValueError(f"For '{prim_name}', the 'logits' must be 2-D [N, C], but got shape {list(logits)}.")


class SoftmaxCrossEntropyWithLogits(_Operator):
    r"""Softmax cross-entropy with dense labels, and its gradient:

    .. math::
        loss_i = -\sum_j labels_{ij} \log \mathrm{softmax}(logits)_{ij}, \qquad
        backprop_{ij} = \mathrm{softmax}(logits)_{ij} - labels_{ij}

    Inputs: ``logits`` [N, C] and ``labels`` [N, C] (each row usually a probability distribution)
    of one dtype: float16 (computed in float32), float32 or float64.
    Outputs: ``(loss, backprop)``, ``loss`` [N] and ``backprop`` [N, C], of that dtype.
    """

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["logits", "labels"], outputs=["loss", "backprop"])

    def infer_shape(self, logits, labels):
        _check_logits_2d(self.name, logits)
        if not same_shape(labels, logits):
            raise ValueError(
                f"For '{self.name}', the 'labels' must have the shape of 'logits' {list(logits)}, "
                f"but got {list(labels)}."
            )
        shape = merge_shapes(logits, labels)
        return [shape[0]], shape

    def infer_dtype(self, logits, labels):
        dtype = validator.check_tensors_dtypes_same_and_valid(
            {"logits": logits, "labels": labels}, _SOFTMAX_DTYPES, self.name
        )
        return dtype, dtype


class SparseSoftmaxCrossEntropyWithLogits(_Operator):
    r"""Softmax cross-entropy with class-index labels, averaged over the batch:

    .. math::
        loss = \frac{1}{N} \sum_i -\log \mathrm{softmax}(logits)_{i, labels_i}

    With ``is_grad=True`` it gives the gradient of that mean loss with respect to ``logits``
    instead: :math:`(\mathrm{softmax}(logits) - \mathrm{onehot}(labels)) / N`.

    Attr ``is_grad`` (bool, default False). Inputs: ``logits`` [N, C] float16 (computed in
    float32), float32 or float64; ``labels`` [N] int32 or int64, each in [0, C) (checked by the
    kernel at every launch: an out-of-range label raises ``KernelError``).
    Output: a 0-d tensor (the mean loss; NaN when N = 0), or [N, C] with ``is_grad``; the dtype of
    ``logits``.
    """

    @prim_attr_register
    def __init__(self, is_grad=False):
        validator.check_value_type("is_grad", is_grad, [bool], self.name)
        self.init_prim_io_names(inputs=["logits", "labels"], outputs=["output"])

    def infer_shape(self, logits, labels):
        _check_logits_2d(self.name, logits)
        if len(labels) != 1 or not same_dim(labels[0], logits[0]):
            raise ValueError(
                f"For '{self.name}', the 'labels' must be 1-D [N] with N = {logits[0]} (the rows of 'logits' "
                f"{list(logits)}), but got shape {list(labels)}."
            )
        return [merge_dim(logits[0], labels[0]), logits[1]] if self.is_grad else []

    def infer_dtype(self, logits, labels):
        validator.check_tensor_dtype_valid("labels", labels, _LABEL_DTYPES, self.name)
        return validator.check_tensor_dtype_valid("logits", logits, _SOFTMAX_DTYPES, self.name)


# ---------------------------------------------------------------------------------------------
# Optimizer updates (written in place into Parameters)


def _check_scalar_shape(prim_name: str, arg_name: str, shape) -> None:
    if not (len(shape) == 0 or (len(shape) == 1 and shape[0] in (1, -1))):
        raise ValueError(
            f"For '{prim_name}', the '{arg_name}' must be a scalar (a number, or a Tensor of shape [] or [1]), "
            f"but got shape {list(shape)}."
        )


def _check_same_shape(prim_name: str, ref_name: str, ref, others: dict) -> None:
    for name, shape in others.items():
        if not same_shape(shape, ref):
            raise ValueError(
                f"For '{prim_name}', the '{name}' must have the shape of '{ref_name}' {list(ref)}, "
                f"but got {list(shape)}."
            )


class ApplyGradientDescent(_Operator):
    r"""Gradient descent, in place: :math:`var \leftarrow var - \alpha \cdot \delta`; returns ``var``.

    Inputs: ``var`` (a Parameter, written in place), ``alpha`` (a Python number or a Tensor of
    shape [] or [1]) and ``delta`` (the shape of ``var``); all in one dtype group, cast to the
    dtype of ``var`` when lossless. dtypes: float16 (computed in float32), float32, float64.
    """

    __mindspore_signature__ = (
        sig.make_sig("var", sig.sig_rw.RW_WRITE, dtype=sig.sig_dtype.T),
        sig.make_sig("alpha", dtype=sig.sig_dtype.T),
        sig.make_sig("delta", dtype=sig.sig_dtype.T),
    )

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["var", "alpha", "delta"], outputs=["var"])

    def infer_shape(self, var, alpha, delta):
        _check_scalar_shape(self.name, "alpha", alpha)
        _check_same_shape(self.name, "var", var, {"delta": delta})
        return var

    def infer_dtype(self, var, alpha, delta):
        args = {"var": var, "alpha": alpha, "delta": delta}
        return validator.check_tensors_dtypes_same_and_valid(args, _SOFTMAX_DTYPES, self.name)


class FusedMatMulApplyGradientDescent(_Operator):
    r"""Gradient descent by a matrix product, in place: :math:`var \leftarrow var - \alpha \cdot op(x_1) \,
    op(x_2)`, where :math:`op` transposes when ``transpose_a`` / ``transpose_b`` is True; returns ``var``.

    ``ApplyGradientDescent(var, alpha, MatMul(x1, x2))`` in one GEMM that accumulates into ``var``: the
    trace compiler puts it in place of the pair (``opforge/dispatch/epilogue.py``), so the gradient is never
    written out and read back. The product is summed and scaled before it is subtracted, so the result
    agrees with the pair's to within a rounding of the update, not bit for bit.

    Inputs: ``var`` (a Parameter [M, N], written in place), ``alpha`` (a Python number or a Tensor of
    shape [] or [1]), ``x1`` and ``x2`` (2-D, as MatMul's). dtypes: float32, float64 (CPU).
    """

    __mindspore_signature__ = (
        sig.make_sig("var", sig.sig_rw.RW_WRITE, dtype=sig.sig_dtype.T),
        sig.make_sig("alpha", dtype=sig.sig_dtype.T),
        sig.make_sig("x1", dtype=sig.sig_dtype.T),
        sig.make_sig("x2", dtype=sig.sig_dtype.T),
    )

    @prim_attr_register
    def __init__(self, transpose_a=False, transpose_b=False):
        validator.check_value_type("transpose_a", transpose_a, [bool], self.name)
        validator.check_value_type("transpose_b", transpose_b, [bool], self.name)
        self.init_prim_io_names(inputs=["var", "alpha", "x1", "x2"], outputs=["var"])

    def infer_shape(self, var, alpha, x1, x2):
        _check_scalar_shape(self.name, "alpha", alpha)
        product = matmul_shape(self.name, self.transpose_a, self.transpose_b, x1, x2)
        if not same_shape(var, product):
            raise ValueError(
                f"For '{self.name}', the 'var' must have the shape of the product op(x1) @ op(x2) {product}, "
                f"but got {list(var)}."
            )
        return merge_shapes(var, product)

    def infer_dtype(self, var, alpha, x1, x2):
        args = {"var": var, "alpha": alpha, "x1": x1, "x2": x2}
        return validator.check_tensors_dtypes_same_and_valid(args, (mstype.float32, mstype.float64), self.name)


class ApplyMomentum(_Operator):
    r"""Momentum, in place:

    .. math::
        accumulation \leftarrow accumulation \cdot momentum + gradient \cdot gradient\_scale \\
        variable \leftarrow variable - lr \cdot accumulation

    With ``use_nesterov``: :math:`variable \leftarrow variable - lr \cdot (gradient \cdot
    gradient\_scale + momentum \cdot accumulation)`, with the updated accumulation.
    Returns ``variable``; ``accumulation`` is updated in place too.

    Attrs: ``use_locking`` (bool, default False; accepted for MindSpore compatibility),
    ``use_nesterov`` (bool, default False), ``gradient_scale`` (float, default 1.0).
    Inputs: ``variable`` and ``accumulation`` (Parameters of one dtype, written in place),
    ``learning_rate`` and ``momentum`` (Python numbers or Tensors of shape [] or [1]), ``gradient``
    (the shape of ``variable``); all in one dtype group, cast to the Parameters' dtype when lossless.
    dtypes: float16 (computed in float32), float32, float64.
    """

    __mindspore_signature__ = (
        sig.make_sig("variable", sig.sig_rw.RW_WRITE, dtype=sig.sig_dtype.T),
        sig.make_sig("accumulation", sig.sig_rw.RW_WRITE, dtype=sig.sig_dtype.T),
        sig.make_sig("learning_rate", dtype=sig.sig_dtype.T),
        sig.make_sig("gradient", dtype=sig.sig_dtype.T),
        sig.make_sig("momentum", dtype=sig.sig_dtype.T),
    )

    @prim_attr_register
    def __init__(self, use_locking=False, use_nesterov=False, gradient_scale=1.0):
        validator.check_value_type("use_locking", use_locking, [bool], self.name)
        validator.check_value_type("use_nesterov", use_nesterov, [bool], self.name)
        validator.check_value_type("gradient_scale", gradient_scale, [float], self.name)
        self.init_prim_io_names(
            inputs=["variable", "accumulation", "learning_rate", "gradient", "momentum"], outputs=["output"]
        )

    def infer_shape(self, variable, accumulation, learning_rate, gradient, momentum):
        _check_same_shape(self.name, "variable", variable, {"accumulation": accumulation, "gradient": gradient})
        _check_scalar_shape(self.name, "learning_rate", learning_rate)
        _check_scalar_shape(self.name, "momentum", momentum)
        return variable

    def infer_dtype(self, variable, accumulation, learning_rate, gradient, momentum):
        args = {
            "variable": variable,
            "accumulation": accumulation,
            "learning_rate": learning_rate,
            "gradient": gradient,
            "momentum": momentum,
        }
        return validator.check_tensors_dtypes_same_and_valid(args, _SOFTMAX_DTYPES, self.name)


_ADAM_SCALARS = ("beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon")


class Adam(_Operator):
    r"""Adam, in place:

    .. math::
        lr_t = lr \cdot \sqrt{1 - \beta_2^t} / (1 - \beta_1^t) \\
        m \leftarrow m + (g - m)(1 - \beta_1) \\
        v \leftarrow v + (g^2 - v)(1 - \beta_2) \\
        var \leftarrow var - lr_t \cdot m / (\sqrt{v} + \epsilon)

    With ``use_nesterov``: :math:`var \leftarrow var - lr_t (m \beta_1 + (1 - \beta_1) g) / (\sqrt{v} + \epsilon)`.

    Attrs: ``use_locking`` (bool, default False; accepted for MindSpore compatibility),
    ``use_nesterov`` (bool, default False).
    Inputs: ``var``, ``m``, ``v`` (Parameters of one dtype, written in place), ``beta1_power``
    (:math:`\beta_1^t`), ``beta2_power``, ``lr``, ``beta1``, ``beta2``, ``epsilon`` (Python numbers
    or Tensors of shape [] or [1]) and ``gradient`` (the shape of ``var``); all in one dtype
    group, cast to the Parameters' dtype when lossless. dtypes: float16 (computed in float32),
    float32, float64. Outputs: ``(var, m, v)``, the Parameters themselves.
    """

    __mindspore_signature__ = (
        sig.make_sig("var", sig.sig_rw.RW_WRITE, dtype=sig.sig_dtype.T),
        sig.make_sig("m", sig.sig_rw.RW_WRITE, dtype=sig.sig_dtype.T),
        sig.make_sig("v", sig.sig_rw.RW_WRITE, dtype=sig.sig_dtype.T),
        *(sig.make_sig(name, dtype=sig.sig_dtype.T) for name in _ADAM_SCALARS),
        sig.make_sig("gradient", dtype=sig.sig_dtype.T),
    )

    @prim_attr_register
    def __init__(self, use_locking=False, use_nesterov=False):
        validator.check_value_type("use_locking", use_locking, [bool], self.name)
        validator.check_value_type("use_nesterov", use_nesterov, [bool], self.name)
        self.init_prim_io_names(inputs=["var", "m", "v", *_ADAM_SCALARS, "gradient"], outputs=["var", "m", "v"])

    def infer_shape(self, var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, gradient):
        _check_same_shape(self.name, "var", var, {"m": m, "v": v, "gradient": gradient})
        scalars = (beta1_power, beta2_power, lr, beta1, beta2, epsilon)
        for name, shape in zip(_ADAM_SCALARS, scalars):
            _check_scalar_shape(self.name, name, shape)
        return var, var, var

    def infer_dtype(self, var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, gradient):
        args = {"var": var, "m": m, "v": v, "gradient": gradient}
        args.update(zip(_ADAM_SCALARS, (beta1_power, beta2_power, lr, beta1, beta2, epsilon)))
        dtype = validator.check_tensors_dtypes_same_and_valid(args, _SOFTMAX_DTYPES, self.name)
        return dtype, dtype, dtype


def _check_optimizer_inputs(prim, names: tuple, shapes: tuple, tensors: tuple, scalars: tuple) -> None:
    """``tensors`` (names) have the shape of the first, ``scalars`` are [] or [1]."""
    by_name = dict(zip(names, shapes))
    _check_same_shape(prim.name, tensors[0], by_name[tensors[0]], {n: by_name[n] for n in tensors[1:]})
    for name in scalars:
        _check_scalar_shape(prim.name, name, by_name[name])


def _optimizer_dtype(prim, names: tuple, dtypes: tuple):
    return validator.check_tensors_dtypes_same_and_valid(dict(zip(names, dtypes)), _SOFTMAX_DTYPES, prim.name)


class _ApplyOptimizer(_Operator):
    """An in-place optimizer update: ``io`` names the inputs, ``tensors`` those of the var's shape (the
    var first), ``scalars`` the rest; ``outputs`` how many outputs (the first Parameters) it returns."""

    io: tuple = ()
    tensors: tuple = ()
    scalars: tuple = ()
    outputs: tuple = ("var",)

    def _init_io(self):
        self.init_prim_io_names(inputs=list(self.io), outputs=list(self.outputs))

    def infer_shape(self, *shapes):
        _check_optimizer_inputs(self, self.io, shapes, self.tensors, self.scalars)
        return shapes[0] if len(self.outputs) == 1 else (shapes[0],) * len(self.outputs)

    def infer_dtype(self, *dtypes):
        dtype = _optimizer_dtype(self, self.io, dtypes)
        return dtype if len(self.outputs) == 1 else (dtype,) * len(self.outputs)


def _optimizer_signature(io: tuple, written: tuple) -> tuple:
    return tuple(
        sig.make_sig(name, sig.sig_rw.RW_WRITE, dtype=sig.sig_dtype.T)
        if name in written
        else sig.make_sig(name, dtype=sig.sig_dtype.T)
        for name in io
    )


class ApplyRMSProp(_ApplyOptimizer):
    r"""RMSProp, in place (MindSpore's ``ops.ApplyRMSProp``):

    .. math::
        s \leftarrow \rho s + (1 - \rho) g^2 \\
        m \leftarrow \beta m + \eta \frac{g}{\sqrt{s + \epsilon}} \\
        w \leftarrow w - m

    with :math:`s` ``mean_square``, :math:`m` ``moment``, :math:`\rho` ``decay``, :math:`\beta`
    ``momentum``, :math:`\eta` ``learning_rate``. Attr ``use_locking`` (bool, default False; accepted
    for MindSpore compatibility). Inputs: ``var``, ``mean_square``, ``moment`` (Parameters of one dtype,
    written in place), ``learning_rate``, ``grad`` (the shape of ``var``), ``decay``, ``momentum``,
    ``epsilon`` (Python numbers or Tensors of shape [] or [1]); all in one dtype group, cast to the
    Parameters' dtype when lossless. dtypes: float16 (computed in float32), float32, float64.
    Output: ``var``, the Parameter itself (``mean_square`` and ``moment`` are updated in place too).
    """

    io = ("var", "mean_square", "moment", "learning_rate", "grad", "decay", "momentum", "epsilon")
    tensors = ("var", "mean_square", "moment", "grad")
    scalars = ("learning_rate", "decay", "momentum", "epsilon")
    __mindspore_signature__ = _optimizer_signature(io, ("var", "mean_square", "moment"))

    @prim_attr_register
    def __init__(self, use_locking=False):
        validator.check_value_type("use_locking", use_locking, [bool], self.name)
        self._init_io()


class ApplyCenteredRMSProp(_ApplyOptimizer):
    r"""Centered RMSProp, in place (MindSpore's ``ops.ApplyCenteredRMSProp``):

    .. math::
        \bar g \leftarrow \rho \bar g + (1 - \rho) g \\
        s \leftarrow \rho s + (1 - \rho) g^2 \\
        m \leftarrow \beta m + \eta \frac{g}{\sqrt{s - \bar g^2 + \epsilon}} \\
        w \leftarrow w - m

    with :math:`\bar g` ``mean_gradient``, :math:`s` ``mean_square``, :math:`m` ``moment``. Attr
    ``use_locking`` (bool, default False). Inputs, in MindSpore's order: ``var``, ``mean_gradient``,
    ``mean_square``, ``moment`` (Parameters of one dtype, written in place), ``grad`` (the shape of
    ``var``), ``learning_rate``, ``decay``, ``momentum``, ``epsilon`` (Python numbers or Tensors of
    shape [] or [1]); one dtype group. dtypes: float16 (computed in float32), float32, float64.
    Output: ``var``, the Parameter itself.
    """

    io = ("var", "mean_gradient", "mean_square", "moment", "grad", "learning_rate", "decay", "momentum", "epsilon")
    tensors = ("var", "mean_gradient", "mean_square", "moment", "grad")
    scalars = ("learning_rate", "decay", "momentum", "epsilon")
    __mindspore_signature__ = _optimizer_signature(io, ("var", "mean_gradient", "mean_square", "moment"))

    @prim_attr_register
    def __init__(self, use_locking=False):
        validator.check_value_type("use_locking", use_locking, [bool], self.name)
        self._init_io()


class ApplyAdagrad(_ApplyOptimizer):
    r"""Adagrad, in place (MindSpore's ``ops.ApplyAdagrad``):

    .. math::
        accum \leftarrow accum + g^2 \\
        var \leftarrow var - lr \frac{g}{\sqrt{accum}}

    (``accum`` is left as it is when ``update_slots`` is False). Attr ``update_slots`` (bool, default
    True). Inputs: ``var``, ``accum`` (Parameters of one dtype, written in place), ``lr`` (a Python
    number or a Tensor of shape [] or [1]), ``grad`` (the shape of ``var``); one dtype group. dtypes:
    float16 (computed in float32), float32, float64. Outputs: ``(var, accum)``, the Parameters themselves.
    """

    io = ("var", "accum", "lr", "grad")
    tensors = ("var", "accum", "grad")
    scalars = ("lr",)
    outputs = ("var", "accum")
    __mindspore_signature__ = _optimizer_signature(io, ("var", "accum"))

    @prim_attr_register
    def __init__(self, update_slots=True):
        validator.check_value_type("update_slots", update_slots, [bool], self.name)
        self._init_io()


class AdamWeightDecay(_ApplyOptimizer):
    r"""Adam with decoupled weight decay and no bias correction, in place (MindSpore's
    ``ops.AdamWeightDecay``):

    .. math::
        m \leftarrow \beta_1 m + (1 - \beta_1) g \\
        v \leftarrow \beta_2 v + (1 - \beta_2) g^2 \\
        var \leftarrow var - lr \left(\frac{m}{\sqrt{v} + \epsilon} + decay \cdot var\right)

    Attr ``use_locking`` (bool, default False). Inputs: ``var``, ``m``, ``v`` (Parameters of one dtype,
    written in place), ``lr``, ``beta1``, ``beta2``, ``epsilon``, ``decay`` (Python numbers or Tensors
    of shape [] or [1]) and ``gradient`` (the shape of ``var``); one dtype group. dtypes: float16
    (computed in float32), float32, float64. Outputs: ``(var, m, v)``, the Parameters themselves.
    """

    io = ("var", "m", "v", "lr", "beta1", "beta2", "epsilon", "decay", "gradient")
    tensors = ("var", "m", "v", "gradient")
    scalars = ("lr", "beta1", "beta2", "epsilon", "decay")
    outputs = ("var", "m", "v")
    __mindspore_signature__ = _optimizer_signature(io, ("var", "m", "v"))

    @prim_attr_register
    def __init__(self, use_locking=False):
        validator.check_value_type("use_locking", use_locking, [bool], self.name)
        self._init_io()


# ---------------------------------------------------------------------------------------------
# GeLU, Softplus, HSigmoid, HSwish (kernels: csrc/kernels/cpu/elemwise.cc, functors/elemwise.h)


class _NamedActivation(_Activation):
    io_names = (["x"], ["output"])

    @prim_attr_register
    def __init__(self):
        inputs, outputs = self.io_names
        self.init_prim_io_names(inputs=inputs, outputs=outputs)

    def infer_dtype(self, x_dtype):
        return validator.check_tensor_dtype_valid(self.io_names[0][0], x_dtype, self.valid_dtypes, self.name)


class GeLU(_NamedActivation):
    r"""Gaussian error linear unit, MindSpore's tanh approximation:

    .. math::
        y = \frac{x}{2} \left(1 + \tanh\left(\sqrt{2 / \pi}\, (x + 0.044715 x^3)\right)\right)

    dtypes: float16, bfloat16, float32, float64.
    """


class Softplus(_NamedActivation):
    r""":math:`y = \log(1 + e^x)`, computed without overflow (:math:`x + \log(1 + e^{-x})` for x > 0).
    dtypes: float16, bfloat16, float32, float64."""


class HSigmoid(_NamedActivation):
    r"""Hard sigmoid: :math:`y = \operatorname{relu6}(x + 3) / 6 = \min(\max((x + 3) / 6, 0), 1)`.
    dtypes: float16, bfloat16, float32, float64."""

    io_names = (["input_x"], ["output"])


class ReLU6(_NamedActivation):
    r"""ReLU capped at 6: :math:`y = \min(\max(x, 0), 6)` (MobileNet's activation).
    dtypes: float16, bfloat16, float32, float64."""


class HSwish(_NamedActivation):
    r"""Hard swish: :math:`y = x \cdot \operatorname{relu6}(x + 3) / 6`.
    dtypes: float16, bfloat16, float32, float64."""


# SeLU, CeLU, Softsign, HShrink, SoftShrink, Mish (kernels: csrc/kernels/cpu/nn_activation.cc,
# functors/nn_activation.h; bprops composed of primitives: bprop/grad_nn_activation_ops.py)


class SeLU(_NamedActivation):
    r"""Scaled exponential linear unit: :math:`y = s\,x` for :math:`x > 0`, else
    :math:`s\,\alpha (e^x - 1)`, with :math:`\alpha \approx 1.6732632`, :math:`s \approx 1.0507010`.
    dtypes: float16, bfloat16, float32, float64."""

    io_names = (["input_x"], ["output"])


class CeLU(_NamedActivation):
    r"""Continuously differentiable ELU: :math:`y = x` for :math:`x > 0`, else
    :math:`\alpha (e^{x / \alpha} - 1)`. Attr ``alpha`` (float, not 0; default 1.0).
    dtypes: float16, bfloat16, float32, float64."""

    io_names = (["input_x"], ["output"])

    @prim_attr_register
    def __init__(self, alpha=1.0):
        validator.check_value_type("alpha", alpha, [float], self.name)
        if alpha == 0.0:
            raise ValueError(f"For '{self.name}', the 'alpha' must not be 0, but got {alpha}.")
        self.init_prim_io_names(inputs=["input_x"], outputs=["output"])


class Softsign(_NamedActivation):
    r""":math:`y = x / (1 + |x|)`. dtypes: float16, bfloat16, float32, float64."""

    io_names = (["input_x"], ["output"])


class _Shrink(_NamedActivation):
    io_names = (["input_x"], ["output"])

    @prim_attr_register
    def __init__(self, lambd=0.5):
        validator.check_value_type("lambd", lambd, [float], self.name)
        if not lambd >= 0.0:
            raise ValueError(f"For '{self.name}', the 'lambd' must be >= 0, but got {lambd}.")
        self.init_prim_io_names(inputs=["input_x"], outputs=["output"])


class HShrink(_Shrink):
    r"""Hard shrink: :math:`y = x` where :math:`|x| > \lambda`, else 0. Attr ``lambd`` (float >= 0, default
    0.5). dtypes: float16, bfloat16, float32, float64."""


class SoftShrink(_Shrink):
    r"""Soft shrink: :math:`y = x - \lambda` for :math:`x > \lambda`, :math:`x + \lambda` for
    :math:`x < -\lambda`, else 0. Attr ``lambd`` (float >= 0, default 0.5).
    dtypes: float16, bfloat16, float32, float64."""


class Mish(_NamedActivation):
    r""":math:`y = x \tanh(\log(1 + e^x))` (the softplus computed without overflow).
    dtypes: float16, bfloat16, float32, float64."""


# Normalisations


def _check_norm_vectors(prim_name: str, x_shape, vectors: dict, channel_axis: int = 1) -> None:
    """Each of ``vectors`` (name -> shape) is [C] with C the channel dim of ``x_shape``."""
    if len(x_shape) < 2:
        raise ValueError(f"For '{prim_name}', the 'input_x' must have rank 2 or more, but got shape {list(x_shape)}.")
    channels = x_shape[channel_axis]
    for name, shape in vectors.items():
        if not same_shape(shape, [channels]):
            raise ValueError(
                f"For '{prim_name}', the '{name}' must have shape [{channels}] (the channel dim of 'input_x' "
                f"{list(x_shape)}), but got {list(shape)}."
            )


class BatchNorm(_Operator):
    r"""Batch normalisation over the channel axis 1 of ``input_x`` [N, C] or [N, C, H, W] (any rank >= 2):

    .. math::
        y = \frac{x - mean}{\sqrt{variance + \epsilon}} \cdot scale + bias

    ``BatchNorm(is_training=False, epsilon=1e-5, momentum=0.1, data_format="NCHW")(input_x, scale, bias,
    mean, variance)`` returns ``(y, batch_mean, batch_variance, reserve_space_1, reserve_space_2)``.

    * Inference (``is_training=False``): ``mean`` and ``variance`` are the moving statistics (Tensors
      or Parameters); ``batch_mean``/``reserve_space_1`` are ``mean`` and ``batch_variance``/
      ``reserve_space_2`` are ``variance``, passed through.
    * Training (``is_training=True``): the statistics are the batch's per channel (over N, H, W): its
      mean and biased variance (the one y uses), returned as ``batch_mean``/``reserve_space_1`` and
      ``batch_variance``/``reserve_space_2``. ``mean`` and ``variance`` must be Parameters and are
      updated in place, as MindSpore documents it:
      :math:`moving \leftarrow (1 - momentum) \cdot moving + momentum \cdot batch`, with the
      unbiased batch variance (:math:`\cdot M / (M - 1)`, M = N * H * W elements per channel) for the
      moving variance (as MindSpore's CPU and GPU kernels and PyTorch do). The update runs after the
      kernel, with primitives (Mul, Add, Assign), so it is traced too; it is not differentiated.

    ``data_format``: "NCHW" only ("NHWC" is GPU-only in MindSpore and not supported here).
    dtypes (CPU, GPU): float16, bfloat16, float32, float64; all five inputs of one dtype. Statistics
    are computed in float32 for the half types, in double for float32 and float64.
    """

    __mindspore_signature__ = (
        sig.make_sig("input_x", dtype=sig.sig_dtype.T),
        sig.make_sig("scale", dtype=sig.sig_dtype.T),
        sig.make_sig("bias", dtype=sig.sig_dtype.T),
        sig.make_sig("mean", dtype=sig.sig_dtype.T),
        sig.make_sig("variance", dtype=sig.sig_dtype.T),
    )

    @prim_attr_register
    def __init__(self, is_training=False, epsilon=1e-5, momentum=0.1, data_format="NCHW"):
        validator.check_value_type("is_training", is_training, [bool], self.name)
        validator.check_value_type("epsilon", epsilon, [float], self.name)
        validator.check_float_range(epsilon, 0.0, 1.0, Rel.INC_RIGHT, "epsilon", self.name)
        validator.check_value_type("momentum", momentum, [float], self.name)
        validator.check_float_range(momentum, 0.0, 1.0, Rel.INC_BOTH, "momentum", self.name)
        validator.check_string(data_format, ["NCHW", "NHWC"], "data_format", self.name)
        if data_format == "NHWC":
            raise ValueError(
                f"For '{self.name}', the 'data_format' 'NHWC' is not supported (MindSpore runs it on the GPU "
                f"only); use 'NCHW'."
            )
        self.init_prim_io_names(
            inputs=["x", "scale", "offset", "mean", "variance"],
            outputs=["y", "batch_mean", "batch_variance", "reserve_space_1", "reserve_space_2"],
        )

    def infer_shape(self, x, scale, bias, mean, variance):
        _check_norm_vectors(self.name, x, {"scale": scale, "bias": bias, "mean": mean, "variance": variance})
        c = merge_shapes([x[1]], scale, bias, mean, variance)
        return [x[0], *c, *x[2:]], c, c, c, c

    def infer_dtype(self, x, scale, bias, mean, variance):
        args = {"input_x": x, "scale": scale, "bias": bias, "mean": mean, "variance": variance}
        t = validator.check_tensors_dtypes_same_and_valid(args, _SOFTMAX_DTYPES, self.name)
        return t, t, t, t, t

    def __call__(self, *args, **kwargs):
        if not self.is_training:
            return _PRIMITIVE_CALL(self, *args, **kwargs)
        from opforge.common.parameter import Parameter
        from opforge.dispatch import binding

        if kwargs or len(args) != 5:
            args = binding.bind_arguments(self.name, self._call_signature(), args, kwargs)
        x, scale, bias, mean, variance = args
        for name, p in (("mean", mean), ("variance", variance)):
            if not isinstance(p, Parameter):
                raise TypeError(
                    f"For '{self.name}', the '{name}' is updated in place when 'is_training' is True, so it must be "
                    f"a Parameter, but got {type(p).__name__}."
                )
        # The kernel does not read the moving statistics in training: it gets them as plain Tensors, so
        # a backward pass does not see the Parameters it updates below as inputs modified in place.
        plain = [Tensor._from_array(p._data, p._meta[0], p._meta[2]) for p in (mean, variance)]
        out = _PRIMITIVE_CALL(self, x, scale, bias, *plain)
        stats = out[1].dtype
        if mean.dtype is not stats or variance.dtype is not stats:
            raise TypeError(
                f"For '{self.name}', the 'mean' and 'variance' Parameters are updated in place with the batch "
                f"statistics ({stats}), so they must have that dtype, but got {mean.dtype} and {variance.dtype}."
            )
        _update_moving(self.momentum, x, mean, variance, out[1], out[2])
        return out


def _update_moving(momentum: float, x, mean, variance, batch_mean, batch_var) -> None:
    """moving <- (1 - momentum) * moving + momentum * batch (the unbiased variance), in place: the
    primitives themselves (the functional face sits above the operators)."""

    def plain(t):  # the value without its history: the update is not differentiated
        if not hasattr(t, "_data"):  # a placeholder (abstract evaluation)
            return Tensor._placeholder(*t._meta)
        return Tensor._from_array(t._data, t._meta[0], t._meta[2])

    count = 1
    for i, d in enumerate(x.shape):
        if i != 1:
            count *= d
    correction = count / (count - 1) if count > 1 else 1.0
    keep = 1.0 - momentum
    assign, add, mul = _MOVING_UPDATE
    assign(mean, add(mul(plain(mean), keep), mul(plain(batch_mean), momentum)))
    assign(variance, add(mul(plain(variance), keep), mul(plain(batch_var), momentum * correction)))


_MOVING_UPDATE = (Assign(), Add(), Mul())


class LayerNorm(_Operator):
    r"""Layer normalisation over the dims of ``input_x`` from ``begin_norm_axis``:

    .. math::
        y = \frac{x - mean}{\sqrt{variance + \epsilon}} \cdot gamma + beta

    ``LayerNorm(begin_norm_axis=1, begin_params_axis=1, epsilon=1e-7)(input_x, gamma, beta)`` returns
    ``(y, mean, variance)``; ``mean`` and ``variance`` (biased) have the shape of ``input_x`` with the
    normalised dims set to 1. ``gamma`` and ``beta`` have the shape ``input_x.shape[begin_params_axis:]``
    and broadcast over the leading dims. Axes may be negative.
    dtypes (CPU, GPU): float16, bfloat16, float32, float64; all inputs of one dtype. Statistics are
    computed in float32 for the half types, in double for float32 and float64.
    """

    __mindspore_signature__ = (
        sig.make_sig("input_x", dtype=sig.sig_dtype.T),
        sig.make_sig("gamma", dtype=sig.sig_dtype.T),
        sig.make_sig("beta", dtype=sig.sig_dtype.T),
    )

    @prim_attr_register
    def __init__(self, begin_norm_axis=1, begin_params_axis=1, epsilon=1e-7):
        validator.check_value_type("begin_norm_axis", begin_norm_axis, [int], self.name)
        validator.check_value_type("begin_params_axis", begin_params_axis, [int], self.name)
        validator.check_value_type("epsilon", epsilon, [float], self.name)
        validator.check_float(epsilon, 0.0, Rel.GT, "epsilon", self.name)
        self.init_prim_io_names(inputs=["x", "gamma", "beta"], outputs=["y", "mean", "variance"])

    def _axes(self, x):
        nd = len(x)
        out = []
        for name in ("begin_norm_axis", "begin_params_axis"):
            a = getattr(self, name)
            if not -nd <= a < nd:
                raise ValueError(
                    f"For '{self.name}', the '{name}' must be in [{-nd}, {nd}) for 'input_x' of shape {list(x)}, "
                    f"but got {a}."
                )
            out.append(a % nd)
        return out

    def infer_shape(self, x, gamma, beta):
        norm_axis, params_axis = self._axes(x)
        want = list(x[params_axis:])
        for name, shape in (("gamma", gamma), ("beta", beta)):
            if not same_shape(shape, want):
                raise ValueError(
                    f"For '{self.name}', the '{name}' must have shape {want} (the dims of 'input_x' {list(x)} from "
                    f"begin_params_axis={self.begin_params_axis}), but got {list(shape)}."
                )
        stat = [d if i < norm_axis else 1 for i, d in enumerate(x)]
        return x, stat, stat

    def infer_dtype(self, x, gamma, beta):
        t = validator.check_tensors_dtypes_same_and_valid(
            {"input_x": x, "gamma": gamma, "beta": beta}, _SOFTMAX_DTYPES, self.name
        )
        return t, t, t


# ---------------------------------------------------------------------------------------------
# Recurrent layers

_RNN_DTYPES = (mstype.float32, mstype.float64)


def check_lstm_shapes(prim_name: str, x, h0, c0, w_ih, w_hh, bias) -> tuple:
    """``(seq, batch, input, hidden)`` of an LSTM layer's inputs (-1 where unknown), or a ValueError naming
    the input. An unknown rank is refused: the layer needs its [seq, batch, input] layout."""
    for name, shape in (("x", x), ("h0", h0), ("c0", c0), ("w_ih", w_ih), ("w_hh", w_hh), ("bias", bias)):
        if len(shape) == 1 and shape[0] == -2:
            raise ValueError(f"For '{prim_name}', the rank of '{name}' is unknown; it needs a known rank.")
    if len(x) != 3:
        raise ValueError(f"For '{prim_name}', the 'x' must be [seq, batch, input], but got {list(x)}.")
    if len(w_ih) != 2 or (w_ih[0] >= 0 and w_ih[0] % 4) or not same_dim(w_ih[1], x[2]):
        raise ValueError(
            f"For '{prim_name}', the 'w_ih' must be [4 * hidden, {x[2]}] (the input size of 'x'), but got {list(w_ih)}."
        )
    hidden = w_ih[0] // 4 if w_ih[0] >= 0 else -1
    for name, shape, want in (("w_hh", w_hh, [-1, -1]), ("bias", bias, [-1])):
        if len(shape) == len(want) and hidden < 0 and shape[-1] >= 0:
            hidden = shape[-1] if name == "w_hh" else shape[0] // 4
    four = 4 * hidden if hidden >= 0 else -1
    for name, shape, want in (
        ("h0", h0, [x[1], hidden]), ("c0", c0, [x[1], hidden]), ("w_hh", w_hh, [four, hidden]), ("bias", bias, [four]),
    ):  # fmt: skip
        if not same_shape(shape, want):
            raise ValueError(f"For '{prim_name}', the '{name}' must have shape {want}, but got {list(shape)}.")
    batch = merge_dim(x[1], merge_dim(h0[0], c0[0]))
    return x[0], batch, merge_dim(x[2], w_ih[1]), hidden


class LSTMLayer(_Operator):
    r"""One layer and direction of an LSTM over a whole sequence, the recurrence in one kernel (C++ on the
    CPU, CUDA on the GPU): ``LSTMLayer(reverse=False)(x, h0, c0, w_ih, w_hh, bias)`` with ``x`` [seq, batch,
    input], ``h0``/``c0`` [batch, hidden], ``w_ih`` [4 hidden, input], ``w_hh`` [4 hidden, hidden], ``bias``
    [4 hidden] (``b_ih + b_hh``); gates in the order i, f, g, o:

    .. math::
        z_t = x_t W_{ih}^T + h_{t-1} W_{hh}^T + b,\quad (i, f, g, o) = (\sigma, \sigma, \tanh, \sigma)(z_t),\quad
        c_t = f c_{t-1} + i g,\quad h_t = o \tanh(c_t)

    ``reverse`` runs the sequence from its last step (the backward direction of a bidirectional LSTM).
    Returns ``(y, h_n, c_n, gates, c)``: every step's ``h`` [seq, batch, hidden], the last ``h`` and ``c``,
    and what the backward pass needs (the activated gates [seq, batch, 4 hidden] and every ``c``).
    dtypes (CPU, GPU): float32, float64."""

    __mindspore_signature__ = tuple(
        sig.make_sig(n, dtype=sig.sig_dtype.T) for n in ("x", "h0", "c0", "w_ih", "w_hh", "bias")
    )

    @prim_attr_register
    def __init__(self, reverse=False):
        validator.check_value_type("reverse", reverse, [bool], self.name)
        self.init_prim_io_names(
            inputs=["x", "h0", "c0", "w_ih", "w_hh", "bias"], outputs=["y", "h_n", "c_n", "gates", "c"]
        )

    def infer_shape(self, x, h0, c0, w_ih, w_hh, bias):
        seq, batch, _, hidden = check_lstm_shapes(self.name, x, h0, c0, w_ih, w_hh, bias)
        four = 4 * hidden if hidden >= 0 else -1
        return [seq, batch, hidden], [batch, hidden], [batch, hidden], [seq, batch, four], [seq, batch, hidden]

    def infer_dtype(self, x, h0, c0, w_ih, w_hh, bias):
        args = {"x": x, "h0": h0, "c0": c0, "w_ih": w_ih, "w_hh": w_hh, "bias": bias}
        t = validator.check_tensors_dtypes_same_and_valid(args, _RNN_DTYPES, self.name)
        return t, t, t, t, t


def check_rnn_shapes(prim_name, n_gates, x, h0, w_ih, w_hh, **vectors):
    """``(seq, batch, input, hidden)`` of a GRU (``n_gates`` 3) or plain RNN (1) layer's inputs (-1 where
    unknown): ``x`` [seq, batch, input], ``h0`` [batch, hidden], ``w_ih`` [n_gates hidden, input], ``w_hh``
    [n_gates hidden, hidden] and each of ``vectors`` [n_gates hidden]; else a ValueError naming the input."""
    named = {"x": x, "h0": h0, "w_ih": w_ih, "w_hh": w_hh, **vectors}
    for name, shape in named.items():
        if len(shape) == 1 and shape[0] == -2:
            raise ValueError(f"For '{prim_name}', the rank of '{name}' is unknown; it needs a known rank.")
    if len(x) != 3:
        raise ValueError(f"For '{prim_name}', the 'x' must be [seq, batch, input], but got {list(x)}.")
    if len(w_ih) != 2 or (w_ih[0] >= 0 and w_ih[0] % n_gates) or not same_dim(w_ih[1], x[2]):
        raise ValueError(
            f"For '{prim_name}', the 'w_ih' must be [{n_gates} * hidden, {x[2]}] (the input size of 'x'), "
            f"but got {list(w_ih)}."
        )
    hidden = w_ih[0] // n_gates if w_ih[0] >= 0 else -1
    if hidden < 0 and len(w_hh) == 2 and w_hh[1] >= 0:
        hidden = w_hh[1]
    rows = n_gates * hidden if hidden >= 0 else -1
    wants = {"h0": [x[1], hidden], "w_hh": [rows, hidden], **{name: [rows] for name in vectors}}
    for name, want in wants.items():
        if not same_shape(named[name], want):
            raise ValueError(f"For '{prim_name}', the '{name}' must have shape {want}, but got {list(named[name])}.")
    return x[0], merge_dim(x[1], h0[0]), merge_dim(x[2], w_ih[1]), hidden


def check_nonlinearity(prim_name, nonlinearity):
    """MindSpore's RNN activations: 'tanh' or 'relu'."""
    validator.check_value_type("nonlinearity", nonlinearity, [str], prim_name)
    if nonlinearity not in ("tanh", "relu"):
        raise ValueError(f"For '{prim_name}', the 'nonlinearity' must be 'tanh' or 'relu', but got {nonlinearity!r}.")


class GRULayer(_Operator):
    r"""One layer and direction of a GRU over a whole sequence, the recurrence in one kernel (C++ on the
    CPU, CUDA on the GPU): ``GRULayer(reverse=False)(x, h0, w_ih, w_hh, b_ih, b_hh)`` with ``x`` [seq,
    batch, input], ``h0`` [batch, hidden], ``w_ih`` [3 hidden, input], ``w_hh`` [3 hidden, hidden], ``b_ih``
    and ``b_hh`` [3 hidden]; gates in MindSpore's order r, z, n:

    .. math::
        r = \sigma(x W_{ir}^T + b_{ir} + h W_{hr}^T + b_{hr}),\quad
        z = \sigma(x W_{iz}^T + b_{iz} + h W_{hz}^T + b_{hz}),\\
        n = \tanh(x W_{in}^T + b_{in} + r (h W_{hn}^T + b_{hn})),\quad h' = (1 - z) n + z h

    ``reverse`` runs the sequence from its last step. Returns ``(y, h_n, gates)``: every step's ``h`` [seq,
    batch, hidden], the last ``h``, and what the backward pass needs ([seq, batch, 4 hidden]: r, z, n and
    :math:`h W_{hn}^T + b_{hn}`). dtypes (CPU, GPU): float32, float64."""

    __mindspore_signature__ = tuple(
        sig.make_sig(n, dtype=sig.sig_dtype.T) for n in ("x", "h0", "w_ih", "w_hh", "b_ih", "b_hh")
    )

    @prim_attr_register
    def __init__(self, reverse=False):
        validator.check_value_type("reverse", reverse, [bool], self.name)
        self.init_prim_io_names(inputs=["x", "h0", "w_ih", "w_hh", "b_ih", "b_hh"], outputs=["y", "h_n", "gates"])

    def infer_shape(self, x, h0, w_ih, w_hh, b_ih, b_hh):
        seq, batch, _, hidden = check_rnn_shapes(self.name, 3, x, h0, w_ih, w_hh, b_ih=b_ih, b_hh=b_hh)
        return [seq, batch, hidden], [batch, hidden], [seq, batch, 4 * hidden if hidden >= 0 else -1]

    def infer_dtype(self, x, h0, w_ih, w_hh, b_ih, b_hh):
        args = {"x": x, "h0": h0, "w_ih": w_ih, "w_hh": w_hh, "b_ih": b_ih, "b_hh": b_hh}
        t = validator.check_tensors_dtypes_same_and_valid(args, _RNN_DTYPES, self.name)
        return t, t, t


class RNNLayer(_Operator):
    r"""One layer and direction of a plain (Elman) RNN over a whole sequence, the recurrence in one kernel
    (C++ on the CPU, CUDA on the GPU): ``RNNLayer(reverse=False, nonlinearity='tanh')(x, h0, w_ih, w_hh,
    bias)`` with ``x`` [seq, batch, input], ``h0`` [batch, hidden], ``w_ih`` [hidden, input], ``w_hh``
    [hidden, hidden], ``bias`` [hidden] (``b_ih + b_hh``):

    .. math::
        h_t = \mathrm{act}(x_t W_{ih}^T + h_{t-1} W_{hh}^T + b),\quad \mathrm{act} = \tanh \text{ or relu}

    ``reverse`` runs the sequence from its last step. Returns ``(y, h_n)``: every step's ``h`` [seq, batch,
    hidden] and the last one. dtypes (CPU, GPU): float32, float64."""

    __mindspore_signature__ = tuple(sig.make_sig(n, dtype=sig.sig_dtype.T) for n in ("x", "h0", "w_ih", "w_hh", "bias"))

    @prim_attr_register
    def __init__(self, reverse=False, nonlinearity="tanh"):
        validator.check_value_type("reverse", reverse, [bool], self.name)
        check_nonlinearity(self.name, nonlinearity)
        self.init_prim_io_names(inputs=["x", "h0", "w_ih", "w_hh", "bias"], outputs=["y", "h_n"])

    def infer_shape(self, x, h0, w_ih, w_hh, bias):
        seq, batch, _, hidden = check_rnn_shapes(self.name, 1, x, h0, w_ih, w_hh, bias=bias)
        return [seq, batch, hidden], [batch, hidden]

    def infer_dtype(self, x, h0, w_ih, w_hh, bias):
        args = {"x": x, "h0": h0, "w_ih": w_ih, "w_hh": w_hh, "bias": bias}
        t = validator.check_tensors_dtypes_same_and_valid(args, _RNN_DTYPES, self.name)
        return t, t


# ---------------------------------------------------------------------------------------------
# Dropout and losses


class Dropout(_Operator):
    r"""``Dropout(keep_prob=0.5, Seed0=0, Seed1=0)(x)`` returns ``(output, mask)``: each element is kept
    with probability ``keep_prob`` and scaled by ``1 / keep_prob``, else zeroed; ``mask`` (x's dtype) is
    1 where kept, 0 elsewhere, so ``output = x * mask / keep_prob``.

    The generator is counter-based (``opforge/functors/random.h``): element i is kept when
    :math:`U < keep\_prob` with U = the top 53 bits of SplitMix64(key ^ SplitMix64(i)) / 2^53 and
    key = SplitMix64(SplitMix64(Seed0) ^ Seed1). The mask is a pure function of (Seed0, Seed1, element
    index): the same seeds give the same mask on every call, backend and thread count (Seed0 = Seed1 = 0
    is a seed like any other: unlike MindSpore, it does not draw a random seed). A different mask per
    step takes different seeds (``nn.Dropout`` changes Seed1 every call).
    dtypes (CPU, GPU): float16, bfloat16, float32, float64.
    """

    @prim_attr_register
    def __init__(self, keep_prob=0.5, Seed0=0, Seed1=0):  # noqa: N803 - MindSpore's attr names
        validator.check_value_type("keep_prob", keep_prob, [float], self.name)
        validator.check_float_range(keep_prob, 0.0, 1.0, Rel.INC_RIGHT, "keep_prob", self.name)
        for name, seed in (("Seed0", Seed0), ("Seed1", Seed1)):
            validator.check_value_type(name, seed, [int], self.name)
            if not -(2**63) <= seed < 2**63:
                raise ValueError(
                    f"For '{self.name}', the '{name}' must be an int64, in [-2**63, 2**63), but got {seed}."
                )
        self.init_prim_io_names(inputs=["x"], outputs=["output", "mask"])

    unknown_rank_ok = True

    def infer_shape(self, x):
        return x, x

    def infer_dtype(self, x):
        t = validator.check_tensor_dtype_valid("x", x, _SOFTMAX_DTYPES, self.name)
        return t, t


class DropoutExt(_Operator):
    r"""``DropoutExt(p=0.5)(input, seed, offset)`` returns ``(output, mask)``: Dropout with its generator's
    seeds given as Tensors (0-d int64, read by the kernel), as MindSpore's ``DropoutExt``: element i is
    kept with probability ``1 - p`` and scaled by ``1 / (1 - p)``, else zeroed, the mask being the one of
    ``Dropout(1 - p, Seed0=seed, Seed1=offset)`` (``csrc/include/opforge/functors/random.h``). A trace reads the
    seeds at each replay, so a counter moved on between replays draws a new mask each step (``nn.Dropout``
    under ``jit`` and GRAPH_MODE). Unlike MindSpore's bit-packed uint8 mask, ``mask`` has the input's dtype
    (1 where kept, 0 elsewhere), as ``Dropout``'s.
    dtypes (CPU, GPU): float16, bfloat16, float32, float64; seed and offset int64.
    """

    @prim_attr_register
    def __init__(self, p=0.5):
        validator.check_value_type("p", p, [float], self.name)
        validator.check_float_range(p, 0.0, 1.0, Rel.INC_LEFT, "p", self.name)
        self.init_prim_io_names(inputs=["input", "seed", "offset"], outputs=["output", "mask"])

    unknown_rank_ok = True

    def infer_shape(self, x, seed, offset):
        for name, shape in (("seed", seed), ("offset", offset)):
            if list(shape) not in ([], [1], [-1]) and shape != [-2]:
                raise ValueError(
                    f"For '{self.name}', the '{name}' must be one int64 (shape [] or [1]), but got {shape}."
                )
        return x, x

    def infer_dtype(self, x, seed, offset):
        t = validator.check_tensor_dtype_valid("input", x, _SOFTMAX_DTYPES, self.name)
        for name, dtype in (("seed", seed), ("offset", offset)):
            validator.check_tensor_dtype_valid(name, dtype, [mstype.int64], self.name)
        return t, t


class L2Loss(_Operator):
    r""":math:`loss = \sum x^2 / 2` as a 0-d Tensor: ``L2Loss()(input_x)``. Sums accumulate in double
    (float16/bfloat16 in float32). dtypes (CPU, GPU): float16, bfloat16, float32, float64."""

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["x"], outputs=["output"])

    unknown_rank_ok = True

    def infer_shape(self, x):
        return []

    def infer_dtype(self, x):
        return validator.check_tensor_dtype_valid("input_x", x, _SOFTMAX_DTYPES, self.name)


class SmoothL1Loss(_Operator):
    r"""``SmoothL1Loss(beta=1.0, reduction="none")(logits, labels)``: with :math:`d = logits - labels`,
    :math:`0.5 d^2 / \beta` where :math:`|d| < \beta`, else :math:`|d| - 0.5 \beta`; reduction "none"
    (elementwise), "sum" or "mean" (0-d; the mean of no elements is NaN). ``beta`` > 0.
    dtypes (CPU, GPU): float16, bfloat16, float32, float64; logits and labels of one dtype and shape."""

    __mindspore_signature__ = (
        sig.make_sig("logits", dtype=sig.sig_dtype.T),
        sig.make_sig("labels", dtype=sig.sig_dtype.T),
    )

    @prim_attr_register
    def __init__(self, beta=1.0, reduction="none"):
        validator.check_value_type("beta", beta, [float], self.name)
        validator.check_float(beta, 0.0, Rel.GT, "beta", self.name)
        validator.check_string(reduction, ["none", "mean", "sum"], "reduction", self.name)
        self.init_prim_io_names(inputs=["prediction", "target"], outputs=["output"])

    def infer_shape(self, logits, labels):
        _check_same_shape(self.name, "logits", logits, {"labels": labels})
        return merge_shapes(logits, labels) if self.reduction == "none" else []

    def infer_dtype(self, logits, labels):
        args = {"logits": logits, "labels": labels}
        return validator.check_tensors_dtypes_same_and_valid(args, _SOFTMAX_DTYPES, self.name)


class BCEWithLogitsLoss(_Operator):
    r"""``BCEWithLogitsLoss(reduction="mean")(logits, label, weight, pos_weight)``: binary cross entropy
    on logits, :math:`\ell = -w (p\,y \log\sigma(x) + (1 - y) \log(1 - \sigma(x)))`, computed stably as
    :math:`w ((1 - y) x + (1 + (p - 1) y)\,softplus(-x))`; reduction "none", "mean" or "sum" (0-d).
    ``weight`` and ``pos_weight`` broadcast to the shape of ``logits`` (BroadcastTo, so their gradients
    are summed back); ``label`` has the shape of ``logits``.
    dtypes (CPU, GPU): float16, bfloat16, float32, float64; all four of one dtype."""

    __mindspore_signature__ = (
        sig.make_sig("logits", dtype=sig.sig_dtype.T),
        sig.make_sig("label", dtype=sig.sig_dtype.T),
        sig.make_sig("weight", dtype=sig.sig_dtype.T),
        sig.make_sig("pos_weight", dtype=sig.sig_dtype.T),
    )

    @prim_attr_register
    def __init__(self, reduction="mean"):
        validator.check_string(reduction, ["none", "mean", "sum"], "reduction", self.name)
        self.init_prim_io_names(inputs=["logits", "label", "weight", "pos_weight"], outputs=["loss"])

    def infer_shape(self, logits, label, weight, pos_weight):
        _check_same_shape(self.name, "logits", logits, {"label": label})
        logits = merge_shapes(logits, label)
        for name, shape in (("weight", weight), ("pos_weight", pos_weight)):
            if not same_shape(broadcast_shape(self.name, logits, shape, "logits", name), logits):
                raise ValueError(
                    f"For '{self.name}', the '{name}' must broadcast to the shape of 'logits' {list(logits)}, "
                    f"but got {list(shape)}."
                )
        return logits if self.reduction == "none" else []

    def infer_dtype(self, logits, label, weight, pos_weight):
        args = {"logits": logits, "label": label, "weight": weight, "pos_weight": pos_weight}
        return validator.check_tensors_dtypes_same_and_valid(args, _SOFTMAX_DTYPES, self.name)

    def __call__(self, *args, **kwargs):
        from opforge.dispatch import binding
        from opforge.primitives.array_ops import BroadcastTo
        from opforge.tensor import Tensor

        if kwargs or len(args) != 4:
            args = binding.bind_arguments(self.name, self._call_signature(), args, kwargs)
        logits = args[0]
        if isinstance(logits, Tensor):
            args = list(args)
            for i in (2, 3):  # the kernel takes weight and pos_weight in the shape of logits
                a = args[i]
                if isinstance(a, (int, float)) and not isinstance(a, bool):  # a weak scalar: logits' dtype
                    a = Tensor(a, logits.dtype, device=logits.device)
                if isinstance(a, Tensor) and a.shape != logits.shape and not has_unknown(logits.shape):
                    target = broadcast_shape(self.name, logits.shape, a.shape, "logits", self._arg_name(i))
                    if tuple(target) == logits.shape:
                        args[i] = BroadcastTo(logits.shape)(a)
        return _PRIMITIVE_CALL(self, *args)


class NLLLoss(_Operator):
    r"""``NLLLoss(reduction="mean", ignore_index=-100)(logits, labels, weight)`` returns ``(loss,
    total_weight)``: :math:`\ell_i = -weight_{t_i} \cdot logits_{i, t_i}` (0 where
    :math:`t_i` = ``ignore_index``), :math:`total\_weight = \sum weight_{t_i}` over the rows not ignored;
    reduction "none" (``loss`` [N]), "sum" or "mean" (:math:`\sum \ell_i / total\_weight`, NaN when
    every row is ignored). ``logits`` [N, C] or [C] (one row), ``labels`` [N] (or []) int32/int64 in
    [0, C) or ``ignore_index``, ``weight`` [C]. A label out of range is an error.
    dtypes (CPU, GPU): float16, bfloat16, float32, float64 logits and weight."""

    __mindspore_signature__ = (
        sig.make_sig("logits", dtype=sig.sig_dtype.T),
        sig.make_sig("labels"),
        sig.make_sig("weight", dtype=sig.sig_dtype.T),
    )

    @prim_attr_register
    def __init__(self, reduction="mean", ignore_index=-100):
        validator.check_string(reduction, ["none", "mean", "sum"], "reduction", self.name)
        validator.check_value_type("ignore_index", ignore_index, [int], self.name)
        if not -(2**63) <= ignore_index < 2**63:
            raise ValueError(f"For '{self.name}', the 'ignore_index' must be an int64, but got {ignore_index}.")
        self.init_prim_io_names(inputs=["x", "target", "weight"], outputs=["loss", "total_weight"])

    def infer_shape(self, logits, labels, weight):
        if len(logits) not in (1, 2):
            raise ValueError(f"For '{self.name}', the 'logits' must be 1-D or 2-D, but got shape {list(logits)}.")
        n = logits[0] if len(logits) == 2 else None
        want = [n] if n is not None else [[], [1]]
        if (n is not None and not same_shape(labels, [n])) or (
            n is None and not (labels == [] or same_shape(labels, [1]))
        ):
            raise ValueError(
                f"For '{self.name}', the 'labels' must have shape {want[0] if n is not None else '[] or [1]'} for "
                f"'logits' {list(logits)}, but got {list(labels)}."
            )
        if not same_shape(weight, [logits[-1]]):
            raise ValueError(
                f"For '{self.name}', the 'weight' must have shape [{logits[-1]}] (the classes of 'logits'), "
                f"but got {list(weight)}."
            )
        loss = ([merge_dim(n, labels[0])] if n is not None else []) if self.reduction == "none" else []
        return loss, []

    def infer_dtype(self, logits, labels, weight):
        t = validator.check_tensors_dtypes_same_and_valid(
            {"logits": logits, "weight": weight}, _SOFTMAX_DTYPES, self.name
        )
        validator.check_tensor_dtype_valid("labels", labels, _LABEL_DTYPES, self.name)
        return t, t
