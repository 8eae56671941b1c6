"""MindSpore's parallel transformer cells (``mindspore.parallel._transformer.transformer``, MindSpore 1.8-2.0's
``mindspore.nn.transformer``): the configuration objects, ``AttentionMask``, ``VocabEmbedding``, ``FeedForward``,
``MultiHeadAttention``, the encoder / decoder layers and stacks and ``Transformer``, with MindSpore's arguments,
dtypes (compute in float16 by default, softmax in ``softmax_compute_type``, layer norms in
``layernorm_compute_type``) and outputs (``(output, layer_present)``). Built from opforge's primitives, so
autodiff, jit and both backends follow. Incremental prediction (``use_past``) keeps the keys and values in the
layers' ``key_past`` / ``value_past`` Parameters, as MindSpore does.

The parallel ways are stored and checked and shard nothing (op_parallel_config.py). With Mixture of Experts
(``MoEConfig.expert_num`` > 1, moe.py) each layer's feed-forward block is a ``MoE`` and the layers, the stacks
and ``Transformer`` return the summed auxiliary load-balancing loss as an extra last output, as MindSpore does."""

from __future__ import annotations

import math

import numpy as np

from opforge import dtype as mstype
from opforge.common.initializer import initializer
from opforge.nn.cell import Cell, CellList
from opforge.nn.layers import Dropout
from opforge.ops import functional as F
from opforge.ops import operations as P
from opforge.parallel._transformer._feed_forward import FeedForward, _check_common, _check_type
from opforge.parallel._transformer.layers import (
    _check_input_dtype,
    _check_past_none_input_none,
    _LayerNorm,
    _Linear,
)
from opforge.parallel._transformer.moe import MoE, _check_moe_config, default_moe_config
from opforge.parallel._transformer.op_parallel_config import (
    MoEParallelConfig,
    OpParallelConfig,
    _check_config,
    _Config,
    _PipeLineConfig,
    default_dpmp_config,
)
from opforge.primitives.validator import Validator
from opforge.tensor import Parameter, Tensor

__all__ = [
    "AttentionMask",
    "VocabEmbedding",
    "MultiHeadAttention",
    "FeedForward",
    "TransformerEncoder",
    "TransformerDecoder",
    "TransformerEncoderLayer",
    "TransformerDecoderLayer",
    "Transformer",
    "TransformerOpParallelConfig",
    "EmbeddingOpParallelConfig",
    "TransformerRecomputeConfig",
]

_FLOATS = [mstype.float32, mstype.float16]


def _delegated(holder: str, name: str) -> property:
    """A property reading and writing ``self.<holder>.<name>``: the configs keep their ways in sub-configs."""
    return property(
        lambda self: getattr(getattr(self, holder), name),
        lambda self, value: setattr(getattr(self, holder), name, value),
    )


# ---------------------------------------------------------------------------------------------
# Configuration objects


class EmbeddingOpParallelConfig(_Config):
    r"""The parallel config of :class:`VocabEmbedding`: data_parallel, model_parallel (default 1) and
    ``vocab_emb_dp`` (default True: the table is replicated; False: split by rows over model_parallel)."""

    def __init__(self, data_parallel=1, model_parallel=1, vocab_emb_dp=True):
        self._dp_mp_config = OpParallelConfig(data_parallel=data_parallel, model_parallel=model_parallel)
        Validator.check_bool(vocab_emb_dp, "vocab_emb_dp")
        self.vocab_emb_dp = vocab_emb_dp

    data_parallel = _delegated("_dp_mp_config", "data_parallel")

    model_parallel = _delegated("_dp_mp_config", "model_parallel")

    @property
    def vocab_emb_dp(self):
        return self._vocab_emb_dp

    @vocab_emb_dp.setter
    def vocab_emb_dp(self, value):
        Validator.check_bool(value, "vocab_emb_dp")
        self._vocab_emb_dp = value

    @property
    def dp_mp_config(self):
        return self._dp_mp_config


class TransformerRecomputeConfig(_Config):
    r"""Recomputation settings of the encoder / decoder layers (all bool): ``recompute`` (default False),
    ``parallel_optimizer_comm_recompute`` (False), ``mp_comm_recompute`` (True), ``recompute_slice_activation``
    (False). ``recompute=True`` calls each block's ``Cell.recompute()``."""

    def __init__(
        self,
        recompute=False,
        parallel_optimizer_comm_recompute=False,
        mp_comm_recompute=True,
        recompute_slice_activation=False,
    ):
        self.recompute = recompute
        self.parallel_optimizer_comm_recompute = parallel_optimizer_comm_recompute
        self.mp_comm_recompute = mp_comm_recompute
        self.recompute_slice_activation = recompute_slice_activation

    def _bool(name):  # noqa: N805 - a property factory used in the class body
        def get(self):
            return getattr(self, "_" + name)

        def set_(self, value):
            Validator.check_bool(value, name)
            setattr(self, "_" + name, value)

        return property(get, set_)

    recompute = _bool("recompute")
    parallel_optimizer_comm_recompute = _bool("parallel_optimizer_comm_recompute")
    mp_comm_recompute = _bool("mp_comm_recompute")
    recompute_slice_activation = _bool("recompute_slice_activation")
    del _bool


default_transformer_recompute_config = TransformerRecomputeConfig()


