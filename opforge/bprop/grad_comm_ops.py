"""bprops of the collectives (MindSpore's ``grad_comm_ops``), written with collectives, so every rank
of the group runs the same collectives in its backward pass (in the reverse order of the forward one).

- AllReduce(SUM) -> AllReduce(SUM) of dout; MAX and MIN -> that, where x is the result (MindSpore's);
  PROD has no bprop (as MindSpore's: it would divide by x).
- AllGather -> ReduceScatter(SUM) of dout; ReduceScatter(SUM) -> AllGather of dout.
- Broadcast -> the sum of every rank's dout at the root (an AllReduce(SUM)), zeros elsewhere.
- AlltoAll -> AlltoAll with split_dim and concat_dim swapped.
- Send -> the gradient that the destination sends back (a Receive from dest_rank), plus dout.
  Receive has no input, so it has nothing to differentiate: the receiving rank sends the gradient
  of what it received back with ``Send`` itself (docs/distributed.md).
"""

from __future__ import annotations

from opforge.bprop.registry import bprop_getters
from opforge.communication.management import group_rank
from opforge.ops import functional as F
from opforge.primitives import comm_ops as P


@bprop_getters.register(P.AllReduce)
def get_bprop_all_reduce(self):
    if self.op == P.ReduceOp.PROD:
        raise RuntimeError(f"For '{self.name}', the bprop of ReduceOp.PROD is not supported (as in MindSpore).")
    all_reduce_sum = P.AllReduce(P.ReduceOp.SUM, self.group)
    if self.op == P.ReduceOp.SUM:

        def bprop(x, out, dout):
            return (all_reduce_sum(dout),)

    else:

        def bprop(x, out, dout):
            dx = all_reduce_sum(dout)
            return (F.mul(dx, F.cast(F.equal(x, out), dx.dtype)),)

    return bprop


@bprop_getters.register(P.AllGather)
def get_bprop_all_gather(self):
    reduce_scatter = P.ReduceScatter(P.ReduceOp.SUM, self.group)

    def bprop(x, out, dout):
        return (reduce_scatter(dout),)

    return bprop


@bprop_getters.register(P.ReduceScatter)
def get_bprop_reduce_scatter(self):
    if self.op != P.ReduceOp.SUM:
        raise RuntimeError(
            f"For '{self.name}', only the bprop of ReduceOp.SUM is supported, but the op is '{self.op}'."
        )
    all_gather = P.AllGather(self.group)

    def bprop(x, out, dout):
        return (all_gather(dout),)

    return bprop


@bprop_getters.register(P.Broadcast)
def get_bprop_broadcast(self):
    all_reduce_sum = P.AllReduce(P.ReduceOp.SUM, self.group)
    root, group = self.root_rank, self.group

    def bprop(x, out, dout):
        sums = tuple(all_reduce_sum(d) for d in dout)  # every rank takes part in each reduction
        if group_rank("Broadcast", group) == root:
            return (sums,)
        return (tuple(F.zeros_like(t) for t in x),)

    return bprop


@bprop_getters.register(P.AlltoAll)
def get_bprop_all_to_all(self):
    back = P.AlltoAll(self.split_count, self.concat_dim, self.split_dim, self.group)

    def bprop(x, out, dout):
        return (back(dout),)

    return bprop


@bprop_getters.register(P.Send)
def get_bprop_send(self):
    sr_tag, dest, group = self.sr_tag, self.dest_rank, self.group

    def bprop(x, out, dout):
        receive = P.Receive(sr_tag, dest, tuple(x.shape), x.dtype, group)
        return (F.add(receive(), dout),)

    return bprop
