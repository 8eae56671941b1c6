"""MindSpore's Mixture of Experts (``mindspore.parallel._transformer.moe``): ``MoEConfig``, the ``MoE`` layer,
its ``Router`` and ``TopkRouter``, with MindSpore's routing (top-k by the gating softmax, tokens past an
expert's capacity dropped, the dispatch / combine tensors and the load-balancing loss). Built from opforge's
primitives (Dense, Softmax, ArgMaxWithValue, OneHot, CumSum, BatchMatMul, ...), so autodiff, jit and both
backends follow: the gate values and the auxiliary loss carry the router's gradient, the expert outputs the
experts'. The experts are a :class:`FeedForward` with ``expert_num`` > 1 (weights batched along an expert axis).

The data / expert parallel ways group the tokens as MindSpore groups them (``data_parallel`` groups, each routed
with its own capacity) and shard nothing; the communication options (``group_wise_a2a``,
``comp_comm_parallel``) take MindSpore's padded and split paths, which compute the same values on one device."""

from __future__ import annotations

import numpy as np

from opforge import dtype as mstype
from opforge.communication import management
from opforge.nn.cell import Cell
from opforge.nn.layers import Dense
from opforge.ops import functional as F
from opforge.ops import operations as P
from opforge.parallel._transformer._feed_forward import FeedForward
from opforge.parallel._transformer.op_parallel_config import MoEParallelConfig, default_moeparallel_config
from opforge.parallel._utils import _get_parallel_mode, _is_sharding_propagation
from opforge.parallel_context import ParallelMode
from opforge.primitives.validator import Validator
from opforge.tensor import Tensor

__all__ = ["MoEConfig"]


class MoEConfig:
    r"""The configuration of MoE (Mixture of Expert).

    Args:
        expert_num (int): the number of experts. Default: 1.
        capacity_factor (float): how much to expand expert capacity, >= 1.0. Default: 1.1.
        aux_loss_factor (float): the weight of the router's load-balance loss, < 1.0. Default: 0.05.
        num_experts_chosen (int): experts chosen per token, <= expert_num. Default: 1.
        expert_group_size (int): tokens per data parallel group. Default: None.
        group_wise_a2a (bool), comp_comm_parallel (bool), comp_comm_parallel_degree (int): communication
            options. Defaults: False, False, 2.
    """

    def __init__(
        self,
        expert_num=1,
        capacity_factor=1.1,
        aux_loss_factor=0.05,
        num_experts_chosen=1,
        expert_group_size=None,
        group_wise_a2a=False,
        comp_comm_parallel=False,
        comp_comm_parallel_degree=2,
    ):
        Validator.check_positive_int(expert_num, "expert_num")
        Validator.check_positive_float(capacity_factor, "capacity_factor")
        Validator.check_positive_float(aux_loss_factor, "aux_loss_factor")
        Validator.check_positive_int(num_experts_chosen, "num_experts_chosen")
        Validator.check_bool(group_wise_a2a, "group_wise_a2a")
        Validator.check_bool(comp_comm_parallel, "comp_comm_parallel")
        Validator.check_positive_int(comp_comm_parallel_degree, "comp_comm_parallel_degree")
        if expert_group_size is not None:
            Validator.check_positive_int(expert_group_size, "expert_group_size")
        if capacity_factor < 1.0:
            raise ValueError(f"'capacity_factor' must be equal to or greater than 1.0, but got {capacity_factor}.")
        if aux_loss_factor >= 1.0:
            raise ValueError(f"'aux_loss_factor' must be less than 1.0, but got {aux_loss_factor}.")
        if num_experts_chosen > expert_num:
            raise ValueError(
                f"'num_experts_chosen' must not be larger than 'expert_num', but got {num_experts_chosen}."
            )
        self.expert_num = expert_num
        self.capacity_factor = capacity_factor
        self.aux_loss_factor = aux_loss_factor
        self.num_experts_chosen = num_experts_chosen
        self.expert_group_size = expert_group_size
        self.group_wise_a2a = group_wise_a2a
        self.comp_comm_parallel = comp_comm_parallel
        self.comp_comm_parallel_degree = comp_comm_parallel_degree


default_moe_config = MoEConfig()


def _device_num():
    """MindSpore's ``get_group_size()``: the communication world's size, one device before ``init``."""
    return management.get_group_size() if management.GlobalComm.INITED else 1