class TransformerOpParallelConfig(_Config):
    r"""The parallel configuration of the transformer stacks: data_parallel, model_parallel, expert_parallel,
    pipeline_stage, pipeline_segment, micro_batch_num (positive ints, default 1), recompute
    (TransformerRecomputeConfig or bool), optimizer_shard (bool, default False), gradient_aggregation_group
    (positive int, default 4), vocab_emb_dp (bool, default True). ``dp_mp_config`` (an OpParallelConfig),
    ``embedding_dp_mp_config`` and ``moe_parallel_config`` give the per-layer configs."""

    def __init__(
        self,
        data_parallel=1,
        model_parallel=1,
        expert_parallel=1,
        pipeline_stage=1,
        pipeline_segment=1,
        micro_batch_num=1,
        recompute=default_transformer_recompute_config,
        optimizer_shard=False,
        gradient_aggregation_group=4,
        vocab_emb_dp=True,
    ):
        self.recompute = recompute
        self.optimizer_shard = optimizer_shard
        self.gradient_aggregation_group = gradient_aggregation_group
        self._embed_dp_mp_config = EmbeddingOpParallelConfig(
            data_parallel=data_parallel, model_parallel=model_parallel, vocab_emb_dp=vocab_emb_dp
        )
        self._pp_config = _PipeLineConfig(
            pipeline_stage=pipeline_stage, micro_batch_num=micro_batch_num, pipeline_segment=pipeline_segment
        )
        self._moe_config = MoEParallelConfig(
            data_parallel=data_parallel, model_parallel=model_parallel, expert_parallel=expert_parallel
        )

    @property
    def recompute(self):
        return self._recompute

    @recompute.setter
    def recompute(self, value):
        if not isinstance(value, (TransformerRecomputeConfig, bool)):
            raise TypeError(f"recompute must be a TransformerRecomputeConfig/bool, but got {type(value).__name__}.")
        self._recompute = value

    vocab_emb_dp = _delegated("_embed_dp_mp_config", "vocab_emb_dp")

    @property
    def gradient_aggregation_group(self):
        return self._gradient_aggregation_group

    @gradient_aggregation_group.setter
    def gradient_aggregation_group(self, value):
        Validator.check_positive_int(value, "gradient_aggregation_group")
        self._gradient_aggregation_group = value

    micro_batch_num = _delegated("_pp_config", "micro_batch_num")

    @property
    def model_parallel(self):
        return self._embed_dp_mp_config.model_parallel

    @model_parallel.setter
    def model_parallel(self, value):
        self._embed_dp_mp_config.model_parallel = value
        self._moe_config.model_parallel = value

    @property
    def data_parallel(self):
        return self._embed_dp_mp_config.data_parallel

    @data_parallel.setter
    def data_parallel(self, value):
        self._embed_dp_mp_config.data_parallel = value
        self._moe_config.data_parallel = value

    expert_parallel = _delegated("_moe_config", "expert_parallel")

    pipeline_stage = _delegated("_pp_config", "pipeline_stage")

    pipeline_segment = _delegated("_pp_config", "pipeline_segment")

    @property
    def optimizer_shard(self):
        return self._optimizer_shard

    @optimizer_shard.setter
    def optimizer_shard(self, value):
        Validator.check_bool(value, "optimizer_shard")
        self._optimizer_shard = value

    @property
    def embedding_dp_mp_config(self):
        return self._embed_dp_mp_config

    @property
    def dp_mp_config(self):
        return self._embed_dp_mp_config.dp_mp_config

    @property
    def moe_parallel_config(self):
        return self._moe_config


default_transformer_config = TransformerOpParallelConfig()
default_embedding_parallel_config = EmbeddingOpParallelConfig()


# ---------------------------------------------------------------------------------------------
# AttentionMask, VocabEmbedding (FeedForward is in _feed_forward.py, which moe.py imports too)


class AttentionMask(Cell):
    r"""The causal attention mask from a padding mask:

    .. math::
        out_{b,i,j} = [m_{b,i} \ne 0]\,[m_{b,j} \ne 0]\,[j \le i]

    ``input_mask``: float16 or float32 (batch, seq_length), nonzero for a valid token. Returns float32
    (batch, seq_length, seq_length), 1 where position i may attend to position j.
    """

    def __init__(self, seq_length, parallel_config=default_dpmp_config):
        super().__init__()
        Validator.check_positive_int(seq_length, "seq_length", "AttentionMask")
        _check_type("AttentionMask", "parallel_config", parallel_config, [OpParallelConfig])
        self.seq_length = seq_length
        self.lower_triangle_mask = Tensor(np.tril(np.ones((seq_length, seq_length))), mstype.float32)
        self.mul = P.BatchMatMul()

    def construct(self, input_mask):
        _check_input_dtype(input_mask.dtype, "input_mask", _FLOATS, "AttentionMask")
        input_mask = F.cast(F.not_equal(input_mask, 0), mstype.float16)
        batch, seq = input_mask.shape
        mask_left = F.reshape(input_mask, (batch, seq, 1))
        mask_right = F.reshape(input_mask, (batch, 1, seq))
        attention_mask = self.mul(mask_left, mask_right)
        return attention_mask * F.expand_dims(self.lower_triangle_mask, 0)


class VocabEmbedding(Cell):
    r"""The embedding lookup :math:`out_{b,s} = T[ids_{b,s}]` from the table T (vocab_size, embedding_size),
    initialised by ``param_init`` ('normal' default). ``input_ids``: int32 (batch, seq_length). Returns
    ``(output, embedding_table)``: output (batch, seq_length, embedding_size) float32 and the table's value.
    """

    def __init__(
        self, vocab_size, embedding_size, parallel_config=default_embedding_parallel_config, param_init="normal"
    ):
        super().__init__()
        Validator.check_positive_int(vocab_size, "vocab_size", "VocabEmbedding")
        Validator.check_positive_int(embedding_size, "embedding_size", "VocabEmbedding")
        _check_type("VocabEmbedding", "parallel_config", parallel_config, [EmbeddingOpParallelConfig])
        _check_config(parallel_config)
        self.vocab_size, self.embedding_size = vocab_size, embedding_size
        self.embedding_table = Parameter(initializer(param_init, [vocab_size, embedding_size]), name="embedding_table")
        if not parallel_config.vocab_emb_dp and vocab_size % parallel_config.model_parallel != 0:
            raise ValueError(
                f"The vocab size of the embedding {vocab_size} must be a multiple of "
                f"parallel_config.model_parallel {parallel_config.model_parallel}."
            )
        self.gather = P.Gather()

    def construct(self, input_ids):
        _check_input_dtype(input_ids.dtype, "input_ids", [mstype.int32], "VocabEmbedding")
        return self.gather(self.embedding_table, input_ids, 0), self.embedding_table.value()


# ---------------------------------------------------------------------------------------------
# MultiHeadAttention


