# ruff: noqa  (the model zoo's text as it is)
"""CRNN as MindSpore's model zoo writes it: the files of mindspore-ai/models official/cv/CRNN/src (Apache-2.0)
with ``mindspore`` replaced by ``opforge`` in the imports (license headers dropped). Other changes, all of
size or of what the tests cannot have: the VGG's channels shrunk 16 times (crnn.py), ``config`` a namespace
of default_config.yaml's values, shrunk (config.py, for src/model_utils/config.py), the synth dataset only
(dataset.py: the ic03/ic13/svt/iiit5k readers are left out), and ``Levenshtein`` (a pip package) a local
``distance`` (levenshtein.py). src/model_utils/callback.py and lr_scheduler.py are callback.py and
lr_scheduler.py here. ``tests/test_zoo_crnn.py`` trains it as train.py does and evaluates it as eval.py does.
export.py is the zoo's export.py with src/model_utils/moxing_adapter.py, device_adapter.py and local_adapter.py
(here under their names; config.py gains default_config.yaml's export keys), run by ``tests/test_zoo_export.py``."""
