"""A LLaMA decoder as mindformers writes it (llama.py, llama_layer.py, llama_transformer.py): an RMSNorm computed
in float32 (``Square``/``ReduceMean``/``Rsqrt``), rotary embeddings from precomputed cos/sin tables with a
``rotate_half`` by ``StridedSlice``/``Neg``/``Concat``, attention by ``BatchMatMul`` scores under a causal mask
from ``ops.triu``, ``Softmax`` run in float16 with casts on either side, a SiLU-gated feed-forward, a tied-free LM
head, the shifted-token masked cross entropy, a warm-up + cosine ``LearningRateSchedule`` for
``AdamWeightDecay`` with ``get_lr`` over parameter groups, and ``TrainOneStepWithLossScaleCell`` driven by a
``DynamicLossScaleUpdateCell``."""

import math

import numpy as np

import opforge.common.dtype as mstype
from opforge import Parameter, Tensor, nn, ops
from opforge.common.initializer import Normal, initializer
from opforge.ops import operations as P


class LlamaRMSNorm(nn.Cell):
    def __init__(self, dim, eps=1e-6, compute_type=mstype.float32):
        super().__init__()
        self.eps = eps
        self.compute_type = compute_type
        self.weight = Parameter(initializer("ones", (dim,), dtype=mstype.float32), parallel_optimizer=False)
        self.square = P.Square()
        self.mean = P.ReduceMean(keep_dims=True)
        self.add = P.Add()
        self.rsqrt = P.Rsqrt()
        self.mul = P.Mul()
        self.mul2 = P.Mul()
        self.cast = P.Cast()

    def construct(self, x):
        original_type = x.dtype
        h = self.cast(x, self.compute_type)
        norm_factor = self.rsqrt(self.add(self.mean(self.square(h), -1), self.eps))
        output = self.mul(h, norm_factor)
        output = self.mul2(self.cast(output, original_type), self.cast(self.weight, original_type))
        return output


