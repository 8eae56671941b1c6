"""``opforge.mint`` (MindSpore's ``mindspore.mint``): each function with PyTorch's arguments against NumPy, and
the cells of ``mint.nn``; every name of ``mint.__all__`` and ``mint.nn.functional.__all__`` is checked."""

import math

import numpy as np
import pytest

import opforge
from opforge import Tensor, mint
from opforge.mint.nn import functional as F

rng = np.random.default_rng(0)
A = rng.standard_normal((3, 4)).astype(np.float32)
B = rng.standard_normal((3, 4)).astype(np.float32)
P = np.abs(A) + 0.5  # positive
M = rng.standard_normal((4, 5)).astype(np.float32)
C = rng.standard_normal((2, 3, 4)).astype(np.float32)
I = np.array([[2, 0, 1, 3], [1, 1, 0, 2], [0, 3, 3, 1]], np.int64)  # noqa: E741 (gather's index)


X4 = rng.standard_normal((2, 3, 6, 6)).astype(np.float32)
K4 = rng.standard_normal((2, 3, 3, 3)).astype(np.float32)


def _windows(x, k, s):
    n, c, h, w = x.shape
    oh, ow = (h - k) // s + 1, (w - k) // s + 1
    return np.stack([[x[:, :, i * s : i * s + k, j * s : j * s + k] for j in range(ow)] for i in range(oh)])


def _conv2d(x, w, s):
    win = _windows(x, w.shape[-1], s)  # [oh, ow, n, c, k, k]
    return np.einsum("ijnckl,ockl->noij", win, w)


def _pool(x, k, s, reduce):
    return reduce(_windows(x, k, s), axis=(-2, -1)).transpose(2, 3, 0, 1)


def _softmax(x, axis):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


