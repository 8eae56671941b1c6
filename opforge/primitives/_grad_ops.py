"""Grad operators: the backward kernels of activations and math ops (used by their bprops)."""

from __future__ import annotations

import math

from opforge import dtype as mstype
from opforge.dispatch import signature as sig
from opforge.geometry import strided_slice_walk
from opforge.primitives._utils import _Operator, has_unknown, merge_shapes, same_dim, same_shape
from opforge.primitives.nn_ops import _RNN_DTYPES, check_lstm_shapes, check_nonlinearity, check_rnn_shapes
from opforge.primitives.primitive import prim_attr_register
from opforge.primitives.validator import Rel
from opforge.primitives.validator import Validator as validator

__all__ = [
    "LSTMLayerGrad",
    "GRULayerGrad",
    "RNNLayerGrad",
    "ReluGrad",
    "EluGrad",
    "SigmoidGrad",
    "TanhGrad",
    "SqrtGrad",
    "MaximumGrad",
    "MinimumGrad",
    "AbsGrad",
    "GeLUGrad",
    "SoftplusGrad",
    "HSigmoidGrad",
    "ReLU6Grad",
    "HSwishGrad",
    "BatchNormGrad",
    "LayerNormGrad",
    "SliceGrad",
    "StridedSliceGrad",
    "DropoutGrad",
    "SmoothL1LossGrad",
    "NLLLossGrad",
]


class _ActivationGrad(_Operator):
    """Two same-shape, same-dtype float inputs; the output has their shape and dtype."""

    arg_names = ("dy", "y")

    def infer_shape(self, a, b):
        if not same_shape(a, b):
            raise ValueError(
                f"For '{self.name}', '{self.arg_names[0]}' and '{self.arg_names[1]}' must have the same shape, "
                f"but got {list(a)} and {list(b)}."
            )
        return merge_shapes(a, b)

    def infer_dtype(self, a, b):
        args = {self.arg_names[0]: a, self.arg_names[1]: b}
        return validator.check_tensors_dtypes_same_and_valid(args, mstype.float_type, self.name)


class ReluGrad(_ActivationGrad):
    r"""``ReluGrad()(dy, y)``: :math:`dx = dy` where :math:`y > 0`, else 0 (y is ReLU's output).
    dtypes: float16, bfloat16, float32, float64."""

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["y_backprop", "x"], outputs=["output"])


class EluGrad(_ActivationGrad):
    r"""``EluGrad(alpha)(dy, y)``: :math:`dx = dy` where :math:`y > 0`, else :math:`dy (y + \alpha)`
    (y is Elu's output). dtypes: float16, bfloat16, float32, float64."""

    @prim_attr_register
    def __init__(self, alpha=1.0):
        validator.check_value_type("alpha", alpha, [float], self.name)
        self.init_prim_io_names(inputs=["y_grad", "x"], outputs=["output"])


class SigmoidGrad(_ActivationGrad):
    r"""``SigmoidGrad()(y, dy)``: :math:`dx = dy \cdot y (1 - y)` (y is Sigmoid's output).
    dtypes: float16, bfloat16, float32, float64."""

    arg_names = ("y", "dy")

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["y", "dy"], outputs=["output"])


class TanhGrad(_ActivationGrad):
    r"""``TanhGrad()(y, dy)``: :math:`dx = dy (1 - y^2)` (y is Tanh's output).
    dtypes: float16, bfloat16, float32, float64."""

    arg_names = ("y", "dy")

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["y", "dy"], outputs=["output"])


class SqrtGrad(_ActivationGrad):
    r"""``SqrtGrad()(y, dy)``: :math:`dx = \frac{dy}{2 y}` (y is Sqrt's output, so :math:`y = \sqrt{x}`).
    dtypes: float16, bfloat16, float32, float64."""

    arg_names = ("y", "dy")

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["y", "dy"], outputs=["output"])