class MultiHeadAttention(Cell):
    r"""Multi-head attention, MindSpore's parallel formulation:

    .. math::
        \mathrm{MultiHeadAttention}(Q, K, V) = \mathrm{Concat}(head_1, \dots, head_h) W^O + b^O, \quad
        head_i = \mathrm{softmax}\Big(\frac{Q W^Q_i}{\sqrt[4]{d}} \frac{(K W^K_i)^T}{\sqrt[4]{d}}
        - 10000 (1 - mask)\Big) V W^V_i

    with d = hidden_size / num_heads, the projections (biased) computed in ``compute_dtype`` and the softmax in
    ``softmax_compute_type``; dropout on the probabilities (``attention_dropout_rate``) and on the output
    (``hidden_dropout_rate``). Inputs: query (batch, src_seq_length, hidden_size) or 2-D, key and value
    (batch, tgt_seq_length, hidden_size) or 2-D, float16 / float32; attention_mask float (batch, src, tgt),
    (batch, heads, src, tgt) or None (no mask). Returns ``(output, layer_present)``: output like query in its
    dtype, layer_present = (key (batch, heads, d, tgt), value (batch, heads, tgt, d)). With ``use_past``,
    ``key_past``, ``value_past`` (float16) and ``batch_valid_length`` (int32 (batch,)) drive the incremental
    prediction as in MindSpore (``is_first_iteration`` set by ``add_flags_recursive``).
    """

    def __init__(
        self,
        batch_size,
        src_seq_length,
        tgt_seq_length,
        hidden_size,
        num_heads,
        hidden_dropout_rate=0.1,
        attention_dropout_rate=0.1,
        compute_dtype=mstype.float16,
        softmax_compute_type=mstype.float32,
        param_init_type=mstype.float32,
        use_past=False,
        parallel_config=default_dpmp_config,
    ):
        super().__init__()
        name = "MultiHeadAttention"
        _check_common(
            name,
            positive=[("hidden_size", hidden_size), ("num_heads", num_heads), ("src_seq_length", src_seq_length),
                      ("tgt_seq_length", tgt_seq_length)],
            rates=[("hidden_dropout_rate", hidden_dropout_rate), ("attention_dropout_rate", attention_dropout_rate)],
            bools=[("use_past", use_past)],
            dtypes=[("compute_dtype", compute_dtype), ("softmax_compute_type", softmax_compute_type),
                    ("param_init_type", param_init_type)],
        )  # fmt: skip
        _check_type(name, "parallel_config", parallel_config, [OpParallelConfig])
        if batch_size or use_past:
            Validator.check_positive_int(batch_size, "batch_size", name)
        _check_config(parallel_config)
        if hidden_size % num_heads != 0:
            raise ValueError(
                "For 'MultiHeadAttention', the class variable 'hidden_size' must be a multiple of 'num_heads', "
                f"but got the hidden_size is {hidden_size} and the num_heads is {num_heads}."
            )
        if num_heads % parallel_config.model_parallel != 0:
            raise ValueError(
                "For 'MultiHeadAttention', the class variable 'num_heads' must be a multiple of "
                f"'parallel_config.model_parallel', but got the num_heads is {num_heads} and the "
                f"parallel_config.model_parallel  is {parallel_config.model_parallel}."
            )
        self.src_seq_length, self.tgt_seq_length = src_seq_length, tgt_seq_length
        self.hidden_size, self.batch_size = hidden_size, batch_size
        self.is_first_iteration = True
        self.n_head = num_heads
        self.size_per_head = hidden_size // num_heads
        self.use_past = use_past
        self.dtype, self.softmax_dtype = compute_dtype, softmax_compute_type
        self.scale_factor = math.sqrt(math.sqrt(self.size_per_head))
        linear = dict(compute_dtype=compute_dtype, param_init_type=param_init_type)
        self.projection = _Linear(hidden_size, hidden_size, transpose_b=False, **linear)
        self.dense1 = _Linear(hidden_size, hidden_size, **linear)  # query
        self.dense2 = _Linear(hidden_size, hidden_size, **linear)  # key
        self.dense3 = _Linear(hidden_size, hidden_size, **linear)  # value
        self.dropout = Dropout(p=hidden_dropout_rate)
        self.prob_dropout = Dropout(p=attention_dropout_rate)
        self.batch_matmul = P.BatchMatMul()
        self.softmax = P.Softmax(-1)
        if use_past:
            seq_range = np.arange(src_seq_length).reshape(1, 1, -1)
            self.range = Tensor(np.tile(seq_range, (batch_size, 1, 1)), mstype.int32)
            self.seq_length = src_seq_length
            self.attention_mask = Tensor(np.tril(np.ones((src_seq_length, src_seq_length))), mstype.int32)

    def construct(
        self, query_tensor, key_tensor, value_tensor, attention_mask, key_past=None, value_past=None,
        batch_valid_length=None,
    ):  # fmt: skip
        self._check_inputs(query_tensor, key_tensor, value_tensor, attention_mask, key_past, value_past,
                           batch_valid_length)  # fmt: skip
        ori_shape = tuple(query_tensor.shape)
        batch_size = self._get_batch_size_from_query(query_tensor)
        query_tensor = F.reshape(query_tensor, (-1, query_tensor.shape[-1]))
        key_tensor = F.reshape(key_tensor, (-1, key_tensor.shape[-1]))
        value_tensor = F.reshape(value_tensor, (-1, value_tensor.shape[-1]))
        ori_dtype = query_tensor.dtype
        query = self.dense1(F.cast(query_tensor, self.dtype))
        key = self.dense2(F.cast(key_tensor, self.dtype))
        value = self.dense3(F.cast(value_tensor, self.dtype))
        src, tgt = self._seq_length(self.src_seq_length), self._seq_length(self.tgt_seq_length)
        # query and value (batch, heads, seq, d); key (batch, heads, d, seq)
        query = F.transpose(F.reshape(query, (batch_size, src, self.n_head, self.size_per_head)), (0, 2, 1, 3))
        key = F.transpose(F.reshape(key, (batch_size, tgt, self.n_head, self.size_per_head)), (0, 2, 3, 1))
        value = F.transpose(F.reshape(value, (batch_size, tgt, self.n_head, self.size_per_head)), (0, 2, 1, 3))
        if attention_mask is not None and attention_mask.ndim == 3:
            attention_mask = F.expand_dims(attention_mask, 1)
        key_present, value_present = key, value
        if self.use_past:
            if self.is_first_iteration:
                # zero the keys and values of the padding positions
                valid = F.cast(F.less(self.range, F.reshape(batch_valid_length, (-1, 1, 1))), self.dtype)
                key_present = key * F.expand_dims(valid, 2)
                value_present = value * F.expand_dims(valid, 3)
            else:
                # write the single step's key and value at the current position of the saved ones
                valid_length = self._count_filled(key_past, key_tensor.shape[0])
                valid = F.cast(F.equal(F.reshape(valid_length, (-1, 1, 1)), self.range), self.dtype)
                current_key = F.tile(key, (1, 1, 1, self.seq_length)) * F.expand_dims(valid, 2)
                current_value = F.tile(value, (1, 1, self.seq_length, 1)) * F.expand_dims(valid, 3)
                key = key_past + current_key
                value = value_past + current_value
                key_present, value_present = key, value
                attention_mask = F.reshape(self.attention_mask, (self.seq_length, self.seq_length, 1, 1))
        layer_present = (key_present, value_present)
        attention = self._attn(query, key, value, attention_mask)
        output = self.dropout(self.projection(attention))
        return F.cast(F.reshape(output, ori_shape), ori_dtype), layer_present

    def _count_filled(self, key, batch):
        """How many positions of the saved keys are filled (nonzero in the first head's first feature)."""
        first = F.strided_slice(key, (0, 0, 0, 0), (batch, 1, 1, self.seq_length), (1, 1, 1, 1))
        return F.reduce_sum_op()(F.cast(F.not_equal(first, 0), mstype.float32), (1, 2, 3))

    def _get_batch_size_from_query(self, query):
        incr_infer = self.use_past and self.is_first_iteration
        if query.ndim == 2 and (incr_infer or not self.use_past):
            return query.shape[0] // self.src_seq_length
        return query.shape[0]

    def _seq_length(self, length):
        return 1 if self.use_past and not self.is_first_iteration else length

    def _check_inputs(self, query_tensor, key_tensor, value_tensor, attention_mask, key_past=None,
                      value_past=None, batch_valid_length=None):  # fmt: skip
        name = "MultiHeadAttention"
        for arg, value in (("query_tensor", query_tensor), ("key_tensor", key_tensor), ("value_tensor", value_tensor)):
            if not isinstance(value, Tensor):
                raise TypeError(f"For '{name}', the '{arg}' must be a Tensor, but got {type(value).__name__}.")
            _check_input_dtype(value.dtype, arg, _FLOATS, name)
        if attention_mask is not None:
            _check_input_dtype(attention_mask.dtype, "attention_mask", _FLOATS, name)
        for arg, value in (
            ("key_past", key_past),
            ("value_past", value_past),
            ("batch_valid_length", batch_valid_length),
        ):
            _check_past_none_input_none(self.use_past, arg, name, None, isinstance(value, Tensor), value is None)
        if self.use_past:
            _check_input_dtype(key_past.dtype, "key_past", [mstype.float16], name)
            _check_input_dtype(value_past.dtype, "value_past", [mstype.float16], name)
            _check_input_dtype(batch_valid_length.dtype, "batch_valid_length", [mstype.int32], name)

    def _merge_heads(self, x):
        """(batch, heads, seq, d) -> (batch * seq, heads * d)."""
        x = F.transpose(x, (0, 2, 1, 3))
        return F.reshape(x, (-1, x.shape[-2] * x.shape[-1]))

    def _attn(self, query, key, value, attention_mask):
        """The weighted sum of the values: softmax over the scaled scores with -10000 at masked positions."""
        factor = F.cast(Tensor(self.scale_factor, mstype.float32), query.dtype)
        score = self.batch_matmul(query / factor, key / factor)
        ori_dtype = score.dtype
        attention_scores = F.cast(score, self.softmax_dtype)
        if attention_mask is not None:
            if self.use_past and not self.is_first_iteration:
                # the mask of the single step: every filled position up to the current one
                index = F.reshape(F.cast(self._count_filled(key, query.shape[0]), mstype.int32) - 1, (-1, 1, 1))
                attention_mask = F.expand_dims(F.cast(F.less_equal(self.range, index), mstype.int32), 2)
            one = F.cast(Tensor([1.0], mstype.float32), attention_scores.dtype)
            adder = (one - F.cast(attention_mask, attention_scores.dtype)) * F.cast(
                Tensor([-10000.0], mstype.float32), self.softmax_dtype
            )
            attention_scores = adder + attention_scores
        attention_probs = F.cast(self.softmax(attention_scores), ori_dtype)
        attention_probs = self.prob_dropout(attention_probs)
        return self._merge_heads(self.batch_matmul(attention_probs, value))


