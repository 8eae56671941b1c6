# ruff: noqa  (the model zoo's text as it is)
"""DeepSpeech2 as MindSpore's model zoo writes it: the files of mindspore-ai/models official/audio/DeepSpeech2/src
(Apache-2.0) and labels.json, with ``mindspore`` replaced by ``opforge`` in the imports and ``src.`` by
``zoo.deepspeech2.`` (license headers dropped). deepspeech2.py (MaskConv front end, BatchRNN of LSTMs, the
``P.CTCLoss`` loss cell), greedydecoder.py and lr_generator.py are the zoo's files unchanged. Other changes, of
size or of what the tests cannot have: config.py shrunk (a 400 Hz sample rate, 9 frequency bins, hidden size
16, 2 layers, batches of 2), dataset.py's pad lengths shrunk (and its ``range(350)`` made
``range(TRAIN_LABEL_PAD_LENGTH)``); the pip packages the zoo imports are local stand-ins: easydict.py
(easydict), audio.py (soundfile.read and librosa.stft/magphase in NumPy/SciPy), decoder.py
(deepspeech_pytorch.decoder's GreedyDecoder). ``tests/test_zoo_deepspeech2.py`` trains it as train.py does and
evaluates it as eval.py does."""