def _check_moe_config(moe_config=None, parallel_config=None):
    """``moe_config`` is a MoEConfig; with experts (expert_num > 1) the parallel ways fit them as MindSpore
    requires (``parallel_config`` then has an ``expert_parallel`` way: a MoEParallelConfig or a
    TransformerOpParallelConfig)."""
    if not isinstance(moe_config, MoEConfig):
        raise TypeError(f"'moe_config' must be an instance of MoEConfig, but got {type(moe_config).__name__}.")
    if moe_config.expert_num <= 1:
        return
    if not hasattr(parallel_config, "expert_parallel"):
        raise TypeError(
            "When using MoE, the 'parallel_config' must be a MoEParallelConfig (or, for the stacks, a "
            f"TransformerOpParallelConfig), but got {type(parallel_config).__name__}."
        )
    ep, dp, mp = parallel_config.expert_parallel, parallel_config.data_parallel, parallel_config.model_parallel
    if moe_config.expert_num % ep != 0:
        raise ValueError(
            f"When using MoE, the 'expert_num' in {type(moe_config).__name__} must be a multiple of "
            f"'expert_parallel' value in {type(parallel_config).__name__}, but got {moe_config.expert_num} for "
            f"'expert_num' and {ep} for 'expert_parallel'."
        )
    device_num = _device_num()
    if device_num % ep != 0:
        raise ValueError(f"device_num: {device_num} must be a multiple of expert_parallel: {ep}.")
    if dp % ep != 0:
        raise ValueError(f"data parallel: {dp} must be a multiple of expert_parallel: {ep} when using MoE.")
    if dp * mp > device_num:
        raise ValueError(
            f"The product of the data parallel: {dp} and model parallel: {mp} should be less than "
            f"device_num: {device_num}."
        )


def calculate_expert_capacity(k, tokens_per_group, capacity_factor, expert_dim):
    """The tokens an expert takes per group: ceil(k * tokens_per_group * capacity_factor / expert_dim)."""
    res = k * tokens_per_group * capacity_factor / expert_dim
    res_int = int(res)
    return res_int if res < 0 or res == res_int else res_int + 1