class _MinMaxGrad(_Operator):
    """(x, y, dout) -> (dx, dy): x and y broadcast to dout's shape; dx and dy have x's and y's shapes."""

    valid_dtypes = mstype.int_type + mstype.uint_type + mstype.float_type

    @prim_attr_register
    def __init__(self, grad_x=True, grad_y=True):
        validator.check_value_type("grad_x", grad_x, [bool], self.name)
        validator.check_value_type("grad_y", grad_y, [bool], self.name)
        self.init_prim_io_names(inputs=["x", "y", "dout"], outputs=["dx", "dy"])

    def infer_shape(self, x_shape, y_shape, dout_shape):
        for name, shape in (("x", x_shape), ("y", y_shape)):
            lead = len(dout_shape) - len(shape)
            if lead < 0 or any(d != 1 and not same_dim(d, dout_shape[lead + i]) for i, d in enumerate(shape)):
                raise ValueError(
                    f"For '{self.name}', the '{name}' of shape {list(shape)} must broadcast to the shape of 'dout' "
                    f"{list(dout_shape)}, but it does not."
                )
        return list(x_shape), list(y_shape)

    def infer_dtype(self, x_dtype, y_dtype, dout_dtype):
        args = {"x": x_dtype, "y": y_dtype, "dout": dout_dtype}
        dtype = validator.check_tensors_dtypes_same_and_valid(args, self.valid_dtypes, self.name)
        return dtype, dtype


class MaximumGrad(_MinMaxGrad):
    r"""The gradient of Maximum: ``MaximumGrad(grad_x=True, grad_y=True)(x, y, dout) -> (dx, dy)``.

    :math:`dx = dout` where :math:`x \ge y`, else 0; :math:`dy = dout` where :math:`x < y`, else 0: ties go
    to x. Where x or y is NaN, dout goes to the input Maximum took its NaN from (x when both are NaN), so
    :math:`dx + dy = dout` always. x and y must broadcast to dout's shape; dx and dy have x's and y's shapes,
    as in MindSpore: where an input was broadcast, its gradient is summed over the broadcast dims.
    ``grad_x=False`` (``grad_y=False``) makes dx (dy) zeros.
    dtypes: x, y and dout of one dtype: integers and floats.
    """


class MinimumGrad(_MinMaxGrad):
    r"""The gradient of Minimum: ``MinimumGrad(grad_x=True, grad_y=True)(x, y, dout) -> (dx, dy)``.

    :math:`dx = dout` where :math:`x \le y`, else 0; :math:`dy = dout` where :math:`x > y`, else 0: ties go
    to x. NaN, shapes, ``grad_x``/``grad_y`` and dtypes: as for MaximumGrad.
    """


class GeLUGrad(_Operator):
    r"""``GeLUGrad()(dy, x, y)``: GeLU's gradient (y is GeLU's output, kept for MindSpore's signature):

    .. math::
        dx = dy \left(\tfrac12 (1 + t) + \tfrac12 x (1 - t^2) \sqrt{2/\pi} (1 + 3 \cdot 0.044715 x^2)\right),
        \quad t = \tanh\left(\sqrt{2/\pi} (x + 0.044715 x^3)\right)

    dtypes: float16, bfloat16, float32, float64.
    """

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["dy", "x", "y"], outputs=["z"])

    def infer_shape(self, dy, x, y):
        for name, shape in (("x", x), ("y", y)):
            if not same_shape(shape, dy):
                raise ValueError(
                    f"For '{self.name}', 'dy' and '{name}' must have the same shape, "
                    f"but got {list(dy)} and {list(shape)}."
                )
        return merge_shapes(dy, x, y)

    def infer_dtype(self, dy, x, y):
        return validator.check_tensors_dtypes_same_and_valid({"dy": dy, "x": x, "y": y}, mstype.float_type, self.name)


class SoftplusGrad(_ActivationGrad):
    r"""``SoftplusGrad()(gradients, features)``: :math:`dx = gradients \cdot \sigma(features)`
    (features is Softplus's input). dtypes: float16, bfloat16, float32, float64."""

    arg_names = ("gradients", "features")

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["gradients", "features"], outputs=["backprops"])


class HSigmoidGrad(_ActivationGrad):
    r"""``HSigmoidGrad()(grads, input_x)``: :math:`dx = grads / 6` for :math:`-3 < x < 3`, else 0.
    dtypes: float16, bfloat16, float32, float64."""

    arg_names = ("grads", "input_x")

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["grads", "input_x"], outputs=["output"])


