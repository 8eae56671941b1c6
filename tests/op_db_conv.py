"""Sweep records (see op_db.py) for convolution and pooling: Conv2D, Conv2DBackpropInput,
Conv2DBackpropFilter, MaxPool, AvgPool, MaxPoolGrad, AvgPoolGrad (NCHW), AdaptiveAvgPool2D and
AdaptiveAvgPool2DGrad.

The NumPy references pad explicitly (zeros for the convolutions, -inf for MaxPool, nothing counted
for AvgPool) and sum window offsets with einsum; the backward references are the adjoints, built the
same way, so they share nothing with the kernels but the padding rule of conv_output_and_pads.
"""

from __future__ import annotations

import numpy as np
from op_db import Arg, ErrorInput, OpRecord, Sample, _t, make_array

from opforge import dtype as mstype
from opforge import ops
from opforge.geometry import conv_output_and_pads

# ---------------------------------------------------------------------------------------------
# Geometry


def _conv_geometry(prim, h, w):
    """(oh, ow, (pt, pb, pl, pr), (sh, sw), (dh, dw), (kh, kw))."""
    kh, kw = prim.kernel_size[-2:]
    sh, sw = prim.stride[-2:]
    dh, dw = prim.dilation[-2:]
    t, b, left, right = prim.padding
    oh, pt, pb = conv_output_and_pads("ref", h, kh, sh, dh, prim.pad_mode, (t, b))
    ow, pl, pr = conv_output_and_pads("ref", w, kw, sw, dw, prim.pad_mode, (left, right))
    return oh, ow, (pt, pb, pl, pr), (sh, sw), (dh, dw), (kh, kw)


def _padded(x, pads, value=0.0):
    pt, pb, pl, pr = pads
    return np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)), constant_values=value)


def _window(xp, p, q, oh, ow, s, d):
    """xp[:, :, p*dh + i*sh, q*dw + j*sw] for every output (i, j)."""
    return xp[:, :, p * d[0] : p * d[0] + (oh - 1) * s[0] + 1 : s[0], q * d[1] : q * d[1] + (ow - 1) * s[1] + 1 : s[1]]


def _pads_fit(xp_shape, pads, h, w, oh, ow, s, d, k):
    """Pad after enough that every window slice exists (the "pad" mode may leave rows unread)."""
    need_h = (oh - 1) * s[0] + d[0] * (k[0] - 1) + 1
    need_w = (ow - 1) * s[1] + d[1] * (k[1] - 1) + 1
    return max(0, need_h - xp_shape[2]), max(0, need_w - xp_shape[3])


# ---------------------------------------------------------------------------------------------
# References (float64)


def _conv_fwd(prim, x, w):
    n, c, h, wd = x.shape
    oh, ow, pads, s, d, k = _conv_geometry(prim, h, wd)
    out = np.zeros((n, w.shape[0], oh, ow))
    if out.size == 0 or c == 0:
        return out
    xp = _padded(x, pads)
    eh, ew = _pads_fit(xp.shape, pads, h, wd, oh, ow, s, d, k)
    xp = np.pad(xp, ((0, 0), (0, 0), (0, eh), (0, ew)))
    g = prim.group
    cg, og = c // g, w.shape[0] // g
    for gi in range(g):
        xs = xp[:, gi * cg : (gi + 1) * cg]
        for p in range(k[0]):
            for q in range(k[1]):
                out[:, gi * og : (gi + 1) * og] += np.einsum(
                    "nchw,oc->nohw", _window(xs, p, q, oh, ow, s, d), w[gi * og : (gi + 1) * og, :, p, q]
                )
    return out


