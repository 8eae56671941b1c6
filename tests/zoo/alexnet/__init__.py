# ruff: noqa  (the model zoo's text as it is)
"""AlexNet as MindSpore's model zoo writes it: the files of mindspore-ai/models research/cv/Alexnet (src/,
src/model_utils/, train.py, eval.py; Apache-2.0) with ``mindspore`` replaced by ``opforge`` in the imports and
``src.`` by relative imports. Other change: ``config`` a namespace of default_config.yaml's values, shrunk
(src/model_utils/config.py, for the zoo's yaml and argparse loading: batch 4, 2 epochs, the CPU target).
``tests/test_zoo_alexnet.py`` trains it with train.py's CIFAR-10 pieces and runs eval.py's
``eval_alexnet()``. export.py is the zoo's export.py, run by ``tests/test_zoo_export.py``."""