def precompute_freqs(head_dim, seq_length, theta=10000.0):
    """cos/sin tables of shape (seq_length, head_dim), the frequencies repeated for both halves."""
    freqs_base = np.arange(0, head_dim, 2)[: head_dim // 2].astype(np.float32)
    freqs = 1.0 / (theta ** (freqs_base / head_dim))
    t = np.arange(0, seq_length, 1).astype(np.float32)
    freqs = np.outer(t, freqs)
    emb = np.concatenate((freqs, freqs), axis=-1)
    return Tensor(np.cos(emb), mstype.float32), Tensor(np.sin(emb), mstype.float32)


class LlamaRotaryEmbedding(nn.Cell):
    def __init__(self, head_dim, compute_dtype=mstype.float32):
        super().__init__()
        self.half_head_dim = head_dim // 2
        self.head_dim = head_dim
        self.dtype = compute_dtype
        self.add = P.Add()
        self.mul = P.Mul()
        self.neg = P.Neg()
        self.slice = P.StridedSlice()
        self.concat = P.Concat(axis=-1)
        self.shape = P.Shape()
        self.cast = P.Cast()

    def rotate_half(self, x, swap_mask=None):
        bs, n_head, seq, _ = self.shape(x)
        x1 = self.slice(x, (0, 0, 0, 0), (bs, n_head, seq, self.half_head_dim), (1, 1, 1, 1))
        x2 = self.slice(x, (0, 0, 0, self.half_head_dim), (bs, n_head, seq, self.head_dim), (1, 1, 1, 1))
        return self.concat((self.neg(x2), x1))

    def construct(self, xq, xk, freqs_cis):
        original_type = xq.dtype
        xq = self.cast(xq, self.dtype)
        xk = self.cast(xk, self.dtype)
        freqs_cos, freqs_sin = freqs_cis
        xq_out = self.add(self.mul(xq, freqs_cos), self.mul(self.rotate_half(xq), freqs_sin))
        xk_out = self.add(self.mul(xk, freqs_cos), self.mul(self.rotate_half(xk), freqs_sin))
        return self.cast(xq_out, original_type), self.cast(xk_out, original_type)


class CausalMask(nn.Cell):
    """An additive mask: 0 where a query may attend (itself and earlier, non-padded tokens), -10000 elsewhere."""

    def __init__(self, seq_length, compute_type=mstype.float16):
        super().__init__()
        self.dtype = compute_type
        self.multiply_data = Tensor([-10000.0], dtype=compute_type)
        self.one = Tensor([1.0], dtype=compute_type)
        self.lower_triangle_mask = Tensor(np.tril(np.ones((seq_length, seq_length))), mstype.float32)
        self.upper = ops.triu(ops.ones((seq_length, seq_length), mstype.float32), diagonal=1)
        self.expand_dim = P.ExpandDims()
        self.mul = P.Mul()
        self.sub = P.Sub()
        self.cast = P.Cast()
        self.not_equal = P.NotEqual()

    def construct(self, tokens, pad_token_id=0):
        input_mask = self.cast(self.not_equal(tokens, pad_token_id), self.dtype)
        bs, seq_len = P.Shape()(tokens)
        attention_mask = self.mul(self.expand_dim(input_mask, 1), self.cast(1 - self.upper, self.dtype))
        attention_mask = P.Reshape()(attention_mask, (bs, 1, seq_len, seq_len))
        return self.mul(self.sub(self.one, attention_mask), self.multiply_data)


class LlamaAttention(nn.Cell):
    def __init__(self, dim, n_heads, compute_dtype=mstype.float16, softmax_compute_dtype=mstype.float16):
        super().__init__()
        self.n_head = n_heads
        self.head_dim = dim // n_heads
        self.hidden_size = dim
        self.inv_norm_factor = Tensor(1.0 / math.sqrt(self.head_dim), dtype=compute_dtype)
        self.dtype = compute_dtype
        self.softmax_dtype = softmax_compute_dtype
        self.wq = nn.Dense(dim, dim, has_bias=False).to_float(compute_dtype)
        self.wk = nn.Dense(dim, dim, has_bias=False).to_float(compute_dtype)
        self.wv = nn.Dense(dim, dim, has_bias=False).to_float(compute_dtype)
        self.wo = nn.Dense(dim, dim, has_bias=False).to_float(compute_dtype)
        self.apply_rotary_emb = LlamaRotaryEmbedding(self.head_dim, mstype.float32)
        self.reshape = P.Reshape()
        self.transpose = P.Transpose()
        self.merger_head_transpose = P.Transpose()
        self.batch_matmul = P.BatchMatMul()
        self.batch_matmul_q_k = P.BatchMatMul(transpose_b=True)
        self.mul = P.Mul()
        self.add = P.Add()
        self.softmax = P.Softmax()
        self.cast = P.Cast()
        self.cast_attn = P.Cast()
        self.shape = P.Shape()

    def construct(self, x, freqs_cis, mask):
        ori_dtype = x.dtype
        bs, seq_len, _ = self.shape(x)
        x = self.cast(x, self.dtype)
        query = self.reshape(self.wq(x), (bs, seq_len, self.n_head, self.head_dim))
        key = self.reshape(self.wk(x), (bs, seq_len, self.n_head, self.head_dim))
        value = self.reshape(self.wv(x), (bs, seq_len, self.n_head, self.head_dim))
        query = self.transpose(query, (0, 2, 1, 3))
        key = self.transpose(key, (0, 2, 1, 3))
        value = self.transpose(value, (0, 2, 1, 3))
        query, key = self.apply_rotary_emb(query, key, freqs_cis)
        attention = self._attn(query, key, value, mask)
        output = self.wo(attention)
        return self.cast(output, ori_dtype)

    def _merge_heads(self, x):
        x = self.merger_head_transpose(x, (0, 2, 1, 3))
        bs, seq_len, n_head, head_dim = self.shape(x)
        return self.reshape(x, (bs, seq_len, n_head * head_dim))

    def _attn(self, query, key, value, mask):
        score = self.batch_matmul_q_k(query, key)
        score = self.mul(score, self.inv_norm_factor)
        score = self.add(mask, score)
        attention_probs = self.softmax(self.cast_attn(score, self.softmax_dtype))
        weighted_values = self.batch_matmul(self.cast(attention_probs, self.dtype), value)
        return self._merge_heads(weighted_values)


class LlamaFeedForward(nn.Cell):
    def __init__(self, dim, hidden_dim, compute_dtype=mstype.float16):
        super().__init__()
        self.dtype = compute_dtype
        self.w1 = nn.Dense(dim, hidden_dim, has_bias=False).to_float(compute_dtype)
        self.w2 = nn.Dense(hidden_dim, dim, has_bias=False).to_float(compute_dtype)
        self.w3 = nn.Dense(dim, hidden_dim, has_bias=False).to_float(compute_dtype)
        self.silu = nn.SiLU()
        self.mul = P.Mul()
        self.cast = P.Cast()

    def construct(self, x):
        x = self.cast(x, self.dtype)
        gate = self.silu(self.w1(x))
        hidden = self.w3(x)
        return self.w2(self.mul(hidden, gate))


class LlamaDecodeLayer(nn.Cell):
    def __init__(self, dim, n_heads, hidden_dim, layer_id, norm_eps=1e-5, compute_dtype=mstype.float16):
        super().__init__()
        self.layer_id = layer_id
        self.attention_norm = LlamaRMSNorm(dim, norm_eps)
        self.ffn_norm = LlamaRMSNorm(dim, norm_eps)
        self.attention = LlamaAttention(dim, n_heads, compute_dtype)
        self.feed_forward = LlamaFeedForward(dim, hidden_dim, compute_dtype)
        self.add = P.Add()
        self.cast = P.Cast()

    def construct(self, x, freqs_cis, mask):
        h = self.attention(self.attention_norm(x), freqs_cis, mask)
        h = self.add(x, self.cast(h, x.dtype))
        ffn_out = self.feed_forward(self.ffn_norm(h))
        return self.add(h, self.cast(ffn_out, h.dtype))


class LlamaEmbedding(nn.Cell):
    def __init__(self, vocab_table_size, embedding_size, param_init="normal"):
        super().__init__()
        self.embedding_weight = Parameter(initializer(param_init, [vocab_table_size, embedding_size],
                                                      dtype=mstype.float32), name="embedding_weight")  # fmt: skip
        self.gather = P.Gather()

    def construct(self, input_ids):
        return self.gather(self.embedding_weight, input_ids, 0)


class LlamaForCausalLM(nn.Cell):
    """Token ids (bs, seq + 1) -> the mean cross entropy of predicting each next non-pad token."""

    def __init__(self, vocab_size=64, dim=32, n_heads=4, n_layers=2, hidden_dim=64, seq_length=16, pad_token_id=0,
                 compute_dtype=mstype.float16):  # fmt: skip
        super().__init__()
        self.pad_token_id = pad_token_id
        self.seq_length = seq_length
        self.tok_embeddings = LlamaEmbedding(vocab_size, dim, param_init=Normal(sigma=0.02))
        self.freqs_cis = precompute_freqs(dim // n_heads, seq_length)
        self.casual_mask = CausalMask(seq_length)
        self.layers = nn.CellList()
        for layer_id in range(n_layers):
            self.layers.append(LlamaDecodeLayer(dim, n_heads, hidden_dim, layer_id, compute_dtype=compute_dtype))
        self.norm_out = LlamaRMSNorm(dim)
        self.lm_head = nn.Dense(dim, vocab_size, has_bias=False, weight_init="normal").to_float(compute_dtype)
        self.slice = P.StridedSlice()
        self.not_equal = P.NotEqual()
        self.reshape = P.Reshape()
        self.cast = P.Cast()
        self.loss = nn.CrossEntropyLoss(reduction="none")
        self.reduce_sum = P.ReduceSum()
        self.mul = P.Mul()
        self.add = P.Add()

    def construct(self, input_ids):
        bs, seq = input_ids.shape
        tokens = self.slice(input_ids, (0, 0), (bs, seq - 1), (1, 1))
        labels = self.slice(input_ids, (0, 1), (bs, seq), (1, 1))
        mask = self.casual_mask(tokens, self.pad_token_id)
        h = self.tok_embeddings(tokens)
        for layer in self.layers:
            h = layer(h, self.freqs_cis, mask)
        logits = self.lm_head(self.norm_out(h))
        input_mask = self.cast(self.not_equal(labels, self.pad_token_id), mstype.float32)
        logits = self.cast(self.reshape(logits, (-1, logits.shape[-1])), mstype.float32)
        per_token = self.loss(logits, self.reshape(labels, (-1,)))
        input_mask = self.reshape(input_mask, (-1,))
        numerator = self.reduce_sum(self.mul(per_token, input_mask))
        denominator = self.add(self.reduce_sum(input_mask), Tensor(1e-8, mstype.float32))
        return numerator / denominator


class LearningRateWiseLayer(nn.learning_rate_schedule.LearningRateSchedule):
    """A linear warm-up to ``learning_rate`` then a cosine decay to ``lr_end`` (mindformers' WarmUpCosineDecayV1)."""

    def __init__(self, learning_rate, lr_end, warmup_steps, total_steps):
        super().__init__()
        self.learning_rate = learning_rate
        self.lr_end = Tensor(lr_end, mstype.float32)
        self.warmup_steps = Tensor(max(warmup_steps, 1), mstype.float32)
        self.decay_steps = Tensor(max(total_steps - warmup_steps, 1), mstype.float32)
        self.math_pi = math.pi
        self.zero_constant = Tensor(0.0, mstype.float32)
        self.greater = P.Greater()
        self.min = P.Minimum()
        self.max = P.Maximum()
        self.cos = P.Cos()
        self.cast = P.Cast()

    def construct(self, global_step):
        global_step = self.cast(global_step, mstype.float32)
        if self.greater(self.warmup_steps, global_step):
            return self.learning_rate * global_step / self.warmup_steps
        p = self.min(self.max(global_step - self.warmup_steps, self.zero_constant), self.decay_steps)
        percent = p / self.decay_steps
        return self.lr_end + 0.5 * (self.learning_rate - self.lr_end) * (1.0 + self.cos(self.math_pi * percent))


def get_optimizer_grouped_parameters(model, weight_decay):
    """Weight decay on matrices only: the norms' weights (and any bias) in a group without it."""
    decay_params, other_params = [], []
    for param in model.trainable_params():
        if len(param.shape) == 1 or "norm" in param.name.lower() or param.name.endswith(".bias"):
            other_params.append(param)
        else:
            decay_params.append(param)
    return [{"params": decay_params, "weight_decay": weight_decay}, {"params": other_params, "weight_decay": 0.0},
            {"order_params": model.trainable_params()}]  # fmt: skip
