"""Primitives: the operator base classes, signatures, the validator and the operators."""

from opforge.dispatch import signature
from opforge.primitives.primitive import (
    Primitive,
    PrimitiveWithCheck,
    PrimitiveWithInfer,
    prim_attr_register,
    primitive_classes,
)
from opforge.primitives.validator import Rel, Validator, validator

__all__ = [
    "Primitive",
    "PrimitiveWithInfer",
    "PrimitiveWithCheck",
    "prim_attr_register",
    "primitive_classes",
    "signature",
    "Rel",
    "Validator",
    "validator",
]
