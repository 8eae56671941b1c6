"""MindSpore's ``nn.SyncBatchNorm``: batch normalisation whose batch statistics are those of the whole
batch spread over the ranks of a group (data parallelism), the per-rank sums added by AllReduce."""

from __future__ import annotations

from opforge import communication, ops
from opforge import dtype as mstype
from opforge.bprop import stop_gradient
from opforge.communication import GlobalComm
from opforge.nn.normalization import _BatchNorm

__all__ = ["SyncBatchNorm"]

# The groups made for SyncBatchNorm layers, by their world ranks (one per rank list and communication
# session: the layers of a network share them).
_groups: dict = {}


def _sync_group(process_groups):
    """(group name, its size) of the ranks this process normalises with; (None, 1) without communication."""
    if not GlobalComm.INITED:
        return None, 1
    world = communication.get_group_size()
    if process_groups is None:
        return GlobalComm.WORLD_COMM_GROUP, world
    if not isinstance(process_groups, list) or not all(isinstance(g, list) for g in process_groups):
        raise TypeError(
            f"For 'SyncBatchNorm', the 'process_groups' must be a list of lists, but got {process_groups!r}."
        )
    ranks = [r for g in process_groups for r in g]
    if not all(isinstance(r, int) and not isinstance(r, bool) and 0 <= r < world for r in ranks):
        raise ValueError(
            f"For 'SyncBatchNorm', every rank in 'process_groups' must be an int in [0, {world}), but got "
            f"{process_groups}."
        )
    if len(set(ranks)) != len(ranks):
        raise ValueError(f"For 'SyncBatchNorm', the 'process_groups' must not repeat a rank, but got {process_groups}.")
    me = communication.get_rank()
    for i, group in enumerate(process_groups):
        if me in group:
            if len(group) == 1:
                return None, 1
            key = (id(GlobalComm), tuple(group))
            name = _groups.get(key)
            if name is None or not _exists(name):
                name = f"sync_bn_group{i}_" + "_".join(map(str, group))
                if not _exists(name):
                    communication.create_group(name, group)
                _groups[key] = name
            return name, len(group)
    raise ValueError(
        f"For 'SyncBatchNorm', this process (rank {me}) is in no group of 'process_groups' {process_groups}."
    )


def _exists(name: str) -> bool:
    try:
        communication.get_group_size(name)
    except ValueError:
        return False
    return True


class SyncBatchNorm(_BatchNorm):
    r"""``SyncBatchNorm(num_features, eps=1e-5, momentum=0.9, affine=True, gamma_init='ones', beta_init='zeros',
    moving_mean_init='zeros', moving_var_init='ones', use_batch_statistics=None, process_groups=None,
    dtype=mstype.float32)``: batch normalisation of [N, C] or [N, C, H, W] inputs,

    .. math::
        y = \frac{x - \mathrm{E}[x]}{\sqrt{\mathrm{Var}[x] + \epsilon}} * \gamma + \beta,

    whose batch statistics in training are those of the rows of every rank of the group: each rank's
    per-channel sum and element count, then its sum of squared deviations from the group mean, are added
    over the group by AllReduce (so ranks may hold batches of different sizes, and the gradient flows to
    every rank's input through the AllReduce's bprop). ``process_groups`` None synchronises the whole
    world; a list of lists of world ranks splits it into groups synchronised separately (each rank in
    one). Without ``communication.init()`` the process is its own group. The moving statistics follow
    BatchNorm's rule, :math:`moving = momentum \cdot moving + (1 - momentum) \cdot observed`, with the
    group mean and the group's unbiased variance. In evaluation mode (or ``use_batch_statistics=False``)
    the moving statistics normalise, as BatchNorm2d's. float16, float32 (parameters of ``dtype``)."""

    _ranks = (2, 4)

    def __init__(
        self,
        num_features,
        eps=1e-5,
        momentum=0.9,
        affine=True,
        gamma_init="ones",
        beta_init="zeros",
        moving_mean_init="zeros",
        moving_var_init="ones",
        use_batch_statistics=None,
        process_groups=None,
        dtype=mstype.float32,
    ):
        super().__init__(
            num_features, eps, momentum, affine, gamma_init, beta_init, moving_mean_init, moving_var_init,
            use_batch_statistics, dtype=dtype,
        )  # fmt: skip
        self.process_groups = process_groups
        self.group, self.group_device_num = _sync_group(process_groups)
        if self.group is not None:
            self.all_reduce = ops.AllReduce(ops.ReduceOp.SUM, self.group)

    def construct(self, x):
        if x.ndim not in self._ranks or x.shape[1] != self.num_features:
            raise ValueError(
                f"For 'SyncBatchNorm', the input must have shape (N, {self.num_features}) or (N, "
                f"{self.num_features}, H, W), but got {list(x.shape)}."
            )
        use_batch = self.training if self.use_batch_statistics is None else self.use_batch_statistics
        if not use_batch or self.group is None:
            return super().construct(x)
        axes = (0,) if x.ndim == 2 else (0, 2, 3)
        shape = (1, -1) if x.ndim == 2 else (1, -1, 1, 1)
        local_count = x.size // self.num_features
        compute = mstype.float32 if x.dtype == mstype.float16 else x.dtype
        xc = ops.cast(x, compute)
        sums = self.all_reduce(ops.concat((ops.ReduceSum()(xc, axes), ops.fill(compute, (1,), float(local_count)))))
        count = sums[self.num_features]
        mean = sums[: self.num_features] / count
        centred = xc - ops.reshape(mean, shape)
        var = self.all_reduce(ops.ReduceSum()(centred * centred, axes)) / count
        y = centred * ops.reshape(ops.rsqrt(var + self.eps), shape)
        y = y * ops.reshape(ops.cast(self.gamma, compute), shape) + ops.reshape(ops.cast(self.beta, compute), shape)
        self._update_statistics(mean, var, count)
        return ops.cast(y, x.dtype)

    def _update_statistics(self, mean, var, count) -> None:
        dtype = self.moving_mean.dtype
        mean, var, count = stop_gradient(mean), stop_gradient(var), stop_gradient(count)
        unbiased = var * count / ops.maximum(count - 1.0, 1.0)
        m = self.momentum
        ops.Assign()(self.moving_mean, self.moving_mean * m + ops.cast(mean, dtype) * (1.0 - m))
        ops.Assign()(self.moving_variance, self.moving_variance * m + ops.cast(unbiased, dtype) * (1.0 - m))

    def extend_repr(self) -> str:
        return super().extend_repr() + f", process_groups={self.process_groups}"