# ---------------------------------------------------------------------------------------------
# Encoder and decoder layers


def _check_layer_args(cls_name, hidden_size, ffn_hidden_size, num_heads, parallel_config, moe_config):
    _check_type(cls_name, "parallel_config", parallel_config, [OpParallelConfig, MoEParallelConfig])
    _check_config(parallel_config)
    _check_moe_config(moe_config, parallel_config)
    mp = parallel_config.model_parallel
    for name, value in (("num_heads", num_heads), ("hidden_size", hidden_size), ("ffn_hidden_size", ffn_hidden_size)):
        if value % mp != 0:
            raise ValueError(
                f"For '{cls_name}', the class variable '{name}' must be divisibled by the "
                f"'parallel_config.model_parallel', but got the {name} is {value} and "
                f"parallel_config.model_parallel is {mp}."
            )


def _feed_forward(moe_config, hidden_size, ffn_hidden_size, hidden_dropout_rate, hidden_act, param_init_type,
                  parallel_config):  # fmt: skip
    """A layer's feed-forward block: a MoE with experts (``moe_config.expert_num`` > 1), else a FeedForward."""
    common = dict(
        hidden_size=hidden_size, dropout_rate=hidden_dropout_rate, ffn_hidden_size=ffn_hidden_size,
        param_init_type=param_init_type, hidden_act=hidden_act, parallel_config=parallel_config,
    )  # fmt: skip
    if moe_config.expert_num > 1:
        return MoE(moe_config=moe_config, **common)
    return FeedForward(**common)