class MoE(Cell):
    r"""The Mixture-of-Experts feed-forward layer: a :class:`Router` sends each token to its chosen experts, a
    :class:`FeedForward` with ``expert_num`` experts computes each expert's tokens, and the outputs are summed
    back weighted by the gates:

    .. math::
        y_t = \sum_{e, c} \mathrm{combine}_{t,e,c}\, \mathrm{FFN}_e\Big(\sum_{t'} \mathrm{dispatch}_{t',e,c}\,
        x_{t'}\Big)

    per group of tokens (``parallel_config.data_parallel`` groups of tokens_per_group = tokens / data_parallel),
    with each expert taking at most capacity = ceil(num_experts_chosen * tokens_per_group * capacity_factor /
    expert_num) tokens (slot c). The FFN runs in float16 as FeedForward does.

    Args:
        hidden_size (int), ffn_hidden_size (int), dropout_rate (float), hidden_act (str or nn.Cell class,
            default 'gelu'), param_init_type (float32 / float16): as FeedForward's.
        moe_config (MoEConfig): the experts and routing. Default: ``default_moe_config``.
        parallel_config (MoEParallelConfig): Default: ``default_moeparallel_config``.

    Inputs:
        - **input_tensor** (Tensor) - float16 / float32, (batch, seq_length, hidden_size) or (tokens, hidden_size).

    Outputs:
        ``(output, aux_loss)``: output shaped like the input (float16, the experts' dtype); aux_loss the float32
        scalar ``aux_loss_factor`` * the router's load-balancing loss.
    """

    def __init__(
        self,
        hidden_size,
        ffn_hidden_size,
        dropout_rate,
        hidden_act="gelu",
        param_init_type=mstype.float32,
        moe_config=default_moe_config,
        parallel_config=default_moeparallel_config,
    ):
        super().__init__()
        if not isinstance(moe_config, MoEConfig):
            raise TypeError(f"'moe_config' must be an instance of MoEConfig, but got {type(moe_config).__name__}.")
        if not isinstance(parallel_config, MoEParallelConfig):
            raise TypeError(
                f"For 'MoE', the 'parallel_config' must be MoEParallelConfig, but got {type(parallel_config).__name__}."
            )
        self.hidden_size = hidden_size
        self.expert_dim = moe_config.expert_num
        self.capacity_factor = moe_config.capacity_factor
        self.aux_loss_factor = moe_config.aux_loss_factor
        self.num_experts_chosen = moe_config.num_experts_chosen
        self.expert_group_size = moe_config.expert_group_size
        self.dp_group = self.dp = parallel_config.data_parallel
        self.ep = parallel_config.expert_parallel
        self.mp = parallel_config.model_parallel
        self.comp_comm_parallel = moe_config.comp_comm_parallel
        self.comp_comm_parallel_degree = moe_config.comp_comm_parallel_degree
        # MindSpore's group-wise all-to-all needs model parallel and one expert way per data way
        self.group_wise_a2a = moe_config.group_wise_a2a and self.mp > 1 and self.dp == self.ep
        # MindSpore hands the experts expert_group_size under sharding propagation only
        propagation = _get_parallel_mode() == ParallelMode.AUTO_PARALLEL and _is_sharding_propagation()
        self.ffn = FeedForward(
            hidden_size=hidden_size, ffn_hidden_size=ffn_hidden_size, dropout_rate=dropout_rate,
            hidden_act=hidden_act, expert_num=self.expert_dim,
            expert_group_size=self.expert_group_size if propagation else None, param_init_type=param_init_type,
            parallel_config=parallel_config,
        )  # fmt: skip
        self.router = Router(
            d_model=hidden_size, moe_config=moe_config, routing_policy=None, training=True,
            parallel_config=parallel_config,
        )  # fmt: skip
        self.batch_mm = P.BatchMatMul()
        self.concat = P.Concat(3)
        self.concat_dp = P.Concat(2)
        self.split = P.Split(axis=2, output_num=self.comp_comm_parallel_degree)

    def _pad_capacity(self, expert_input, pad_size):
        """(expert, group, capacity, hidden) extended by a copy of its first ``pad_size`` capacity slots."""
        e, g, _, h = expert_input.shape
        pad = F.strided_slice(expert_input, (0, 0, 0, 0), (e, g, pad_size, h), (1, 1, 1, 1))
        return self.concat_dp((expert_input, pad))

    def ffn_infer(self, expert_input, capacity):
        """The experts over (expert, group, capacity, hidden); returns (group, hidden, expert, capacity)."""
        pad_size = 0
        if self.group_wise_a2a and capacity % self.mp != 0:
            # MindSpore pads the capacity to a multiple of the model parallel way
            pad_size = self.mp - capacity % self.mp
            expert_input = self._pad_capacity(expert_input, pad_size)
            capacity += pad_size
        expert_input = F.reshape(expert_input, (self.expert_dim * self.dp_group * capacity, self.hidden_size))
        expert_output = self.ffn(expert_input)
        expert_output = F.reshape(expert_output, (self.expert_dim, self.dp_group, capacity, self.hidden_size))
        if pad_size:
            capacity -= pad_size
            expert_output = F.strided_slice(
                expert_output, (0, 0, 0, 0), (self.expert_dim, self.dp_group, capacity, self.hidden_size), (1, 1, 1, 1)
            )
        return F.transpose(expert_output, (1, 3, 0, 2))

    def ffn_parallel_infer(self, expert_input, capacity):
        """``ffn_infer`` over ``comp_comm_parallel_degree`` slices of the capacity (padded to a multiple)."""
        pad_size = 0
        if capacity % self.comp_comm_parallel_degree != 0:
            pad_size = self.comp_comm_parallel_degree - capacity % self.comp_comm_parallel_degree
            expert_input = self._pad_capacity(expert_input, pad_size)
            capacity += pad_size
        sub_capacity = capacity // self.comp_comm_parallel_degree
        outputs = [self.ffn_infer(sub_input, sub_capacity) for sub_input in self.split(expert_input)]
        expert_output = self.concat(tuple(outputs))
        if pad_size:
            capacity -= pad_size
            expert_output = F.strided_slice(
                expert_output, (0, 0, 0, 0), (self.dp_group, self.hidden_size, self.expert_dim, capacity), (1, 1, 1, 1)
            )
        return expert_output

    def construct(self, input_tensor):
        input_shape = tuple(input_tensor.shape)
        input_tensor = F.reshape(input_tensor, (-1, self.hidden_size))
        tokens = input_tensor.shape[0]
        tokens_per_group = tokens // self.dp_group
        input_tensor = F.reshape(input_tensor, (self.dp_group, tokens_per_group, self.hidden_size))
        capacity = calculate_expert_capacity(
            self.num_experts_chosen, tokens_per_group, self.capacity_factor, self.expert_dim
        )
        # dispatch and combine: (group, tokens_per_group, expert, capacity)
        dispatch_tensor, combine_tensor, aux_loss = self.router(input_tensor)
        slots = self.expert_dim * capacity
        dispatch_tensor = F.cast(
            F.reshape(dispatch_tensor, (self.dp_group, tokens_per_group, slots)), input_tensor.dtype
        )
        # each slot's token: (group, hidden, slots) -> (expert, group, capacity, hidden)
        expert_input = self.batch_mm(F.transpose(input_tensor, (0, 2, 1)), dispatch_tensor)
        expert_input = F.reshape(expert_input, (self.dp_group, self.hidden_size, self.expert_dim, capacity))
        expert_input = F.transpose(expert_input, (2, 0, 3, 1))
        if self.comp_comm_parallel:
            expert_output = self.ffn_parallel_infer(expert_input, capacity)
        else:
            expert_output = self.ffn_infer(expert_input, capacity)
        expert_output = F.reshape(expert_output, (self.dp_group, self.hidden_size, slots))
        combine_tensor = F.reshape(combine_tensor, (self.dp_group, tokens_per_group, slots))
        combine_tensor = F.cast(F.transpose(combine_tensor, (0, 2, 1)), expert_output.dtype)
        # the gate-weighted sum of each token's expert outputs: (group, hidden, tokens_per_group)
        combined_output = F.transpose(self.batch_mm(expert_output, combine_tensor), (0, 2, 1))
        combined_output = F.reshape(combined_output, input_shape)
        return combined_output, aux_loss * self.aux_loss_factor


