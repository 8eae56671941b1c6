# ruff: noqa  (the model zoo's text as it is)
"""GoogleNet as MindSpore's model zoo writes it: the files of mindspore-ai/models research/cv/googlenet (src/,
model_utils/, train.py, eval.py; Apache-2.0) with ``mindspore`` replaced by ``opforge`` in the imports and
``src.`` / ``model_utils.`` by relative imports. Other change: ``config`` a namespace of
cifar10_config_cpu.yaml's values, shrunk (model_utils/config.py, for the zoo's yaml and argparse loading:
32 x 32 images, batch 4, 2 epochs). ``tests/test_zoo_googlenet.py`` runs train.py's ``run_train()`` and
eval.py's ``run_eval()`` on CIFAR-10 binary files.
export.py is the zoo's export.py, run by ``tests/test_zoo_export.py``."""