def _conv_input_grad(prim, dy, w, input_size):
    n, c, h, wd = input_size
    oh, ow, pads, s, d, k = _conv_geometry(prim, h, wd)
    pt, pb, pl, pr = pads
    shape = (n, c, h + pt + pb, wd + pl + pr)
    eh, ew = _pads_fit(shape, pads, h, wd, oh, ow, s, d, k)
    dxp = np.zeros((n, c, shape[2] + eh, shape[3] + ew))
    g = prim.group
    cg, og = c // g, w.shape[0] // g
    if dy.size and c:
        for gi in range(g):
            for p in range(k[0]):
                for q in range(k[1]):
                    view = _window(dxp[:, gi * cg : (gi + 1) * cg], p, q, oh, ow, s, d)
                    view += np.einsum(
                        "nohw,oc->nchw", dy[:, gi * og : (gi + 1) * og], w[gi * og : (gi + 1) * og, :, p, q]
                    )
    return dxp[:, :, pt : pt + h, pl : pl + wd]


def _conv_filter_grad(prim, dy, x, filter_size):
    n, c, h, wd = x.shape
    oh, ow, pads, s, d, k = _conv_geometry(prim, h, wd)
    dw = np.zeros(filter_size)
    if dy.size == 0 or c == 0:
        return dw
    xp = _padded(x, pads)
    eh, ew = _pads_fit(xp.shape, pads, h, wd, oh, ow, s, d, k)
    xp = np.pad(xp, ((0, 0), (0, 0), (0, eh), (0, ew)))
    g = prim.group
    cg, og = c // g, filter_size[0] // g
    for gi in range(g):
        xs = xp[:, gi * cg : (gi + 1) * cg]
        for p in range(k[0]):
            for q in range(k[1]):
                dw[gi * og : (gi + 1) * og, :, p, q] = np.einsum(
                    "nohw,nchw->oc", dy[:, gi * og : (gi + 1) * og], _window(xs, p, q, oh, ow, s, d)
                )
    return dw


def _abs_args(fn):
    def mag(prim, *args):
        return fn(prim, *(np.abs(a.astype(np.float64)) if isinstance(a, np.ndarray) else a for a in args))

    return mag


def _pool_geometry(prim, h, w):
    kh, kw = prim.kernel_size[-2:]
    sh, sw = prim.strides[-2:]
    oh, pt, pb = conv_output_and_pads("ref", h, kh, sh, 1, prim.pad_mode)
    ow, pl, pr = conv_output_and_pads("ref", w, kw, sw, 1, prim.pad_mode)
    return oh, ow, (pt, pb, pl, pr), (sh, sw), (kh, kw)


def _max_pool_ref(prim, x):
    n, c, h, w = x.shape
    oh, ow, pads, s, k = _pool_geometry(prim, h, w)
    out = np.full((n, c, oh, ow), -np.inf)
    if out.size == 0:
        return out
    xp = _padded(x, pads, -np.inf)
    eh, ew = _pads_fit(xp.shape, pads, h, w, oh, ow, s, (1, 1), k)
    xp = np.pad(xp, ((0, 0), (0, 0), (0, eh), (0, ew)), constant_values=-np.inf)
    with np.errstate(invalid="ignore"):
        for p in range(k[0]):
            for q in range(k[1]):
                win = _window(xp, p, q, oh, ow, s, (1, 1))
                out = np.where(np.isnan(out) | np.isnan(win), np.nan, np.maximum(out, win))
    return out


def _avg_pool_parts(prim, x):
    n, c, h, w = x.shape
    oh, ow, pads, s, k = _pool_geometry(prim, h, w)
    total = np.zeros((n, c, oh, ow))
    count = np.zeros((1, 1, oh, ow))
    xp = _padded(x, pads)
    ones = _padded(np.ones((1, 1, h, w)), pads)
    eh, ew = _pads_fit(xp.shape, pads, h, w, oh, ow, s, (1, 1), k)
    xp = np.pad(xp, ((0, 0), (0, 0), (0, eh), (0, ew)))
    ones = np.pad(ones, ((0, 0), (0, 0), (0, eh), (0, ew)))
    for p in range(k[0]):
        for q in range(k[1]):
            total += _window(xp, p, q, oh, ow, s, (1, 1))
            count += _window(ones, p, q, oh, ow, s, (1, 1))
    return total, count


