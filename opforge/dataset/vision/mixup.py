"""MindSpore's ``vision.MixUpBatch(alpha=1.0)``: MixUp of a batch of images and their one-hot labels (the zoo's
ViT ImageNet pipeline), in a ``map`` after ``batch``."""

from __future__ import annotations

import numbers

import numpy as np

from opforge.dataset.vision.random_source import transform_rng as _rng

__all__ = ["MixUpBatch"]

_MAX_FLOAT32_INT = 16777216  # MindSpore's bound of a positive float32 argument


class MixUpBatch:
    """MindSpore's ``MixUpBatch(alpha=1.0)`` on a batch ``(images, labels)``: one weight ``lam`` ~ Beta(alpha,
    alpha) for the batch (drawn as x1 / (x1 + x2) of two Gamma(alpha, 1) draws, as MindSpore) and a random
    permutation ``perm`` of the batch, then ``images[i] = lam * images[i] + (1 - lam) * images[perm[i]]`` (in the
    images' dtype; integer images rounded and saturated, as OpenCV's) and ``labels[i] = lam * labels[i] + (1 - lam)
    * labels[perm[i]]`` (float32). The images are a batch of HWC or CHW images (N, H, W, C) / (N, C, H, W) with 1
    or 3 channels; the labels one-hot integers, (N, C) or (N, L, C). Draws come from the dataset seed
    (``ds.config.set_seed``) when it is set."""

    def __init__(self, alpha=1.0):
        if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real):
            raise TypeError(f"Argument alpha with value {alpha!r} is not of type [<class 'int'>, <class 'float'>].")
        if not 0 < alpha <= _MAX_FLOAT32_INT:
            raise ValueError(f"Input alpha is not within the required interval of (0, {_MAX_FLOAT32_INT}].")
        self.alpha = float(alpha)

    def __call__(self, *columns):
        if len(columns) < 2:
            raise RuntimeError("MixUpBatch: input lack of images or labels")
        images, labels = np.asarray(columns[0]), np.asarray(columns[1])
        if images.ndim != 4 or labels.ndim < 1 or images.shape[0] != labels.shape[0]:
            raise RuntimeError(
                "MixUpBatch: please make sure images are HWC or CHW and batched before calling MixUpBatch."
            )
        if labels.dtype.kind not in "iu":
            raise RuntimeError("MixUpBatch: wrong labels type. The second column (labels) must only include int types.")
        if labels.ndim not in (2, 3):
            raise RuntimeError(
                "MixUpBatch: wrong labels shape. The second column (labels) must have a shape of NC or NLC where N "
                "is the batch size, L is the number of labels in each row, and C is the number of classes. labels "
                "must be in one-hot format and in a batch."
            )
        if images.shape[1] not in (1, 3) and images.shape[3] not in (1, 3):
            raise RuntimeError("MixUpBatch: images must be in the shape of HWC or CHW.")
        rng = _rng()
        x1, x2 = np.float32(rng.gamma(self.alpha)), np.float32(rng.gamma(self.alpha))
        lam = np.float32(x1 / (x1 + x2))
        perm = rng.permutation(len(images))
        rest = np.float32(1) - lam
        mixed_labels = lam * labels.astype(np.float32) + rest * labels[perm].astype(np.float32)
        if images.dtype.kind == "f":
            mixed = (images * images.dtype.type(lam) + images[perm] * images.dtype.type(rest)).astype(images.dtype)
        else:
            exact = images.astype(np.float64) * float(lam) + images[perm].astype(np.float64) * float(rest)
            info = np.iinfo(images.dtype)
            mixed = np.clip(np.rint(exact), info.min, info.max).astype(images.dtype)
        return mixed, mixed_labels.astype(np.float32)