# name -> (call on opforge Tensors, NumPy reference), the arrays given as NumPy
CASES = {
    "zeros": (lambda: mint.zeros((2, 3)), lambda: np.zeros((2, 3), np.float32)),
    "ones": (lambda: mint.ones((2, 3), dtype=opforge.int32), lambda: np.ones((2, 3), np.int32)),
    "full": (lambda: mint.full((2, 2), 7.0), lambda: np.full((2, 2), 7.0, np.float32)),
    "arange": (lambda: mint.arange(1, 10, 3), lambda: np.arange(1, 10, 3)),
    "eye": (lambda: mint.eye(3, 2), lambda: np.eye(3, 2, dtype=np.float32)),
    "zeros_like": (lambda: mint.zeros_like(Tensor(A)), lambda: np.zeros_like(A)),
    "ones_like": (lambda: mint.ones_like(Tensor(A), dtype=opforge.int32), lambda: np.ones_like(A, np.int32)),
    "full_like": (lambda: mint.full_like(Tensor(A), 2.5), lambda: np.full_like(A, 2.5)),
    "abs": (lambda: mint.abs(Tensor(A)), lambda: np.abs(A)),
    "neg": (lambda: mint.neg(Tensor(A)), lambda: -A),
    "negative": (lambda: mint.negative(Tensor(A)), lambda: -A),
    "exp": (lambda: mint.exp(Tensor(A)), lambda: np.exp(A)),
    "log": (lambda: mint.log(Tensor(P)), lambda: np.log(P)),
    "log2": (lambda: mint.log2(Tensor(P)), lambda: np.log2(P)),
    "log1p": (lambda: mint.log1p(Tensor(P)), lambda: np.log1p(P)),
    "expm1": (lambda: mint.expm1(Tensor(A)), lambda: np.expm1(A)),
    "sqrt": (lambda: mint.sqrt(Tensor(P)), lambda: np.sqrt(P)),
    "rsqrt": (lambda: mint.rsqrt(Tensor(P)), lambda: 1 / np.sqrt(P)),
    "square": (lambda: mint.square(Tensor(A)), lambda: A * A),
    "sin": (lambda: mint.sin(Tensor(A)), lambda: np.sin(A)),
    "cos": (lambda: mint.cos(Tensor(A)), lambda: np.cos(A)),
    "tan": (lambda: mint.tan(Tensor(A)), lambda: np.tan(A)),
    "tanh": (lambda: mint.tanh(Tensor(A)), lambda: np.tanh(A)),
    "erf": (lambda: mint.erf(Tensor(A)), lambda: np.array([[math.erf(v) for v in r] for r in A], np.float32)),
    "erfinv": (lambda: mint.erfinv(mint.erf(Tensor(A * 0.5))), lambda: A * 0.5),
    "floor": (lambda: mint.floor(Tensor(A)), lambda: np.floor(A)),
    "ceil": (lambda: mint.ceil(Tensor(A)), lambda: np.ceil(A)),
    "round": (lambda: mint.round(Tensor(A * 3)), lambda: np.round(A * 3)),
    "sign": (lambda: mint.sign(Tensor(A)), lambda: np.sign(A)),
    "reciprocal": (lambda: mint.reciprocal(Tensor(P)), lambda: 1 / P),
    "add": (lambda: mint.add(Tensor(A), Tensor(B), alpha=2), lambda: A + 2 * B),
    "sub": (lambda: mint.sub(Tensor(A), Tensor(B), alpha=3), lambda: A - 3 * B),
    "mul": (lambda: mint.mul(Tensor(A), Tensor(B)), lambda: A * B),
    "div": (lambda: mint.div(Tensor(A), Tensor(P), rounding_mode="floor"), lambda: np.floor(A / P)),
    "divide": (lambda: mint.divide(Tensor(A), Tensor(P)), lambda: A / P),
    "pow": (lambda: mint.pow(Tensor(P), 1.5), lambda: P**1.5),
    "clamp": (lambda: mint.clamp(Tensor(A), -0.5, 0.5), lambda: np.clip(A, -0.5, 0.5)),
    "where": (lambda: mint.where(Tensor(A > 0), Tensor(A), Tensor(B)), lambda: np.where(A > 0, A, B)),
    "maximum": (lambda: mint.maximum(Tensor(A), Tensor(B)), lambda: np.maximum(A, B)),
    "minimum": (lambda: mint.minimum(Tensor(A), Tensor(B)), lambda: np.minimum(A, B)),
    "atan2": (lambda: mint.atan2(Tensor(A), Tensor(B)), lambda: np.arctan2(A, B)),
    "remainder": (lambda: mint.remainder(Tensor(A), Tensor(P)), lambda: np.mod(A, P)),
    "fmod": (lambda: mint.fmod(Tensor(A), Tensor(P)), lambda: np.fmod(A, P)),
    "lerp": (lambda: mint.lerp(Tensor(A), Tensor(B), 0.25), lambda: A + 0.25 * (B - A)),
    "eq": (lambda: mint.eq(Tensor(I), 1), lambda: I == 1),
    "ne": (lambda: mint.ne(Tensor(I), 1), lambda: I != 1),
    "not_equal": (lambda: mint.not_equal(Tensor(I), 1), lambda: I != 1),
    "gt": (lambda: mint.gt(Tensor(A), Tensor(B)), lambda: A > B),
    "greater": (lambda: mint.greater(Tensor(A), Tensor(B)), lambda: A > B),
    "ge": (lambda: mint.ge(Tensor(A), Tensor(B)), lambda: A >= B),
    "greater_equal": (lambda: mint.greater_equal(Tensor(A), Tensor(B)), lambda: A >= B),
    "lt": (lambda: mint.lt(Tensor(A), Tensor(B)), lambda: A < B),
    "less": (lambda: mint.less(Tensor(A), Tensor(B)), lambda: A < B),
    "le": (lambda: mint.le(Tensor(A), Tensor(B)), lambda: A <= B),
    "less_equal": (lambda: mint.less_equal(Tensor(A), Tensor(B)), lambda: A <= B),
    "isnan": (lambda: mint.isnan(Tensor(np.log(A))), lambda: np.isnan(np.log(A))),
    "isinf": (lambda: mint.isinf(Tensor(A / (A > 0))), lambda: np.isinf(A / (A > 0))),
    "isfinite": (lambda: mint.isfinite(Tensor(A / (A > 0))), lambda: np.isfinite(A / (A > 0))),
    "logical_and": (lambda: mint.logical_and(Tensor(A > 0), Tensor(B > 0)), lambda: (A > 0) & (B > 0)),
    "logical_or": (lambda: mint.logical_or(Tensor(A > 0), Tensor(B > 0)), lambda: (A > 0) | (B > 0)),
    "logical_not": (lambda: mint.logical_not(Tensor(A > 0)), lambda: ~(A > 0)),
    "logical_xor": (lambda: mint.logical_xor(Tensor(A > 0), Tensor(B > 0)), lambda: (A > 0) ^ (B > 0)),
    "sum": (lambda: mint.sum(Tensor(C), (0, 2), keepdim=True), lambda: C.sum((0, 2), keepdims=True)),
    "mean": (lambda: mint.mean(Tensor(C), 1), lambda: C.mean(1)),
    "prod": (lambda: mint.prod(Tensor(A), 1, True), lambda: A.prod(1, keepdims=True)),
    "max": (lambda: mint.max(Tensor(A), 1)[0], lambda: A.max(1)),
    "min": (lambda: mint.min(Tensor(A)), lambda: A.min()),
    "amax": (lambda: mint.amax(Tensor(C), (0, 1)), lambda: C.max((0, 1))),
    "amin": (lambda: mint.amin(Tensor(C), -1, True), lambda: C.min(-1, keepdims=True)),
    "argmax": (lambda: mint.argmax(Tensor(A), 1), lambda: A.argmax(1)),
    "argmin": (lambda: mint.argmin(Tensor(A)), lambda: A.argmin()),
    "all": (lambda: mint.all(Tensor(I), 1), lambda: I.all(1)),
    "any": (lambda: mint.any(Tensor(A > 1)), lambda: (A > 1).any()),
    "cumsum": (lambda: mint.cumsum(Tensor(A), 1), lambda: A.cumsum(1)),
    "cumprod": (lambda: mint.cumprod(Tensor(P), 0), lambda: P.cumprod(0)),
    "logsumexp": (lambda: mint.logsumexp(Tensor(A), 1), lambda: np.log(np.exp(A).sum(1))),
    "topk": (lambda: mint.topk(Tensor(A), 2)[0], lambda: -np.sort(-A, 1)[:, :2]),
    "sort": (lambda: mint.sort(Tensor(A), 0, descending=True)[0], lambda: -np.sort(-A, 0)),
    "argsort": (lambda: mint.argsort(Tensor(A), 1), lambda: np.argsort(A, 1, kind="stable")),
    "softmax": (lambda: mint.softmax(Tensor(A), 0), lambda: _softmax(A, 0)),
    "reshape": (lambda: mint.reshape(Tensor(C), (4, -1)), lambda: C.reshape(4, -1)),
    "flatten": (lambda: mint.flatten(Tensor(C), 1), lambda: C.reshape(2, 12)),
    "squeeze": (lambda: mint.squeeze(Tensor(A[:1]), 0), lambda: A[0]),
    "unsqueeze": (lambda: mint.unsqueeze(Tensor(A), -1), lambda: A[..., None]),
    "transpose": (lambda: mint.transpose(Tensor(C), 0, 2), lambda: C.transpose(2, 1, 0)),
    "permute": (lambda: mint.permute(Tensor(C), (1, 2, 0)), lambda: C.transpose(1, 2, 0)),
    "cat": (lambda: mint.cat([Tensor(A), Tensor(B)], 1), lambda: np.concatenate([A, B], 1)),
    "concat": (lambda: mint.concat((Tensor(A), Tensor(B))), lambda: np.concatenate([A, B])),
    "stack": (lambda: mint.stack([Tensor(A), Tensor(B)], -1), lambda: np.stack([A, B], -1)),
    "split": (lambda: mint.split(Tensor(A), [1, 3], 1)[1], lambda: A[:, 1:]),
    "chunk": (lambda: mint.chunk(Tensor(A), 2, 1)[0], lambda: A[:, :2]),
    "narrow": (lambda: mint.narrow(Tensor(A), 1, 1, 2), lambda: A[:, 1:3]),
    "index_select": (lambda: mint.index_select(Tensor(A), 1, Tensor(np.array([3, 0]))), lambda: A[:, [3, 0]]),
    "gather": (lambda: mint.gather(Tensor(A), 1, Tensor(I)), lambda: np.take_along_axis(A, I, 1)),
    "tile": (lambda: mint.tile(Tensor(A), (2, 1)), lambda: np.tile(A, (2, 1))),
    "repeat_interleave": (lambda: mint.repeat_interleave(Tensor(A), 2, 0), lambda: np.repeat(A, 2, 0)),
    "flip": (lambda: mint.flip(Tensor(A), (0, 1)), lambda: A[::-1, ::-1]),
    "roll": (lambda: mint.roll(Tensor(A), 1, 1), lambda: np.roll(A, 1, 1)),
    "t": (lambda: mint.t(Tensor(A)), lambda: A.T),
    "broadcast_to": (lambda: mint.broadcast_to(Tensor(A[:1]), (3, 4)), lambda: np.broadcast_to(A[:1], (3, 4))),
    "unbind": (lambda: mint.unbind(Tensor(A), 1)[2], lambda: A[:, 2]),
    "tril": (lambda: mint.tril(Tensor(A), 1), lambda: np.tril(A, 1)),
    "triu": (lambda: mint.triu(Tensor(A)), lambda: np.triu(A)),
    "swapaxes": (lambda: mint.swapaxes(Tensor(C), 0, 1), lambda: C.swapaxes(0, 1)),
    "masked_select": (lambda: mint.masked_select(Tensor(A), Tensor(A > 0)), lambda: A[A > 0]),
    "nonzero": (lambda: mint.nonzero(Tensor(I)), lambda: np.argwhere(I)),
    "matmul": (lambda: mint.matmul(Tensor(A), Tensor(M)), lambda: A @ M),
    "bmm": (lambda: mint.bmm(Tensor(C), Tensor(np.stack([M, M]))), lambda: C @ np.stack([M, M])),
    "mm": (lambda: mint.mm(Tensor(A), Tensor(M)), lambda: A @ M),
    "dot": (lambda: mint.dot(Tensor(A[0]), Tensor(B[0])), lambda: A[0] @ B[0]),
    "outer": (lambda: mint.outer(Tensor(A[0]), Tensor(B[1])), lambda: np.outer(A[0], B[1])),
    "einsum": (lambda: mint.einsum("ij,jk->ik", Tensor(A), Tensor(M)), lambda: A @ M),
    "baddbmm": (
        lambda: mint.baddbmm(
            Tensor(np.ones((2, 3, 5), np.float32)), Tensor(C), Tensor(np.stack([M, M])), beta=2, alpha=0.5
        ),
        lambda: 2 + 0.5 * (C @ np.stack([M, M])),
    ),
    "addmm": (lambda: mint.addmm(Tensor(A @ M), Tensor(A), Tensor(M), alpha=2), lambda: 3 * (A @ M)),
    "arctan2": (lambda: mint.arctan2(Tensor(A), Tensor(B)), lambda: np.arctan2(A, B)),
    "cosh": (lambda: mint.cosh(Tensor(A)), lambda: np.cosh(A)),
    "sinh": (lambda: mint.sinh(Tensor(A)), lambda: np.sinh(A)),
    "sigmoid": (lambda: mint.sigmoid(Tensor(A)), lambda: 1 / (1 + np.exp(-A))),
    "erfc": (lambda: mint.erfc(Tensor(A)), lambda: np.vectorize(math.erfc)(A)),
    "exp2": (lambda: mint.exp2(Tensor(A)), lambda: np.exp2(A)),
    "sinc": (lambda: mint.sinc(Tensor(A)), lambda: np.sinc(A)),
    "log10": (lambda: mint.log10(Tensor(P)), lambda: np.log10(P)),
    "trunc": (lambda: mint.trunc(Tensor(A * 3)), lambda: np.trunc(A * 3)),
    "fix": (lambda: mint.fix(Tensor(A * 3)), lambda: np.trunc(A * 3)),
    "frac": (lambda: mint.frac(Tensor(A * 3)), lambda: A * 3 - np.trunc(A * 3)),
    "bitwise_and": (lambda: mint.bitwise_and(Tensor(I), Tensor(I + 1)), lambda: I & (I + 1)),
    "bitwise_or": (lambda: mint.bitwise_or(Tensor(I), Tensor(I + 1)), lambda: I | (I + 1)),
    "bitwise_xor": (lambda: mint.bitwise_xor(Tensor(I), Tensor(I + 1)), lambda: I ^ (I + 1)),
    "addcdiv": (lambda: mint.addcdiv(Tensor(A), Tensor(B), Tensor(P), value=0.5), lambda: A + 0.5 * B / P),
    "addcmul": (lambda: mint.addcmul(Tensor(A), Tensor(B), Tensor(P), value=-2), lambda: A - 2 * B * P),
    "xlogy": (lambda: mint.xlogy(Tensor(A * (A > 0)), Tensor(P)), lambda: A * (A > 0) * np.log(P)),
    "float_power": (lambda: mint.float_power(Tensor(P), 2.5), lambda: P.astype(np.float64) ** 2.5),
    "logaddexp": (lambda: mint.logaddexp(Tensor(A * 30), Tensor(B)), lambda: np.logaddexp(A * 30, B)),
    "logaddexp2": (lambda: mint.logaddexp2(Tensor(A * 30), Tensor(B)), lambda: np.logaddexp2(A * 30, B)),
    "nan_to_num": (
        lambda: mint.nan_to_num(Tensor(np.log(A) / (A < 1)), 7.0, 100.0),
        lambda: np.nan_to_num(np.log(A) / (A < 1), nan=7.0, posinf=100.0),
    ),
    "isneginf": (lambda: mint.isneginf(Tensor(A / (A < 0.5))), lambda: np.isneginf(A / (A < 0.5))),
    "isclose": (lambda: mint.isclose(Tensor(A), Tensor(A + B * 1e-6), 1e-6), lambda: np.isclose(A, A + B * 1e-6, 1e-6)),
    "allclose": (lambda: Tensor(mint.allclose(Tensor(A), Tensor(A + 1e-9))), lambda: np.array(True)),
    "equal": (lambda: Tensor(mint.equal(Tensor(I), Tensor(I.copy()))), lambda: np.array(True)),
    "cross": (lambda: mint.cross(Tensor(A[:, :3]), Tensor(B[:, :3]), 1), lambda: np.cross(A[:, :3], B[:, :3])),
    "diff": (
        lambda: mint.diff(Tensor(A), 2, 1, prepend=Tensor(B[:, :1])),
        lambda: np.diff(A, 2, 1, prepend=B[:, :1]),
    ),
    "cummax": (lambda: mint.cummax(Tensor(A), 1)[0], lambda: np.maximum.accumulate(A, 1)),
    "cummin": (lambda: mint.cummin(Tensor(A), 0)[1], lambda: _running_arg(A, 0, np.minimum)),
    "median": (lambda: mint.median(Tensor(A), 1)[0], lambda: np.sort(A, 1)[:, 1]),
    "std": (lambda: mint.std(Tensor(C), (0, 2)), lambda: C.std((0, 2), ddof=1)),
    "var": (lambda: mint.var(Tensor(A), 1, correction=0, keepdim=True), lambda: A.var(1, keepdims=True)),
    "std_mean": (lambda: mint.std_mean(Tensor(A), 0)[0], lambda: A.std(0, ddof=1)),
    "var_mean": (lambda: mint.var_mean(Tensor(A))[1], lambda: A.mean()),
    "nansum": (lambda: mint.nansum(Tensor(np.log(A)), 1), lambda: np.nansum(np.log(A), 1)),
    "count_nonzero": (lambda: mint.count_nonzero(Tensor(I), 0), lambda: np.count_nonzero(I, 0)),
    "norm": (lambda: mint.norm(Tensor(C), 3, dim=(1, 2)), lambda: (np.abs(C) ** 3).sum((1, 2)) ** (1 / 3)),
    "histc": (lambda: mint.histc(Tensor(A), 5, -1, 1), lambda: np.histogram(A, 5, (-1, 1))[0].astype(np.float32)),
    "bincount": (lambda: mint.bincount(Tensor(I.ravel()), minlength=6), lambda: np.bincount(I.ravel(), minlength=6)),
    "unique": (lambda: mint.unique(Tensor(I), return_counts=True)[1], lambda: np.unique(I, return_counts=True)[1]),
    "unique_consecutive": (
        lambda: mint.unique_consecutive(Tensor(I), return_inverse=True)[1],
        lambda: np.cumsum(np.r_[True, I.ravel()[1:] != I.ravel()[:-1]]).reshape(I.shape) - 1,
    ),
    "searchsorted": (
        lambda: mint.searchsorted(Tensor(np.sort(A[0])), Tensor(B), right=True),
        lambda: np.searchsorted(np.sort(A[0]), B, "right"),
    ),
    "clone": (lambda: mint.clone(Tensor(A)), lambda: A),
    "linspace": (lambda: mint.linspace(-1, 2, 7), lambda: np.linspace(-1, 2, 7, dtype=np.float32)),
    "select": (lambda: mint.select(Tensor(C), 1, -1), lambda: C[:, -1]),
    "scatter": (
        lambda: mint.scatter(Tensor(A), 1, Tensor(I[:, :1]), Tensor(B)),
        lambda: _scatter(A, I[:, :1], B[:, :1]),
    ),
    "scatter_add": (
        lambda: mint.scatter_add(Tensor(A), 0, Tensor(I[:2] % 3), Tensor(B)),
        lambda: _scatter_add(A, I[:2] % 3, B),
    ),
    "index_add": (
        lambda: mint.index_add(Tensor(A), 1, Tensor(np.array([3, 0, 3])), Tensor(B[:, :3]), alpha=2),
        lambda: _index_add(A, [3, 0, 3], 2 * B[:, :3]),
    ),
    "diag": (lambda: mint.diag(Tensor(A), 1), lambda: np.diag(A, 1)),
    "meshgrid": (
        lambda: mint.meshgrid(Tensor(A[0]), Tensor(B[0, :3]))[1],
        lambda: np.meshgrid(A[0], B[0, :3], indexing="ij")[1],
    ),
    "trace": (lambda: mint.trace(Tensor(A)), lambda: np.trace(A)),
    "mv": (lambda: mint.mv(Tensor(A), Tensor(M[:, 0])), lambda: A @ M[:, 0]),
    "addmv": (
        lambda: mint.addmv(Tensor(A[:, 0]), Tensor(A), Tensor(M[:, 0]), beta=2, alpha=-1),
        lambda: 2 * A[:, 0] - A @ M[:, 0],
    ),
    "addbmm": (
        lambda: mint.addbmm(Tensor(A[:, :3] @ M[:3]), Tensor(C), Tensor(np.stack([M, 2 * M])), beta=0.5),
        lambda: 0.5 * (A[:, :3] @ M[:3]) + C[0] @ M + C[1] @ (2 * M),
    ),
    "inverse": (
        lambda: mint.inverse(Tensor(M[:, :4] + 4 * np.eye(4, dtype=np.float32))),
        lambda: np.linalg.inv(M[:, :4] + 4 * np.eye(4)),
    ),
    "cdist": (lambda: mint.cdist(Tensor(A), Tensor(B), 1), lambda: np.abs(A[:, None] - B[None]).sum(-1)),
}

