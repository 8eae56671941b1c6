"""``nn.EmbeddingLookup`` (MindSpore's): an embedding table looked up by ids, ids outside the vocabulary giving zero
rows, with MindSpore's slice modes for semi-auto parallel mapped to shard strategies of the Gather primitive
(opforge/primitives/sharding_ops.py has its rule: a table split by rows is a vocabulary-parallel embedding, a
masked local Gather whose partial rows are summed; split by columns, each rank holds some embedding dims).

One process runs the lookup where its table lives: MindSpore's ``target="CPU"`` (a host-side EmbeddingLookup
kernel) and ``"DEVICE"`` (Gather) compute the same values, and ``sparse=True`` (SparseGatherV2, a RowTensor
gradient) the same gradient as dense Gather's (opforge has no sparse gradients: the table's gradient is dense,
zero in the rows not looked up). The parameter-server cache (``vocab_cache_size`` > 0) is not implemented."""

from __future__ import annotations

from opforge import dtype as mstype
from opforge import ops
from opforge.nn import init as _init
from opforge.nn.cell import Cell
from opforge.nn.layers import ClipByNorm
from opforge.parallel._utils import _get_device_num
from opforge.parallel_context import operator_parallel
from opforge.tensor import Parameter, Tensor

__all__ = ["EmbeddingLookup"]

_SLICE_MODES = ("batch_slice", "field_slice", "table_row_slice", "table_column_slice")


def _positive_int(name: str, value, what: str = "int > 0") -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"For 'EmbeddingLookup', the '{name}' must be an int, but got {type(value).__name__}.")
    if value < (0 if what == "int >= 0" else 1):
        raise ValueError(f"For 'EmbeddingLookup', the '{name}' must be an {what}, but got {value}.")
    return value


