"""A Vision Transformer as the model zoo writes it (vit.py): patch embedding by a strided convolution, a class
token and position embedding drawn with ``initializer(TruncatedNormal(...))``, pre-norm encoder blocks of
hand-written attention (BatchMatMul + Softmax) and a GELU feed-forward, ``ops.broadcast_to`` for the batch."""

import opforge.numpy as mnp
from opforge import Parameter, Tensor, nn, ops
from opforge import dtype as mstype
from opforge.common.initializer import TruncatedNormal, initializer


class PatchEmbedding(nn.Cell):
    def __init__(self, image_size=32, patch_size=8, embed_dim=64, input_channels=3):
        super().__init__()
        self.num_patches = (image_size // patch_size) ** 2
        self.conv = nn.Conv2d(input_channels, embed_dim, kernel_size=patch_size, stride=patch_size, has_bias=True)
        self.reshape = ops.Reshape()
        self.transpose = ops.Transpose()

    def construct(self, x):
        x = self.conv(x)
        b, c, h, w = x.shape
        x = self.reshape(x, (b, c, h * w))
        return self.transpose(x, (0, 2, 1))


class Attention(nn.Cell):
    def __init__(self, dim, num_heads=8, keep_prob=1.0, attention_keep_prob=1.0):
        super().__init__()
        self.num_heads = num_heads
        head_dim = dim // num_heads
        self.scale = Tensor(head_dim**-0.5, mstype.float32)
        self.qkv = nn.Dense(dim, dim * 3)
        self.attn_drop = nn.Dropout(p=1.0 - attention_keep_prob)
        self.out = nn.Dense(dim, dim)
        self.out_drop = nn.Dropout(p=1.0 - keep_prob)
        self.mul = ops.Mul()
        self.reshape = ops.Reshape()
        self.transpose = ops.Transpose()
        self.unstack = ops.Unstack(axis=0)
        self.attn_matmul_v = ops.BatchMatMul()
        self.q_matmul_k = ops.BatchMatMul(transpose_b=True)
        self.softmax = nn.Softmax(axis=-1)

    def construct(self, x):
        b, n, c = x.shape
        qkv = self.reshape(self.qkv(x), (b, n, 3, self.num_heads, c // self.num_heads))
        q, k, v = self.unstack(self.transpose(qkv, (2, 0, 3, 1, 4)))
        attn = self.softmax(self.mul(self.q_matmul_k(q, k), self.scale))
        out = self.attn_matmul_v(self.attn_drop(attn), v)
        out = self.reshape(self.transpose(out, (0, 2, 1, 3)), (b, n, c))
        return self.out_drop(self.out(out))


class FeedForward(nn.Cell):
    def __init__(self, in_features, hidden_features=None, out_features=None, activation=nn.GELU, keep_prob=1.0):
        super().__init__()
        out_features = out_features or in_features
        hidden_features = hidden_features or in_features
        self.dense1 = nn.Dense(in_features, hidden_features)
        self.activation = activation()
        self.dense2 = nn.Dense(hidden_features, out_features)
        self.dropout = nn.Dropout(p=1.0 - keep_prob)

    def construct(self, x):
        return self.dropout(self.dense2(self.dropout(self.activation(self.dense1(x)))))


class ResidualCell(nn.Cell):
    """cell(x) * gamma + x, gamma a layer scale that starts at one (mindspore.numpy.ones in the zoo)."""

    def __init__(self, cell, dim):
        super().__init__()
        self.cell = cell
        self.gamma = Parameter(mnp.ones((dim,), mstype.float32), name="gamma")

    def construct(self, x):
        return self.cell(x) * self.gamma + x


class TransformerEncoder(nn.Cell):
    def __init__(self, dim, num_layers, num_heads, mlp_dim, keep_prob=1.0, norm=nn.LayerNorm):
        super().__init__()
        layers = []
        for _ in range(num_layers):
            attention = nn.SequentialCell([norm((dim,)), Attention(dim, num_heads, keep_prob)])
            feedforward = nn.SequentialCell([norm((dim,)), FeedForward(dim, mlp_dim, keep_prob=keep_prob)])
            layers.append(nn.SequentialCell([ResidualCell(attention, dim), ResidualCell(feedforward, dim)]))
        self.layers = nn.SequentialCell(layers)

    def construct(self, x):
        return self.layers(x)


class ViT(nn.Cell):
    def __init__(
        self,
        image_size=32,
        input_channels=3,
        patch_size=8,
        embed_dim=64,
        num_layers=2,
        num_heads=4,
        mlp_dim=128,
        keep_prob=1.0,
        num_classes=10,
        pool="cls",
    ):
        super().__init__()
        self.patch_embedding = PatchEmbedding(image_size, patch_size, embed_dim, input_channels)
        num_patches = self.patch_embedding.num_patches
        self.cls_token = Parameter(initializer(TruncatedNormal(sigma=0.02), (1, 1, embed_dim)), name="cls")
        self.pos_embedding = Parameter(
            initializer("truncatedNormal", (1, num_patches + 1, embed_dim)), name="pos_embedding"
        )
        self.concat = ops.Concat(axis=1)
        self.pos_dropout = nn.Dropout(p=1.0 - keep_prob)
        self.norm = nn.LayerNorm((embed_dim,))
        self.transformer = TransformerEncoder(embed_dim, num_layers, num_heads, mlp_dim, keep_prob)
        self.pool = nn.Identity() if pool == "cls" else None
        self.dense = nn.Dense(embed_dim, num_classes)

    def construct(self, x):
        x = self.patch_embedding(x)
        cls_tokens = ops.broadcast_to(self.cls_token, (x.shape[0], -1, -1))
        x = self.concat((cls_tokens, x))
        x = self.pos_dropout(x + self.pos_embedding)
        x = self.norm(self.transformer(x))
        x = self.pool(x[:, 0])
        return self.dense(x)
