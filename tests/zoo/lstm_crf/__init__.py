# ruff: noqa  (the model zoo's text as it is)
"""LSTM-CRF as MindSpore's model zoo writes it: the files of mindspore-ai/models research/nlp/lstm_crf (Apache-2.0)
with ``mindspore`` replaced by ``opforge`` in the imports and ``src.``/``model_utils.`` by ``zoo.lstm_crf.``
(license headers dropped). LSTM.py, LSTM_CRF.py, util.py, imdb.py and dataset.py are src/'s files unchanged;
train.py and eval.py are the zoo's; config.py holds default_config.yaml's values, shrunk.
``tests/test_zoo_lstm_crf.py`` runs them."""
