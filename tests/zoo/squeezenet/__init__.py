# ruff: noqa  (the model zoo's text as it is)
"""SqueezeNet as MindSpore's model zoo writes it: the files of mindspore-ai/models research/cv/squeezenet (src/,
model_utils/, train.py, eval.py; Apache-2.0) with ``mindspore`` replaced by ``opforge`` in the imports and
``src.`` / ``model_utils.`` by relative imports. Other change: ``config`` a namespace of
squeezenet_cpu_config.yaml's values, shrunk (model_utils/config.py, for the zoo's yaml and argparse loading:
batch 2, 2 epochs; ``net_name`` "squeezenet", the yaml's "suqeezenet" being a typo eval.py rejects).
``tests/test_zoo_squeezenet.py`` runs train.py's ``train_net()`` and eval.py's ``eval_net()`` on JPEG folders.
export.py is the zoo's export.py, run by ``tests/test_zoo_export.py``."""