class Router(Cell):
    r"""The gating network: a bias-free Dense (hidden -> expert_num, float32) gives each token's router logits,
    which ``routing_policy`` (default: a :class:`TopkRouter`) maps to the dispatch and combine tensors and the
    load-balancing loss. ``noisy_policy`` "jitter" (set on the cell; None by default, as MindSpore) multiplies
    the input by ``noise`` (uniform in [1 - noisy_epsilon, 1 + noisy_epsilon], float32) while training.

    Inputs: input_tensor (data_parallel, tokens_per_group, hidden_size), any float dtype.
    Outputs: the routing policy's: ``(dispatch_tensor, combine_tensor, loss)``.
    """

    def __init__(self, d_model, moe_config, routing_policy=None, training=True, parallel_config=None):
        super().__init__()
        self.d_model = d_model
        self.expert_dim = moe_config.expert_num
        self.capacity_factor = moe_config.capacity_factor
        self.num_experts_chosen = moe_config.num_experts_chosen
        self.training = training
        self.routing_policy = routing_policy
        self.noisy_policy = None  # candidates: "jitter", "rsample", None
        self.noisy_epsilon = 1e-2
        self.noise = Tensor(
            np.random.uniform(1 - self.noisy_epsilon, 1 + self.noisy_epsilon, (d_model,)).astype(np.float32)
        )
        self.dense = Dense(in_channels=self.d_model, out_channels=self.expert_dim, has_bias=False)
        if self.routing_policy is None:
            self.router = TopkRouter(
                d_model=d_model, moe_config=moe_config, training=training, parallel_config=parallel_config
            )
        else:
            self.router = routing_policy

    def construct(self, input_tensor):
        input_tensor = F.cast(input_tensor, mstype.float32)
        if self.noisy_policy == "jitter" and self.training:
            input_tensor = input_tensor * self.noise
        router_logits = self.dense(input_tensor)
        return self.router(router_logits)


