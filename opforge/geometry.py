"""Shape geometry shared by the operators' inference (``opforge/primitives``) and the kernels' launch
glue (``opforge/kernels``): how StridedSlice's masks resolve to a walk over the input, and a window's
output size and padding (convolution and pooling). It sits below both, so neither imports the other
for it.

Output sizes of a window (per spatial dim, input ``n``, kernel ``k``, stride ``s``, dilation ``d``):

* ``valid``: ``ceil((n - d * (k - 1)) / s)``, no padding;
* ``same``: ``ceil(n / s)``, padded by ``max(0, (out - 1) * s + d * (k - 1) + 1 - n)`` split as
  ``before = total // 2`` and ``after = total - before``;
* ``pad``: ``floor((n + before + after - d * (k - 1) - 1) / s) + 1`` with the explicit ``(before, after)``.
"""

from __future__ import annotations

from opforge.errors import IndexOutOfRangeError
from opforge.tensor import UNKNOWN_DIM

__all__ = ["strided_slice_walk", "conv_output_and_pads"]


def strided_slice_walk(prim_name, x_shape, begin, end, strides, masks) -> tuple:
    """StridedSlice's masks resolved (TensorFlow's rules): ``(walk, out_shape)`` where ``walk`` holds one
    ``(start, step, length)`` per dim of ``x`` (a shrunk dim: length 1) and ``out_shape`` is the result's
    (new axes added, shrunk dims removed). The C++ kernel (csrc/kernels/cpu/array.cc) resolves the same."""
    begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_mask = masks
    n, nd = len(begin), len(x_shape)
    if len(end) != n or len(strides) != n:
        raise ValueError(
            f"For '{prim_name}', the 'begin', 'end' and 'strides' must have one length, but got {len(begin)}, "
            f"{len(end)} and {len(strides)}."
        )
    if bin(ellipsis_mask).count("1") > 1:
        raise ValueError(f"For '{prim_name}', the 'ellipsis_mask' may set at most one bit, but got {ellipsis_mask}.")
    specified = sum(1 for i in range(n) if not (new_axis_mask >> i) & 1 and not (ellipsis_mask >> i) & 1)
    walk, out, dim = [], [], 0

    def full(d):
        walk.append((0, 1, x_shape[d]))
        out.append(x_shape[d])

    for i in range(n):
        if (ellipsis_mask >> i) & 1:
            for _ in range(nd - specified):  # the dims the ellipsis stands for
                full(dim)
                dim += 1
            continue
        if (new_axis_mask >> i) & 1:
            out.append(1)
            continue
        if dim >= nd:
            raise ValueError(
                f"For '{prim_name}', the slice has more entries ({specified}) than 'x' {list(x_shape)} has dims."
            )
        size, step = x_shape[dim], strides[i]
        if step == 0:
            raise ValueError(f"For '{prim_name}', the 'strides' must not hold 0, but got {list(strides)}.")
        if size < 0:  # an unknown dim: a shrunk one goes, any other slice of it has an unknown length
            length = 1 if (shrink_mask >> i) & 1 else UNKNOWN_DIM
            b, e = begin[i], end[i]
            if length < 0 and not (begin_mask >> i) & 1 and not (end_mask >> i) & 1 and (b < 0) == (e < 0):
                if (e - b) * step <= 0:  # from the same end, the slice runs the wrong way: empty for any size
                    length = 0
            walk.append((b, step, length))
            if not (shrink_mask >> i) & 1:
                out.append(length)
            dim += 1
            continue
        if (shrink_mask >> i) & 1:
            b = begin[i] + size if begin[i] < 0 else begin[i]
            if not 0 <= b < size:
                raise IndexOutOfRangeError(
                    f"For '{prim_name}', the index {begin[i]} is out of range for dim {dim} of 'x' {list(x_shape)} "
                    f"(size {size})."
                )
            walk.append((b, 1, 1))
            dim += 1
            continue
        if step > 0:
            lo, hi = 0, size
            b = 0 if (begin_mask >> i) & 1 else min(max(begin[i] + size if begin[i] < 0 else begin[i], lo), hi)
            e = size if (end_mask >> i) & 1 else min(max(end[i] + size if end[i] < 0 else end[i], lo), hi)
            length = max(0, -(-(e - b) // step))
        else:
            lo, hi = -1, size - 1
            b = size - 1 if (begin_mask >> i) & 1 else min(max(begin[i] + size if begin[i] < 0 else begin[i], lo), hi)
            e = -1 if (end_mask >> i) & 1 else min(max(end[i] + size if end[i] < 0 else end[i], lo), hi)
            length = max(0, -(-(b - e) // -step))
        walk.append((b, step, length))
        out.append(length)
        dim += 1
    while dim < nd:
        full(dim)
        dim += 1
    return walk, out


def conv_output_and_pads(prim_name, size, kernel, stride, dilation, pad_mode, pad=(0, 0)) -> tuple:
    """``(out, pad_before, pad_after)`` of one spatial dim (see the module docstring);
    ``pad_mode`` is any case of valid/same/pad, ``pad`` is (before, after) for "pad"."""
    mode = pad_mode.lower()
    span = dilation * (kernel - 1) + 1
    if size < 0:  # an unknown input dim: an unknown output dim (the padding of "same" too)
        before, after = pad if mode == "pad" else (UNKNOWN_DIM, UNKNOWN_DIM) if mode == "same" else (0, 0)
        return UNKNOWN_DIM, before, after
    if mode == "valid":
        out, before, after = -(-(size - span + 1) // stride), 0, 0
    elif mode == "same":
        out = -(-size // stride)
        total = max(0, (out - 1) * stride + span - size)
        before, after = total // 2, total - total // 2
    else:
        before, after = pad
        out = (size + before + after - span) // stride + 1
    if out <= 0 and size > 0:
        raise ValueError(
            f"For '{prim_name}', the window (kernel {kernel}, dilation {dilation}, padding {before}+{after}) is "
            f"larger than the input dim {size}: the output would have size {out}, but it must be positive."
        )
    return max(out, 0), before, after
