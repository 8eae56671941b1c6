"""MindSpore's ``common.initializer``: ``initializer`` and the Initializer classes."""

from opforge.nn.init import *  # noqa: F403
from opforge.nn.init import __all__  # noqa: F401