def _avg_pool_ref(prim, x):
    total, count = _avg_pool_parts(prim, x)
    return total / np.maximum(count, 1)


def _pool_windows(prim, h, w):
    """Per output (i, j): the list of input (y, x) of its window, in the kernels' order."""
    oh, ow, pads, s, k = _pool_geometry(prim, h, w)
    pt, _, pl, _ = pads
    out = {}
    for i in range(oh):
        for j in range(ow):
            cells = []
            for p in range(k[0]):
                for q in range(k[1]):
                    y, xx = i * s[0] - pt + p, j * s[1] - pl + q
                    if 0 <= y < h and 0 <= xx < w:
                        cells.append((y, xx))
            out[(i, j)] = cells
    return out


def _max_pool_grad_ref(prim, x, out, dy):
    n, c, h, w = x.shape
    dx = np.zeros_like(x, dtype=np.float64)
    for (i, j), cells in _pool_windows(prim, h, w).items():
        if not cells:
            continue
        vals = np.stack([x[:, :, y, xx] for y, xx in cells], axis=-1)  # [n, c, cells]
        nan = np.isnan(vals)
        first = np.where(nan.any(-1), nan.argmax(-1), np.argmax(np.where(nan, -np.inf, vals), axis=-1))
        for t, (y, xx) in enumerate(cells):
            dx[:, :, y, xx] += np.where(first == t, dy[:, :, i, j], 0.0)
    return dx


def _max_pool_grad_grad_ref(prim, x, out, grad):
    n, c, h, w = x.shape
    oh, ow, *_ = _pool_geometry(prim, h, w)
    y = np.zeros((n, c, oh, ow))
    for (i, j), cells in _pool_windows(prim, h, w).items():
        if not cells:
            continue
        vals = np.stack([x[:, :, yy, xx] for yy, xx in cells], axis=-1)
        nan = np.isnan(vals)
        first = np.where(nan.any(-1), nan.argmax(-1), np.argmax(np.where(nan, -np.inf, vals), axis=-1))
        picked = np.stack([grad[:, :, yy, xx] for yy, xx in cells], axis=-1)
        y[:, :, i, j] = np.take_along_axis(picked, first[..., None], axis=-1)[..., 0]
    return y


def _avg_pool_grad_ref(prim, x, out, dy):
    n, c, h, w = x.shape
    dx = np.zeros_like(x, dtype=np.float64)
    for (i, j), cells in _pool_windows(prim, h, w).items():
        for y, xx in cells:
            dx[:, :, y, xx] += dy[:, :, i, j] / len(cells)
    return dx


# ---------------------------------------------------------------------------------------------
# Variants and samples

CONV_VARIANTS = {
    "valid k3": lambda: ops.Conv2D(out_channel=4, kernel_size=3),
    "same k(3,2) s2": lambda: ops.Conv2D(out_channel=4, kernel_size=(3, 2), pad_mode="same", stride=2),
    "pad (1,2,0,1) d2": lambda: ops.Conv2D(out_channel=5, kernel_size=3, pad_mode="pad", pad=(1, 2, 0, 1), dilation=2),
    "same group2": lambda: ops.Conv2D(out_channel=4, kernel_size=3, pad_mode="same", group=2),
    # unit strides, the output plane the input's: the CPU's flat columns on planes of up to 64 elements
    "same k3": lambda: ops.Conv2D(out_channel=4, kernel_size=3, pad_mode="same"),
    "1x1": lambda: ops.Conv2D(out_channel=6, kernel_size=1),
    "pad 2 s(2,1) k5": lambda: ops.Conv2D(out_channel=6, kernel_size=5, pad_mode="pad", pad=2, stride=(2, 1)),
    # unit strides, no horizontal padding: the CPU's wide im2col layout, with vertical padding and groups
    "pad (2,1,0,0) d(2,1) group3": lambda: ops.Conv2D(
        out_channel=6, kernel_size=(3, 2), pad_mode="pad", pad=(2, 1, 0, 0), dilation=(2, 1), group=3
    ),
}

