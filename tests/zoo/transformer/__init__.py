# ruff: noqa  (the model zoo's text as it is)
"""The Transformer NMT model as MindSpore's model zoo writes it: the files of mindspore-ai/models
official/nlp/Transformer/src (Apache-2.0) as they are, with ``mindspore`` replaced by ``opforge`` in the imports
(license headers dropped, the layout formatted by ruff). ``tests/test_zoo_transformer.py`` shrinks the config,
trains it through ``Model.train`` and decodes with the beam search."""
