"""What dataset.py takes from soundfile and librosa, in NumPy/SciPy (neither package is installed here):
``read`` (soundfile.read of a PCM WAV file), ``stft`` (librosa.stft: centred frames, zero padding, a SciPy
window, ``1 + n_fft // 2`` bins by ``1 + len(y) // hop_length`` frames) and ``magphase``."""

import wave

import numpy as np
from scipy.signal import get_window


def read(path, dtype="int16"):
    with wave.open(path, "rb") as f:
        data = np.frombuffer(f.readframes(f.getnframes()), dtype="<i2").astype(dtype)
        channels, rate = f.getnchannels(), f.getframerate()
    return (data.reshape(-1, channels) if channels > 1 else data), rate


def stft(y, n_fft, hop_length, win_length, window):
    window = get_window({"hanning": "hann"}.get(window, window), win_length, fftbins=True)
    window = np.pad(window, ((n_fft - win_length) // 2, n_fft - win_length - (n_fft - win_length) // 2))
    y = np.pad(y, n_fft // 2)
    frames = np.stack([y[i : i + n_fft] for i in range(0, len(y) - n_fft + 1, hop_length)], axis=1)
    return np.fft.rfft(frames * window[:, None], axis=0).astype(np.complex64)


def magphase(D):
    mag = np.abs(D)
    return mag, np.exp(1j * np.angle(D))
