"""MindSpore 2.6's ``mindspore.parallel.nn``: the cells that cut a batch into micro-batches for pipeline parallel
(``Pipeline``, ``PipelineCell``, and ``PipelineGradReducer`` for functional training: opforge/nn/pipeline.py), for
gradient accumulation (``GradAccumulation``) and for overlapping communication (``MicroBatchInterleaved``:
opforge/nn/micro_batch.py)."""

from opforge.nn.micro_batch import GradAccumulation, MicroBatchInterleaved
from opforge.nn.pipeline import Pipeline, PipelineCell, PipelineGradReducer

__all__ = ["GradAccumulation", "MicroBatchInterleaved", "Pipeline", "PipelineCell", "PipelineGradReducer"]