class _PastMixin:
    """The saved keys and values of incremental prediction (``use_past``): reset by ``init_reset``, then
    overwritten with the step's ``layer_present``, through Assign as MindSpore does."""

    def _init_past(self, batch_size, num_heads, hidden_size, seq_length):
        self.key_past = None
        self.value_past = None
        if self.use_past:
            size_per_head = hidden_size // num_heads
            self.key_shape = (batch_size, num_heads, size_per_head, seq_length)
            self.value_shape = (batch_size, num_heads, seq_length, size_per_head)
            self.key_past = Parameter(Tensor(np.zeros(self.key_shape), mstype.float16), name="key_past")
            self.value_past = Parameter(Tensor(np.zeros(self.value_shape), mstype.float16), name="value_past")
            self.assign = P.Assign()
            self.mul = P.Mul()

    def _reset_past(self, init_reset):
        if self.use_past:
            keep = F.cast(init_reset, mstype.float16)
            self.assign(self.key_past, self.mul(self.key_past, keep))
            self.assign(self.value_past, self.mul(self.value_past, keep))

    def _update_past(self, layer_present):
        if self.use_past:
            key_present, value_present = layer_present[0], layer_present[1]
            self.assign(self.key_past, F.cast(key_present, self.key_past.dtype))
            self.assign(self.value_past, F.cast(value_present, self.value_past.dtype))

    def _check_past_inputs(self, init_reset, batch_valid_length):
        name = type(self).__name__
        _check_past_none_input_none(self.use_past, "init_reset", name, True, isinstance(init_reset, Tensor),
                                    init_reset is True)  # fmt: skip
        _check_past_none_input_none(self.use_past, "batch_valid_length", name, None,
                                    isinstance(batch_valid_length, Tensor), batch_valid_length is None)  # fmt: skip
        if self.use_past:
            _check_input_dtype(init_reset.dtype, "init_reset", [mstype.bool_], name)
            _check_input_dtype(batch_valid_length.dtype, "batch_valid_length", [mstype.int32], name)


class TransformerEncoderLayer(_PastMixin, Cell):
    r"""One encoder layer: self-attention and feed-forward, each with a residual connection. Pre-layernorm
    (default): :math:`h = x + \mathrm{Attn}(\mathrm{LN}_1(x))`, :math:`y = h + \mathrm{FFN}(\mathrm{LN}_2(h))`;
    with ``post_layernorm_residual``: :math:`h = \mathrm{LN}_1(x) + \mathrm{Attn}(\mathrm{LN}_1(x))`,
    :math:`y = \mathrm{LN}_1(\mathrm{LN}_2(h) + \mathrm{FFN}(\mathrm{LN}_2(h)))` (MindSpore reuses layernorm1).
    Layer norms run in ``layernorm_compute_type``, attention and FFN in float16. x: float16 / float32
    (batch, seq_length, hidden_size) or (batch * seq_length, hidden_size); input_mask: float
    (batch, seq_length, seq_length) or None. Returns ``(output, layer_present)``; with ``moe_config.expert_num``
    > 1 the FFN is a :class:`~opforge.parallel._transformer.moe.MoE` (``parallel_config`` a MoEParallelConfig)
    and it returns ``(output, layer_present, aux_loss)``.
    """

    def __init__(
        self,
        batch_size,
        hidden_size,
        ffn_hidden_size,
        num_heads,
        seq_length,
        attention_dropout_rate=0.1,
        hidden_dropout_rate=0.1,
        post_layernorm_residual=False,
        layernorm_compute_type=mstype.float32,
        softmax_compute_type=mstype.float32,
        param_init_type=mstype.float32,
        hidden_act="gelu",
        use_past=False,
        moe_config=default_moe_config,
        parallel_config=default_dpmp_config,
    ):
        super().__init__()
        name = "TransformerEncoderLayer"
        _check_common(
            name,
            positive=[("hidden_size", hidden_size), ("num_heads", num_heads), ("ffn_hidden_size", ffn_hidden_size),
                      ("seq_length", seq_length)],
            rates=[("attention_dropout_rate", attention_dropout_rate), ("hidden_dropout_rate", hidden_dropout_rate)],
            bools=[("post_layernorm_residual", post_layernorm_residual), ("use_past", use_past)],
            dtypes=[("layernorm_compute_type", layernorm_compute_type),
                    ("softmax_compute_type", softmax_compute_type), ("param_init_type", param_init_type)],
        )  # fmt: skip
        if batch_size or use_past:
            Validator.check_positive_int(batch_size, "batch_size", name)
        _check_layer_args(name, hidden_size, ffn_hidden_size, num_heads, parallel_config, moe_config)
        self.batch_size = batch_size
        self.use_moe = moe_config.expert_num > 1
        self.use_past = use_past
        self.seq_length, self.hidden_size = seq_length, hidden_size
        self.layernorm1 = _LayerNorm((hidden_size,)).to_float(layernorm_compute_type)
        self.layernorm2 = _LayerNorm((hidden_size,)).to_float(layernorm_compute_type)
        self.attention = MultiHeadAttention(
            batch_size=batch_size, src_seq_length=seq_length, tgt_seq_length=seq_length, hidden_size=hidden_size,
            num_heads=num_heads, hidden_dropout_rate=hidden_dropout_rate,
            attention_dropout_rate=attention_dropout_rate, softmax_compute_type=softmax_compute_type,
            param_init_type=param_init_type, use_past=use_past,
            parallel_config=getattr(parallel_config, "dpmp", parallel_config),
        )  # fmt: skip
        self.output = _feed_forward(moe_config, hidden_size, ffn_hidden_size, hidden_dropout_rate, hidden_act,
                                    param_init_type, parallel_config)  # fmt: skip
        self.post_layernorm_residual = post_layernorm_residual
        # MindSpore's residual adds (2-D and 3-D), attributes a subclass's construct uses (the zoo's PanGu-alpha)
        self.add = P.Add()
        self.add_3d = P.Add()
        self.dtype = mstype.float16
        self._init_past(batch_size, num_heads, hidden_size, seq_length)

    def construct(self, x, input_mask=None, init_reset=True, batch_valid_length=None):
        name = "TransformerEncoderLayer"
        _check_input_dtype(x.dtype, "x", _FLOATS, name)
        if input_mask is not None:
            _check_input_dtype(input_mask.dtype, "input_mask", _FLOATS, name)
        self._check_past_inputs(init_reset, batch_valid_length)
        x_shape = tuple(x.shape)
        x = F.reshape(x, (-1, x_shape[-1]))
        input_x = x if self.post_layernorm_residual else self.layernorm1(x)
        input_x = F.cast(input_x, self.dtype)
        self._reset_past(init_reset)
        attention, layer_present = self.attention(
            input_x, input_x, input_x, input_mask, self.key_past, self.value_past, batch_valid_length
        )
        x = self.add(input_x, attention) if self.post_layernorm_residual else self.add(x, attention)
        output_x = F.cast(self.layernorm2(x), self.dtype)
        aux_loss = None
        if self.use_moe:
            mlp_logit, aux_loss = self.output(output_x)
        else:
            mlp_logit = self.output(output_x)
        self._update_past(layer_present)
        if self.post_layernorm_residual:
            output = self.layernorm1(self.add(output_x, mlp_logit))
        else:
            output = self.add(x, mlp_logit)
        if self.use_moe:
            return F.reshape(output, x_shape), layer_present, aux_loss
        return F.reshape(output, x_shape), layer_present


