"""Run under ``mpiexec -n 2``: nn.SyncBatchNorm on rows of one batch split unevenly over the ranks (3 and 5)
normalises with the whole batch's statistics; its output, the gradient of the ranks' summed loss with respect
to each rank's input and gamma, and the moving statistics match NumPy's on the whole batch. With
``process_groups=[[0], [1]]`` each rank normalises alone. Prints "SYNCBN-OK rank r" or exits 1."""

import sys

import numpy as np

import opforge
from opforge import Tensor, nn
from opforge.communication import get_group_size, get_rank, init

init()
rank, size = get_rank(), get_group_size()
assert size == 2, size
rng = np.random.default_rng(0)
x = rng.standard_normal((8, 3, 2, 2)).astype(np.float32) * 2.0 + 1.0
g = rng.standard_normal((8, 3, 2, 2)).astype(np.float32)  # the loss's weights: sum(y * g) over all ranks
gamma = np.array([1.5, -0.5, 2.0], np.float32)
rows = slice(0, 3) if rank == 0 else slice(3, 8)
eps, momentum = 1e-5, 0.8


def reference(xs, gs):
    mean = xs.mean((0, 2, 3), keepdims=True)
    var = xs.var((0, 2, 3), keepdims=True)
    xhat = (xs - mean) / np.sqrt(var + eps)
    y = xhat * gamma[None, :, None, None]
    dxhat = gs * gamma[None, :, None, None]
    dx = (
        dxhat - dxhat.mean((0, 2, 3), keepdims=True) - xhat * (dxhat * xhat).mean((0, 2, 3), keepdims=True)
    ) / np.sqrt(var + eps)
    n = xs.size // 3
    moving_mean = (1 - momentum) * mean.ravel()
    moving_var = momentum + (1 - momentum) * var.ravel() * n / (n - 1)
    return y, dx, xhat, moving_mean, moving_var


def weighted_sum(cell, weights):
    return lambda v: (cell(v) * weights).sum()


def check(name, got, want, tol=2e-5):
    err = float(np.max(np.abs(np.asarray(got) - want)))
    if not err <= tol * max(1.0, float(np.max(np.abs(want)))):
        print(f"rank {rank}: {name} differs by {err}", flush=True)
        sys.exit(1)


for groups, xs, gs in ((None, x, g), ([[0], [1]], x[rows], g[rows])):
    bn = nn.SyncBatchNorm(3, eps=eps, momentum=momentum, gamma_init=Tensor(gamma), process_groups=groups)
    bn.set_train()
    y, dx, xhat, moving_mean, moving_var = reference(xs, gs)
    local_x, local_g = Tensor(x[rows]), Tensor(g[rows])
    out = bn(local_x)
    check("output", out.asnumpy(), y[rows] if groups is None else y)
    check("moving_mean", bn.moving_mean.asnumpy(), moving_mean)
    check("moving_variance", bn.moving_variance.asnumpy(), moving_var)
    grad_x, grad_gamma = opforge.grad(weighted_sum(bn, local_g), grad_position=0, weights=[bn.gamma])(local_x)
    check("grad x", grad_x.asnumpy(), dx[rows] if groups is None else dx)
    local_xhat = xhat[rows] if groups is None else xhat
    check("grad gamma", grad_gamma[0].asnumpy(), (local_g.asnumpy() * local_xhat).sum((0, 2, 3)))
print(f"SYNCBN-OK rank {rank}", flush=True)