class ReLU6Grad(_ActivationGrad):
    r"""``ReLU6Grad()(y_grad, x)``: :math:`dx = y\_grad` for :math:`0 < x < 6`, else 0.
    dtypes: float16, bfloat16, float32, float64."""

    arg_names = ("y_grad", "x")

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["y_grad", "x"], outputs=["output"])


class HSwishGrad(_ActivationGrad):
    r"""``HSwishGrad()(y_grad, x)``: :math:`dx = 0` for :math:`x \le -3`, ``y_grad`` for :math:`x \ge 3`,
    else :math:`y\_grad \cdot (2x + 3) / 6`. dtypes: float16, bfloat16, float32, float64."""

    arg_names = ("y_grad", "x")

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["y_grad", "x"], outputs=["output"])


class BatchNormGrad(_Operator):
    r"""``BatchNormGrad(is_training=False, epsilon=1e-5, data_format="NCHW")(dy, x, scale, reserve_space_1,
    reserve_space_2)`` returns ``(dx, dscale, dbias)`` for BatchNorm's ``y`` (reserve_space_1/2: the mean
    and variance y was computed with). With :math:`r = 1 / \sqrt{var + \epsilon}`, M elements per channel:
    :math:`dbias = \sum dy`, :math:`dscale = r \sum dy (x - mean)`; inference:
    :math:`dx = dy \cdot scale \cdot r`; training (the statistics depend on x):
    :math:`dx = scale \cdot r (dy - dbias / M - (x - mean) r \cdot dscale / M)`.
    dtypes: float16, bfloat16, float32, float64."""

    @prim_attr_register
    def __init__(self, is_training=False, epsilon=1e-5, data_format="NCHW"):
        validator.check_value_type("is_training", is_training, [bool], self.name)
        validator.check_value_type("epsilon", epsilon, [float], self.name)
        validator.check_string(data_format, ["NCHW"], "data_format", self.name)
        self.init_prim_io_names(
            inputs=["dy", "x", "scale", "reserve_space_1", "reserve_space_2"], outputs=["dx", "bn_scale", "bn_bias"]
        )

    def infer_shape(self, dy, x, scale, mean, var):
        if not same_shape(dy, x):
            raise ValueError(
                f"For '{self.name}', 'dy' and 'x' must have the same shape, but got {list(dy)} and {list(x)}."
            )
        if len(x) < 2:
            raise ValueError(f"For '{self.name}', the 'x' must have rank 2 or more, but got shape {list(x)}.")
        for name, shape in (("scale", scale), ("reserve_space_1", mean), ("reserve_space_2", var)):
            if not same_shape(shape, [x[1]]):
                raise ValueError(f"For '{self.name}', the '{name}' must have shape [{x[1]}], but got {list(shape)}.")
        x = merge_shapes(x, dy)
        c = merge_shapes([x[1]], scale, mean, var)
        return [x[0], *c, *x[2:]], c, c

    def infer_dtype(self, dy, x, scale, mean, var):
        args = {"dy": dy, "x": x, "scale": scale, "reserve_space_1": mean, "reserve_space_2": var}
        t = validator.check_tensors_dtypes_same_and_valid(args, mstype.float_type, self.name)
        return t, t, t


