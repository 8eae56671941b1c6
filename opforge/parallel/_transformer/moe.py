"""MindSpore's ``MoEConfig`` (the Mixture-of-Experts configuration): stored and validated as MindSpore does.
opforge's transformer layers run without experts: ``expert_num`` > 1 in a layer raises NotImplementedError."""

from __future__ import annotations

from opforge.primitives.validator import Validator

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


def _check_moe_config(moe_config=None, parallel_config=None, cls_name="Transformer"):
    """``moe_config`` is a MoEConfig; experts (expert_num > 1) are not implemented."""
    if not isinstance(moe_config, MoEConfig):
        raise TypeError(f"'moe_config' must be an instance of MoEConfig, but got {type(moe_config).__name__}.")
    if moe_config.expert_num > 1:
        raise NotImplementedError(
            f"For '{cls_name}', Mixture of Experts (MoEConfig.expert_num > 1) is not implemented in opforge, "
            f"but got expert_num={moe_config.expert_num}."
        )