# the inverse trigonometric functions, by their short names and NumPy's arc names (mint has both): one input each
for _f, _x in {"cos": A / 3, "cosh": P + 1, "sin": A / 3, "sinh": A, "tan": A, "tanh": A / 3}.items():
    for _name in (f"a{_f}", f"arc{_f}"):
        CASES[_name] = (
            lambda name=_name, x=_x: getattr(mint, name)(Tensor(x)),
            lambda f=_f, x=_x: getattr(np, f"arc{f}")(x),
        )

# (mint.empty, empty_like, randint_like, normal and multinomial: below, with the random functions)


def _running_arg(x, axis, better):
    """The index where the running extreme (``better``: np.maximum / np.minimum) along ``axis`` was last taken."""
    x = np.moveaxis(x, axis, -1)
    out = np.zeros(x.shape, np.int64)
    for idx in np.ndindex(x.shape[:-1]):
        best = 0
        for j in range(x.shape[-1]):
            if better(x[idx][j], x[idx][best]) == x[idx][j]:
                best = j
            out[idx + (j,)] = best
    return np.moveaxis(out, -1, axis)


def _scatter(x, index, src):
    out = x.copy()
    np.put_along_axis(out, index, src, 1)
    return out


def _scatter_add(x, index, src):
    out = x.copy()
    for i, j in np.ndindex(index.shape):
        out[index[i, j], j] += src[i, j]
    return out


def _index_add(x, index, src):
    out = x.copy()
    for k, i in enumerate(index):
        out[:, i] += src[:, k]
    return out