class TransformerDecoderLayer(_PastMixin, Cell):
    r"""One decoder layer: self-attention, cross-attention over ``encoder_output`` (skipped when it is None)
    and feed-forward, each with a residual connection (pre-layernorm by default; ``post_layernorm_residual``
    adds the normalized input instead). hidden_stats: (batch, tgt_seq_length, hidden_size) or 2-D;
    decoder_mask (batch, tgt, tgt), memory_mask (batch, tgt, src): float or None. Returns ``(output,
    layer_present)``, layer_present holding the self-attention key/value and, with an encoder output, the
    cross-attention key/value; with ``moe_config.expert_num`` > 1 (a MoE FFN) ``(output, layer_present,
    aux_loss)``. ``use_past=True`` raises ValueError, as in MindSpore.
    """

    def __init__(
        self,
        hidden_size,
        ffn_hidden_size,
        num_heads,
        batch_size,
        src_seq_length,
        tgt_seq_length,
        attention_dropout_rate=0.1,
        hidden_dropout_rate=0.1,
        post_layernorm_residual=False,
        use_past=False,
        layernorm_compute_type=mstype.float32,
        softmax_compute_type=mstype.float32,
        param_init_type=mstype.float32,
        hidden_act="gelu",
        moe_config=default_moe_config,
        parallel_config=default_dpmp_config,
    ):
        super().__init__()
        name = "TransformerDecoderLayer"
        _check_common(
            name,
            positive=[("hidden_size", hidden_size), ("num_heads", num_heads), ("ffn_hidden_size", ffn_hidden_size),
                      ("src_seq_length", src_seq_length), ("tgt_seq_length", tgt_seq_length)],
            rates=[("attention_dropout_rate", attention_dropout_rate), ("hidden_dropout_rate", hidden_dropout_rate)],
            bools=[("post_layernorm_residual", post_layernorm_residual), ("use_past", use_past)],
            dtypes=[("layernorm_compute_type", layernorm_compute_type),
                    ("softmax_compute_type", softmax_compute_type), ("param_init_type", param_init_type)],
        )  # fmt: skip
        if batch_size or use_past:
            Validator.check_positive_int(batch_size, "batch_size", name)
        _check_layer_args(name, hidden_size, ffn_hidden_size, num_heads, parallel_config, moe_config)
        if use_past:
            raise ValueError(f"The {name} does not support use_past=True.")
        self.batch_size, self.use_past, self.use_moe = batch_size, use_past, moe_config.expert_num > 1
        self.softmax_compute_type = softmax_compute_type
        self.src_seq_length, self.tgt_seq_length, self.hidden_size = src_seq_length, tgt_seq_length, hidden_size
        self.layernorm1 = _LayerNorm((hidden_size,)).to_float(layernorm_compute_type)
        self.layernorm2 = _LayerNorm((hidden_size,)).to_float(layernorm_compute_type)
        config = getattr(parallel_config, "dpmp", parallel_config)
        common = dict(
            hidden_size=hidden_size, num_heads=num_heads, batch_size=batch_size,
            hidden_dropout_rate=hidden_dropout_rate, attention_dropout_rate=attention_dropout_rate,
            softmax_compute_type=softmax_compute_type, use_past=use_past, param_init_type=param_init_type,
            parallel_config=config,
        )  # fmt: skip
        self.attention = MultiHeadAttention(src_seq_length=tgt_seq_length, tgt_seq_length=tgt_seq_length, **common)
        self.cross_attention = MultiHeadAttention(
            src_seq_length=tgt_seq_length, tgt_seq_length=src_seq_length, **common
        )
        self.cross_attention_layernorm = _LayerNorm((hidden_size,)).to_float(layernorm_compute_type)
        self.output = _feed_forward(moe_config, hidden_size, ffn_hidden_size, hidden_dropout_rate, hidden_act,
                                    param_init_type, parallel_config)  # fmt: skip
        self.post_layernorm_residual = post_layernorm_residual
        self.add = P.Add()
        self.add_3d = P.Add()
        self.dtype = mstype.float16
        self._init_past(batch_size, num_heads, hidden_size, tgt_seq_length)

    def construct(self, hidden_stats, decoder_mask, encoder_output=None, memory_mask=None, init_reset=True,
                  batch_valid_length=None):  # fmt: skip
        name = "TransformerDecoderLayer"
        _check_input_dtype(hidden_stats.dtype, "hidden_states", _FLOATS, name)
        for arg, value in (("attention_mask", decoder_mask), ("encoder_output", encoder_output),
                           ("memory_mask", memory_mask)):  # fmt: skip
            if value is not None:
                _check_input_dtype(value.dtype, arg, _FLOATS, name)
        self._check_past_inputs(init_reset, batch_valid_length)
        hidden_shape = tuple(hidden_stats.shape)
        hidden_stats = F.reshape(hidden_stats, (-1, hidden_shape[-1]))
        input_x = F.cast(self.layernorm1(hidden_stats), self.dtype)
        attention, layer_present = self.attention(
            input_x, input_x, input_x, decoder_mask, self.key_past, self.value_past, batch_valid_length
        )
        x = input_x + attention if self.post_layernorm_residual else hidden_stats + attention
        if encoder_output is not None:
            middle_output = F.cast(self.cross_attention_layernorm(x), self.dtype)
            encoder_output = F.cast(encoder_output, self.dtype)
            cross_attn_output, cross_layer_present = self.cross_attention(
                middle_output, encoder_output, encoder_output, memory_mask, self.key_past, self.value_past,
                batch_valid_length,
            )  # fmt: skip
            layer_present += cross_layer_present
            x = middle_output + cross_attn_output if self.post_layernorm_residual else x + cross_attn_output
        output_x = F.cast(self.layernorm2(x), self.dtype)
        aux_loss = None
        if self.use_moe:
            mlp_logit, aux_loss = self.output(output_x)
        else:
            mlp_logit = self.output(output_x)
        output = output_x + mlp_logit if self.post_layernorm_residual else x + mlp_logit
        if self.use_moe:
            return F.reshape(output, hidden_shape), layer_present, aux_loss
        return F.reshape(output, hidden_shape), layer_present