# (N, H, W) per sample; channels are 3 * group. The last: many chunks and parallel im2col.
CONV_SIZES = [(2, 7, 8), (1, 5, 5), (0, 6, 6), (3, 9, 6), (33, 12, 12)]


def _grad_variant(cls):
    """The gradient primitive with the attrs of each Conv2D variant."""

    def make(factory):
        def build():
            p = factory()
            return cls(
                out_channel=p.out_channel,
                kernel_size=p.kernel_size,
                pad_mode=p.pad_mode,
                pad=p.padding,
                stride=p.stride,
                dilation=p.dilation,
                group=p.group,
            )

        return build

    return {name: make(f) for name, f in CONV_VARIANTS.items()}


def _conv_shapes(prim):
    c = 3 * prim.group
    w_shape = (prim.out_channel, 3, *prim.kernel_size)
    for n, h, w in CONV_SIZES:
        oh, ow, *_ = _conv_geometry(prim, h, w)
        yield (n, c, h, w), w_shape, (n, prim.out_channel, oh, ow)


def _conv_samples(record, prim, ins, outs, rng):
    for x_shape, w_shape, _ in _conv_shapes(prim):
        x = make_array(x_shape, ins[0], rng, -2, 2)
        w = make_array(w_shape, ins[1], rng, -1, 1)
        yield Sample((x, w), desc=f"x{list(x_shape)} w{list(w_shape)}")


def _conv_input_samples(record, prim, ins, outs, rng):
    for x_shape, w_shape, y_shape in _conv_shapes(prim):
        dy = make_array(y_shape, ins[0], rng, -2, 2)
        w = make_array(w_shape, ins[1], rng, -1, 1)
        yield Sample((dy, w, x_shape), desc=f"dy{list(y_shape)} w{list(w_shape)}")


def _conv_filter_samples(record, prim, ins, outs, rng):
    for x_shape, w_shape, y_shape in _conv_shapes(prim):
        dy = make_array(y_shape, ins[0], rng, -2, 2)
        x = make_array(x_shape, ins[1], rng, -2, 2)
        yield Sample((dy, x, w_shape), desc=f"dy{list(y_shape)} x{list(x_shape)}")


POOL_VARIANTS = {
    "k2 s2 valid": {"kernel_size": 2, "strides": 2},
    "k3 s1 same": {"kernel_size": 3, "strides": 1, "pad_mode": "same"},
    "k(3,2) s(2,1) same": {"kernel_size": (3, 2), "strides": (2, 1), "pad_mode": "SAME"},
    "k3 s2 valid": {"kernel_size": (1, 1, 3, 3), "strides": 2, "pad_mode": "valid"},
    "k1": {},
}
POOL_SHAPES = [(2, 3, 6, 6), (1, 2, 7, 5), (0, 2, 4, 4), (2, 0, 4, 4), (16, 12, 28, 28)]


def _pool_variants(name):
    return {label: (lambda a=attrs: getattr(ops, name)(**a)) for label, attrs in POOL_VARIANTS.items()}


def _pool_samples(record, prim, ins, outs, rng):
    for shape in POOL_SHAPES:
        yield Sample((make_array(shape, ins[0], rng, -3, 3),), desc=f"x{list(shape)}")
    if record.name == "MaxPool" and ins[0].name in ("Float32", "Float64"):
        x = make_array((1, 2, 4, 4), ins[0], rng, -3, 3)
        x[0, 0, 1, 1] = np.nan
        x[0, 1, 0, 0] = np.inf
        x[0, 1, 3, 3] = -np.inf
        yield Sample((x,), desc="NaN and infinities")


def _pool_grad_samples(record, prim, ins, outs, rng):
    for shape in POOL_SHAPES:
        x = make_array(shape, ins[0], rng, -3, 3)
        oh, ow, *_ = _pool_geometry(prim, shape[2], shape[3])
        y_shape = (shape[0], shape[1], oh, ow)
        out = make_array(y_shape, ins[1], rng, -3, 3)  # not read by the kernels
        dy = make_array(y_shape, ins[2], rng, -2, 2)
        yield Sample((x, out, dy), desc=f"x{list(shape)}")


