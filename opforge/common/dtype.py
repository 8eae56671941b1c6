"""MindSpore's ``common.dtype`` (imported as ``mstype``): opforge's dtypes."""

from opforge.dtype import *  # noqa: F403
from opforge.dtype import __all__  # noqa: F401