FUNCTIONAL = {
    "relu": (lambda: F.relu(Tensor(A)), lambda: np.maximum(A, 0)),
    "gelu": (lambda: F.gelu(Tensor(A)), lambda: A * 0.5 * (1 + np.vectorize(math.erf)(A / np.sqrt(2)))),
    "silu": (lambda: F.silu(Tensor(A)), lambda: A / (1 + np.exp(-A))),
    "sigmoid": (lambda: F.sigmoid(Tensor(A)), lambda: 1 / (1 + np.exp(-A))),
    "tanh": (lambda: F.tanh(Tensor(A)), lambda: np.tanh(A)),
    "leaky_relu": (lambda: F.leaky_relu(Tensor(A)), lambda: np.where(A > 0, A, 0.01 * A)),
    "elu": (lambda: F.elu(Tensor(A), 0.5), lambda: np.where(A > 0, A, 0.5 * (np.exp(A) - 1))),
    "softmax": (lambda: F.softmax(Tensor(A), 1), lambda: _softmax(A, 1)),
    "log_softmax": (lambda: F.log_softmax(Tensor(A), dim=0), lambda: np.log(_softmax(A, 0))),
    "linear": (lambda: F.linear(Tensor(A), Tensor(M.T), Tensor(M[0])), lambda: A @ M + M[0]),
    "dropout": (lambda: F.dropout(Tensor(A), 0.5, training=False), lambda: A),
    "cross_entropy": (
        lambda: F.cross_entropy(Tensor(A), Tensor(np.array([3, 0, 1], np.int32))),
        lambda: -np.log(_softmax(A, 1))[[0, 1, 2], [3, 0, 1]].mean(),
    ),
    "nll_loss": (
        lambda: F.nll_loss(Tensor(A), Tensor(np.array([3, 0, 1], np.int32)), reduction="sum"),
        lambda: -A[[0, 1, 2], [3, 0, 1]].sum(),
    ),
    "mse_loss": (lambda: F.mse_loss(Tensor(A), Tensor(B)), lambda: ((A - B) ** 2).mean()),
    "l1_loss": (lambda: F.l1_loss(Tensor(A), Tensor(B), "sum"), lambda: np.abs(A - B).sum()),
    "binary_cross_entropy_with_logits": (
        lambda: F.binary_cross_entropy_with_logits(Tensor(A), Tensor((B > 0).astype(np.float32))),
        lambda: np.mean(np.maximum(A, 0) - A * (B > 0) + np.log1p(np.exp(-np.abs(A)))),
    ),
    "layer_norm": (
        lambda: F.layer_norm(Tensor(A), (4,)),
        lambda: (A - A.mean(1, keepdims=True)) / np.sqrt(A.var(1, keepdims=True) + 1e-5),
    ),
    "one_hot": (lambda: F.one_hot(Tensor(np.array([2, 0], np.int64))), lambda: np.eye(3, dtype=np.int64)[[2, 0]]),
    "flatten": (lambda: F.flatten(Tensor(C)), lambda: C.reshape(2, 12)),
    "embedding": (lambda: F.embedding(Tensor(I), Tensor(M)), lambda: M[I]),
    "pad": (lambda: F.pad(Tensor(A), (1, 2)), lambda: np.pad(A, ((0, 0), (1, 2)))),
    "conv2d": (
        lambda: F.conv2d(Tensor(X4), Tensor(K4), Tensor(np.arange(2, dtype=np.float32)), 2, 1),
        lambda: _conv2d(np.pad(X4, ((0, 0), (0, 0), (1, 1), (1, 1))), K4, 2) + np.arange(2).reshape(1, 2, 1, 1),
    ),
    "max_pool2d": (
        lambda: F.max_pool2d(Tensor(X4), 3, 2, padding=1),
        lambda: _pool(np.pad(X4, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf), 3, 2, np.max),
    ),
    "avg_pool2d": (
        lambda: F.avg_pool2d(Tensor(X4), 2),
        lambda: _pool(X4, 2, 2, np.mean),
    ),
    "smooth_l1_loss": (
        lambda: F.smooth_l1_loss(Tensor(A), Tensor(B), beta=0.5),
        lambda: _smooth_l1(A - B, 0.5).mean(),
    ),
    "kl_div": (
        lambda: F.kl_div(Tensor(np.log(_softmax(A, 1))), Tensor(_softmax(B, 1)), "batchmean"),
        lambda: (_softmax(B, 1) * (np.log(_softmax(B, 1)) - np.log(_softmax(A, 1)))).sum() / 3,
    ),
    "group_norm": (
        lambda: F.group_norm(Tensor(X4[:, :2]), 2, Tensor(np.array([2.0, 3.0], np.float32)), Tensor(B[0, :2])),
        lambda: _group_norm(X4[:, :2], 2) * np.array([2.0, 3.0]).reshape(1, 2, 1, 1) + B[0, :2].reshape(1, 2, 1, 1),
    ),
    "interpolate": (
        lambda: F.interpolate(Tensor(X4), size=(4, 9), mode="bilinear"),
        lambda: _bilinear(X4, 4, 9),
    ),
}


def _smooth_l1(d, beta):
    return np.where(np.abs(d) < beta, 0.5 * d * d / beta, np.abs(d) - 0.5 * beta)


def _group_norm(x, groups, eps=1e-5):
    g = x.reshape(x.shape[0], groups, -1)
    out = (g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + eps)
    return out.reshape(x.shape)


def _source(n_in, n_out, align_corners):
    """PyTorch's linear source coordinates of n_out outputs over n_in inputs: (low index, high index, weight)."""
    d = np.arange(n_out, dtype=np.float64)
    if align_corners:
        src = d * (n_in - 1) / (n_out - 1) if n_out > 1 else 0 * d
    else:
        src = np.maximum((d + 0.5) * n_in / n_out - 0.5, 0)
    low = np.floor(src).astype(int)
    return low, np.minimum(low + 1, n_in - 1), src - low


def _bilinear(x, h, w, align_corners=False):
    (r0, r1, wr), (c0, c1, wc) = _source(x.shape[2], h, align_corners), _source(x.shape[3], w, align_corners)
    rows = x[:, :, r0] * (1 - wr)[:, None] + x[:, :, r1] * wr[:, None]
    return rows[..., c0] * (1 - wc) + rows[..., c1] * wc


def _nearest(x, h, w):
    return x[:, :, (np.arange(h) * x.shape[2]) // h][..., (np.arange(w) * x.shape[3]) // w]


SQ = rng.standard_normal((2, 3, 3)) + 3 * np.eye(3)  # well-conditioned square matrices
INF = float("inf")

# name -> (call on opforge Tensors of a dtype, NumPy reference); each run in float32 and float64
LINALG = {
    "vector_norm": (
        lambda d: mint.linalg.vector_norm(Tensor(C.astype(d)), 3, dim=(0, 2)),
        lambda d: (np.abs(C.astype(d)) ** 3).sum((0, 2)) ** (1 / 3),
    ),
    "matrix_norm": (
        lambda d: mint.linalg.matrix_norm(Tensor(C.astype(d)), "nuc"),
        lambda d: np.linalg.norm(C.astype(d), "nuc", axis=(1, 2)),
    ),
    "norm": (lambda d: mint.linalg.norm(Tensor(A.astype(d))), lambda d: np.linalg.norm(A.astype(d))),
    "inv": (lambda d: mint.linalg.inv(Tensor(SQ.astype(d))), lambda d: np.linalg.inv(SQ.astype(d))),
    "det": (lambda d: mint.linalg.det(Tensor(SQ.astype(d))), lambda d: np.linalg.det(SQ.astype(d))),
    "qr": (
        lambda d: mint.linalg.qr(Tensor(M.astype(d)))[1],
        lambda d: np.linalg.qr(M.astype(d))[1],  # R's signs are LAPACK's, as NumPy's
    ),
}

SPECIAL = {
    "erfc": (
        lambda d: mint.special.erfc(Tensor(A.astype(d))),
        lambda d: np.vectorize(math.erfc)(A.astype(np.float64)),
    ),
    "expm1": (lambda d: mint.special.expm1(Tensor(A.astype(d))), lambda d: np.expm1(A.astype(d))),
    "log1p": (lambda d: mint.special.log1p(Tensor(P.astype(d))), lambda d: np.log1p(P.astype(d))),
    "log_softmax": (
        lambda d: mint.special.log_softmax(Tensor(A.astype(d)), 0),
        lambda d: np.log(_softmax(A.astype(np.float64), 0)),
    ),
    "logsumexp": (
        lambda d: mint.special.logsumexp(Tensor(C.astype(d)), (0, 2), keepdim=True),
        lambda d: np.log(np.exp(C.astype(np.float64)).sum((0, 2), keepdims=True)),
    ),
    "round": (
        lambda d: mint.special.round(Tensor(A.astype(d)), decimals=2),
        lambda d: np.round(A.astype(d), 2),
    ),
    "sinc": (
        lambda d: mint.special.sinc(Tensor(np.concatenate([A[0], [0.0]]).astype(d))),
        lambda d: np.sinc(np.concatenate([A[0], [0.0]]).astype(np.float64)),
    ),
    "exp2": (lambda d: mint.special.exp2(Tensor(A.astype(d))), lambda d: np.exp2(A.astype(np.float64))),
}


def test_every_name_is_checked():
    random = {"rand", "randn", "rand_like", "randn_like", "randint", "randperm", "bernoulli"}  # (below)
    random |= {"empty", "empty_like", "randint_like", "normal", "multinomial"}
    assert set(mint.__all__) - {"nn", "optim", "distributed", "linalg", "special"} - random == set(CASES)
    assert set(F.__all__) == set(FUNCTIONAL)
    assert set(mint.linalg.__all__) == set(LINALG) and set(mint.special.__all__) == set(SPECIAL)


@pytest.mark.parametrize("name", sorted(CASES))
def test_mint_function_matches_numpy(name):
    call, ref = CASES[name]
    got, want = call(), np.asarray(ref())
    np.testing.assert_allclose(got.asnumpy(), want, rtol=2e-5, atol=2e-6)
    if want.dtype.kind in "biu":  # integer and bool results keep their kind
        assert got.asnumpy().dtype.kind == want.dtype.kind, (got.dtype, want.dtype)


@pytest.mark.parametrize("name", sorted(FUNCTIONAL))
def test_mint_functional_matches_numpy(name):
    call, ref = FUNCTIONAL[name]
    np.testing.assert_allclose(call().asnumpy(), np.asarray(ref()), rtol=2e-5, atol=2e-6)


def _matches_numpy_in(table: dict, name: str, dtype, rtol32: float = 2e-5) -> None:
    """``table[name]``'s (call, NumPy reference) of a dtype agree, the result keeping that dtype."""
    call, ref = table[name]
    got = call(dtype)
    assert got.asnumpy().dtype == dtype, (name, got.dtype)
    tol = (rtol32, 2e-6) if dtype == np.float32 else (1e-12, 1e-12)
    np.testing.assert_allclose(got.asnumpy(), ref(dtype), rtol=tol[0], atol=tol[1])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(LINALG))
