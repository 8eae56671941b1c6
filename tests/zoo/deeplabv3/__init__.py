# ruff: noqa  (the model zoo's text as it is)
"""DeepLabV3 as MindSpore's model zoo writes it: the files of mindspore-ai/models official/cv/DeepLabv3 (src/,
model_utils/, train.py, eval.py; Apache-2.0) with ``mindspore`` replaced by ``opforge`` in the imports and
``src.`` / ``model_utils.`` by relative imports. Other changes: ``config`` a namespace of default_config.yaml's
values, shrunk (model_utils/config.py, for the zoo's yaml and argparse loading); ``import cv2`` the Pillow shim
cv2_shim.py (OpenCV is not installed here). ``tests/test_zoo_deeplabv3.py`` writes a MindRecord with
src/data/build_seg_data.py's schema, runs train.py's ``train()`` and eval.py's ``net_eval()``.
export.py is the zoo's export.py, run by ``tests/test_zoo_export.py``."""
