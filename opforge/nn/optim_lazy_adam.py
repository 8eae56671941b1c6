"""``nn.LazyAdam`` (MindSpore's; deprecated there since 2.0 in favour of ``nn.Adam``)."""

from __future__ import annotations

from opforge.nn.optim import Adam, _check_bool, _check_moments

__all__ = ["LazyAdam"]


class LazyAdam(Adam):
    r"""MindSpore's ``nn.LazyAdam(params, learning_rate=1e-3, beta1=0.9, beta2=0.999, eps=1e-8, use_locking=False,
    use_nesterov=False, weight_decay=0.0, loss_scale=1.0)``. With :math:`t` the step:

    .. math::
        m \leftarrow \beta_1 m + (1 - \beta_1) g, \quad v \leftarrow \beta_2 v + (1 - \beta_2) g^2, \quad
        w \leftarrow w - lr \frac{\sqrt{1 - \beta_2^t}}{1 - \beta_1^t} \frac{m}{\sqrt{v} + \epsilon}

    MindSpore applies the lazy (row-wise) update only to sparse gradients (RowTensor, from SparseGatherV2): the
    rows of ``w``, ``m`` and ``v`` present in the gradient are updated, the others left as they are. A dense
    gradient runs the Adam primitive on the whole parameter, exactly ``nn.Adam``'s update. opforge has no sparse
    gradients (every gradient, an embedding table's included, is a dense Tensor, zero in the rows not looked up),
    so ``LazyAdam`` always takes MindSpore's dense path: it is ``nn.Adam`` with these arguments (the rows whose
    gradient is zero still see their moments decay and move, as with MindSpore's dense gradients). States:
    ``moment1.*``, ``moment2.*``, ``beta1_power``, ``beta2_power``. As MindSpore's, ``beta1``, ``beta2`` and
    ``eps`` must be floats (TypeError), the betas in (0, 1) and ``eps`` > 0 (ValueError), ``use_locking`` and
    ``use_nesterov`` bools."""

    def __init__(
        self,
        params,
        learning_rate=1e-3,
        beta1=0.9,
        beta2=0.999,
        eps=1e-8,
        use_locking=False,
        use_nesterov=False,
        weight_decay=0.0,
        loss_scale=1.0,
    ):
        name = type(self).__name__
        for arg, value in (("beta1", beta1), ("beta2", beta2), ("eps", eps)):
            if not isinstance(value, float):
                raise TypeError(f"For '{name}', the '{arg}' must be a float, but got {type(value).__name__}.")
        _check_moments(name, beta1, beta2, eps)
        _check_bool(name, "use_locking", use_locking)
        _check_bool(name, "use_nesterov", use_nesterov)
        super().__init__(params, learning_rate, beta1, beta2, eps, use_locking, use_nesterov, weight_decay, loss_scale)
        self.use_locking = use_locking
