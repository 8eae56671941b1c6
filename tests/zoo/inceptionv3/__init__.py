# ruff: noqa  (the model zoo's text as it is)
"""Inception-V3 as MindSpore's model zoo writes it: the files of mindspore-ai/models
official/cv/Inception/inceptionv3 (src/, src/model_utils/, train.py, eval.py; Apache-2.0) with ``mindspore``
replaced by ``opforge`` in the imports and ``src.`` by relative imports. Other change: ``config`` a namespace
of default_config_cpu.yaml's values, shrunk (src/model_utils/config.py, for the zoo's yaml and argparse
loading: batch 2, 3 epochs; the images stay 299 x 299, which the network's last pooling needs).
``tests/test_zoo_inceptionv3.py`` runs train.py's ``train_inceptionv3()`` and eval.py's
``eval_inceptionv3()`` on CIFAR-10 binary files. export.py is the zoo's export.py, run by
``tests/test_zoo_export.py``."""