def test_mint_linalg_matches_numpy(name, dtype):
    _matches_numpy_in(LINALG, name, dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(SPECIAL))
def test_mint_special_matches_numpy(name, dtype):
    _matches_numpy_in(SPECIAL, name, dtype, rtol32=2e-6)


def test_mint_linalg_norms_follow_pytorchs_rules():
    x, v = Tensor(C), mint.linalg.vector_norm
    for ord in (2, 1, 0, INF, -INF, 0.5, -1):
        want = np.linalg.norm(C.reshape(2, -1), ord, axis=1)
        np.testing.assert_allclose(v(x, ord, dim=[1, 2]).asnumpy(), want, rtol=2e-5, atol=2e-6)
    assert v(x, keepdim=True).shape == (1, 1, 1)  # every element, the dims kept
    np.testing.assert_allclose(v(x).asnumpy(), np.linalg.norm(C.ravel()), rtol=1e-6)
    for ord in ("fro", "nuc", INF, -INF, 1, -1, 2, -2):
        want = np.linalg.norm(C, ord, axis=(2, 0), keepdims=True)
        got = mint.linalg.matrix_norm(x, ord, dim=(2, 0), keepdim=True)
        np.testing.assert_allclose(got.asnumpy(), want, rtol=2e-5, atol=2e-6, err_msg=str(ord))
    # norm: an int dim is a vector norm, a pair a matrix norm, no dim with an ord the input's own kind
    np.testing.assert_allclose(mint.linalg.norm(x, 1, dim=-1).asnumpy(), np.abs(C).sum(-1), rtol=1e-6)
    np.testing.assert_allclose(mint.linalg.norm(x, 1, dim=(1, 2)).asnumpy(), np.linalg.norm(C, 1, (1, 2)), rtol=1e-6)
    np.testing.assert_allclose(mint.linalg.norm(Tensor(A), INF).asnumpy(), np.linalg.norm(A, INF), rtol=1e-6)
    np.testing.assert_allclose(mint.linalg.norm(Tensor(A[0]), 3).asnumpy(), np.linalg.norm(A[0], 3), rtol=1e-6)
    ints = Tensor(I)
    assert mint.linalg.vector_norm(ints, dtype=opforge.float64).dtype == opforge.float64
    q, r = mint.linalg.qr(Tensor(M), "complete")
    assert q.shape == (4, 4) and r.shape == (4, 5)
    np.testing.assert_allclose(q.asnumpy() @ r.asnumpy(), M, atol=1e-5)
    np.testing.assert_allclose(q.asnumpy().T @ q.asnumpy(), np.eye(4), atol=1e-5)
    q, r = mint.linalg.qr(Tensor(C.transpose(0, 2, 1)))  # batched, tall: Q [2, 4, 3], R [2, 3, 3]
    assert q.shape == (2, 4, 3) and r.shape == (2, 3, 3)
    np.testing.assert_allclose(q.asnumpy() @ r.asnumpy(), C.transpose(0, 2, 1), atol=1e-5)
    assert mint.linalg.qr(Tensor(M), mode="r")[0].shape == (0,)
    grad = opforge.grad(lambda t: mint.linalg.vector_norm(t))(Tensor(A))
    np.testing.assert_allclose(grad.asnumpy(), A / np.linalg.norm(A), rtol=1e-5, atol=1e-6)


def test_mint_linalg_and_special_check_their_arguments():
    with pytest.raises(ValueError, match="For 'vector_norm', the 'ord' must be a number"):
        mint.linalg.vector_norm(Tensor(A), "fro")
    with pytest.raises(TypeError, match="For 'vector_norm', the input must be a float Tensor"):
        mint.linalg.vector_norm(Tensor(I))
    with pytest.raises(ValueError, match="For 'vector_norm', the 'dim' must not repeat a dim"):
        mint.linalg.vector_norm(Tensor(A), dim=(1, -1))
    with pytest.raises(ValueError, match="For 'matrix_norm', the 'ord' must be 'fro', 'nuc'"):
        mint.linalg.matrix_norm(Tensor(A), 3)
    with pytest.raises(ValueError, match="For 'matrix_norm', the 'A' must have at least 2 dims"):
        mint.linalg.matrix_norm(Tensor(A[0]))
    with pytest.raises(ValueError, match="For 'norm', the 'ord' 'nuc' is a matrix norm"):
        mint.linalg.norm(Tensor(A), "nuc", dim=1)
    with pytest.raises(ValueError, match="For 'norm', an 'ord' without 'dim' needs a 1-D or 2-D 'A'"):
        mint.linalg.norm(Tensor(C), 2)
    with pytest.raises(ValueError, match="For 'inv', the 'A' must be square matrices"):
        mint.linalg.inv(Tensor(A))
    with pytest.raises(ValueError, match="For 'det', the 'A' must be square matrices"):
        mint.linalg.det(Tensor(A[0]))
    with pytest.raises(ValueError, match="For 'qr', the 'mode' must be 'reduced', 'complete' or 'r'"):
        mint.linalg.qr(Tensor(M), "full")
    with pytest.raises(TypeError, match="For 'round', the 'decimals' must be an int"):
        mint.special.round(Tensor(A), decimals=1.5)
    np.testing.assert_allclose(mint.special.round(Tensor(A * 100), decimals=-1).asnumpy(), np.round(A * 100, -1))
    assert mint.special.exp2(Tensor(I)).dtype == opforge.float32  # integers become float32, as PyTorch's
    np.testing.assert_allclose(mint.special.sinc(Tensor(I)).asnumpy(), np.sinc(I), atol=1e-6)
    grad = opforge.grad(lambda t: mint.sum(mint.special.sinc(t)))(Tensor(np.array([0.0, 0.5], np.float32)))
    np.testing.assert_allclose(grad.asnumpy(), [0.0, -4 / math.pi], rtol=1e-5, atol=1e-7)


def test_mint_max_with_dim_gives_values_and_indices():
    values, indices = mint.max(Tensor(A), dim=0, keepdim=True)
    np.testing.assert_array_equal(values.asnumpy(), A.max(0, keepdims=True))
    np.testing.assert_array_equal(indices.asnumpy(), A.argmax(0)[None])
    for _, indices in (mint.max(Tensor(A), 1), mint.min(Tensor(A), 0), mint.topk(Tensor(A), 2), mint.sort(Tensor(A))):
        assert indices.dtype == opforge.int64  # PyTorch's (MindSpore's mint gives int64 too)
    assert mint.argsort(Tensor(A)).dtype == opforge.int64