# ---------------------------------------------------------------------------------------------
# The stacks


def _get_lambda_func(total_layer=None):
    """MindSpore's default per-block setting: pipeline stage, gradient fusion index and recomputation."""

    def _set_parallel_configure_for_layer(network, layer_id, offset, parallel_config, layers):
        if total_layer:
            layers = total_layer
        if layers < parallel_config.pipeline_stage:
            raise ValueError(f"layers {layers} must be larger than pipeline stage {parallel_config.pipeline_stage}")
        pp_dis = max(layers // parallel_config.pipeline_stage, 1)
        network.pipeline_stage = min((layer_id + offset) // pp_dis, parallel_config.pipeline_stage - 1)
        recompute = parallel_config.recompute
        if (recompute if isinstance(recompute, bool) else recompute.recompute) and hasattr(network, "recompute"):
            network.recompute()

    return _set_parallel_configure_for_layer


def _check_stack_args(cls_name, batch_size, parallel_config, moe_config):
    Validator.check_positive_int(batch_size, "batch_size", cls_name)
    _check_type(cls_name, "parallel_config", parallel_config, [TransformerOpParallelConfig])
    _check_config(parallel_config)
    _check_moe_config(moe_config, parallel_config)


def _layer_config(parallel_config, use_moe):
    """The stacks hand their layers the MoE parallel config with experts, else the (data, model) one."""
    return parallel_config.moe_parallel_config if use_moe else parallel_config.dp_mp_config


class TransformerEncoder(Cell):
    r"""``num_layers`` stacked :class:`TransformerEncoderLayer` (arguments as there, plus ``lambda_func``,
    ``offset`` and a TransformerOpParallelConfig). ``construct(hidden_states, attention_mask, init_reset=True,
    batch_valid_length=None)`` returns ``(output, layer_present)``, layer_present a tuple of each layer's
    (key, value); with ``moe_config.expert_num`` > 1 ``(output, layer_present, accum_loss)``, accum_loss the sum
    of the layers' aux losses (float32 scalar)."""

    def __init__(
        self,
        batch_size,
        num_layers,
        hidden_size,
        ffn_hidden_size,
        seq_length,
        num_heads,
        attention_dropout_rate=0.1,
        hidden_dropout_rate=0.1,
        hidden_act="gelu",
        post_layernorm_residual=False,
        layernorm_compute_type=mstype.float32,
        softmax_compute_type=mstype.float32,
        param_init_type=mstype.float32,
        lambda_func=None,
        offset=0,
        use_past=False,
        moe_config=default_moe_config,
        parallel_config=default_transformer_config,
    ):
        super().__init__()
        name = "TransformerEncoder"
        Validator.check_positive_int(num_layers, "num_layers", name)
        Validator.check_non_negative_int(offset, "offset", name)
        _check_stack_args(name, batch_size, parallel_config, moe_config)
        self.use_moe = moe_config.expert_num > 1
        self.aux_loss = Tensor(0.0, mstype.float32)
        self.num_layers = num_layers
        self.blocks = CellList()
        lambda_func = lambda_func or _get_lambda_func()
        for i in range(num_layers):
            block = TransformerEncoderLayer(
                hidden_size=hidden_size, batch_size=batch_size, ffn_hidden_size=ffn_hidden_size,
                seq_length=seq_length, attention_dropout_rate=attention_dropout_rate,
                hidden_dropout_rate=hidden_dropout_rate, layernorm_compute_type=layernorm_compute_type,
                softmax_compute_type=softmax_compute_type, num_heads=num_heads, hidden_act=hidden_act,
                post_layernorm_residual=post_layernorm_residual, param_init_type=param_init_type,
                use_past=use_past, moe_config=moe_config,
                parallel_config=_layer_config(parallel_config, self.use_moe),
            )  # fmt: skip
            lambda_func(block, layer_id=i, layers=num_layers, offset=offset, parallel_config=parallel_config)
            self.blocks.append(block)

    def construct(self, hidden_states, attention_mask, init_reset=True, batch_valid_length=None):
        present_layer = ()
        accum_loss = self.aux_loss
        for i in range(self.num_layers):
            outputs = self.blocks[i](hidden_states, attention_mask, init_reset, batch_valid_length)
            hidden_states, present = outputs[0], outputs[1]
            present_layer = present_layer + (present,)
            if self.use_moe:
                accum_loss = accum_loss + outputs[2]
        if self.use_moe:
            return hidden_states, present_layer, accum_loss
        return hidden_states, present_layer


class TransformerDecoder(Cell):
    r"""``num_layers`` stacked :class:`TransformerDecoderLayer`. ``construct(hidden_states, attention_mask,
    encoder_output=None, memory_mask=None, init_reset=True, batch_valid_length=None)`` returns ``(output,
    layer_present)``, with experts ``(output, layer_present, accum_loss)``."""

    def __init__(
        self,
        num_layers,
        batch_size,
        hidden_size,
        ffn_hidden_size,
        src_seq_length,
        tgt_seq_length,
        num_heads,
        attention_dropout_rate=0.1,
        hidden_dropout_rate=0.1,
        post_layernorm_residual=False,
        layernorm_compute_type=mstype.float32,
        softmax_compute_type=mstype.float32,
        param_init_type=mstype.float32,
        hidden_act="gelu",
        lambda_func=None,
        use_past=False,
        offset=0,
        moe_config=default_moe_config,
        parallel_config=default_transformer_config,
    ):
        super().__init__()
        name = "TransformerDecoder"
        Validator.check_positive_int(num_layers, "num_layers", name)
        Validator.check_non_negative_int(offset, "offset", name)
        _check_stack_args(name, batch_size, parallel_config, moe_config)
        self.use_moe = moe_config.expert_num > 1
        self.aux_loss = Tensor(0.0, mstype.float32)
        self.num_layers = num_layers
        self.blocks = CellList()
        lambda_func = lambda_func or _get_lambda_func()
        for i in range(num_layers):
            block = TransformerDecoderLayer(
                hidden_size=hidden_size, batch_size=batch_size, ffn_hidden_size=ffn_hidden_size,
                src_seq_length=src_seq_length, tgt_seq_length=tgt_seq_length,
                attention_dropout_rate=attention_dropout_rate, hidden_dropout_rate=hidden_dropout_rate,
                num_heads=num_heads, layernorm_compute_type=layernorm_compute_type,
                softmax_compute_type=softmax_compute_type, hidden_act=hidden_act, use_past=use_past,
                param_init_type=param_init_type, post_layernorm_residual=post_layernorm_residual,
                moe_config=moe_config, parallel_config=_layer_config(parallel_config, self.use_moe),
            )  # fmt: skip
            lambda_func(block, layer_id=i, layers=num_layers, offset=offset, parallel_config=parallel_config)
            self.blocks.append(block)

    def construct(self, hidden_states, attention_mask, encoder_output=None, memory_mask=None, init_reset=True,
                  batch_valid_length=None):  # fmt: skip
        present_layer = ()
        accum_loss = self.aux_loss
        for i in range(self.num_layers):
            outputs = self.blocks[i](
                hidden_states, attention_mask, encoder_output, memory_mask, init_reset, batch_valid_length
            )
            hidden_states, present = outputs[0], outputs[1]
            present_layer = present_layer + (present,)
            if self.use_moe:
                accum_loss = accum_loss + outputs[2]
        if self.use_moe:
            return hidden_states, present_layer, accum_loss
        return hidden_states, present_layer


class Transformer(Cell):
    r"""An encoder (``encoder_layers``, > 0) and a decoder (``decoder_layers``, >= 0; 0: encoder only).
    ``construct(encoder_inputs, encoder_masks, decoder_inputs=None, decoder_masks=None, memory_mask=None,
    init_reset=True, batch_valid_length=None)`` returns ``(output, encoder_layer_present,
    decoder_layer_present)``: the decoder's output (the encoder's without a decoder; decoder_layer_present is
    then None); with ``moe_config.expert_num`` > 1 ``(output, encoder_layer_present, decoder_layer_present,
    accum_loss)``, accum_loss the encoder's and the decoder's aux losses summed."""

    def __init__(
        self,
        hidden_size,
        batch_size,
        ffn_hidden_size,
        src_seq_length,
        tgt_seq_length,
        encoder_layers=3,
        decoder_layers=3,
        num_heads=2,
        attention_dropout_rate=0.1,
        hidden_dropout_rate=0.1,
        hidden_act="gelu",
        post_layernorm_residual=False,
        layernorm_compute_type=mstype.float32,
        softmax_compute_type=mstype.float32,
        param_init_type=mstype.float32,
        lambda_func=None,
        use_past=False,
        moe_config=default_moe_config,
        parallel_config=default_transformer_config,
    ):
        super().__init__()
        name = "Transformer"
        Validator.check_positive_int(encoder_layers, "encoder_layers", name)
        Validator.check_non_negative_int(decoder_layers, "decoder_layers", name)
        _check_stack_args(name, batch_size, parallel_config, moe_config)
        if encoder_layers > 0 and decoder_layers > 0 and use_past:
            raise ValueError(f"The {name} with encoder and decoder does not support use_past=True.")
        self.batch_size, self.hidden_size = batch_size, hidden_size
        self.src_seq_length, self.tgt_seq_length, self.use_past = src_seq_length, tgt_seq_length, use_past
        self.use_moe = moe_config.expert_num > 1
        self.aux_loss = Tensor(0.0, mstype.float32)
        lambda_func = lambda_func or _get_lambda_func(total_layer=encoder_layers + decoder_layers)
        common = dict(
            batch_size=batch_size, hidden_size=hidden_size, ffn_hidden_size=ffn_hidden_size, num_heads=num_heads,
            attention_dropout_rate=attention_dropout_rate, hidden_dropout_rate=hidden_dropout_rate,
            hidden_act=hidden_act, layernorm_compute_type=layernorm_compute_type,
            softmax_compute_type=softmax_compute_type, post_layernorm_residual=post_layernorm_residual,
            param_init_type=param_init_type, lambda_func=lambda_func, use_past=use_past, moe_config=moe_config,
            parallel_config=parallel_config,
        )  # fmt: skip
        self.encoder = TransformerEncoder(num_layers=encoder_layers, seq_length=src_seq_length, **common)
        self.decoder = None
        if decoder_layers > 0:
            self.decoder = TransformerDecoder(
                num_layers=decoder_layers, src_seq_length=src_seq_length, tgt_seq_length=tgt_seq_length,
                offset=encoder_layers, **common,
            )  # fmt: skip

    def construct(self, encoder_inputs, encoder_masks, decoder_inputs=None, decoder_masks=None, memory_mask=None,
                  init_reset=True, batch_valid_length=None):  # fmt: skip
        accum_loss = self.aux_loss
        encoder_outputs = self.encoder(encoder_inputs, encoder_masks, init_reset, batch_valid_length)
        encoder_output, encoder_layer_present = encoder_outputs[0], encoder_outputs[1]
        if self.use_moe:
            accum_loss = accum_loss + encoder_outputs[2]
        output, decoder_layer_present = encoder_output, None
        if self.decoder is not None:
            decoder_outputs = self.decoder(
                decoder_inputs, decoder_masks, encoder_output, memory_mask, init_reset, batch_valid_length
            )
            output, decoder_layer_present = decoder_outputs[0], decoder_outputs[1]
            if self.use_moe:
                accum_loss = accum_loss + decoder_outputs[2]
        if self.use_moe:
            return output, encoder_layer_present, decoder_layer_present, accum_loss
        return output, encoder_layer_present, decoder_layer_present
