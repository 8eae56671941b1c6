# ruff: noqa  (the model zoo's text as it is)
"""ECAPA-TDNN as MindSpore's model zoo writes it: the files of mindspore-ai/models official/audio/EcapaTDNN at commit
eab643f51336dbf7d711f02d27e6516e5affee59 (src/ecapa_tdnn.py, src/util.py, src/loss_scale.py, src/reader.py,
src/sampler.py, train.py; Apache-2.0) with ``mindspore`` replaced by ``opforge`` in the imports and ``src.`` by
relative imports. Other change: src/model_utils/config.py is the zoo's ``Config`` namespace holding
ecapa-tdnn_config.yaml's values for the CPU and shrunk (PyYAML is not installed). The feature extraction
(train_data_prepare.py: speechbrain / torchaudio fbanks of VoxCeleb wavs) is left out: the tests feed synthetic
fbank features. ``tests/test_zoo_ecapatdnn.py`` checks the SE-Res2Net block, the attentive statistics pooling,
the whole embedding network, the cosine classifier and the additive angular margin loss against NumPy, and trains
train.py's ``BuildTrainNetwork`` through src/loss_scale.py's ``TrainOneStepWithLossScaleCellv2`` with ``nn.Adam``
over the cyclic learning rate, as train.py's ``train()`` sets it up."""