def test_mint_nn_cells_train_a_small_network():
    opforge.nn.set_seed(0)
    net = opforge.nn.SequentialCell(
        mint.nn.Flatten(), mint.nn.Linear(12, 8), mint.nn.GELU(), mint.nn.Dropout(0.1), mint.nn.Linear(8, 2)
    )
    assert net[1].weight.shape == (8, 12) and net[1].in_features == 12
    loss_fn = mint.nn.MSELoss()
    x, y = Tensor(C), Tensor(np.ones((2, 2), np.float32))
    step = opforge.nn.TrainOneStepCell(
        opforge.nn.WithLossCell(net, loss_fn), opforge.nn.SGD(net.trainable_params(), 0.1)
    )
    losses = [float(step(x, y).asnumpy()) for _ in range(5)]
    assert losses[-1] < losses[0]
    net.set_train(False)
    for cell, ref in ((mint.nn.ReLU(), np.maximum(A, 0)), (mint.nn.Softmax(1), _softmax(A, 1)),
                      (mint.nn.Identity(), A), (mint.nn.Tanh(), np.tanh(A))):  # fmt: skip
        np.testing.assert_allclose(cell(Tensor(A)).asnumpy(), ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(mint.nn.L1Loss()(Tensor(A), Tensor(B)).asnumpy(), np.abs(A - B).mean(), rtol=1e-6)


def test_mint_gradients_flow_through_the_functions():
    x = Tensor(A)
    grad = opforge.grad(lambda t: mint.sum(mint.nn.functional.softmax(t, 1) * Tensor(B)))(x)
    s = _softmax(A, 1)
    want = s * (B - (s * B).sum(1, keepdims=True))
    np.testing.assert_allclose(grad.asnumpy(), want, rtol=1e-5, atol=1e-6)


def _torch_sgd(p, grads, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, maximize=False):
    buf = None
    for g in grads:
        g = -g if maximize else g
        g = g + weight_decay * p
        if momentum:
            buf = g if buf is None else momentum * buf + (1 - dampening) * g
            g = g + momentum * buf if nesterov else buf
        p = p - lr * g
    return p


def _torch_adam(p, grads, lr, betas, eps, weight_decay, amsgrad, decoupled, maximize=False):
    m = v = vmax = 0.0
    for t, g in enumerate(grads, 1):
        g = -g if maximize else g
        if decoupled:
            p = p * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * p
        m = betas[0] * m + (1 - betas[0]) * g
        v = betas[1] * v + (1 - betas[1]) * g * g
        vmax = np.maximum(vmax, v)
        vhat = (vmax if amsgrad else v) / (1 - betas[1] ** t)
        p = p - lr * (m / (1 - betas[0] ** t)) / (np.sqrt(vhat) + eps)
    return p


OPTIMIZERS = {
    "sgd": (lambda ps: mint.optim.SGD(ps, 0.1), lambda p, gs: _torch_sgd(p, gs, 0.1)),
    "sgd momentum dampening decay": (
        lambda ps: mint.optim.SGD(ps, 0.1, momentum=0.9, dampening=0.3, weight_decay=0.01),
        lambda p, gs: _torch_sgd(p, gs, 0.1, 0.9, 0.3, 0.01),
    ),
    "sgd nesterov maximize": (
        lambda ps: mint.optim.SGD(ps, 0.05, momentum=0.8, nesterov=True, maximize=True),
        lambda p, gs: _torch_sgd(p, gs, 0.05, 0.8, nesterov=True, maximize=True),
    ),
    "adam": (
        lambda ps: mint.optim.Adam(ps, 0.01),
        lambda p, gs: _torch_adam(p, gs, 0.01, (0.9, 0.999), 1e-8, 0, False, False),
    ),
    "adam decay amsgrad": (
        lambda ps: mint.optim.Adam(ps, 0.01, (0.8, 0.99), 1e-6, 0.1, amsgrad=True),
        lambda p, gs: _torch_adam(p, gs, 0.01, (0.8, 0.99), 1e-6, 0.1, True, False),
    ),
    "adamw": (
        lambda ps: mint.optim.AdamW(ps),
        lambda p, gs: _torch_adam(p, gs, 1e-3, (0.9, 0.999), 1e-8, 0.01, False, True),
    ),
    "adamw maximize": (
        lambda ps: mint.optim.AdamW(ps, 0.02, weight_decay=0.1, maximize=True),
        lambda p, gs: _torch_adam(p, gs, 0.02, (0.9, 0.999), 1e-8, 0.1, False, True, maximize=True),
    ),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_mint_optimizer_follows_pytorchs_rule(name, dtype):
    make, ref = OPTIMIZERS[name]
    start = rng.standard_normal((3, 4)).astype(dtype)
    grads = [rng.standard_normal((3, 4)).astype(dtype) for _ in range(4)]
    w = opforge.Parameter(Tensor(start.copy()), name="w")
    opt = make([w])
    for g in grads:
        opt((Tensor(g),))
    np.testing.assert_allclose(w.asnumpy(), ref(start.astype(np.float64), grads), rtol=1e-5, atol=1e-6)


def test_mint_optimizers_check_their_arguments():
    w = opforge.Parameter(Tensor(A), name="w")
    with pytest.raises(ValueError, match="For 'AdamW', the 'betas\\[1\\]' must be in \\[0.0, 1.0\\), but got 1.0"):
        mint.optim.AdamW([w], betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="For 'SGD', the 'lr' must be in \\[0.0, inf\\)"):
        mint.optim.SGD([w], -1.0)
    with pytest.raises(ValueError, match="nesterov=True needs a momentum above 0"):
        mint.optim.SGD([w], 0.1, nesterov=True)
    with pytest.raises(TypeError, match="'amsgrad' must be bool"):
        mint.optim.Adam([w], amsgrad=1)
    assert "exp_avg.w" in {p.name for p in mint.optim.Adam([w]).get_parameters()}  # states a checkpoint saves


def test_mint_conv_pool_and_batch_norm_cells():
    opforge.nn.set_seed(0)
    conv = mint.nn.Conv2d(3, 2, 3, stride=2, padding=1)
    assert conv.weight.shape == (2, 3, 3, 3) and np.abs(conv.bias.asnumpy()).max() <= 1 / math.sqrt(27)
    bound = math.sqrt(2 / 6) * math.sqrt(3 / 27)  # HeUniform(sqrt(5)), fan_in 27
    assert np.abs(conv.weight.asnumpy()).max() <= bound
    want = _conv2d(np.pad(X4, ((0, 0), (0, 0), (1, 1), (1, 1))), conv.weight.asnumpy(), 2)
    np.testing.assert_allclose(
        conv(Tensor(X4)).asnumpy(), want + conv.bias.asnumpy().reshape(1, 2, 1, 1), rtol=1e-5, atol=1e-5
    )
    np.testing.assert_allclose(mint.nn.MaxPool2d(2)(Tensor(X4)).asnumpy(), _pool(X4, 2, 2, np.max))
    np.testing.assert_allclose(mint.nn.AvgPool2d(3, 3)(Tensor(X4)).asnumpy(), _pool(X4, 3, 3, np.mean), rtol=1e-6)
    bn = mint.nn.BatchNorm2d(3, momentum=0.25)
    names = [p.name for p in bn.get_parameters()]
    assert names == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    bn.set_train(True)
    out = bn(Tensor(X4)).asnumpy()
    mean, var, n = X4.mean((0, 2, 3)), X4.var((0, 2, 3)), X4.size // 3
    np.testing.assert_allclose(
        out, (X4 - mean.reshape(1, 3, 1, 1)) / np.sqrt(var.reshape(1, 3, 1, 1) + 1e-5), rtol=1e-4, atol=1e-5
    )
    np.testing.assert_allclose(bn.running_mean.asnumpy(), 0.25 * mean, rtol=1e-5, atol=1e-6)  # PyTorch's momentum
    np.testing.assert_allclose(bn.running_var.asnumpy(), 0.75 + 0.25 * var * n / (n - 1), rtol=1e-5)  # unbiased
    assert int(bn.num_batches_tracked.asnumpy()) == 1
    bn.set_train(False)
    running = (bn.running_mean.asnumpy().reshape(1, 3, 1, 1), bn.running_var.asnumpy().reshape(1, 3, 1, 1))
    want = (X4 - running[0]) / np.sqrt(running[1] + 1e-5)
    np.testing.assert_allclose(bn(Tensor(X4)).asnumpy(), want, rtol=1e-4, atol=1e-5)
    wide = mint.nn.Linear(3, 2, dtype=opforge.float64)
    assert wide.weight.dtype == opforge.float64 and wide(Tensor(A[:, :3].astype(np.float64))).dtype == opforge.float64
    with pytest.raises(ValueError, match="padding='same' needs stride 1"):
        mint.nn.Conv2d(3, 2, 3, stride=2, padding="same")
    with pytest.raises(ValueError, match="'padding_mode' 'reflect' is not supported"):
        mint.nn.Conv2d(3, 2, 3, padding_mode="reflect")
    with pytest.raises(ValueError, match="'ceil_mode' and 'return_indices' are not supported"):
        F.max_pool2d(Tensor(X4), 2, ceil_mode=True)


def test_mint_random_functions_follow_the_seed():
    opforge.set_seed(3)
    first = [mint.rand(2, 3), mint.randn((4,)), mint.randint(2, 9, (5,)), mint.randperm(6)]
    opforge.set_seed(3)
    again = [mint.rand(2, 3), mint.randn((4,)), mint.randint(2, 9, (5,)), mint.randperm(6)]
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())
    u, ints, perm = first[0].asnumpy(), first[2].asnumpy(), first[3].asnumpy()
    assert u.shape == (2, 3) and ((u >= 0) & (u < 1)).all()
    assert ints.dtype == np.int64 and ((ints >= 2) & (ints < 9)).all()
    assert sorted(perm.tolist()) == list(range(6)) and perm.dtype == np.int64
    draws = mint.bernoulli(mint.full((20000,), 0.3)).asnumpy()
    assert set(np.unique(draws)) <= {0.0, 1.0} and abs(draws.mean() - 0.3) < 0.02
    assert mint.rand_like(Tensor(A)).shape == A.shape and mint.randn_like(Tensor(A)).dtype == opforge.float32
    with pytest.raises(ValueError, match="'generator' is not supported"):
        mint.rand(2, generator=object())


def test_mint_follows_pytorch_on_dtypes_and_edge_cases():
    ints = Tensor(I.astype(np.int32))
    assert mint.sum(ints).dtype == opforge.int64 and mint.prod(ints, 1).dtype == opforge.int64
    assert int(mint.sum(Tensor(A > 0)).asnumpy()) == int((A > 0).sum())  # bools count, as int64
    assert mint.cumsum(Tensor(A > 0), 1).dtype == opforge.int64
    assert mint.argmin(Tensor(A), 1).dtype == opforge.int64
    assert mint.squeeze(Tensor(A[:1]), (0, 1)).shape == (4,)  # dim 1 (size 4) stays
    assert mint.tile(Tensor(C), (2,)).shape == (2, 3, 8) and mint.flip(Tensor(A), 0).shape == A.shape
    assert mint.randint(low=1, high=4, size=(3,)).shape == (3,)
    with pytest.raises(TypeError, match="give \\(high, size\\) or \\(low, high, size\\)"):
        mint.randint(5)
    with pytest.raises(ValueError, match="at most 2 dims"):
        mint.t(Tensor(C))
    with pytest.raises(ValueError, match="'max_norm' and 'scale_grad_by_freq' are not supported"):
        F.embedding(Tensor(I), Tensor(M), max_norm=1.0)
    with pytest.raises(ValueError, match="For 'embedding', the 'padding_idx' must be an int in \\[-4, 4\\)"):
        F.embedding(Tensor(I), Tensor(M), padding_idx=4)


def test_mint_norm_embedding_loss_and_upsample_cells():
    opforge.nn.set_seed(0)
    ln = mint.nn.LayerNorm(4, eps=1e-6)
    assert [p.name for p in ln.get_parameters()] == ["weight", "bias"]
    want = (A - A.mean(1, keepdims=True)) / np.sqrt(A.var(1, keepdims=True) + 1e-6)
    np.testing.assert_allclose(ln(Tensor(A)).asnumpy(), want, rtol=1e-5, atol=1e-5)
    assert mint.nn.LayerNorm((3, 4), bias=False).bias is None
    assert mint.nn.LayerNorm(4, dtype=opforge.float64)(Tensor(A.astype(np.float64))).dtype == opforge.float64
    gn = mint.nn.GroupNorm(3, 3)
    np.testing.assert_allclose(gn(Tensor(X4)).asnumpy(), _group_norm(X4, 3), rtol=1e-4, atol=1e-5)
    emb = mint.nn.Embedding(1000, 8, padding_idx=-1)
    table = emb.weight.asnumpy()
    assert table.shape == (1000, 8) and not table[-1].any() and abs(table[:-1].std() - 1) < 0.05  # N(0, 1)
    ids = Tensor(np.array([[0, 999], [5, 0]], np.int64))
    np.testing.assert_array_equal(emb(ids).asnumpy(), table[[[0, 999], [5, 0]]])
    grad = opforge.grad(lambda w: mint.sum(F.embedding(ids, w, padding_idx=999)))(emb.weight).asnumpy()
    assert grad[0].tolist() == [2.0] * 8 and grad[5].tolist() == [1.0] * 8 and not grad[999].any()  # padding: 0
    given = mint.nn.Embedding(4, 5, _weight=Tensor(M), _freeze=True)
    np.testing.assert_array_equal(given(Tensor(I)).asnumpy(), M[I])
    assert not given.weight.requires_grad
    logits, labels = Tensor(A), Tensor(np.array([3, 0, 1], np.int64))
    log_p = np.log(_softmax(A, 1))
    w = np.array([1.0, 2.0, 0.5, 1.5], np.float32)
    np.testing.assert_allclose(
        mint.nn.CrossEntropyLoss(Tensor(w))(logits, labels).asnumpy(),
        -(w[[3, 0, 1]] * log_p[[0, 1, 2], [3, 0, 1]]).sum() / w[[3, 0, 1]].sum(),
        rtol=1e-5,
    )
    np.testing.assert_allclose(
        mint.nn.NLLLoss(reduction="none")(Tensor(log_p), labels).asnumpy(), -log_p[[0, 1, 2], [3, 0, 1]], rtol=1e-6
    )
    t = (B > 0).astype(np.float32)
    pos = np.full(4, 2.0, np.float32)
    bce = mint.nn.BCEWithLogitsLoss(reduction="sum", pos_weight=Tensor(pos))(logits, Tensor(t)).asnumpy()
    log_sig = -np.log1p(np.exp(-A))
    np.testing.assert_allclose(bce, -(2 * t * log_sig + (1 - t) * (log_sig - A)).sum(), rtol=1e-5)
    np.testing.assert_allclose(
        mint.nn.SmoothL1Loss("none", beta=2.0)(Tensor(A), Tensor(B)).asnumpy(), _smooth_l1(A - B, 2.0), rtol=1e-6
    )
    np.testing.assert_allclose(
        mint.nn.SmoothL1Loss(beta=0.0)(Tensor(A), Tensor(B)).asnumpy(), np.abs(A - B).mean(), rtol=1e-6
    )
    log_q = np.log(_softmax(B, 1))
    np.testing.assert_allclose(
        mint.nn.KLDivLoss("sum", log_target=True)(Tensor(log_p), Tensor(log_q)).asnumpy(),
        (np.exp(log_q) * (log_q - log_p)).sum(),
        rtol=1e-5,
    )
    np.testing.assert_allclose(
        mint.nn.KLDivLoss()(Tensor(log_p), Tensor(np.exp(log_q))).asnumpy(),
        (np.exp(log_q) * (log_q - log_p)).mean(),
        rtol=1e-5,
    )
    up = mint.nn.Upsample(scale_factor=2)
    np.testing.assert_array_equal(up(Tensor(X4)).asnumpy(), X4.repeat(2, 2).repeat(2, 3))  # nearest
    np.testing.assert_array_equal(F.interpolate(Tensor(X4), (4, 9)).asnumpy(), _nearest(X4, 4, 9))
    aligned = mint.nn.Upsample((7, 5), mode="bilinear", align_corners=True)(Tensor(X4))
    np.testing.assert_allclose(aligned.asnumpy(), _bilinear(X4, 7, 5, True), rtol=1e-5, atol=1e-6)
    net = opforge.nn.SequentialCell(mint.nn.Flatten(), mint.nn.LayerNorm(12), mint.nn.Linear(12, 4))
    loss_fn = mint.nn.CrossEntropyLoss(label_smoothing=0.1)
    step = opforge.nn.TrainOneStepCell(
        opforge.nn.WithLossCell(net, loss_fn), opforge.nn.SGD(net.trainable_params(), 0.1)
    )
    losses = [float(step(Tensor(C), Tensor(np.array([1, 2], np.int64))).asnumpy()) for _ in range(5)]
    assert losses[-1] < losses[0]
    with pytest.raises(ValueError, match="For 'GroupNorm', the 'num_channels' \\(4\\) must divide by 'num_groups'"):
        mint.nn.GroupNorm(3, 4)
    with pytest.raises(ValueError, match="For 'LayerNorm', the 'normalized_shape' must be an int or a tuple"):
        mint.nn.LayerNorm(0)
    with pytest.raises(ValueError, match="For 'Embedding', the 'padding_idx' must be an int in \\[-5, 5\\)"):
        mint.nn.Embedding(5, 2, padding_idx=5)
    with pytest.raises(ValueError, match="For 'smooth_l1_loss', the 'beta' must be a number >= 0"):
        F.smooth_l1_loss(Tensor(A), Tensor(B), beta=-1.0)
    with pytest.raises(ValueError, match="For 'kl_div', the 'reduction' must be one of"):
        F.kl_div(Tensor(A), Tensor(B), "batch")
    with pytest.raises(ValueError, match="For 'interpolate', the 'mode' must be"):
        F.interpolate(Tensor(X4), scale_factor=2, mode="bicubic")


def test_mint_new_random_and_empty_functions():
    opforge.set_seed(5)
    first = [mint.randint_like(Tensor(I), 3, 8), mint.normal(2.0, 0.5, (4000,)), mint.multinomial(Tensor(P), 3)]
    opforge.set_seed(5)
    again = [mint.randint_like(Tensor(I), 3, 8), mint.normal(2.0, 0.5, (4000,)), mint.multinomial(Tensor(P), 3)]
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())
    ints, draws, picks = (t.asnumpy() for t in first)
    assert ints.shape == I.shape and ints.dtype == np.int64 and ((ints >= 3) & (ints < 8)).all()
    assert abs(draws.mean() - 2.0) < 0.05 and abs(draws.std() - 0.5) < 0.05
    assert picks.shape == (3, 3) and picks.dtype == np.int64
    assert all(len(set(row)) == 3 for row in picks.tolist())  # without replacement: distinct
    assert mint.randint_like(Tensor(A), 4).dtype == opforge.float32  # the input's dtype
    spread = mint.normal(Tensor(np.zeros((2, 3), np.float64)), Tensor(np.ones(3))).asnumpy()
    assert spread.shape == (2, 3) and spread.dtype == np.float64
    assert mint.empty(2, 3).shape == (2, 3) and mint.empty((4,), dtype=opforge.int32).dtype == opforge.int32
    assert mint.empty_like(Tensor(I)).shape == I.shape and mint.empty_like(Tensor(I)).dtype == opforge.int64