def _pool_grad_grad_samples(record, prim, ins, outs, rng):
    for shape in POOL_SHAPES:
        x = make_array(shape, ins[0], rng, -3, 3)
        oh, ow, *_ = _pool_geometry(prim, shape[2], shape[3])
        out = make_array((shape[0], shape[1], oh, ow), ins[1], rng, -3, 3)  # not read by the kernels
        grad = make_array(shape, ins[2], rng, -2, 2)
        yield Sample((x, out, grad), desc=f"x{list(shape)}")


# ---------------------------------------------------------------------------------------------
# Error inputs


def _conv_errors():
    f = ops.Conv2D
    x, w = _t((1, 3, 6, 6)), _t((4, 3, 3, 3))
    return [
        ErrorInput("3d-x", lambda: f(4, 3)(_t((3, 6, 6)), w), ValueError, "4-D"),
        ErrorInput("weight-out-channel", lambda: f(5, 3)(x, w), ValueError, "out_channel"),
        ErrorInput("weight-kernel", lambda: f(4, 2)(x, w), ValueError, "weight"),
        ErrorInput("in-channels", lambda: f(4, 3)(_t((1, 2, 6, 6)), w), ValueError, "input channels"),
        ErrorInput("input-too-small", lambda: f(4, 3)(_t((1, 3, 2, 2)), w), ValueError, "larger than the input"),
        ErrorInput("dtype-mismatch", lambda: f(4, 3)(x, _t((4, 3, 3, 3), mstype.float16)), TypeError, "same dtype"),
        ErrorInput(
            "int-inputs", lambda: f(4, 3)(_t((1, 3, 6, 6), mstype.int32), _t((4, 3, 3, 3), mstype.int32)), TypeError
        ),
        ErrorInput("pad-without-pad-mode", lambda: f(4, 3, pad=1), ValueError, "pad_mode"),
        ErrorInput("pad_mode-value", lambda: f(4, 3, pad_mode="full"), ValueError, "pad_mode"),
        ErrorInput("pad-length", lambda: f(4, 3, pad_mode="pad", pad=(1, 2)), ValueError, "pad"),
        ErrorInput("pad-negative", lambda: f(4, 3, pad_mode="pad", pad=-1), ValueError, "pad"),
        ErrorInput("kernel_size-zero", lambda: f(4, 0), ValueError, "kernel_size"),
        ErrorInput("kernel_size-float", lambda: f(4, 2.5), TypeError, "kernel_size"),
        ErrorInput("stride-length", lambda: f(4, 3, stride=(1, 2, 3)), ValueError, "stride"),
        ErrorInput("out_channel-zero", lambda: f(0, 3), ValueError, "out_channel"),
        ErrorInput("group-divides", lambda: f(3, 3, group=2), ValueError, "group"),
        ErrorInput("mode", lambda: f(4, 3, mode=2), ValueError, "mode"),
        ErrorInput("data_format", lambda: f(4, 3, data_format="NHWC"), ValueError, "NCHW"),
        ErrorInput("wrong-arg-count", lambda: f(4, 3)(x), TypeError),
    ]


def _conv_input_errors():
    f = ops.Conv2DBackpropInput
    dy, w = _t((1, 4, 4, 4)), _t((4, 3, 3, 3))
    return [
        ErrorInput("dout-shape", lambda: f(4, 3)(_t((1, 4, 5, 4)), w, (1, 3, 6, 6)), ValueError, "out_backprop"),
        ErrorInput("input_size-length", lambda: f(4, 3)(dy, w, (3, 6, 6)), ValueError, "input_size"),
        ErrorInput("input_size-tensor", lambda: f(4, 3)(dy, w, _t((4,))), TypeError, "constant"),
        ErrorInput("filter-shape", lambda: f(4, 3)(dy, _t((4, 3, 2, 2)), (1, 3, 6, 6)), ValueError, "filter"),
        ErrorInput("dtype-mismatch", lambda: f(4, 3)(dy, _t((4, 3, 3, 3), mstype.float64), (1, 3, 6, 6)), TypeError),
    ]


