"""MindSpore's ``common.initializer``: ``initializer`` and the Initializer classes, and the private helpers
model-zoo initializers import from it (``_assignment``, ``_calculate_fan_in_and_fan_out``,
``_calculate_correct_fan``, ``_calculate_gain``)."""

from opforge.nn.init import *  # noqa: F403
from opforge.nn.init import (  # noqa: F401
    __all__,  # noqa: F401
    _assignment,
    _calculate_correct_fan,
    _calculate_fan_in_and_fan_out,
    _calculate_gain,
)