# the new functions again in float64 (and integers where they take them): name -> (call of a dtype, NumPy)
WIDE = {
    "logaddexp": (
        lambda d: mint.logaddexp(Tensor(A.astype(d) * 30), Tensor(B.astype(d))),
        lambda d: np.logaddexp(A.astype(d) * 30, B.astype(d)),
    ),
    "xlogy": (
        lambda d: mint.xlogy(Tensor(A.astype(d)), Tensor(P.astype(d))),
        lambda d: A.astype(d) * np.log(P.astype(d)),
    ),
    "frac": (lambda d: mint.frac(Tensor(A.astype(d) * 3)), lambda d: np.modf(A.astype(d) * 3)[0]),
    "diff": (lambda d: mint.diff(Tensor(C.astype(d)), dim=0), lambda d: np.diff(C.astype(d), axis=0)),
    "std": (lambda d: mint.std(Tensor(A.astype(d)), 1, correction=2), lambda d: A.astype(d).std(1, ddof=2)),
    "median": (lambda d: mint.median(Tensor(A.astype(d))), lambda d: np.sort(A.astype(d).ravel())[5]),
    "cummax": (lambda d: mint.cummax(Tensor(A.astype(d)), 0)[0], lambda d: np.maximum.accumulate(A.astype(d), 0)),
    "addcdiv": (
        lambda d: mint.addcdiv(Tensor(A.astype(d)), Tensor(B.astype(d)), Tensor(P.astype(d))),
        lambda d: A.astype(d) + B.astype(d) / P.astype(d),
    ),
    "mv": (
        lambda d: mint.mv(Tensor(A.astype(d)), Tensor(M[:, 1].astype(d))),
        lambda d: A.astype(d) @ M[:, 1].astype(d),
    ),
    "cdist": (
        lambda d: mint.cdist(Tensor(A.astype(d)), Tensor(B.astype(d))),
        lambda d: np.linalg.norm(A.astype(d)[:, None] - B.astype(d)[None], axis=-1),
    ),
    "norm": (lambda d: mint.norm(Tensor(A.astype(d))), lambda d: np.linalg.norm(A.astype(d))),
    "inverse": (lambda d: mint.inverse(Tensor(SQ.astype(d))), lambda d: np.linalg.inv(SQ.astype(d))),
    "index_add": (
        lambda d: mint.index_add(Tensor(A.astype(d)), 0, Tensor(np.array([2, 2])), Tensor(B[:2].astype(d))),
        lambda d: A.astype(d) + np.array([0, 0, 1])[:, None] * (B[0].astype(d) + B[1].astype(d)),
    ),
    "diag": (lambda d: mint.diag(Tensor(A[0].astype(d)), -2), lambda d: np.diag(A[0].astype(d), -2)),
    "nansum": (lambda d: mint.nansum(Tensor(np.log(A.astype(d)))), lambda d: np.nansum(np.log(A.astype(d)))),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(WIDE))
