# ruff: noqa  (the model zoo's text as it is)
"""Pix2Pix as MindSpore's model zoo writes it: the files of mindspore-ai/models research/cv/Pix2Pix (src/dataset,
src/models, src/utils, train.py, eval.py; Apache-2.0) with ``mindspore`` replaced by ``opforge`` in the imports
(``import mindspore`` written ``import opforge as mindspore``) and ``src.`` by relative imports. Other change:
``config`` a namespace of default_config.yaml's values, for the CPU and shrunk (src/utils/config.py, for the zoo's
yaml and argparse loading: 2 epochs of 2 images; the network and the dataset code fix the 256 x 256 images).
``tests/test_zoo_pix2pix.py`` runs train.py's ``train()`` (the zoo's own loop over ``TrainOneStepCell``) and
eval.py's ``pix2pix_eval()`` on paired images written there. export.py is the zoo's export.py, run by
``tests/test_zoo_export.py``."""
