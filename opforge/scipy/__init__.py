"""``mindspore.scipy``: SciPy's functions over opforge's operators (``linalg``)."""

from opforge.scipy import linalg

__all__ = ["linalg"]
