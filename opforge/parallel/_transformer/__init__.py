"""MindSpore's parallel transformer layers (``mindspore.parallel._transformer``; MindSpore 1.8-2.0's
``mindspore.nn.transformer``), which the model zoo's GPT and PanGu-alpha import: the configuration objects,
AttentionMask, VocabEmbedding, FeedForward, MultiHeadAttention, the encoder / decoder layers and stacks,
Transformer, MoEConfig and CrossEntropyLoss; layers.py has ``_LayerNorm`` and ``_Linear``, moe.py the Mixture of
Experts (``MoE``, ``Router``, ``TopkRouter``). They run unsharded (the parallel ways are stored);
FixedSparseAttention (Ascend only) is not implemented."""

from opforge.parallel._transformer import layers, loss, moe, op_parallel_config, transformer
from opforge.parallel._transformer.loss import CrossEntropyLoss
from opforge.parallel._transformer.moe import MoEConfig
from opforge.parallel._transformer.op_parallel_config import OpParallelConfig
from opforge.parallel._transformer.transformer import (
    AttentionMask,
    EmbeddingOpParallelConfig,
    FeedForward,
    MultiHeadAttention,
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
    TransformerOpParallelConfig,
    TransformerRecomputeConfig,
    VocabEmbedding,
)

__all__ = [
    *transformer.__all__,
    *loss.__all__,
    *op_parallel_config.__all__,
    *layers.__all__,
    *moe.__all__,
]
_EXPORTED = (
    CrossEntropyLoss,
    MoEConfig,
    OpParallelConfig,
    AttentionMask,
    EmbeddingOpParallelConfig,
    FeedForward,
    MultiHeadAttention,
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
    TransformerOpParallelConfig,
    TransformerRecomputeConfig,
    VocabEmbedding,
)