class LayerNormGrad(_Operator):
    r"""``LayerNormGrad(begin_norm_axis=1, begin_params_axis=1, epsilon=1e-7)(x, dy, variance, mean, gamma)``
    returns ``(dx, dgamma, dbeta)`` for LayerNorm's ``y``: with :math:`\hat x = (x - mean) r`,
    :math:`r = 1 / \sqrt{variance + \epsilon}` and :math:`g = dy \cdot gamma` per row,
    :math:`dx = r (g - \bar g - \hat x \overline{g \hat x})`; :math:`dgamma = \sum dy \hat x`,
    :math:`dbeta = \sum dy` over the leading dims. dtypes: float16, bfloat16, float32, float64."""

    @prim_attr_register
    def __init__(self, begin_norm_axis=1, begin_params_axis=1, epsilon=1e-7):
        validator.check_value_type("begin_norm_axis", begin_norm_axis, [int], self.name)
        validator.check_value_type("begin_params_axis", begin_params_axis, [int], self.name)
        validator.check_value_type("epsilon", epsilon, [float], self.name)
        self.init_prim_io_names(
            inputs=["x", "dy", "variance", "mean", "gamma"], outputs=["pd_x", "pd_gamma", "pd_beta"]
        )

    def infer_shape(self, x, dy, variance, mean, gamma):
        nd = len(x)
        axes = []
        for name in ("begin_norm_axis", "begin_params_axis"):
            a = getattr(self, name)
            if not -nd <= a < nd:
                raise ValueError(
                    f"For '{self.name}', the '{name}' must be in [{-nd}, {nd}) for 'x' of shape {list(x)}, but got {a}."
                )
            axes.append(a % nd)
        stat = [d if i < axes[0] else 1 for i, d in enumerate(x)]
        checks = (
            ("dy", dy, list(x)),
            ("variance", variance, stat),
            ("mean", mean, stat),
            ("gamma", gamma, list(x[axes[1] :])),
        )
        for name, shape, want in checks:
            if not same_shape(shape, want):
                raise ValueError(f"For '{self.name}', the '{name}' must have shape {want}, but got {list(shape)}.")
        return x, gamma, gamma

    def infer_dtype(self, x, dy, variance, mean, gamma):
        args = {"x": x, "dy": dy, "variance": variance, "mean": mean, "gamma": gamma}
        t = validator.check_tensors_dtypes_same_and_valid(args, mstype.float_type, self.name)
        return t, t, t


class SliceGrad(_Operator):
    """Slice's backward: ``SliceGrad()(dy, x, begin, size)``, zeros of ``x``'s shape with ``dy`` at
    ``x[begin : begin + size]``. ``dy`` and ``x`` have one dtype; ``x``'s values are not read. dtypes: all."""

    __mindspore_signature__ = (sig.make_sig("dy"), sig.make_sig("x"), sig.make_sig("begin"), sig.make_sig("size"))
    constant_inputs = ((2, "begin"), (3, "size"))

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["dy", "x", "begin", "size"], outputs=["output"])

    def infer_shape(self, dy_shape, x_shape, begin, size):
        from opforge.primitives.array_ops import slice_shape

        want = slice_shape(self.name, x_shape, begin, size)
        if not same_shape(dy_shape, want):
            raise ValueError(
                f"For '{self.name}', the 'dy' must have the slice's shape {want}, but got {list(dy_shape)}."
            )
        return list(x_shape)

    def infer_dtype(self, dy_dtype, x_dtype, begin, size):
        args = {"dy": dy_dtype, "x": x_dtype}
        return validator.check_tensors_dtypes_same_and_valid(args, mstype.all_types, self.name)


class StridedSliceGrad(_Operator):
    """StridedSlice's backward: ``StridedSliceGrad(begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0,
    shrink_axis_mask=0)(dy, shapex, begin, end, strides)``: zeros of shape ``shapex`` (a tuple of ints) with
    ``dy`` where the slice reads. dtypes: all."""

    __mindspore_signature__ = (
        sig.make_sig("dy"),
        sig.make_sig("shapex"),
        sig.make_sig("begin"),
        sig.make_sig("end"),
        sig.make_sig("strides"),
    )
    constant_inputs = ((1, "shapex"), (2, "begin"), (3, "end"), (4, "strides"))

    @prim_attr_register
    def __init__(self, begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0, shrink_axis_mask=0):
        for name in ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask"):
            value = getattr(self, name)
            validator.check_value_type(name, value, [int], self.name)
            validator.check_int_range(value, 0, 2**63 - 1, Rel.INC_BOTH, name, self.name)  # an int64 bit mask
        self.init_prim_io_names(inputs=["dy", "shapex", "begin", "end", "strides"], outputs=["output"])

    def infer_shape(self, dy_shape, shapex, begin, end, strides):
        from opforge.primitives.array_ops import _check_int64_tuple as _check_int_tuple

        shapex = _check_int_tuple(self.name, "shapex", shapex)
        if any(d < 0 for d in shapex):
            raise ValueError(f"For '{self.name}', the 'shapex' must hold dims >= 0, but got {list(shapex)}.")
        masks = (self.begin_mask, self.end_mask, self.ellipsis_mask, self.new_axis_mask, self.shrink_axis_mask)
        want = strided_slice_walk(
            self.name,
            list(shapex),
            _check_int_tuple(self.name, "begin", begin),
            _check_int_tuple(self.name, "end", end),
            _check_int_tuple(self.name, "strides", strides),
            masks,
        )[1]
        if not same_shape(dy_shape, want):
            raise ValueError(
                f"For '{self.name}', the 'dy' must have the slice's shape {want}, but got {list(dy_shape)}."
            )
        return list(shapex)

    def infer_dtype(self, dy_dtype, shapex, begin, end, strides):
        return validator.check_tensor_dtype_valid("dy", dy_dtype, mstype.all_types, self.name)


