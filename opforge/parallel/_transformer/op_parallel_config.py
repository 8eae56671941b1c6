"""MindSpore's parallel configuration objects for the transformer layers (``OpParallelConfig``,
``MoEParallelConfig``, ``_PipeLineConfig``) and ``_check_config``.

opforge runs these layers as one device computes them: the data/model parallel ways are stored and validated as
MindSpore validates them, and (as in MindSpore's stand-alone and data-parallel modes) they shard nothing. Under
SEMI_AUTO_PARALLEL or AUTO_PARALLEL, where MindSpore would shard the operators, a way > 1 raises
NotImplementedError rather than run unsharded."""

from __future__ import annotations

from opforge.parallel._utils import _get_parallel_mode, _get_pipeline_stages
from opforge.parallel_context import ParallelMode
from opforge.primitives.validator import Validator

__all__ = ["OpParallelConfig"]


class _Config:
    r"""A basic class of the configuration objects: ``str()`` lists the fields."""

    def __str__(self):
        info = "[ParallelConfig]" + "\n"
        for k, v in self.__dict__.items():
            info += f"{k}:{v}\n"
        return info


class OpParallelConfig(_Config):
    r"""The data parallel and model parallel ways of one layer.

    Args:
        data_parallel (int): the data parallel way. Default: 1.
        model_parallel (int): the model parallel way. Default: 1.
    """

    def __init__(self, data_parallel=1, model_parallel=1):
        Validator.check_positive_int(data_parallel, "data_parallel")
        Validator.check_positive_int(model_parallel, "model_parallel")
        self.data_parallel = data_parallel
        self.model_parallel = model_parallel

    @property
    def data_parallel(self):
        return self._data_parallel

    @data_parallel.setter
    def data_parallel(self, value):
        Validator.check_positive_int(value, "data_parallel")
        self._data_parallel = value

    @property
    def model_parallel(self):
        return self._model_parallel

    @model_parallel.setter
    def model_parallel(self, value):
        Validator.check_positive_int(value, "model_parallel")
        self._model_parallel = value


class MoEParallelConfig(_Config):
    r"""The data, model and expert parallel ways of a Mixture-of-Experts layer."""

    def __init__(self, data_parallel=1, model_parallel=1, expert_parallel=1):
        Validator.check_positive_int(data_parallel, "data_parallel")
        Validator.check_positive_int(model_parallel, "model_parallel")
        Validator.check_positive_int(expert_parallel, "expert_parallel")
        self._dpmp = OpParallelConfig(data_parallel=data_parallel, model_parallel=model_parallel)
        self.expert_parallel = expert_parallel

    @property
    def data_parallel(self):
        return self._dpmp.data_parallel

    @data_parallel.setter
    def data_parallel(self, value):
        self._dpmp.data_parallel = value

    @property
    def model_parallel(self):
        return self._dpmp.model_parallel

    @model_parallel.setter
    def model_parallel(self, value):
        self._dpmp.model_parallel = value

    @property
    def expert_parallel(self):
        return self._expert_parallel

    @expert_parallel.setter
    def expert_parallel(self, value):
        Validator.check_positive_int(value, "expert_parallel")
        self._expert_parallel = value

    @property
    def dpmp(self):
        """The (data_parallel, model_parallel) part as an OpParallelConfig."""
        return self._dpmp


class _PipeLineConfig(_Config):
    r"""The pipeline stages and micro batches (stored: opforge runs the stages on one device)."""

    def __init__(self, pipeline_stage=1, micro_batch_num=1, pipeline_segment=1):
        Validator.check_positive_int(pipeline_stage, "pipeline_stage")
        Validator.check_positive_int(micro_batch_num, "micro_batch_num")
        Validator.check_positive_int(pipeline_segment, "pipeline_segment")
        self._pipeline_stage = pipeline_stage
        self.micro_batch_num = micro_batch_num
        self.pipeline_segment = pipeline_segment

    @property
    def pipeline_stage(self):
        return self._pipeline_stage

    @pipeline_stage.setter
    def pipeline_stage(self, value):
        Validator.check_positive_int(value, "pipeline_stage")
        self._pipeline_stage = value

    @property
    def micro_batch_num(self):
        return self._micro_batch_num

    @micro_batch_num.setter
    def micro_batch_num(self, value):
        Validator.check_positive_int(value, "micro_batch_num")
        self._micro_batch_num = value


# In case the user doesn't pass a config as args.
default_dpmp_config = OpParallelConfig()
default_moeparallel_config = MoEParallelConfig()


def _check_config(config):
    """MindSpore's check that the config's pipeline stages match the auto-parallel context's; and opforge's:
    sharded ways (> 1) under SEMI_AUTO_PARALLEL / AUTO_PARALLEL are not implemented."""
    pipeline_stage = _get_pipeline_stages()
    if hasattr(config, "pipeline_stage") and pipeline_stage != config.pipeline_stage:
        raise ValueError(
            f"The pipeline stage {pipeline_stage} in auto_parallel_context is not equal to the pipeline_stage "
            f"{config.pipeline_stage} in the config."
        )
    if _get_parallel_mode() not in (ParallelMode.SEMI_AUTO_PARALLEL, ParallelMode.AUTO_PARALLEL):
        return
    ways = config.data_parallel * config.model_parallel * getattr(config, "expert_parallel", 1)
    if ways > 1 or pipeline_stage > 1:
        raise NotImplementedError(
            "opforge's parallel transformer layers do not shard: data_parallel, model_parallel, expert_parallel "
            f"and pipeline_stage must be 1 under {_get_parallel_mode()}, but got {config.data_parallel}, "
            f"{config.model_parallel}, {getattr(config, 'expert_parallel', 1)} and {pipeline_stage}."
        )