def _conv_filter_errors():
    f = ops.Conv2DBackpropFilter
    dy, x = _t((1, 4, 4, 4)), _t((1, 3, 6, 6))
    return [
        ErrorInput("dout-shape", lambda: f(4, 3)(_t((1, 4, 3, 4)), x, (4, 3, 3, 3)), ValueError, "out_backprop"),
        ErrorInput("filter_size-shape", lambda: f(4, 3)(dy, x, (4, 3, 2, 2)), ValueError, "filter_size"),
        ErrorInput("filter_size-tensor", lambda: f(4, 3)(dy, x, _t((4,))), TypeError, "constant"),
        ErrorInput("x-3d", lambda: f(4, 3)(dy, _t((3, 6, 6)), (4, 3, 3, 3)), ValueError, "4-D"),
    ]


def _pool_errors(name):
    def errors():
        f = getattr(ops, name)
        return [
            ErrorInput("3d-x", lambda: f(2, 2)(_t((3, 4, 4))), ValueError, "4-D"),
            ErrorInput("window-too-large", lambda: f(5, 1)(_t((1, 1, 4, 4))), ValueError, "larger than the input"),
            ErrorInput("int-input", lambda: f(2, 2)(_t((1, 1, 4, 4), mstype.int32)), TypeError),
            ErrorInput("pad_mode-value", lambda: f(2, 2, "pad"), ValueError, "pad_mode"),
            ErrorInput("kernel_size-zero", lambda: f(0, 1), ValueError, "kernel_size"),
            ErrorInput("strides-tuple-length", lambda: f(2, (1, 1, 1)), ValueError, "strides"),
            ErrorInput("data_format", lambda: f(2, 2, data_format="NHWC"), ValueError, "NCHW"),
        ]

    return errors


def _pool_grad_errors(name):
    def errors():
        f = getattr(ops, name)
        x = _t((1, 2, 4, 4))
        return [
            ErrorInput("grad-shape", lambda: f(2, 2)(x, _t((1, 2, 2, 2)), _t((1, 2, 3, 2))), ValueError, "grad"),
            ErrorInput("out-shape", lambda: f(2, 2)(x, _t((1, 2, 1, 2)), _t((1, 2, 2, 2))), ValueError, "out_origin"),
            ErrorInput(
                "dtype-mismatch",
                lambda: f(2, 2)(x, _t((1, 2, 2, 2)), _t((1, 2, 2, 2), mstype.float64)),
                TypeError,
                "same dtype",
            ),
        ]

    return errors


def _max_pool_grad_grad_errors():
    f = ops.MaxPoolGradGrad
    x = _t((1, 2, 4, 4))
    return [
        ErrorInput("grad-shape", lambda: f(2, 2)(x, _t((1, 2, 2, 2)), _t((1, 2, 2, 2))), ValueError, "grad"),
        ErrorInput("out-shape", lambda: f(2, 2)(x, _t((1, 2, 1, 2)), x), ValueError, "out_origin"),
        ErrorInput(
            "int-inputs",
            lambda: f(2, 2)(*(_t(s, mstype.int32) for s in ((1, 1, 2, 2), (1, 1, 1, 1), (1, 1, 2, 2)))),
            TypeError,
        ),
    ]


# ---------------------------------------------------------------------------------------------
# AdaptiveAvgPool2D and its gradient: references by explicit windows (floor / ceil of i * in / out)


