"""MindSpore loss operator classes that opforge builds from other primitives, with no kernel of their own:
``SigmoidCrossEntropyWithLogits`` (the BCEWithLogitsLoss primitive with unit weights). They are constructed and
called as MindSpore's (``ops.SigmoidCrossEntropyWithLogits()(logits, label)``)."""

from __future__ import annotations

from opforge.ops import functional_loss as _FL
from opforge.primitives import array_ops, nn_ops

__all__ = ["SigmoidCrossEntropyWithLogits"]

_ones_like = array_ops.OnesLike()
_bce_with_logits = nn_ops.BCEWithLogitsLoss("none")


class SigmoidCrossEntropyWithLogits:
    r"""MindSpore's ``ops.SigmoidCrossEntropyWithLogits()(logits, label)``: the elementwise binary cross entropy of
    ``sigmoid(logits)`` and ``label`` (one shape and float dtype; no reduction):

    .. math::
        p_{ij} = \sigma(X_{ij}), \qquad loss_{ij} = -[Y_{ij} \log p_{ij} + (1 - Y_{ij}) \log(1 - p_{ij})]

    computed stably as :math:`(1 - Y) X + \mathrm{softplus}(-X)` by the BCEWithLogitsLoss primitive (with unit
    weights), which differentiates with respect to both inputs. float16, float32, float64.
    """

    name = "SigmoidCrossEntropyWithLogits"

    def __call__(self, logits, label):
        _FL._pair_inputs(self.name, ("logits", "label"), logits, label, same_shape=True)
        ones = _ones_like(logits)
        return _bce_with_logits(logits, label, ones, ones)

    def __repr__(self) -> str:
        return "Prim[SigmoidCrossEntropyWithLogits]"
