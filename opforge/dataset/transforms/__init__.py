"""``opforge.dataset.transforms``: the general transforms of MindSpore's ``dataset.transforms`` (on NumPy
arrays, for ``Dataset.map``): ``Compose``, ``TypeCast``, ``OneHot``, the data transforms of data_ops.py
(``Concatenate``, ``Duplicate``, ``Fill``, ``Mask``, ``PadEnd``, ``Slice``, ``RandomChoice``, ``RandomApply``);
``py_transforms`` holds MindSpore 1.x's Python transforms (``Compose``, ``OneHotOp``, ``RandomApply``,
``RandomChoice``, ``RandomOrder``);
``not_random`` marks a Python function deterministic (a cached ``map`` runs only those:
``opforge/dataset/cache_client.py``)."""

from __future__ import annotations

import numpy as np

from opforge import dtype as mstype
from opforge.dataset.transforms.data_ops import (
    Concatenate,
    Duplicate,
    Fill,
    Mask,
    PadEnd,
    RandomApply,
    RandomChoice,
    Relational,
    Slice,
)

__all__ = [
    "Compose", "TypeCast", "OneHot", "not_random", "Concatenate", "Duplicate", "Fill", "Mask", "Relational",
    "PadEnd", "Slice", "RandomChoice", "RandomApply",
]  # fmt: skip


def not_random(function):
    """MindSpore's ``not_random``: marks ``function`` deterministic (``function.random = False``), so that a
    cached ``map`` may run it; returns it (a decorator)."""
    function.random = False
    return function


class Compose:
    """The transforms in order, as one."""

    def __init__(self, transforms):
        self.transforms = list(transforms)

    def __call__(self, *values):
        for t in self.transforms:
            out = t(*values)
            values = out if isinstance(out, tuple) else (out,)
        return values if len(values) > 1 else values[0]


class TypeCast:
    """The array as ``data_type`` (an opforge or NumPy dtype, or its name)."""

    def __init__(self, data_type):
        self.np_dtype = mstype.to_dtype(data_type).np_dtype

    def __call__(self, x):
        return np.asarray(x).astype(self.np_dtype)


class OneHot:
    """Integer labels as one-hot rows of ``num_classes``, in the labels' integer dtype as MindSpore's (float32 with
    label smoothing)."""

    def __init__(self, num_classes: int, smoothing_rate: float = 0.0):
        self.num_classes, self.smoothing_rate = int(num_classes), float(smoothing_rate)

    def __call__(self, label):
        label = np.asarray(label)
        dtype = label.dtype if label.dtype.kind in "iu" and not self.smoothing_rate else np.float32
        out = np.eye(self.num_classes, dtype=dtype)[label]
        if self.smoothing_rate:
            out = out * (1 - self.smoothing_rate) + self.smoothing_rate / self.num_classes
        return out


# MindSpore's package imports its module ``transforms`` (the import sets the attribute), so
# ``dataset.transforms.transforms.TypeCast`` resolves without an import of its own; so too ``c_transforms`` and
# ``py_transforms`` (the zoo's UniSiam writes ``transforms.py_transforms.RandomApply``).
from opforge.dataset.transforms import c_transforms, py_transforms  # noqa: E402, F401
from opforge.dataset.transforms import transforms as _transforms_module  # noqa: E402, F401
