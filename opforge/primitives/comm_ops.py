"""Collective communication operators, MindSpore's ``ops.AllReduce``, ``ops.AllGather``, ... (its
``mindspore.ops.operations.comm_ops``).

They are primitives like any other: inference (which reads the group's size, so it needs
``opforge.communication.init()`` first and a group that exists), op info, kernels registered by
KernelAttr on the CPU (MPI, ``opforge/kernels/cpu/comm.py``) and the GPU (NCCL,
``opforge/kernels/gpu/comm.py``), bprops (``opforge/bprop/grad_comm_ops.py``). Every rank of the
group must call the same collective with the same attrs, dtypes and shapes; ranks that do not all
raise a ``CommunicationError`` naming the operator and each rank's dtype and shape (docs/distributed.md).
"""

from __future__ import annotations

from opforge import dtype as mstype
from opforge.communication.management import GlobalComm, group_rank, group_size
from opforge.primitives._utils import _Operator
from opforge.primitives.primitive import prim_attr_register
from opforge.primitives.validator import Validator as validator

__all__ = ["ReduceOp", "AllReduce", "AllGather", "ReduceScatter", "Broadcast", "AlltoAll", "Send", "Receive"]


class ReduceOp:
    """How a reducing collective combines the ranks' values: ``SUM``, ``MAX``, ``MIN``, ``PROD``."""

    SUM = "sum"
    MAX = "max"
    MIN = "min"
    PROD = "prod"


_OPS = (ReduceOp.SUM, ReduceOp.MAX, ReduceOp.MIN, ReduceOp.PROD)
# Reductions: every MPI number type (MAX and MIN not for complex); float16 and bfloat16 reduce in float32.
REDUCE_DTYPES = mstype.int_type + mstype.uint_type + mstype.float_type + mstype.complex_type
# Data movement: every dtype (moved as bytes).
MOVE_DTYPES = mstype.all_types


class _Collective(_Operator):
    """A collective over ``group``: checks the attrs common to all of them."""

    side_effect = True  # every rank must take part in every call: two identical ones are two

    def _check_group(self, group) -> None:
        validator.check_value_type("group", group, [str], self.name)

    def _check_op(self, op) -> None:
        validator.check_value_type("op", op, [str], self.name)
        validator.check_string(op, list(_OPS), "op", self.name)

    def _size(self) -> int:
        return group_size(self.name, self.group)

    def _reduce_dtype(self, x) -> object:
        t = validator.check_tensor_dtype_valid("input_x", x, REDUCE_DTYPES, self.name)
        if t in mstype.complex_type and self.op in (ReduceOp.MAX, ReduceOp.MIN):
            raise TypeError(f"For '{self.name}', the op '{self.op}' does not order complex numbers, but got {t}.")
        return t


class AllReduce(_Collective):
    r"""``AllReduce(op=ReduceOp.SUM, group=GlobalComm.WORLD_COMM_GROUP)(input_x)``: every rank gets the
    elementwise reduction (sum, max, min or product) of ``input_x`` over the ranks of ``group``; same
    shape and dtype. dtypes (CPU: MPI, GPU: NCCL): int8-64, uint8-64, float16, bfloat16 (reduced in
    float32), float32, float64, complex64, complex128 (SUM and PROD only)."""

    @prim_attr_register
    def __init__(self, op=ReduceOp.SUM, group=GlobalComm.WORLD_COMM_GROUP):
        self._check_op(op)
        self._check_group(group)
        self.init_prim_io_names(inputs=["input_x"], outputs=["output"])

    def infer_shape(self, x_shape):
        self._size()
        return x_shape

    def infer_dtype(self, x_dtype):
        return self._reduce_dtype(x_dtype)


class AllGather(_Collective):
    r"""``AllGather(group=GlobalComm.WORLD_COMM_GROUP)(input_x)``: the ranks' ``input_x`` concatenated
    along dim 0 in rank order, on every rank: shape ``[n * x.shape[0], ...]`` for a group of n ranks
    (every rank's input of one shape, as MindSpore's). dtypes: every dtype (moved as bytes)."""

    @prim_attr_register
    def __init__(self, group=GlobalComm.WORLD_COMM_GROUP):
        self._check_group(group)
        self.init_prim_io_names(inputs=["input_x"], outputs=["output"])

    def infer_shape(self, x_shape):
        n = self._size()
        if _unknown_rank(x_shape):
            return list(x_shape)
        if len(x_shape) == 0:
            raise ValueError(f"For '{self.name}', the 'input_x' must have at least 1 dim, but got a 0-d tensor.")
        return [x_shape[0] * n if x_shape[0] >= 0 else x_shape[0], *x_shape[1:]]

    def infer_dtype(self, x_dtype):
        return validator.check_tensor_dtype_valid("input_x", x_dtype, MOVE_DTYPES, self.name)


