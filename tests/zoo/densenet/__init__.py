# ruff: noqa  (the model zoo's text as it is)
"""DenseNet-121 as MindSpore's model zoo writes it: the files of mindspore-ai/models research/cv/densenet (src/,
train.py, eval.py; Apache-2.0) with ``mindspore`` replaced by ``opforge`` in the imports and ``src.`` by
relative imports, the package flattened: src/network/densenet.py, src/utils/var_init.py (the Kaiming
initializers as ``Initializer`` subclasses), src/utils/logging.py, src/losses/crossentropy.py,
src/lr_scheduler/lr_scheduler.py, src/optimizers/__init__.py (optimizers.py: the parameter groups),
src/datasets/classification.py and sampler.py, src/model_utils/moxing_adapter.py, device_adapter.py and
local_adapter.py are here under their file names, unchanged. Other change: ``config`` a namespace of
densenet121_config.yaml's values, shrunk (config.py, for src/model_utils/config.py's yaml and argparse loading:
32 x 32 images, 10 classes, batch 4, 2 epochs, the CPU target). ``tests/test_zoo_densenet.py`` runs train.py's
``train()`` and eval.py's ``test()``. export.py is the zoo's export.py, run by ``tests/test_zoo_export.py``."""
