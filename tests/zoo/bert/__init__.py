# ruff: noqa  (the model zoo's text as it is)
"""BERT pretraining as MindSpore's model zoo writes it: the files of mindspore-ai/models official/nlp/Bert/src
(Apache-2.0) as they are, with ``mindspore`` replaced by ``opforge`` in the imports (license headers dropped, the
layout formatted by ruff). ``tests/test_zoo_bert.py`` shrinks the config and trains it through ``Model.train``.
Below, the zoo's src/__init__.py."""

from .bert_for_pre_training import (
    BertNetworkWithLoss,
    BertPreTraining,
    BertPretrainingLoss,
    GetMaskedLMOutput,
    GetNextSentenceOutput,
    BertTrainOneStepCell,
    BertTrainOneStepWithLossScaleCell,
    BertTrainAccumulationAllReduceEachWithLossScaleCell,
    BertTrainAccumulationAllReducePostWithLossScaleCell,
    BertTrainOneStepWithLossScaleCellForAdam,
    BertNetworkMatchBucket,
    BertPretrainEval,
)
from .bert_model import (
    BertAttention,
    BertConfig,
    BertEncoderCell,
    BertModel,
    BertOutput,
    BertSelfAttention,
    BertTransformer,
    EmbeddingLookup,
    EmbeddingPostprocessor,
    RelaPosEmbeddingsGenerator,
    RelaPosMatrixGenerator,
    SaturateCast,
    CreateAttentionMaskFromInputMask,
)
from .adam import AdamWeightDecayForBert, AdamWeightDecayOp

__all__ = [
    "BertNetworkWithLoss",
    "BertPreTraining",
    "BertPretrainingLoss",
    "GetMaskedLMOutput",
    "GetNextSentenceOutput",
    "BertTrainOneStepCell",
    "BertTrainOneStepWithLossScaleCell",
    "BertTrainAccumulationAllReduceEachWithLossScaleCell",
    "BertTrainAccumulationAllReducePostWithLossScaleCell",
    "BertNetworkMatchBucket",
    "BertPretrainEval",
    "BertAttention",
    "BertConfig",
    "BertEncoderCell",
    "BertModel",
    "BertOutput",
    "BertSelfAttention",
    "BertTransformer",
    "EmbeddingLookup",
    "EmbeddingPostprocessor",
    "RelaPosEmbeddingsGenerator",
    "AdamWeightDecayForBert",
    "RelaPosMatrixGenerator",
    "SaturateCast",
    "CreateAttentionMaskFromInputMask",
    "BertTrainOneStepWithLossScaleCellForAdam",
    "AdamWeightDecayOp",
]
