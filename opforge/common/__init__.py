"""MindSpore's ``common`` package: ``common.dtype``, ``common.initializer``, ``common.parameter``."""

from opforge.common import dtype, initializer, parameter
from opforge.common.parameter import Parameter, ParameterTuple

__all__ = ["dtype", "initializer", "parameter", "Parameter", "ParameterTuple"]
