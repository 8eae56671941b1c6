"""Sweep records (see op_db.py) for the collectives, in this process's world of one rank.

Importing this module starts the communication service (``opforge.communication.init()``, a world of
one rank when not under mpiexec). With one rank every collective is well defined and an identity:
AllReduce (any op), AllGather, ReduceScatter, Broadcast and AlltoAll(1, ...) return their input, so the
sweep checks each kernel's dtype, shape and bytes (float16 and bfloat16 reductions round-trip through
float32 exactly). Send and Receive run as a pair to this rank itself. The collectives across ranks, their
bprops and the faults run under ``mpiexec -n 2`` and ``-n 3`` in tests/test_communication.py.
"""

from __future__ import annotations

import numpy as np
from op_db import LARGE, ErrorInput, OpRecord, Sample, make_array

from opforge import Tensor, communication, ops
from opforge import dtype as mstype

communication.init()

SHAPES = [(0,), (7,), (4, 5), (2, 3, 4), (3, 0, 2), LARGE]


def _samples(zero_d: bool = True):
    def samples(record, prim, ins, outs, rng):
        for shape in ([()] if zero_d else []) + SHAPES:
            yield Sample((make_array(shape, ins[0], rng),), desc=f"x{list(shape)}")

    return samples


def _reduce_samples(record, prim, ins, outs, rng):
    if ins[0].kind == "c" and prim.op in ("max", "min"):  # refused by inference (error_inputs)
        return iter(())
    return _samples()(record, prim, ins, outs, rng)


def _identity(prim, x):
    return x


def _broadcast_samples(record, prim, ins, outs, rng):
    for shapes in (((3,),), ((2, 3), (4,), ()), ((0, 2),)):
        yield Sample((tuple(make_array(s, ins[0], rng) for s in shapes),), desc=str([list(s) for s in shapes]))


class _SendReceive:
    """``Send`` to this rank itself, then the matching ``Receive`` (what the sweep compares is one or
    the other's output); the variant's name says which."""

    def __init__(self, show: str, tag: int):
        self.__dict__.update(show=show, tag=tag, send=ops.Send(tag, 0))

    def __getattr__(self, name):
        return getattr(self.__dict__["send"], name)

    def __call__(self, x):
        sent = self.send(x)
        received = ops.Receive(self.tag, 0, list(x.shape), x.dtype)()
        return sent if self.show == "Send" else received


def _receive_samples(record, prim, ins, outs, rng):
    for shape in [()] + SHAPES:
        yield Sample((make_array(shape, outs[0], rng),), desc=f"x{list(shape)}")


def _x(shape=(2,), dtype=mstype.float32):
    return Tensor(np.ones(shape, dtype.np_dtype))


def _errors(name):
    common = [
        ErrorInput("unknown group", lambda: getattr(ops, name)(group="nope")(_x()), ValueError, "does not exist"),
        ErrorInput("group not a str", lambda: getattr(ops, name)(group=1), TypeError, "'group'"),
    ]
    extra = {
        "AllReduce": [
            ErrorInput("op", lambda: ops.AllReduce("mean"), ValueError, "'op'"),
            ErrorInput("max complex", lambda: ops.AllReduce("max")(_x((2,), mstype.complex64)), TypeError, "complex"),
            ErrorInput("bool", lambda: ops.AllReduce()(_x((2,), mstype.bool_)), TypeError, "'input_x'"),
        ],
        "AllGather": [ErrorInput("0-d", lambda: ops.AllGather()(_x(())), ValueError, "at least 1 dim")],
        "ReduceScatter": [ErrorInput("0-d", lambda: ops.ReduceScatter()(_x(())), ValueError, "multiple of")],
    }
    return lambda: common + extra.get(name, [])


RECORDS = [
    OpRecord(
        "AllReduce",
        {op: (lambda op=op: ops.AllReduce(op)) for op in ("sum", "max", "min", "prod")},
        _reduce_samples,
        _identity,
        exact=True,
        error_inputs=_errors("AllReduce"),
    ),
    OpRecord(
        "AllGather", {"": ops.AllGather}, _samples(False), _identity, exact=True, error_inputs=_errors("AllGather")
    ),
    OpRecord(
        "ReduceScatter",
        {op: (lambda op=op: ops.ReduceScatter(op)) for op in ("sum", "max", "min", "prod")},
        lambda record, prim, ins, outs, rng: (
            () if ins[0].kind == "c" and prim.op in ("max", "min") else _samples(False)(record, prim, ins, outs, rng)
        ),
        _identity,
        exact=True,
        error_inputs=_errors("ReduceScatter"),
    ),
    OpRecord(
        "Broadcast",
        {"root_rank=0": lambda: ops.Broadcast(0)},
        _broadcast_samples,
        lambda prim, xs: tuple(xs),
        exact=True,
        error_inputs=lambda: [
            ErrorInput("root", lambda: ops.Broadcast(1)((_x(),)), ValueError, "'root_rank'"),
            ErrorInput("dtypes", lambda: ops.Broadcast(0)((_x(), _x((2,), mstype.int32))), TypeError, "dtype"),
        ],
    ),
    OpRecord(
        "AlltoAll",
        {"0->0": lambda: ops.AlltoAll(1, 0, 0), "-1->0": lambda: ops.AlltoAll(1, -1, 0)},
        _samples(False),
        _identity,
        exact=True,
        error_inputs=lambda: [
            ErrorInput("split_count", lambda: ops.AlltoAll(2, 0, 0)(_x((4,))), ValueError, "'split_count'"),
            ErrorInput("split_dim", lambda: ops.AlltoAll(1, 2, 0)(_x((4,))), ValueError, "'split_dim'"),
        ],
    ),
    OpRecord(
        "Send",
        {"Send": lambda: _SendReceive("Send", 11)},
        _samples(),
        _identity,
        exact=True,
        error_inputs=lambda: [ErrorInput("dest", lambda: ops.Send(0, 1)(_x()), ValueError, "'dest_rank'")],
    ),
    OpRecord(
        "Receive",
        {"Receive": lambda: _SendReceive("Receive", 12)},
        _receive_samples,
        _identity,
        args=(),
        exact=True,
        error_inputs=lambda: [
            ErrorInput("src", lambda: ops.Receive(0, 3, [2], mstype.float32)(), ValueError, "'src_rank'"),
            ErrorInput("dtype", lambda: ops.Receive(0, 0, [2], "float32"), TypeError, "'dtype'"),
        ],
    ),
]
