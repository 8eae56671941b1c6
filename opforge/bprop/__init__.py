"""Reverse-mode autodiff: the bprop registry, the tape and GradOperation.

The bprop definitions themselves live in ``grad_nn_ops``, ``grad_math_ops`` and
``grad_array_ops``, mirroring the primitive modules. A bprop may ask ``needs_input_grad(i)``
whether the gradient of its input ``i`` is used, and skip it (returning None) when it is not, and
``output_grad_reached(i)`` whether output ``i`` got a gradient (not zeros made by the pass).
"""

from opforge.bprop.forward import Jvp, Vjp, hvp, jacfwd, jacrev, jvp, linearize, vjp
from opforge.bprop.grad_operation import GradOperation, grad, stop_gradient, value_and_grad
from opforge.bprop.registry import Registry, bprop_getters, get_bprop
from opforge.bprop.tape import needs_input_grad, output_grad_reached

__all__ = [
    "bprop_getters",
    "get_bprop",
    "Registry",
    "GradOperation",
    "grad",
    "value_and_grad",
    "stop_gradient",
    "needs_input_grad",
    "output_grad_reached",
    "jvp",
    "vjp",
    "linearize",
    "jacfwd",
    "jacrev",
    "hvp",
    "Jvp",
    "Vjp",
]
