"""The sentiment network of the model zoo's LSTM (lstm.py): a frozen embedding table, a bidirectional
multi-layer ``nn.LSTM`` over the time-major sequence, the first and last steps concatenated, a Dense decoder."""

import numpy as np

import opforge.nn as nn
from opforge import Tensor
from opforge.ops import operations as P


def lstm_default_state(batch_size, hidden_size, num_layers, bidirectional):
    num_directions = 2 if bidirectional else 1
    h = Tensor(np.zeros((num_layers * num_directions, batch_size, hidden_size)).astype(np.float32))
    c = Tensor(np.zeros((num_layers * num_directions, batch_size, hidden_size)).astype(np.float32))
    return h, c


class SentimentNet(nn.Cell):
    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers, bidirectional, num_classes, weight, batch_size):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_size, embedding_table=weight)
        self.embedding.embedding_table.requires_grad = False
        self.trans = P.Transpose()
        self.perm = (1, 0, 2)
        self.encoder = nn.LSTM(
            input_size=embed_size,
            hidden_size=num_hiddens,
            num_layers=num_layers,
            has_bias=True,
            bidirectional=bidirectional,
            dropout=0.0,
        )
        self.h, self.c = lstm_default_state(batch_size, num_hiddens, num_layers, bidirectional)
        self.concat = P.Concat(1)
        self.decoder = nn.Dense(num_hiddens * (4 if bidirectional else 2), num_classes)

    def construct(self, inputs):
        embeddings = self.embedding(inputs)  # (batch, seq, embed)
        embeddings = self.trans(embeddings, self.perm)  # (seq, batch, embed)
        output, _ = self.encoder(embeddings, (self.h, self.c))
        encoding = self.concat((output[0], output[-1]))
        return self.decoder(encoding)
