"""``vision.Decode`` on a file's bytes held in a 1-D array of another dtype than uint8, as MindSpore decodes the
array's bytes whatever its dtype (the model zoo's YOLOv5 reads its images with ``np.fromfile(path, 'int8')`` and
decodes them with ``Decode(True)``); strings and arrays of more dimensions stay refused."""

import io

import numpy as np
import pytest
from PIL import Image

import opforge.dataset.vision as vision


@pytest.fixture
def encoded():
    rng = np.random.default_rng(0)
    pixels = rng.integers(0, 256, (6, 5, 3), dtype=np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="PNG")
    return pixels, buffer.getvalue()


def test_decode_int8_bytes_as_uint8(encoded, tmp_path):
    pixels, raw = encoded
    path = tmp_path / "a.png"
    path.write_bytes(raw)
    as_int8 = np.fromfile(path, dtype="int8")
    assert as_int8.dtype == np.int8 and as_int8.min() < 0  # PNG's signature byte 0x89 reads negative
    np.testing.assert_array_equal(vision.Decode()(as_int8), pixels)
    image = vision.Decode(True)(as_int8)
    assert isinstance(image, Image.Image) and image.size == (5, 6)
    np.testing.assert_array_equal(np.asarray(image), pixels)
    # any dtype's bytes: the same file viewed as int16 decodes the same (its length is even here or padded away)
    if len(raw) % 2 == 0:
        np.testing.assert_array_equal(vision.Decode()(np.frombuffer(raw, np.int16)), pixels)


def test_decode_refuses_strings_and_images(encoded):
    pixels, _ = encoded
    with pytest.raises(TypeError, match="'Decode'.*1-D"):
        vision.Decode()(np.array(["a", "b"]))
    with pytest.raises(TypeError, match="'Decode'.*3-D"):
        vision.Decode()(pixels)
    with pytest.raises(ValueError, match="'Decode'.*not an image"):
        vision.Decode()(np.arange(8, dtype=np.int8))