class AbsGrad(_ActivationGrad):
    r"""``AbsGrad()(x, dy)``: :math:`dx = dy \cdot \operatorname{sign}(x)` (0 at x = 0), Abs's gradient.
    dtypes: float16, bfloat16, float32, float64."""

    arg_names = ("x", "dy")

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["input_x", "input_dy"], outputs=["output"])


class DropoutGrad(_Operator):
    r"""``DropoutGrad(keep_prob=0.5)(dy, mask)``: :math:`dx = dy \cdot mask / keep\_prob` (mask: Dropout's).
    dtypes: float16, bfloat16, float32, float64."""

    @prim_attr_register
    def __init__(self, keep_prob=0.5):
        validator.check_value_type("keep_prob", keep_prob, [float], self.name)
        if not 0.0 < keep_prob <= 1.0:
            raise ValueError(f"For '{self.name}', the 'keep_prob' must be in (0.0, 1.0], but got {keep_prob}.")
        self.init_prim_io_names(inputs=["dy", "mask"], outputs=["output"])

    def infer_shape(self, dy, mask):
        if not same_shape(dy, mask):
            raise ValueError(
                f"For '{self.name}', 'dy' and 'mask' must have the same shape, but got {list(dy)} and {list(mask)}."
            )
        return merge_shapes(dy, mask)

    def infer_dtype(self, dy, mask):
        return validator.check_tensors_dtypes_same_and_valid({"dy": dy, "mask": mask}, mstype.float_type, self.name)


class SmoothL1LossGrad(_Operator):
    r"""``SmoothL1LossGrad(beta=1.0, reduction="none")(prediction, target, dout)``: the gradient of
    SmoothL1Loss in ``prediction``, :math:`clip(d / \beta, -1, 1) \cdot dout` (``dout`` elementwise for
    "none", 0-d for "sum"; "mean" also divides by the element count). dtypes: float16, bfloat16, float32,
    float64."""

    @prim_attr_register
    def __init__(self, beta=1.0, reduction="none"):
        validator.check_value_type("beta", beta, [float], self.name)
        validator.check_string(reduction, ["none", "mean", "sum"], "reduction", self.name)
        self.init_prim_io_names(inputs=["prediction", "target", "dout"], outputs=["gradient"])

    def infer_shape(self, prediction, target, dout):
        want = list(prediction) if self.reduction == "none" else []
        if not same_shape(target, prediction) or not same_shape(dout, want):
            raise ValueError(
                f"For '{self.name}', the 'target' must have the shape of 'prediction' {list(prediction)} and the "
                f"'dout' shape {want}, but got {list(target)} and {list(dout)}."
            )
        return merge_shapes(prediction, target, *([dout] if self.reduction == "none" else []))

    def infer_dtype(self, prediction, target, dout):
        args = {"prediction": prediction, "target": target, "dout": dout}
        return validator.check_tensors_dtypes_same_and_valid(args, mstype.float_type, self.name)