class TopkRouter(Cell):
    r"""MindSpore's top-k routing. Per group g (``parallel_config.data_parallel`` groups of T tokens), with
    p = softmax(router_logits) over the E experts and capacity C = ceil(k T capacity_factor / E), for each of
    the k choices in turn:

    - the experts a token already holds a slot with get probability 0 (p *= 1 - taken);
    - the token picks e = argmax p, with gate p_e;
    - the load-balancing loss adds :math:`E^2\, \mathrm{mean}_{g,e}\big(\mathrm{mean}_t[e_t = e] \cdot
      \mathrm{mean}_t \hat p_{t,e}\big)`, :math:`\hat p = p / (\sum_e p + 10^{-9})`;
    - the token's slot in e is the number of earlier tokens (this choice) plus every token of earlier choices
      that e kept; a token whose slot is >= C is dropped (its gate set to 0);
    - combine[t, e, slot] += gate.

    With k > 1 each token's combine weights are divided by their sum (+ 1e-9); dispatch = combine != 0.

    Inputs: router_logits (..., expert_num), float32 (tokens = data_parallel * T).
    Outputs: ``(dispatch_tensor, combine_tensor, loss)``: bool and float32 (data_parallel, T, expert_num,
    capacity) and the float32 scalar loss.
    """

    def __init__(self, d_model, moe_config, training=True, parallel_config=None):
        super().__init__()
        self.d_model = d_model
        self.expert_dim = moe_config.expert_num
        self.capacity_factor = moe_config.capacity_factor
        self.training = training
        self.dp_group = parallel_config.data_parallel
        self.noisy_policy = None
        self.num_experts_chosen = moe_config.num_experts_chosen
        self.softmax = P.Softmax(axis=-1)
        self.argmax = P.ArgMaxWithValue(axis=-1, keep_dims=False)
        self.onehot = P.OneHot()
        self.on_value = Tensor(1.0, mstype.float32)
        self.off_value = Tensor(0.0, mstype.float32)
        self.reduce_mean = P.ReduceMean(keep_dims=False)
        self.reduce_sum = P.ReduceSum(keep_dims=False)
        self.reduce_sum_keep = P.ReduceSum(keep_dims=True)
        self.cumsum = P.CumSum(exclusive=True)
        self.init_loss = Tensor(0.0, mstype.float32)

    def construct(self, router_logits):
        router_logits = F.reshape(router_logits, (-1, router_logits.shape[-1]))
        tokens_per_group = router_logits.shape[0] // self.dp_group
        expert_capacity = calculate_expert_capacity(
            self.num_experts_chosen, tokens_per_group, self.capacity_factor, self.expert_dim
        )
        router_logits = F.reshape(router_logits, (self.dp_group, tokens_per_group, self.expert_dim))
        loss = self.init_loss
        accum_expert_mask = None
        mask_count = None
        accum_combine_tensor = None
        router_prob = self.softmax(router_logits)
        for expert_chosen_index in range(self.num_experts_chosen):
            if accum_expert_mask is not None:
                # the experts a token already holds a slot with are not chosen again
                router_prob = router_prob * (self.on_value - accum_expert_mask)
            expert_index, expert_gate = self.argmax(router_prob)  # (group, tokens_per_group)
            expert_mask = self.onehot(expert_index, self.expert_dim, self.on_value, self.off_value)
            router_prob_normal = router_prob / (self.reduce_sum_keep(router_prob, -1) + 1e-9)
            loss = loss + self._auxiliary_loss(expert_mask, router_prob_normal)
            expert_mask, expert_gate, expert_mask_flat, position_in_expert = self._maskout_overflowed_tokens(
                expert_mask, expert_capacity, expert_gate, mask_count, expert_chosen_index
            )
            accum_expert_mask = expert_mask if accum_expert_mask is None else accum_expert_mask + expert_mask
            count = self.reduce_sum_keep(expert_mask, 1)
            mask_count = count if mask_count is None else mask_count + count
            # (group, tokens_per_group) -> (group, tokens_per_group, expert) -> (..., capacity)
            combine_tensor = expert_gate * expert_mask_flat
            combine_tensor = F.expand_dims(combine_tensor, -1) * self.onehot(
                expert_index, self.expert_dim, self.on_value, self.off_value
            )
            combine_tensor = F.expand_dims(combine_tensor, -1) * self.onehot(
                F.cast(position_in_expert, mstype.int32), expert_capacity, self.on_value, self.off_value
            )
            accum_combine_tensor = (
                combine_tensor if accum_combine_tensor is None else accum_combine_tensor + combine_tensor
            )
        if self.num_experts_chosen > 1:
            # each token's weights over its experts sum to 1
            combine_tensor_sum = self.reduce_sum_keep(self.reduce_sum_keep(accum_combine_tensor, -1), -2)
            accum_combine_tensor = accum_combine_tensor / (combine_tensor_sum + 1e-9)
        dispatch_tensor = F.not_equal(accum_combine_tensor, 0.0)
        return dispatch_tensor, accum_combine_tensor, loss

    def _auxiliary_loss(self, expert_mask, router_prob):
        """The load-balancing loss: E^2 times the mean over groups and experts of the fraction of tokens an
        expert is chosen by and its mean routing probability."""
        density_1 = self.reduce_mean(expert_mask, 1)
        density_1_proxy = self.reduce_mean(router_prob, 1)
        loss = self.reduce_mean(density_1 * density_1_proxy)
        return loss * self.expert_dim * self.expert_dim

    def _maskout_overflowed_tokens(self, expert_mask, expert_capacity, expert_gate, last_num, expert_chosen_index):
        """Keeps the tokens whose slot in their expert is below the capacity."""
        cumsum = self.cumsum(expert_mask, 1)
        if expert_chosen_index > 0:
            cumsum = cumsum + last_num
        position_in_expert = cumsum * expert_mask
        less_result = F.cast(F.less(position_in_expert, expert_capacity), mstype.float32)
        expert_mask = less_result * expert_mask
        expert_mask_flat = self.reduce_sum(expert_mask, -1)
        expert_gate = expert_gate * expert_mask_flat
        return expert_mask, expert_gate, expert_mask_flat, position_in_expert
