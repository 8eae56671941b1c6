"""MindSpore's ``ops.composite`` (imported as ``C``): operations built from primitives."""

from opforge.bprop.grad_operation import GradOperation, grad, stop_gradient, value_and_grad

__all__ = ["GradOperation", "grad", "value_and_grad", "stop_gradient"]
