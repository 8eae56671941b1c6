# ruff: noqa  (the model zoo's text as it is)
"""WGAN as MindSpore's model zoo writes it: the files of mindspore-ai/models official/cv/WGAN (src, train.py,
eval.py; Apache-2.0) with ``mindspore`` replaced by ``opforge`` in the imports and ``src.`` by relative imports;
nothing else changed (the sizes come from the scripts' command lines). ``tests/test_zoo_wgan.py`` runs train.py
and eval.py as scripts on an image folder written there."""
