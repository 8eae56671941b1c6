# ruff: noqa  (the model zoo's text as it is)
"""EDSR as MindSpore's model zoo writes it: the files of mindspore-ai/models official/cv/EDSR (src, model_utils,
train.py, eval.py; Apache-2.0) with ``mindspore`` replaced by ``opforge`` in the imports and ``src.`` /
``model_utils.`` by relative imports. Other change: ``config`` a namespace of DIV2K_config.yaml's values, for the
CPU and shrunk (model_utils/config.py, for the zoo's yaml and argparse loading). ``tests/test_zoo_edsr.py`` runs
train.py's ``run_train()`` and eval.py's ``run_eval()`` on DIV2K-style folders written there."""
