"""MindSpore 1.x's form of ``ops.interpolate``: ``interpolate(x, roi=None, scales=None, sizes=None,
coordinate_transformation_mode="align_corners", mode="linear")`` (MindSpore 1.8 to 2.0.0-alpha), which the
model zoo's research programs (Segformer, CFDT, RAOD, TokenFusion, ghostnetv2, Focus-DETR, MODNet) call with
keywords: ``ops.interpolate(x, sizes=(h, w), mode="bilinear", coordinate_transformation_mode="half_pixel")``.

MindSpore 2.x replaced it by ``interpolate(input, size, scale_factor, mode, align_corners,
recompute_scale_factor)``, which ``opforge.ops.interpolate`` follows; the older keywords (``roi``, ``scales``,
``sizes``, ``coordinate_transformation_mode``) are its keyword-only arguments, and a call that passes one of
them runs here, with the older function's checks and arithmetic:

* ``mode`` "linear" (a 3-D input [N, C, W]) or "bilinear" (4-D [N, C, H, W]); any other mode is a ValueError,
  as in MindSpore 1.x (so is the 2.x default "nearest": the older default, "linear", must be passed);
* exactly one of ``sizes`` (a tuple of positive ints, one per spatial dim) and ``scales`` (a tuple of positive
  floats, one per dim of ``x``, the first two 1.0; an output dim is ``int(scale * size)``);
* ``coordinate_transformation_mode`` (default "align_corners"): the source coordinate of output ``d`` of a dim
  of ``n`` inputs and ``m`` outputs is ``d * (n - 1) / (m - 1)`` ("align_corners"; 0 when m = 1),
  ``(d + 0.5) * n / m - 0.5`` ("half_pixel", clamped at 0) or ``d * n / m`` ("asymmetric"): MindSpore's
  ``ResizeBilinearV2`` with ``align_corners`` / ``half_pixel_centers`` (opforge/ops/resize.py);
* ``roi`` is reserved for a "crop_and_resize" mode that MindSpore never implemented: it has no effect there,
  nor here.
"""

from __future__ import annotations

import numpy as np

from opforge.ops import resize as _resize
from opforge.tensor import Tensor

__all__ = ["OLD_KEYWORDS", "interpolate_v1"]

OLD_KEYWORDS = ("roi", "scales", "sizes", "coordinate_transformation_mode")
_COORDINATE_MODES = ("align_corners", "half_pixel", "asymmetric")
_RANKS = {"linear": 3, "bilinear": 4}


def _is_int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def interpolate_v1(x, roi, scales, sizes, coordinate_transformation_mode, mode) -> Tensor:
    """The 1.x ``interpolate`` (see the module's docstring); ``coordinate_transformation_mode`` None means its
    default, "align_corners"."""
    where = "For 'interpolate' (MindSpore 1.x's arguments roi, scales, sizes, coordinate_transformation_mode),"
    if not isinstance(x, Tensor):
        raise TypeError(f"{where} the input x must be a Tensor, but got {type(x).__name__}.")
    ctm = "align_corners" if coordinate_transformation_mode is None else coordinate_transformation_mode
    if not isinstance(ctm, str):
        raise TypeError(f"{where} the 'coordinate_transformation_mode' must be a str, but got {type(ctm).__name__}.")
    if ctm not in _COORDINATE_MODES:
        raise TypeError(f"{where} the 'coordinate_transformation_mode' must be in {list(_COORDINATE_MODES)}, "
                        f"but got {ctm!r}.")  # fmt: skip
    if not isinstance(mode, str):
        raise TypeError(f"{where} the 'mode' must be a str, but got {type(mode).__name__}.")
    if mode not in _RANKS:
        raise ValueError(f"{where} the 'mode' must be 'linear' or 'bilinear' (pass it: the older default is "
                         f"'linear'), but got {mode!r}.")  # fmt: skip
    shape = tuple(x.shape)
    if len(shape) != _RANKS[mode]:
        raise ValueError(f"{where} mode {mode!r} takes a {_RANKS[mode]}-D input, but got shape {list(shape)}.")
    if (sizes is None) == (scales is None):
        raise ValueError(f"{where} exactly one of 'sizes' and 'scales' must be given.")
    if sizes is not None:
        if not isinstance(sizes, tuple):
            raise TypeError(f"{where} the 'sizes' must be a tuple or None, but got {type(sizes).__name__}.")
        if len(sizes) != len(shape) - 2 or not all(_is_int(v) and v > 0 for v in sizes):
            raise ValueError(f"{where} the 'sizes' must be {len(shape) - 2} positive ints, but got {sizes}.")
        out = tuple(int(v) for v in sizes)
    else:
        if not isinstance(scales, tuple):
            raise TypeError(f"{where} the 'scales' must be a tuple or None, but got {type(scales).__name__}.")
        if not all(isinstance(v, float) for v in scales):
            raise TypeError(f"{where} the 'scales' must hold floats, but got {scales}.")
        if len(scales) != len(shape) or not all(v > 0 for v in scales):
            raise ValueError(f"{where} the 'scales' must be {len(shape)} positive floats, but got {scales}.")
        if scales[0] != 1.0 or scales[1] != 1.0:
            raise ValueError(f"{where} scales[0] and scales[1] must be 1.0, but got {scales}.")
        out = tuple(int(s * n) for s, n in zip(scales[2:], shape[2:]))
        if not all(v > 0 for v in out):
            raise ValueError(f"{where} the 'scales' {scales} make an empty output from shape {list(shape)}.")
    _resize.check_float_input("interpolate", "x", x, len(shape))
    return _resize.resize_linear("interpolate", x, out, ctm)