def test_mint_new_functions_keep_float64(name, dtype):
    _matches_numpy_in(WIDE, name, dtype)


def test_mint_new_functions_on_integers_and_edge_cases():
    i32 = Tensor(I.astype(np.int32))
    assert mint.float_power(i32, 2).dtype == opforge.float64  # float64 whatever the inputs
    np.testing.assert_array_equal(mint.diff(i32).asnumpy(), np.diff(I))
    np.testing.assert_array_equal(mint.diff(Tensor(I > 1)).asnumpy(), np.diff(I > 1))  # bools: xor
    assert mint.nansum(i32).dtype == opforge.int64 and int(mint.nansum(i32).asnumpy()) == I.sum()
    assert mint.count_nonzero(Tensor(A)).dtype == opforge.int64
    values, indices = mint.cummin(Tensor(I), 1)
    np.testing.assert_array_equal(values.asnumpy(), np.minimum.accumulate(I, 1))
    assert indices.dtype == opforge.int64 and mint.median(Tensor(A), 0)[1].dtype == opforge.int64
    values, inverse, counts = mint.unique(Tensor(I), return_inverse=True, return_counts=True)
    want = np.unique(I, return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(values.asnumpy(), want[0])
    np.testing.assert_array_equal(inverse.asnumpy(), want[1].reshape(I.shape))
    assert inverse.dtype == counts.dtype == opforge.int64
    runs = np.array([1, 1, 2, 2, 2, 3, 1, 1], np.int64)
    values, counts = mint.unique_consecutive(Tensor(runs), return_counts=True)
    assert values.asnumpy().tolist() == [1, 2, 3, 1] and counts.asnumpy().tolist() == [2, 3, 1, 2]
    weights = Tensor(np.array([0.5, 1.5, 2.0], np.float32))
    np.testing.assert_allclose(mint.bincount(Tensor(np.array([0, 2, 2])), weights).asnumpy(), [0.5, 0.0, 3.5])
    assert mint.bincount(Tensor(np.array([0, 2, 2]))).dtype == opforge.int64
    assert mint.searchsorted(Tensor(np.sort(A[0])), Tensor(B)).dtype == opforge.int64
    assert mint.searchsorted(Tensor(np.sort(A[0])), Tensor(B), out_int32=True).dtype == opforge.int32
    np.testing.assert_array_equal(mint.diag(Tensor(A), -1).asnumpy(), np.diag(A, -1))
    np.testing.assert_array_equal(mint.diag(Tensor(A), 5).asnumpy(), np.diag(A, 5))
    xs, ys = mint.meshgrid(Tensor(A[0]), Tensor(B[0, :3]), indexing="xy")
    np.testing.assert_array_equal(xs.asnumpy(), np.meshgrid(A[0], B[0, :3])[0])
    np.testing.assert_array_equal(
        mint.scatter(Tensor(A), 0, Tensor(I[:1] % 3), value=9.0).asnumpy()[I[0] % 3, range(4)], [9.0] * 4
    )
    assert mint.equal(Tensor(A), Tensor(A[:2])) is False and mint.allclose(Tensor(A), Tensor(B)) is False
    assert mint.norm(Tensor(C), "nuc").shape == (2,) and mint.linspace(0, 1, 1).asnumpy().tolist() == [0.0]
    grad = opforge.grad(lambda t: mint.sum(mint.clone(t) * mint.logaddexp(t, Tensor(B))))(Tensor(A))
    e = np.exp(A) / (np.exp(A) + np.exp(B))
    np.testing.assert_allclose(grad.asnumpy(), np.logaddexp(A, B) + A * e, rtol=1e-5, atol=1e-6)


def test_mint_new_functions_check_their_arguments():
    with pytest.raises(ValueError, match="For 'diff', the 'n' must be an int >= 0"):
        mint.diff(Tensor(A), -1)
    with pytest.raises(ValueError, match="For 'select', the 'index' must be an int in \\[-4, 4\\)"):
        mint.select(Tensor(A), 1, 4)
    with pytest.raises(ValueError, match="For 'mv', the 'input' must be 2-D and the 'vec' 1-D"):
        mint.mv(Tensor(A), Tensor(M))
    with pytest.raises(ValueError, match="For 'trace', the 'input' must be 2-D"):
        mint.trace(Tensor(C))
    with pytest.raises(ValueError, match="For 'histc', the 'bins' must be an int > 0"):
        mint.histc(Tensor(A), 0)
    with pytest.raises(ValueError, match="For 'histc', the 'min' \\(1\\) must not exceed the 'max' \\(0\\)"):
        mint.histc(Tensor(A), 4, 1, 0)
    with pytest.raises(ValueError, match="For 'bincount', the 'input' must be a 1-D integer Tensor"):
        mint.bincount(Tensor(A[0]))
    with pytest.raises(ValueError, match="For 'unique', a 'dim' is not supported"):
        mint.unique(Tensor(I), dim=0)
    with pytest.raises(ValueError, match="For 'scatter', give exactly one of 'src' and 'value'"):
        mint.scatter(Tensor(A), 0, Tensor(I), Tensor(B), value=1.0)
    with pytest.raises(ValueError, match="For 'scatter', the 'reduce' must be None or 'add'"):
        mint.scatter(Tensor(A), 0, Tensor(I % 3), Tensor(B), reduce="multiply")
    with pytest.raises(ValueError, match="For 'norm', the 'p' must be a number, 'fro' or 'nuc'"):
        mint.norm(Tensor(A), "inf")
    with pytest.raises(ValueError, match="For 'std', the 'correction' must be a number >= 0"):
        mint.std(Tensor(A), correction=-1)
    with pytest.raises(ValueError, match="For 'multinomial', without replacement the 'num_samples' \\(5\\)"):
        mint.multinomial(Tensor(P), 5)
    with pytest.raises(ValueError, match="For 'meshgrid', the 'indexing' must be 'ij' or 'xy'"):
        mint.meshgrid(Tensor(A[0]), indexing="ji")
    with pytest.raises(ValueError, match="For 'index_add', the 'index' must be 1-D"):
        mint.index_add(Tensor(A), 0, Tensor(I), Tensor(B))
    with pytest.raises(TypeError, match="For 'equal', the 'other' must be a Tensor"):
        mint.equal(Tensor(A), A)
    with pytest.raises(ValueError, match="For 'normal', a 'size' is needed"):
        mint.normal(0.0, 1.0)
    with pytest.raises(ValueError, match="'generator' is not supported"):
        mint.multinomial(Tensor(P), 1, generator=object())