class EmbeddingLookup(Cell):
    r"""MindSpore's ``nn.EmbeddingLookup(vocab_size, embedding_size, param_init='normal', target='CPU',
    slice_mode='batch_slice', manual_shapes=None, max_norm=None, sparse=True, vocab_cache_size=0,
    dtype=mstype.float32)``: ``cell(input_indices)`` is

    .. math:: out[..., :] = \begin{cases} table[ids[...], :] & 0 \le ids[...] < vocab\_size \\ 0 & \text{else}
              \end{cases}

    of shape ``input_indices.shape + (embedding_size,)`` (MindSpore: ids out of range give zeros; negative ids
    are undefined there, zeros here). ``table`` is the Parameter ``embedding_table`` [vocab_size,
    embedding_size] of ``dtype``, drawn by ``param_init`` (an initializer name, Initializer, Tensor or number).
    With ``max_norm`` (a float > 0) each looked-up row is clipped to that 2-norm (``nn.ClipByNorm`` over the
    embedding dim). ``input_indices``: int32 or int64, any shape. The lookup is Gather on clamped ids times the
    in-range mask, so the table's gradient is a scatter-add of the output gradient into the rows looked up.

    Checks as MindSpore's: ``vocab_size`` and ``embedding_size`` ints >= 1, ``vocab_cache_size`` an int >= 0,
    ``target`` 'CPU' or 'DEVICE', ``sparse`` a bool (True when ``target`` is 'CPU'), ``slice_mode`` one of
    'batch_slice', 'field_slice', 'table_row_slice', 'table_column_slice', and in SEMI_AUTO_PARALLEL /
    AUTO_PARALLEL 'field_slice' needs ``manual_shapes`` (a tuple of ints >= 1). ``vocab_cache_size`` > 0 is a
    ValueError (MindSpore allows it in parameter-server mode only, which opforge does not have).

    Slice modes in SEMI_AUTO_PARALLEL / AUTO_PARALLEL set the Gather's strategy over the D devices as MindSpore's:
    'table_row_slice' ((D, 1), (1, 1)) and 'field_slice' (rows split evenly; ``manual_shapes`` is checked but the
    blocks are equal, so ``vocab_size`` must divide by D), 'table_column_slice' ((1, D), (1, 1)) and
    'batch_slice' ((1, 1), (D, 1)) (opforge's Gather rule keeps the ids whole: each rank looks up every id,
    the table replicated). In the other modes ``slice_mode`` only has to be valid. ``target`` and ``sparse`` do
    not change the result (module docstring)."""

    BATCH_SLICE = "batch_slice"
    FIELD_SLICE = "field_slice"
    TABLE_ROW_SLICE = "table_row_slice"
    TABLE_COLUMN_SLICE = "table_column_slice"

    def __init__(
        self, vocab_size, embedding_size, param_init="normal", target="CPU", slice_mode="batch_slice",
        manual_shapes=None, max_norm=None, sparse=True, vocab_cache_size=0, dtype=mstype.float32,
    ):  # fmt: skip
        super().__init__()
        name = "EmbeddingLookup"
        if not isinstance(sparse, bool):
            raise TypeError(f"For '{name}', the 'sparse' must be bool, but got {type(sparse).__name__}.")
        self.vocab_size = _positive_int("vocab_size", vocab_size)
        self.vocab_cache_size = _positive_int("vocab_cache_size", vocab_cache_size, "int >= 0")
        if not isinstance(target, str):
            raise TypeError(f"For '{name}', the 'target' must be str, but got {type(target).__name__}.")
        if target not in ("CPU", "DEVICE"):
            raise ValueError(f"For '{name}', the 'target' must be 'CPU' or 'DEVICE', but got {target!r}.")
        if not sparse and target == "CPU":
            raise ValueError(
                f"For '{name}', 'sparse' must be True when 'target' is \"CPU\", but got 'sparse': {sparse} and "
                f"'target': {target}."
            )
        self.target, self.sparse = target, sparse
        self.embedding_size = _positive_int("embedding_size", embedding_size)
        if slice_mode not in _SLICE_MODES:
            raise ValueError(
                f"For '{name}', the 'slice_mode' must be one of {list(_SLICE_MODES)}, but got {slice_mode!r}."
            )
        self.slice_mode, self.manual_shapes = slice_mode, manual_shapes
        if self.vocab_cache_size > 0:
            raise ValueError(
                f"For '{name}', the 'vocab_cache_size' ({vocab_cache_size}) needs MindSpore's parameter-server "
                "mode, which opforge does not have: give 0."
            )
        self.dtype = dtype
        table = _init.initializer(param_init, (self.vocab_size, self.embedding_size), dtype)
        self.embedding_table = Parameter(table, name="embedding_table")
        self.gather = ops.Gather()
        if operator_parallel():
            self._shard(slice_mode, manual_shapes)
        self.max_norm = None
        if max_norm is not None:
            if not isinstance(max_norm, float):
                raise TypeError(f"For '{name}', the 'max_norm' must be a float, but got {type(max_norm).__name__}.")
            if not max_norm > 0:
                raise ValueError(f"For '{name}', the 'max_norm' must be greater than 0, but got {max_norm}.")
            self.max_norm = max_norm
            self.clip_by_norm = ClipByNorm(-1)

    def _shard(self, slice_mode: str, manual_shapes) -> None:
        """The Gather's strategy for ``slice_mode`` over the devices (MindSpore's, the ids 2-D)."""
        devices = _get_device_num()
        if slice_mode == "field_slice":
            if not manual_shapes:
                raise ValueError(
                    "For 'EmbeddingLookup', the 'manual_shapes' should not be none when the 'slice_mode' is "
                    f'"field_slice", but got {manual_shapes}.'
                )
            if not isinstance(manual_shapes, tuple):
                raise TypeError(
                    "For 'EmbeddingLookup', the type of 'manual_shapes' must be tuple(int), but got "
                    f"{type(manual_shapes).__name__}!"
                )
            for dim in manual_shapes:
                _positive_int("manual shape dim", dim)
        strategies = {
            "field_slice": ((devices, 1), (1, 1)),
            "table_row_slice": ((devices, 1), (1, 1)),
            "table_column_slice": ((1, devices), (1, 1)),
            "batch_slice": ((1, 1), (devices, 1)),
        }
        self.gather.shard(strategies[slice_mode])

    def construct(self, input_indices):
        name = "EmbeddingLookup"
        if not isinstance(input_indices, Tensor):
            raise TypeError(
                f"For '{name}', the 'input_indices' must be a Tensor, but got {type(input_indices).__name__}."
            )
        if input_indices.dtype not in (mstype.int32, mstype.int64):
            raise TypeError(
                f"For '{name}', the 'input_indices' must be int32 or int64 ids, but got {input_indices.dtype}."
            )
        inside = ops.logical_and(input_indices >= 0, input_indices < self.vocab_size)
        safe = ops.select(inside, input_indices, ops.zeros_like(input_indices))
        out = self.gather(self.embedding_table, safe, 0)
        out = out * ops.expand_dims(ops.cast(inside, out.dtype), -1)
        if self.max_norm is not None:
            out = self.clip_by_norm(out, Tensor(self.max_norm, mstype.float32))
        return out

    def extend_repr(self) -> str:
        return (
            f"vocab_size={self.vocab_size}, embedding_size={self.embedding_size}, target={self.target}, "
            f"slice_mode={self.slice_mode}, max_norm={self.max_norm}, sparse={self.sparse}"
        )