class ReduceScatter(_Collective):
    r"""``ReduceScatter(op=ReduceOp.SUM, group=GlobalComm.WORLD_COMM_GROUP)(input_x)``: the elementwise
    reduction of ``input_x`` over the ranks, split along dim 0 into n equal blocks; rank i gets block i,
    shape ``[x.shape[0] // n, ...]`` (dim 0 must be a multiple of n). dtypes: those of AllReduce."""

    @prim_attr_register
    def __init__(self, op=ReduceOp.SUM, group=GlobalComm.WORLD_COMM_GROUP):
        self._check_op(op)
        self._check_group(group)
        self.init_prim_io_names(inputs=["input_x"], outputs=["output"])

    def infer_shape(self, x_shape):
        n = self._size()
        if _unknown_rank(x_shape) or (len(x_shape) > 0 and x_shape[0] < 0):
            return list(x_shape)
        if len(x_shape) == 0 or x_shape[0] % n != 0:
            raise ValueError(
                f"For '{self.name}', the first dim of 'input_x' must be a multiple of the group size {n}, "
                f"but got shape {list(x_shape)}."
            )
        return [x_shape[0] // n, *x_shape[1:]]

    def infer_dtype(self, x_dtype):
        return self._reduce_dtype(x_dtype)


class Broadcast(_Collective):
    r"""``Broadcast(root_rank, group=GlobalComm.WORLD_COMM_GROUP)(input_x)``: ``input_x`` is a tuple of
    Tensors; every rank gets the root's (``root_rank``, a rank of ``group``) as a tuple of new Tensors of
    the same shapes and dtypes. dtypes: every dtype, one per call (a tuple of one dtype)."""

    @prim_attr_register
    def __init__(self, root_rank, group=GlobalComm.WORLD_COMM_GROUP):
        validator.check_value_type("root_rank", root_rank, [int], self.name)
        validator.check_non_negative_int(root_rank, "root_rank", self.name)
        self._check_group(group)
        self.init_prim_io_names(inputs=["input_x"], outputs=["output"])

    def infer_shape(self, x_shape):
        n = self._size()
        if self.root_rank >= n:
            raise ValueError(f"For '{self.name}', the 'root_rank' must be in [0, {n}), but got {self.root_rank}.")
        if not isinstance(x_shape, tuple):
            raise TypeError(f"For '{self.name}', the 'input_x' must be a tuple of Tensors.")
        return x_shape

    def infer_dtype(self, x_dtype):
        if not isinstance(x_dtype, tuple):
            raise TypeError(f"For '{self.name}', the 'input_x' must be a tuple of Tensors.")
        for i, d in enumerate(x_dtype):
            validator.check_tensor_dtype_valid(f"input_x[{i}]", d, MOVE_DTYPES, self.name)
            if d is not x_dtype[0]:
                raise TypeError(
                    f"For '{self.name}', every Tensor of 'input_x' must have the dtype of 'input_x[0]' ({x_dtype[0]}), "
                    f"but 'input_x[{i}]' is {d}."
                )
        return x_dtype


class AlltoAll(_Collective):
    r"""``AlltoAll(split_count, split_dim, concat_dim, group=GlobalComm.WORLD_COMM_GROUP)(x)``: ``x`` is
    split along ``split_dim`` into ``split_count`` (the group size) equal blocks, block j sent to rank j;
    the blocks received are concatenated along ``concat_dim`` in rank order. Output shape: x's with
    ``split_dim`` divided and ``concat_dim`` multiplied by ``split_count``. dtypes: every dtype."""

    @prim_attr_register
    def __init__(self, split_count, split_dim, concat_dim, group=GlobalComm.WORLD_COMM_GROUP):
        validator.check_value_type("split_count", split_count, [int], self.name)
        validator.check_positive_int(split_count, "split_count", self.name)
        validator.check_value_type("split_dim", split_dim, [int], self.name)
        validator.check_value_type("concat_dim", concat_dim, [int], self.name)
        self._check_group(group)
        self.init_prim_io_names(inputs=["x"], outputs=["output"])

    def _dim(self, name, value, ndim):
        if not -ndim <= value < ndim:
            raise ValueError(f"For '{self.name}', the '{name}' must be in [{-ndim}, {ndim}), but got {value}.")
        return value % ndim

    def infer_shape(self, x_shape):
        n = self._size()
        if self.split_count != n:
            raise ValueError(
                f"For '{self.name}', the 'split_count' must be the group size {n}, but got {self.split_count}."
            )
        nd = len(x_shape)
        if _unknown_rank(x_shape):
            return list(x_shape)
        if nd == 0:
            raise ValueError(f"For '{self.name}', the 'x' must have at least 1 dim, but got a 0-d tensor.")
        s, c = self._dim("split_dim", self.split_dim, nd), self._dim("concat_dim", self.concat_dim, nd)
        if x_shape[s] < 0 or x_shape[c] < 0:  # an unknown dim (a placeholder): unknown in the output too
            out = list(x_shape)
            out[s] = out[s] // n if out[s] >= 0 else -1
            out[c] = out[c] * n if out[c] >= 0 else -1
            return out
        if x_shape[s] % n != 0:
            raise ValueError(
                f"For '{self.name}', the dim {s} ('split_dim') of 'x' must be a multiple of 'split_count' {n}, "
                f"but got shape {list(x_shape)}."
            )
        out = list(x_shape)
        out[s] //= n
        out[c] *= n
        return out

    def infer_dtype(self, x_dtype):
        return validator.check_tensor_dtype_valid("x", x_dtype, MOVE_DTYPES, self.name)


_MAX_TAG = 32767  # the largest tag every MPI must accept (MPI_TAG_UB is at least this)


def _check_tag(sr_tag, prim_name: str) -> None:
    validator.check_value_type("sr_tag", sr_tag, [int], prim_name)
    if not 0 <= sr_tag <= _MAX_TAG:
        raise ValueError(f"For '{prim_name}', the 'sr_tag' must be in [0, {_MAX_TAG}] (MPI's tags), but got {sr_tag}.")


class Send(_Collective):
    r"""``Send(sr_tag, dest_rank, group=GlobalComm.WORLD_COMM_GROUP)(input_x)``: sends ``input_x`` to
    the rank ``dest_rank`` of ``group``, which takes it with ``Receive(sr_tag, src_rank, shape, dtype)``
    (same ``sr_tag``). Returns a copy of ``input_x``. A rank may send to itself: the message waits for its
    own Receive (on the CPU). dtypes: every dtype."""

    @prim_attr_register
    def __init__(self, sr_tag, dest_rank, group=GlobalComm.WORLD_COMM_GROUP, group_back=GlobalComm.WORLD_COMM_GROUP):
        _check_tag(sr_tag, self.name)
        validator.check_value_type("dest_rank", dest_rank, [int], self.name)
        self._check_group(group)
        self.init_prim_io_names(inputs=["input_x"], outputs=["output"])

    def infer_shape(self, x_shape):
        _check_peer(self.name, "dest_rank", self.dest_rank, self.group)
        return x_shape

    def infer_dtype(self, x_dtype):
        return validator.check_tensor_dtype_valid("input_x", x_dtype, MOVE_DTYPES, self.name)


class Receive(_Collective):
    r"""``Receive(sr_tag, src_rank, shape, dtype, group=GlobalComm.WORLD_COMM_GROUP)()``: the Tensor of
    ``shape`` and ``dtype`` that rank ``src_rank`` sends with ``Send(sr_tag, ...)``; it takes no input.
    A sender's different shape or dtype raises on the receiver, naming both. dtypes: every dtype."""

    @prim_attr_register
    def __init__(
        self, sr_tag, src_rank, shape, dtype, group=GlobalComm.WORLD_COMM_GROUP, group_back=GlobalComm.WORLD_COMM_GROUP
    ):
        _check_tag(sr_tag, self.name)
        validator.check_value_type("src_rank", src_rank, [int], self.name)
        validator.check_value_type("shape", shape, [list, tuple], self.name)
        if not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
            raise ValueError(
                f"For '{self.name}', the 'shape' must be a list of ints >= 0 (a received shape has no unknown "
                f"dims), but got {shape!r}."
            )
        if not isinstance(dtype, mstype.Type) or dtype not in MOVE_DTYPES:
            raise TypeError(f"For '{self.name}', the 'dtype' must be one of {list(MOVE_DTYPES)}, but got {dtype!r}.")
        self._check_group(group)
        self.init_prim_io_names(inputs=[], outputs=["output"])

    def infer_shape(self):
        _check_peer(self.name, "src_rank", self.src_rank, self.group)
        return list(self.shape)

    def infer_dtype(self):
        return self.dtype


def _unknown_rank(shape) -> bool:
    """A placeholder's shape of unknown rank ([-2])."""
    return len(shape) == 1 and shape[0] == -2


def _check_peer(op_name, name, peer, group) -> None:
    n = group_size(op_name, group)
    group_rank(op_name, group)  # this process must be in the group
    if not 0 <= peer < n:
        raise ValueError(
            f"For '{op_name}', the '{name}' must be a rank of the group '{group}' (in [0, {n})), but got {peer}."
        )
