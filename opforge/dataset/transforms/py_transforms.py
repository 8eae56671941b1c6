"""MindSpore 1.x's ``dataset.transforms.py_transforms``: the general Python transforms, ``Compose``,
``OneHotOp``, ``RandomApply``, ``RandomChoice``, ``RandomOrder``, their base ``PyTensorOperation`` and
``not_random``. The zoo's research programs compose ``vision.py_transforms`` (Pillow) transforms with them
(ResidualAttentionNet, PaDiM, vanillanet, snn_mlp, UniSiam, ...).

As MindSpore's, ``Compose`` returns a tuple (of one array for one image: PaDiM writes
``self.transform(img)[0]``), and the random choices take one image. Random draws come from opforge's transform
generator, the dataset seed (``dataset.config.set_seed``) when it is set."""

from __future__ import annotations

import numbers

import numpy as np

from opforge.dataset.vision.random_source import transform_rng

__all__ = ["not_random", "PyTensorOperation", "Compose", "OneHotOp", "RandomApply", "RandomChoice", "RandomOrder"]


def not_random(function):
    """MindSpore's ``not_random``: marks ``function`` deterministic (``function.random = False``), so that a
    cached ``map`` may run it; returns it."""
    function.random = False
    return function


class PyTensorOperation:
    """The base of MindSpore's Python transforms (the zoo's snn_mlp derives its ``ToNumpy`` from it). A
    subclass implements ``__call__``; its class attribute ``random`` says whether it draws random numbers (a
    cached ``map`` refuses random operations)."""

    def __call__(self, *args):
        raise NotImplementedError(f"{type(self).__name__} must implement __call__.")


def _transform_list(where: str, transforms, allow_empty: bool = False) -> list:
    if not isinstance(transforms, list):
        raise TypeError(f"For '{where}', the 'transforms' must be a list, but got {type(transforms).__name__}.")
    if not transforms and not allow_empty:
        raise ValueError("transforms list is empty.")
    for i, transform in enumerate(transforms):
        if not callable(transform):
            raise ValueError(f"transforms[{i}] is not callable.")
    return transforms


class Compose(PyTensorOperation):
    """MindSpore's ``Compose(transforms)``: the transforms (a non-empty list of callables) applied in order,
    each output (a tuple is several values) the next one's inputs; returns the last output as a tuple.
    Deterministic (``random`` False) when every transform is marked so."""

    def __init__(self, transforms):
        self.transforms = _transform_list("Compose", transforms)
        if all(getattr(t, "random", None) is False for t in self.transforms):
            self.random = False

    def __call__(self, *args):
        if not args:
            raise TypeError(
                "Compose was called without an image. Fix invocation (avoid it being invoked as Compose([...])())."
            )
        for transform in self.transforms:
            out = transform(*args)
            args = out if isinstance(out, tuple) else (out,)
        return args


class OneHotOp(PyTensorOperation):
    """MindSpore's ``OneHotOp(num_classes, smoothing_rate=0.0)``: integer labels (an int array of any shape)
    as one-hot rows with label smoothing, ``(1 - smoothing_rate) * one_hot + smoothing_rate / num_classes``
    (float64, a trailing dim of ``num_classes``). A label >= ``num_classes`` or a non-integer array is a
    ValueError."""

    random = False

    def __init__(self, num_classes, smoothing_rate=0.0):
        if isinstance(smoothing_rate, bool) or not isinstance(smoothing_rate, numbers.Real):
            raise TypeError(
                f"For 'OneHotOp', the 'smoothing_rate' must be a float, but got {type(smoothing_rate).__name__}."
            )
        if isinstance(num_classes, bool) or not isinstance(num_classes, int):
            raise TypeError(f"For 'OneHotOp', the 'num_classes' must be an int, but got {type(num_classes).__name__}.")
        if num_classes <= 0:
            raise ValueError(f"For 'OneHotOp', the 'num_classes' must be positive, but got {num_classes}.")
        if not 0 <= smoothing_rate <= 1:
            raise ValueError(f"For 'OneHotOp', the 'smoothing_rate' must be in [0, 1], but got {smoothing_rate}.")
        self.num_classes, self.smoothing_rate = num_classes, float(smoothing_rate)

    def __call__(self, label):
        if not isinstance(label, np.ndarray):
            raise ValueError("the input is invalid, it should be numpy.ndarray.")
        if label.dtype.kind not in "iu":
            raise ValueError(f"the input numpy type should be int, but the input is: {label.dtype}")
        if label.size and int(label.max()) >= self.num_classes:
            raise ValueError(
                f"the num_classes:{self.num_classes} is smaller than the category number:{int(label.max())}"
            )
        one_hot = np.eye(self.num_classes, dtype=int)[label]
        return (1 - self.smoothing_rate) * one_hot + self.smoothing_rate / self.num_classes


class RandomApply(PyTensorOperation):
    """MindSpore's ``RandomApply(transforms, prob=0.5)``: with probability ``prob`` the ``transforms`` (a
    list) applied to the image in order, else the image unchanged."""

    random = True

    def __init__(self, transforms, prob=0.5):
        self.transforms = _transform_list("RandomApply", transforms)
        if isinstance(prob, bool) or not isinstance(prob, numbers.Real):
            raise TypeError(f"For 'RandomApply', the 'prob' must be a float, but got {type(prob).__name__}.")
        if not 0 <= prob <= 1:
            raise ValueError(f"For 'RandomApply', the 'prob' must be in [0, 1], but got {prob}.")
        self.prob = float(prob)

    def __call__(self, img):
        if self.prob < transform_rng().random():
            return img
        for transform in self.transforms:
            img = transform(img)
        return img


class RandomChoice(PyTensorOperation):
    """MindSpore's ``RandomChoice(transforms)``: one of ``transforms`` (a list), chosen uniformly, applied to
    the image."""

    random = True

    def __init__(self, transforms):
        self.transforms = _transform_list("RandomChoice", transforms)

    def __call__(self, img):
        return self.transforms[int(transform_rng().integers(0, len(self.transforms)))](img)


class RandomOrder(PyTensorOperation):
    """MindSpore's ``RandomOrder(transforms)``: all of ``transforms`` (a list) applied to the image in a
    uniformly random order."""

    random = True

    def __init__(self, transforms):
        self.transforms = _transform_list("RandomOrder", transforms)

    def __call__(self, img):
        for index in transform_rng().permutation(len(self.transforms)):
            img = self.transforms[int(index)](img)
        return img