def _adaptive_windows(size, out):
    return [(i * size // out, -(-(i + 1) * size // out)) for i in range(out)]


def _adaptive_out(prim, x_shape):
    return tuple(x if s == -1 else s for x, s in zip(x_shape[-2:], prim.output_size))


def _adaptive_ref(prim, x):
    x = x.astype(np.float64)
    oh, ow = _adaptive_out(prim, x.shape)
    out = np.zeros((*x.shape[:-2], oh, ow))
    for i, (y0, y1) in enumerate(_adaptive_windows(x.shape[-2], oh)):
        for j, (x0, x1) in enumerate(_adaptive_windows(x.shape[-1], ow)):
            out[..., i, j] = x[..., y0:y1, x0:x1].mean(axis=(-2, -1))
    return out


def _adaptive_grad_ref(prim, dy, shape):
    dy = dy.astype(np.float64)
    dx = np.zeros(shape)
    oh, ow = dy.shape[-2:]
    for i, (y0, y1) in enumerate(_adaptive_windows(shape[-2], oh)):
        for j, (x0, x1) in enumerate(_adaptive_windows(shape[-1], ow)):
            dx[..., y0:y1, x0:x1] += dy[..., i : i + 1, j : j + 1] / ((y1 - y0) * (x1 - x0))
    return dx


ADAPTIVE_VARIANTS = {"2": 2, "(3, None)": (3, None), "(None, 2)": (None, 2), "(1, 1)": (1, 1), "(5, 7) larger": (5, 7)}
ADAPTIVE_SHAPES = [(2, 3, 6, 6), (1, 2, 7, 5), (3, 4, 5), (0, 2, 4, 4), (2, 0, 3, 3), (8, 16, 28, 28)]


def _adaptive_variants():
    return {label: (lambda s=size: ops.AdaptiveAvgPool2D(s)) for label, size in ADAPTIVE_VARIANTS.items()}


def _adaptive_samples(record, prim, ins, outs, rng):
    for shape in ADAPTIVE_SHAPES:
        yield Sample((make_array(shape, ins[0], rng, -3, 3),), desc=f"x{list(shape)}")


# (input shape, pooled size) pairs: every window geometry of the forward's variants, and larger outputs.
ADAPTIVE_GRAD_CASES = [
    (shape, _adaptive_out(ops.AdaptiveAvgPool2D(size), shape))
    for shape in ADAPTIVE_SHAPES
    for size in ADAPTIVE_VARIANTS.values()
][::3]


def _adaptive_grad_samples(record, prim, ins, outs, rng):
    for shape, pooled in ADAPTIVE_GRAD_CASES:
        dy = make_array((*shape[:-2], *pooled), ins[0], rng, -2, 2)
        yield Sample((dy, shape), desc=f"dy{list(dy.shape)} x{list(shape)}")


def _adaptive_errors():
    f = ops.AdaptiveAvgPool2D
    return [
        ErrorInput("2d-x", lambda: f(2)(_t((4, 4))), ValueError, "3-D or 4-D"),
        ErrorInput("5d-x", lambda: f(2)(_t((1, 1, 1, 4, 4))), ValueError, "3-D or 4-D"),
        ErrorInput("empty-plane", lambda: f(2)(_t((1, 1, 0, 4))), ValueError, "non-empty"),
        ErrorInput("int-input", lambda: f(2)(_t((1, 1, 4, 4), mstype.int32)), TypeError, "input_x"),
        ErrorInput("bf16-input", lambda: f(2)(_t((1, 1, 4, 4), mstype.bfloat16)), TypeError, "input_x"),
        ErrorInput("output_size-zero", lambda: f(0), ValueError, "positive"),
        ErrorInput("output_size-length", lambda: f((1, 2, 3)), ValueError, "2 elements"),
        ErrorInput("output_size-float", lambda: f((1.5, 2)), TypeError, "output_size"),
        ErrorInput("output_size-list", lambda: f([2, 2]), TypeError, "output_size"),
        ErrorInput("output_size-bool", lambda: f(True), TypeError, "output_size"),
    ]


def _adaptive_grad_errors():
    f = ops.AdaptiveAvgPool2DGrad
    dy = _t((1, 2, 2, 2))
    return [
        ErrorInput("shape-rank", lambda: f()(dy, (2, 4, 4)), ValueError, "leading dims"),
        ErrorInput("shape-leading", lambda: f()(dy, (1, 3, 4, 4)), ValueError, "leading dims"),
        ErrorInput("shape-zero", lambda: f()(dy, (1, 2, 0, 4)), ValueError, "positive"),
        ErrorInput("shape-tensor", lambda: f()(dy, _t((4,))), TypeError, "constant"),
        ErrorInput("int-grad", lambda: f()(_t((1, 2, 2, 2), mstype.int32), (1, 2, 4, 4)), TypeError, "input_grad"),
    ]


# float32 GEMMs sum K products; half types are widened and rounded once.
_CONV_MAG = {"Float32": 1e-5, "Float16": 1e-3, "BFloat16": 8e-3}

RECORDS = [
    OpRecord(
        "Conv2D",
        CONV_VARIANTS,
        _conv_samples,
        _conv_fwd,
        args=(Arg(), Arg()),
        magnitude=_abs_args(_conv_fwd),
        mag_tols=_CONV_MAG,
        error_inputs=_conv_errors,
    ),
    OpRecord(
        "Conv2DBackpropInput",
        _grad_variant(ops.Conv2DBackpropInput),
        _conv_input_samples,
        _conv_input_grad,
        args=(Arg(), Arg()),
        magnitude=_abs_args(_conv_input_grad),
        mag_tols=_CONV_MAG,
        error_inputs=_conv_input_errors,
    ),
    OpRecord(
        "Conv2DBackpropFilter",
        _grad_variant(ops.Conv2DBackpropFilter),
        _conv_filter_samples,
        _conv_filter_grad,
        args=(Arg(), Arg()),
        magnitude=_abs_args(_conv_filter_grad),
        mag_tols=_CONV_MAG,
        error_inputs=_conv_filter_errors,
    ),
    OpRecord("MaxPool", _pool_variants("MaxPool"), _pool_samples, _max_pool_ref, error_inputs=_pool_errors("MaxPool")),
    OpRecord(
        "AvgPool",
        _pool_variants("AvgPool"),
        _pool_samples,
        _avg_pool_ref,
        magnitude=_abs_args(_avg_pool_ref),
        error_inputs=_pool_errors("AvgPool"),
    ),
    OpRecord(
        "MaxPoolGrad",
        _pool_variants("MaxPoolGrad"),
        _pool_grad_samples,
        _max_pool_grad_ref,
        args=(Arg(), Arg(), Arg()),
        magnitude=lambda prim, x, out, dy: _max_pool_grad_ref(prim, x, out, np.abs(dy)),
        error_inputs=_pool_grad_errors("MaxPoolGrad"),
    ),
    OpRecord(
        "AvgPoolGrad",
        _pool_variants("AvgPoolGrad"),
        _pool_grad_samples,
        _avg_pool_grad_ref,
        args=(Arg(), Arg(), Arg()),
        magnitude=_abs_args(_avg_pool_grad_ref),
        error_inputs=_pool_grad_errors("AvgPoolGrad"),
    ),
    OpRecord(
        "MaxPoolGradGrad",
        _pool_variants("MaxPoolGradGrad"),
        _pool_grad_grad_samples,
        _max_pool_grad_grad_ref,
        args=(Arg(), Arg(), Arg()),
        exact=True,
        error_inputs=_max_pool_grad_grad_errors,
    ),
    OpRecord(
        "AdaptiveAvgPool2D",
        _adaptive_variants(),
        _adaptive_samples,
        _adaptive_ref,
        magnitude=_abs_args(_adaptive_ref),
        error_inputs=_adaptive_errors,
    ),
    OpRecord(
        "AdaptiveAvgPool2DGrad",
        {"": ops.AdaptiveAvgPool2DGrad},
        _adaptive_grad_samples,
        _adaptive_grad_ref,
        magnitude=_abs_args(_adaptive_grad_ref),
        error_inputs=_adaptive_grad_errors,
    ),
]