class NLLLossGrad(_Operator):
    r"""``NLLLossGrad(reduction="mean", ignore_index=-100)(logits, loss_grad, labels, weight, total_weight)``:
    the gradient of NLLLoss in ``logits``: :math:`-weight_{t_i} \cdot g_i` at :math:`(i, t_i)`, 0 elsewhere
    and on ignored rows, with :math:`g_i` = ``loss_grad[i]`` ("none"), ``loss_grad`` ("sum") or
    ``loss_grad / total_weight`` ("mean"). dtypes: float16, bfloat16, float32, float64; labels int32/int64."""

    @prim_attr_register
    def __init__(self, reduction="mean", ignore_index=-100):
        validator.check_string(reduction, ["none", "mean", "sum"], "reduction", self.name)
        validator.check_value_type("ignore_index", ignore_index, [int], self.name)
        if not -(2**63) <= ignore_index < 2**63:
            raise ValueError(f"For '{self.name}', the 'ignore_index' must be an int64, but got {ignore_index}.")
        self.init_prim_io_names(inputs=["x", "loss_grad", "target", "weight", "total_weight"], outputs=["x_grad"])

    def infer_shape(self, logits, loss_grad, labels, weight, total_weight):
        if len(logits) not in (1, 2) or not same_shape(weight, [logits[-1]]):
            raise ValueError(
                f"For '{self.name}', the 'logits' must be 1-D or 2-D and 'weight' [C], but got {list(logits)} "
                f"and {list(weight)}."
            )
        n = logits[0] if len(logits) == 2 else 1  # the samples: a label and a loss each
        counts = {"labels": (labels, n), "loss_grad": (loss_grad, n if self.reduction == "none" else 1)}
        for name, (shape, count) in {**counts, "total_weight": (total_weight, 1)}.items():
            if not (has_unknown(shape) or count < 0 or math.prod(shape) == count):
                raise ValueError(
                    f"For '{self.name}', the '{name}' must have {count} elements, but got shape {list(shape)}."
                )
        return logits

    def infer_dtype(self, logits, loss_grad, labels, weight, total_weight):
        args = {"logits": logits, "loss_grad": loss_grad, "weight": weight, "total_weight": total_weight}
        t = validator.check_tensors_dtypes_same_and_valid(args, mstype.float_type, self.name)
        validator.check_tensor_dtype_valid("labels", labels, (mstype.int32, mstype.int64), self.name)
        return t


class LSTMLayerGrad(_Operator):
    r"""LSTMLayer's backward (BPTT, one kernel over the sequence): ``LSTMLayerGrad(reverse=False,
    compute_dx=True)(x, h0, c0, w_ih, w_hh, y, gates, c, dy, dh_n, dc_n)`` returns ``(dx, dh0, dc0, dw_ih,
    dw_hh, dbias)``, the gradients of the forward's inputs given those of its outputs ``y``, ``h_n`` and
    ``c_n``. ``compute_dx=False``: ``dx`` is zeros, not computed (the bprop's ``x`` needs no gradient).
    dtypes: float32, float64."""

    _NAMES = ("x", "h0", "c0", "w_ih", "w_hh", "y", "gates", "c", "dy", "dh_n", "dc_n")
    __mindspore_signature__ = tuple(sig.make_sig(n, dtype=sig.sig_dtype.T) for n in _NAMES)

    @prim_attr_register
    def __init__(self, reverse=False, compute_dx=True):
        validator.check_value_type("reverse", reverse, [bool], self.name)
        validator.check_value_type("compute_dx", compute_dx, [bool], self.name)
        self.init_prim_io_names(inputs=list(self._NAMES), outputs=["dx", "dh0", "dc0", "dw_ih", "dw_hh", "dbias"])

    def infer_shape(self, x, h0, c0, w_ih, w_hh, y, gates, c, dy, dh_n, dc_n):
        seq, batch, _, hidden = check_lstm_shapes(self.name, x, h0, c0, w_ih, w_hh, [-1])
        four = 4 * hidden if hidden >= 0 else -1
        for name, shape, want in (
            ("y", y, [seq, batch, hidden]), ("gates", gates, [seq, batch, four]), ("c", c, [seq, batch, hidden]),
            ("dy", dy, [seq, batch, hidden]), ("dh_n", dh_n, [batch, hidden]), ("dc_n", dc_n, [batch, hidden]),
        ):  # fmt: skip
            if not same_shape(shape, want):
                raise ValueError(f"For '{self.name}', the '{name}' must have shape {want}, but got {list(shape)}.")
        return list(x), list(h0), list(c0), list(w_ih), list(w_hh), [four]

    def infer_dtype(self, *dtypes):
        t = validator.check_tensors_dtypes_same_and_valid(
            dict(zip(self._NAMES, dtypes)), (mstype.float32, mstype.float64), self.name
        )
        return (t,) * 6


def _check_saved(prim_name, **shapes):
    """Each of ``shapes`` is ``(shape, wanted)``: a ValueError naming the first that does not match."""
    for name, (shape, want) in shapes.items():
        if not same_shape(shape, want):
            raise ValueError(f"For '{prim_name}', the '{name}' must have shape {want}, but got {list(shape)}.")


class GRULayerGrad(_Operator):
    r"""GRULayer's backward (BPTT, one kernel over the sequence): ``GRULayerGrad(reverse=False,
    compute_dx=True)(x, h0, w_ih, w_hh, y, gates, dy, dh_n)`` returns ``(dx, dh0, dw_ih, dw_hh, db_ih,
    db_hh)``, the gradients of the forward's inputs given those of its outputs ``y`` and ``h_n``;
    ``compute_dx=False``: ``dx`` is zeros, not computed. dtypes: float32, float64."""

    _NAMES = ("x", "h0", "w_ih", "w_hh", "y", "gates", "dy", "dh_n")
    __mindspore_signature__ = tuple(sig.make_sig(n, dtype=sig.sig_dtype.T) for n in _NAMES)

    @prim_attr_register
    def __init__(self, reverse=False, compute_dx=True):
        validator.check_value_type("reverse", reverse, [bool], self.name)
        validator.check_value_type("compute_dx", compute_dx, [bool], self.name)
        self.init_prim_io_names(inputs=list(self._NAMES), outputs=["dx", "dh0", "dw_ih", "dw_hh", "db_ih", "db_hh"])

    def infer_shape(self, x, h0, w_ih, w_hh, y, gates, dy, dh_n):
        seq, batch, _, hidden = check_rnn_shapes(self.name, 3, x, h0, w_ih, w_hh)
        four = 4 * hidden if hidden >= 0 else -1
        _check_saved(
            self.name, y=(y, [seq, batch, hidden]), gates=(gates, [seq, batch, four]),
            dy=(dy, [seq, batch, hidden]), dh_n=(dh_n, [batch, hidden]),
        )  # fmt: skip
        three = [3 * hidden if hidden >= 0 else -1]
        return list(x), list(h0), list(w_ih), list(w_hh), three, three

    def infer_dtype(self, *dtypes):
        t = validator.check_tensors_dtypes_same_and_valid(dict(zip(self._NAMES, dtypes)), _RNN_DTYPES, self.name)
        return (t,) * 6


class RNNLayerGrad(_Operator):
    r"""RNNLayer's backward (BPTT, one kernel over the sequence): ``RNNLayerGrad(reverse=False,
    nonlinearity='tanh', compute_dx=True)(x, h0, w_ih, w_hh, y, dy, dh_n)`` returns ``(dx, dh0, dw_ih, dw_hh,
    dbias)``; the activation's derivative comes from the saved outputs ``y``; ``compute_dx=False``: ``dx`` is
    zeros, not computed. dtypes: float32, float64."""

    _NAMES = ("x", "h0", "w_ih", "w_hh", "y", "dy", "dh_n")
    __mindspore_signature__ = tuple(sig.make_sig(n, dtype=sig.sig_dtype.T) for n in _NAMES)

    @prim_attr_register
    def __init__(self, reverse=False, nonlinearity="tanh", compute_dx=True):
        validator.check_value_type("reverse", reverse, [bool], self.name)
        validator.check_value_type("compute_dx", compute_dx, [bool], self.name)
        check_nonlinearity(self.name, nonlinearity)
        self.init_prim_io_names(inputs=list(self._NAMES), outputs=["dx", "dh0", "dw_ih", "dw_hh", "dbias"])

    def infer_shape(self, x, h0, w_ih, w_hh, y, dy, dh_n):
        seq, batch, _, hidden = check_rnn_shapes(self.name, 1, x, h0, w_ih, w_hh)
        _check_saved(
            self.name, y=(y, [seq, batch, hidden]), dy=(dy, [seq, batch, hidden]), dh_n=(dh_n, [batch, hidden])
        )
        return list(x), list(h0), list(w_ih), list(w_hh), [hidden]

    def infer_dtype(self, *dtypes):
        t = validator.check_tensors_dtypes_same_and_valid(dict(zip(self._NAMES, dtypes)), _RNN_DTYPES, self.name)
        return (t,) * 5
