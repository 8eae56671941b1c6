"""MindSpore's ``vision.py_transforms`` (Pillow), ``vision.py_transforms_util``, ``transforms.py_transforms``, the
``vision.transforms`` / ``c_transforms`` module paths and the vision transforms ``Crop``, ``HorizontalFlip``,
``VerticalFlip``, ``RandomVerticalFlip``, ``RandomResize``, ``RandomErasing``, ``Grayscale`` and
``RandomGrayscale``: each against NumPy / Pillow references or exact properties, seeded by the dataset seed,
with MindSpore's error cases; and the model zoo's PaDiM dataset pipeline (tests/zoo/padim, only the imports
changed) on synthetic MVTec folders."""

import colorsys
import io
import os

import numpy as np
import pytest
from PIL import Image

import opforge.dataset as ds
import opforge.dataset.transforms as transforms
import opforge.dataset.transforms.py_transforms as T
import opforge.dataset.vision as vision
import opforge.dataset.vision.c_transforms as C
import opforge.dataset.vision.py_transforms as P
import opforge.dataset.vision.py_transforms_util as util
from opforge.dataset.vision import Border, Inter


@pytest.fixture(autouse=True)
def _seed():
    saved = ds.config._state["seed"]
    ds.config.set_seed(1234)
    yield
    ds.config._state["seed"] = saved


def _rgb(h=12, w=17, seed=0, low=0):
    return np.random.default_rng(seed).integers(low, 256, (h, w, 3), dtype=np.uint8)


def _gray_reference(rgb):
    """Pillow's L conversion, computed independently: (19595 R + 38470 G + 7471 B + 2^15) >> 16."""
    v = rgb.astype(np.int64)
    return ((v[..., 0] * 19595 + v[..., 1] * 38470 + v[..., 2] * 7471 + 32768) >> 16).astype(np.uint8)


# -- module paths -----------------------------------------------------------------------------------------


def test_module_paths():
    assert vision.py_transforms is P and vision.py_transforms_util is util and transforms.py_transforms is T
    assert transforms.c_transforms.Compose is transforms.Compose
    for name in ("Crop", "HorizontalFlip", "VerticalFlip", "RandomVerticalFlip", "RandomResize", "RandomErasing",
                 "Grayscale", "RandomGrayscale", "Normalize", "ToTensor"):  # fmt: skip
        assert getattr(vision.transforms, name) is getattr(vision, name) is getattr(C, name)
    assert vision.RandomErasing is P.RandomErasing and P.Inter is Inter and P.Border is Border
    assert issubclass(P.ToTensor, T.PyTensorOperation)


# -- conversions -------------------------------------------------------------------------------------------


def test_to_pil_to_tensor_decode():
    rgb = _rgb()
    pil = P.ToPIL()(rgb)
    assert pil.mode == "RGB" and pil.size == (17, 12) and P.ToPIL()(pil) is pil
    tensor = P.ToTensor()(pil)
    assert tensor.dtype == np.float32 and tensor.shape == (3, 12, 17)
    np.testing.assert_array_equal(tensor, (rgb.transpose(2, 0, 1) / 255.0).astype(np.float32))
    assert P.ToTensor(np.float64)(rgb[:, :, 0]).shape == (1, 12, 17)
    assert P.ToPIL()(np.ones((3, 4), np.float32)).mode == "F"
    assert P.ToPIL()(np.zeros((3, 4, 2), np.uint8)).mode == "LA"
    with pytest.raises(TypeError):
        P.ToTensor()([[1, 2]])
    with pytest.raises(TypeError):
        P.ToTensor()(np.zeros((1, 2, 2, 3), np.uint8))
    with pytest.raises(TypeError):
        P.ToPIL()(np.zeros((4, 4, 3), np.float32))
    with pytest.raises(ValueError):
        P.ToPIL()(np.zeros((4, 4, 5), np.uint8))
    buf = io.BytesIO()
    pil.save(buf, "PNG")
    decoded = P.Decode()(np.frombuffer(buf.getvalue(), np.uint8))
    np.testing.assert_array_equal(np.asarray(decoded), rgb)
    assert np.asarray(P.Decode()(buf.getvalue())).shape == (12, 17, 3)
    with pytest.raises(ValueError):
        P.Decode()(b"not an image")
    with pytest.raises(ValueError):
        P.Decode()(pil)


def test_hwc2chw_totype_normalize():
    rgb = _rgb()
    np.testing.assert_array_equal(P.HWC2CHW()(rgb), rgb.transpose(2, 0, 1))
    assert P.HWC2CHW()(rgb[:, :, 0]).shape == (12, 17)
    with pytest.raises(TypeError):
        P.HWC2CHW()(Image.fromarray(rgb))
    assert P.ToType(np.int16)(rgb).dtype == np.int16
    with pytest.raises(RuntimeError):
        P.ToType("no such type")(rgb)
    chw = P.ToTensor()(rgb)
    mean, std = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)
    expect = (chw - np.float32(mean)[:, None, None]) / np.float32(std)[:, None, None]
    out = P.Normalize(mean, std)(chw)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, expect, rtol=1e-6)
    np.testing.assert_allclose(P.Normalize(0.5, 0.25)(chw), (chw - 0.5) / 0.25, rtol=1e-6)
    padded = P.NormalizePad(mean, std, "float16")(chw)
    assert padded.dtype == np.float16 and padded.shape == (4, 12, 17) and not padded[3].any()
    with pytest.raises(NotImplementedError):
        P.Normalize(mean, std)(rgb.transpose(2, 0, 1))
    with pytest.raises(ValueError):
        P.Normalize((0.5, 0.5), (0.2, 0.2))(chw)  # 2 values for 3 channels
    with pytest.raises(ValueError):
        P.Normalize((2.0,), (0.2,))
    with pytest.raises(ValueError):
        P.Normalize((0.5,), (0.0,))
    with pytest.raises(ValueError):
        P.NormalizePad(mean, std, "int8")


# -- geometry -------------------------------------------------------------------------------------------------


def test_resize_center_crop_five_ten_crop():
    rgb = _rgb(20, 30)
    pil = Image.fromarray(rgb)
    out = P.Resize(12)(pil)  # shorter side 20 -> 12, the other int(12 * 1.5)
    assert out.size == (18, 12)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(pil.resize((18, 12), Image.Resampling.BILINEAR)))
    assert P.Resize(20)(pil) is pil
    out = P.Resize((10, 14), Inter.ANTIALIAS)(pil)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(pil.resize((14, 10), Image.Resampling.LANCZOS)))
    with pytest.raises(ValueError):
        P.Resize(10, Inter.AREA)
    with pytest.raises(TypeError):
        P.Resize(10, "linear-ish")
    with pytest.raises(ValueError):
        P.Resize(0)
    with pytest.raises(TypeError):
        P.Resize((3, 4, 5))
    with pytest.raises(TypeError):
        P.Resize(12)(rgb)  # a PIL image is needed
    small = Image.fromarray(_rgb(7, 10))
    cropped = np.asarray(P.CenterCrop((4, 5))(small))  # top round(1.5) = 2, left round(2.5) = 2
    np.testing.assert_array_equal(cropped, np.asarray(small)[2:6, 2:7])
    big = np.asarray(P.CenterCrop(9)(small))  # past the border: zeros (top round(-1) = -1, left round(0.5) = 0)
    assert big.shape == (9, 9, 3) and not big[0].any() and not big[:, 9:].any()
    np.testing.assert_array_equal(big[1:8, :9], np.asarray(small)[:, :9])
    with pytest.raises(TypeError):
        P.CenterCrop(4)(np.asarray(small))
    five = P.FiveCrop((4, 6))(small)
    a = np.asarray(small)
    for got, want in zip(five, (a[:4, :6], a[:4, 4:], a[3:, :6], a[3:, 4:], a[2:6, 2:8])):
        np.testing.assert_array_equal(np.asarray(got), want)
    ten = P.TenCrop(4, use_vertical_flip=True)(small)
    np.testing.assert_array_equal(np.asarray(ten[5]), a[::-1][:4, :4])
    with pytest.raises(ValueError):
        P.FiveCrop(8)(small)


def test_pad_and_random_crop():
    rgb = _rgb(6, 7)
    pil = Image.fromarray(rgb)
    out = np.asarray(P.Pad((1, 2, 3, 4), fill_value=(9, 8, 7))(pil))  # left, top, right, bottom
    want = np.stack([np.pad(rgb[..., c], ((2, 4), (1, 3)), constant_values=v) for c, v in enumerate((9, 8, 7))], -1)
    np.testing.assert_array_equal(out, want)
    for mode in (Border.EDGE, Border.REFLECT, Border.SYMMETRIC):
        out = np.asarray(P.Pad(2, padding_mode=mode)(pil))
        np.testing.assert_array_equal(out, np.pad(rgb, ((2, 2), (2, 2), (0, 0)), mode=mode))
    np.testing.assert_array_equal(np.asarray(P.Pad((1, 2))(pil)), np.pad(rgb, ((2, 2), (1, 1), (0, 0))))
    with pytest.raises(ValueError):
        P.Pad(-1)
    with pytest.raises(ValueError):
        P.Pad((1, 2, 3))
    with pytest.raises(TypeError):
        P.Pad(1, padding_mode="wrap")
    with pytest.raises(ValueError):
        P.Pad(1, fill_value=256)

    padded = np.pad(rgb, ((4, 4), (4, 4), (0, 0)))
    op = P.RandomCrop((6, 7), (4, 4, 4, 4))
    tops = set()
    for _ in range(20):
        out = np.asarray(op(pil))
        hits = [(t, x) for t in range(9) for x in range(9) if np.array_equal(padded[t : t + 6, x : x + 7], out)]
        assert hits
        tops.add(hits[0][0])
    assert len(tops) > 3  # random places
    ds.config.set_seed(5)
    first = [np.asarray(op(pil)) for _ in range(4)]
    ds.config.set_seed(5)
    np.testing.assert_array_equal(first, [np.asarray(op(pil)) for _ in range(4)])
    assert np.asarray(P.RandomCrop(9, pad_if_needed=True)(pil)).shape == (9, 9, 3)
    with pytest.raises(ValueError):
        P.RandomCrop(9)(pil)
    with pytest.raises(TypeError):
        P.RandomCrop(4)(rgb)
    with pytest.raises(TypeError):
        P.RandomCrop(4, pad_if_needed=1)
    # the zoo's AutoAugment: py_transforms_util.random_crop with a vision.transforms.RandomCrop's attributes
    base = vision.transforms.RandomCrop(1, padding=2)
    out = util.random_crop(pil, pil.size[::-1], base.padding, base.pad_if_needed, base.fill_value, base.padding_mode)
    assert out.size == pil.size


def test_flips_rotation_affine_perspective():
    rgb = _rgb()
    pil = Image.fromarray(rgb)
    np.testing.assert_array_equal(np.asarray(P.RandomHorizontalFlip(1.0)(pil)), rgb[:, ::-1])
    np.testing.assert_array_equal(np.asarray(P.RandomVerticalFlip(1)(pil)), rgb[::-1])
    assert P.RandomVerticalFlip(0.0)(pil) is pil
    flipped = sum(np.array_equal(np.asarray(P.RandomHorizontalFlip(0.3)(pil)), rgb[:, ::-1]) for _ in range(400))
    assert 80 <= flipped <= 160
    with pytest.raises(ValueError):
        P.RandomHorizontalFlip(1.5)
    with pytest.raises(TypeError):
        P.RandomVerticalFlip("0.5")

    out = np.asarray(P.RandomRotation((90, 90), expand=True)(pil))  # counter-clockwise
    np.testing.assert_array_equal(out, np.rot90(rgb))
    out = np.asarray(P.RandomRotation((180, 180), fill_value=(1, 2, 3))(pil))
    np.testing.assert_array_equal(out, rgb[::-1, ::-1])
    with pytest.raises(ValueError):
        P.RandomRotation(-5)
    with pytest.raises(TypeError):
        P.RandomRotation(5, expand=1)
    with pytest.raises(ValueError):
        P.RandomRotation((45, 45), resample=Inter.ANTIALIAS)(pil)

    # MindSpore's affine turns about ((W + 1) / 2, (H + 1) / 2) in pixel-corner coordinates: a 90 degree
    # turn is the clockwise rotation shifted one column right, the first column filled
    square = np.arange(25, dtype=np.uint8).reshape(5, 5) * 10 + 5
    out = np.asarray(P.RandomAffine((90, 90))(Image.fromarray(square)))
    np.testing.assert_array_equal(out[:, 1:], np.rot90(square, -1)[:, :-1])
    assert not out[:, 0].any()
    np.testing.assert_array_equal(np.asarray(P.RandomAffine(0)(pil)), rgb)
    with pytest.raises(TypeError):
        P.RandomAffine(10, translate=(0.1,) * 3)
    with pytest.raises(ValueError):
        P.RandomAffine(10, translate=(1.5, 0.0))
    with pytest.raises(ValueError):
        P.RandomAffine(10, shear=(5, 1))

    assert P.RandomPerspective(prob=0.0)(pil) is pil
    np.testing.assert_array_equal(np.asarray(P.RandomPerspective(0.0, 1.0, Inter.NEAREST)(pil)), rgb)
    assert np.asarray(P.RandomPerspective(0.5, 1.0)(pil)).shape == rgb.shape
    with pytest.raises(TypeError):
        P.RandomPerspective(1, 0.5)  # MindSpore's check takes floats only
    with pytest.raises(ValueError):
        P.RandomPerspective()(rgb)


def test_random_resized_crop():
    square = Image.fromarray(_rgb(16, 16))
    out = P.RandomResizedCrop(8, scale=(1.0, 1.0), ratio=(1.0, 1.0))(square)  # the whole image
    np.testing.assert_array_equal(np.asarray(out), np.asarray(square.resize((8, 8), Image.Resampling.BILINEAR)))
    assert P.RandomResizedCrop((5, 9), interpolation=Inter.BICUBIC)(square).size == (9, 5)
    with pytest.raises(ValueError):
        P.RandomResizedCrop(8, scale=(0.9, 0.1))
    with pytest.raises(ValueError):
        P.RandomResizedCrop(8, ratio=(0.0, 1.0))
    with pytest.raises(ValueError):
        P.RandomResizedCrop(8, max_attempts=0)
    with pytest.raises(TypeError):
        P.RandomResizedCrop(8)(np.asarray(square))


# -- colour -----------------------------------------------------------------------------------------------------


def test_grayscale():
    rgb = _rgb()
    pil = Image.fromarray(rgb)
    gray = P.Grayscale()(pil)
    assert gray.mode == "L"
    np.testing.assert_array_equal(np.asarray(gray), _gray_reference(rgb))
    three = np.asarray(P.Grayscale(3)(pil))
    np.testing.assert_array_equal(three, np.stack([_gray_reference(rgb)] * 3, -1))
    assert P.RandomGrayscale(1.0)(gray).mode == "L" and P.RandomGrayscale(1.0)(pil).mode == "RGB"
    assert P.RandomGrayscale(0.0)(pil) is pil
    with pytest.raises(ValueError):
        P.Grayscale(2)
    with pytest.raises(TypeError):
        P.Grayscale(1.0)
    with pytest.raises(ValueError):
        P.RandomGrayscale(1.5)
    with pytest.raises(TypeError):
        P.RandomGrayscale("0.1")
    with pytest.raises(TypeError):
        P.RandomGrayscale(1.0)(rgb)  # the Python transform takes PIL images
    # vision's (2.x) transforms also take decoded uint8 arrays
    np.testing.assert_array_equal(vision.RandomGrayscale(1.0)(rgb), np.stack([_gray_reference(rgb)] * 3, -1))
    assert vision.RandomGrayscale(1.0)(pil).mode == "RGB"
    np.testing.assert_array_equal(vision.Grayscale()(rgb), _gray_reference(rgb)[:, :, None])
    assert vision.RandomGrayscale(1.0)(rgb[:, :, :1]).shape == (12, 17, 1)
    with pytest.raises(TypeError):
        vision.RandomGrayscale(0.5)(rgb.astype(np.float32))
    flips = sum(vision.RandomGrayscale(0.25)(rgb) is not rgb for _ in range(400))
    assert 70 <= flips <= 130


def test_color_adjust_and_enhancers():
    flat = np.full((6, 6, 3), 100, np.uint8)  # grey: the HSV round trip of the hue step is exact
    out = np.asarray(P.RandomColorAdjust(brightness=(0.5, 0.5))(Image.fromarray(flat)))
    np.testing.assert_array_equal(out, np.full_like(flat, 50))
    red = Image.fromarray(np.tile(np.array([255, 0, 0], np.uint8), (2, 2, 1)))
    np.testing.assert_array_equal(np.asarray(util.adjust_hue(red, 1 / 3))[0, 0], [0, 255, 0])
    blueish = np.asarray(util.adjust_hue(red, -1 / 3))[0, 0]  # int(-85) mod 256: hue 171 of 255
    assert blueish[2] == 255 and blueish[0] > 0 and blueish[1] == 0
    assert util.adjust_hue(red.convert("L"), 0.2).mode == "L"
    rgb = _rgb()
    pil = Image.fromarray(rgb)
    assert np.asarray(P.RandomColorAdjust(0.4, 0.4, 0.4, 0.1)(pil)).shape == rgb.shape
    with pytest.raises(ValueError):
        P.RandomColorAdjust(hue=0.6)
    with pytest.raises(ValueError):
        P.RandomColorAdjust(brightness=-1)
    with pytest.raises(TypeError):
        P.RandomColorAdjust(contrast="a")
    with pytest.raises(ValueError):
        P.RandomColorAdjust(saturation=(2, 1))
    np.testing.assert_array_equal(np.asarray(P.RandomColor((1, 1))(pil)), rgb)
    np.testing.assert_array_equal(np.asarray(P.RandomSharpness((1, 1))(pil)), rgb)
    np.testing.assert_array_equal(np.asarray(P.RandomLighting(0.0)(pil)), rgb)
    with pytest.raises(TypeError):
        P.RandomColor(1.0)
    with pytest.raises(ValueError):
        P.RandomSharpness((-1, 1))
    table = [min(255, max(0, round((256 - 1e-3) * 0.9 * (v / 255) ** 2.2))) for v in range(256)]
    np.testing.assert_array_equal(np.asarray(P.AdjustGamma(2.2, 0.9)(pil)), np.array(table, np.uint8)[rgb])
    with pytest.raises(ValueError):
        P.AdjustGamma(-1.0)


def test_invert_equalize_autocontrast():
    rgb = _rgb()
    pil = Image.fromarray(rgb)
    np.testing.assert_array_equal(np.asarray(P.Invert()(pil)), 255 - rgb)
    two = np.where(np.arange(1020).reshape(20, 51) % 2 == 0, 10, 20).astype(np.uint8)
    np.testing.assert_array_equal(np.asarray(P.Equalize()(Image.fromarray(two))), np.where(two == 10, 0, 255))
    narrow = (_rgb(seed=3) % 51 + 50).astype(np.uint8)  # levels 50..100 in each channel
    out = np.asarray(P.AutoContrast()(Image.fromarray(narrow))).astype(int)
    lo, hi = narrow.min(axis=(0, 1)), narrow.max(axis=(0, 1))
    want = (narrow - lo) * 255.0 / (hi - lo)
    assert np.abs(out - want).max() <= 1 and out.min() == 0 and out.max() >= 254  # Pillow truncates its lut
    assert np.asarray(P.AutoContrast(10.0, ignore=[0, 255])(pil)).shape == rgb.shape
    with pytest.raises(ValueError):
        P.AutoContrast(50)
    with pytest.raises(ValueError):
        P.AutoContrast(ignore=300)
    with pytest.raises(TypeError):
        P.Invert()(rgb)
    with pytest.raises(TypeError, match="Use Decode\\(\\) for encoded data or ToPIL\\(\\)"):
        P.Equalize()(rgb)


# -- numpy images ---------------------------------------------------------------------------------------------


def _rectangle(mask):
    rows, cols = np.flatnonzero(mask.any(1)), np.flatnonzero(mask.any(0))
    box = mask[rows[0] : rows[-1] + 1, cols[0] : cols[-1] + 1]
    return box.all(), len(rows), len(cols)


def test_random_erasing():
    chw = (_rgb(20, 24, low=1).transpose(2, 0, 1) / 510.0).astype(np.float32)  # in (0, 0.5]: no 0, 1, 2 or 3
    for _ in range(10):
        out = P.RandomErasing(prob=1.0)(chw)
        mask = out[0] == 0
        full, h, w = _rectangle(mask)
        assert full and (out[:, mask] == 0).all() and (out[:, ~mask] == chw[:, ~mask]).all()
        assert 0.02 * 480 - 2 * (h + w) <= h * w <= 0.33 * 480 + 2 * (h + w) and 0.3 / 1.5 <= w / h <= 3.3 * 1.5
    out = P.RandomErasing(1.0, value=(1, 2, 3))(chw)
    mask = out[0] == 1
    assert mask.any() and (out[1][mask] == 2).all() and (out[2][mask] == 3).all()
    out = P.RandomErasing(1.0, value="random")(chw)
    assert (out != chw).any() and out.dtype == np.float32
    assert P.RandomErasing(0.0)(chw) is chw
    same = chw.copy()
    assert P.RandomErasing(1.0, inplace=True)(same) is same and (same != chw).any()
    assert P.RandomErasing(1.0, scale=(2.0, 2.0))(chw) is not chw  # no rectangle fits: a copy, unchanged
    np.testing.assert_array_equal(P.RandomErasing(1.0, scale=(2.0, 2.0))(chw), chw)
    for kwargs, error in (
        ({"prob": 2}, ValueError), ({"inplace": 1}, TypeError), ({"value": "abc"}, ValueError),
        ({"value": 300}, ValueError), ({"value": (1, 2)}, ValueError), ({"max_attempts": 1.5}, TypeError),
        ({"max_attempts": 0}, ValueError), ({"scale": (0.5, 0.1)}, ValueError), ({"ratio": (0.1,)}, TypeError),
    ):  # fmt: skip
        with pytest.raises(error):
            P.RandomErasing(**kwargs)
    with pytest.raises(TypeError):
        P.RandomErasing(1.0)(chw[0])


def test_cutout_linear_mixup_colour_spaces():
    ones = np.ones((3, 10, 12), np.float32)
    for _ in range(10):
        out = P.Cutout(4, num_patches=1)(ones)
        full, h, w = _rectangle(out[0] == 0)
        assert full and h <= 4 and w <= 4 and (out[:, out[0] == 0] == 0).all()
    np.testing.assert_array_equal(P.Cutout(10)(ones), ones)  # not below both sides: unchanged
    with pytest.raises(ValueError):
        P.Cutout(11)(ones)
    with pytest.raises(TypeError):
        P.Cutout(4)(Image.fromarray(_rgb()))
    with pytest.raises(ValueError):
        P.Cutout(0)

    x = np.random.default_rng(1).standard_normal((2, 3, 2))
    matrix, mean = np.random.default_rng(2).standard_normal((12, 12)), np.arange(12.0)
    want = ((x.reshape(1, -1) - mean) @ matrix).reshape(x.shape)
    np.testing.assert_allclose(P.LinearTransformation(matrix, mean)(x), want)
    with pytest.raises(ValueError):
        P.LinearTransformation(np.zeros((3, 4)), np.zeros(3))

    images = np.arange(4, dtype=np.float64)[:, None, None, None] * np.ones((4, 3, 2, 2))
    labels = np.eye(4)
    mixed, mixed_labels = P.MixUp(4, 0.5)(images, labels)
    lam = np.diag(mixed_labels)
    np.testing.assert_allclose(mixed_labels[np.arange(4), (np.arange(4) + 1) % 4], 1 - lam)
    np.testing.assert_allclose(mixed[:, 0, 0, 0], lam * np.arange(4) + (1 - lam) * ((np.arange(4) + 1) % 4))
    with pytest.raises(ValueError):
        P.MixUp(4, 0.0)

    chw = P.ToTensor()(_rgb(3, 4))
    np.testing.assert_array_equal(P.RgbToBgr()(chw), chw[::-1])
    np.testing.assert_array_equal(P.RgbToBgr(is_hwc=True)(chw.transpose(1, 2, 0)), chw.transpose(1, 2, 0)[..., ::-1])
    hsv = P.RgbToHsv()(chw)
    np.testing.assert_allclose(hsv[:, 1, 2], colorsys.rgb_to_hsv(*chw[:, 1, 2]))
    np.testing.assert_allclose(P.HsvToRgb()(np.stack([hsv, hsv])), np.stack([chw, chw]), atol=1e-6)
    with pytest.raises(TypeError):
        P.RgbToHsv(is_hwc=1)
    with pytest.raises(TypeError):
        P.RgbToBgr()(chw[:2])


def test_uniform_augment_and_compose_op():
    pil = Image.fromarray(_rgb())
    assert P.UniformAugment([P.Invert(), P.Equalize()], 2)(pil).size == pil.size
    with pytest.raises(ValueError):
        P.UniformAugment([P.Invert()], 2)
    with pytest.raises(ValueError):
        P.UniformAugment([])
    rgb = _rgb()
    fn = P.ComposeOp([P.ToPIL(), P.ToTensor()])()
    np.testing.assert_array_equal(fn(rgb), P.ToTensor()(rgb))
    with pytest.raises(TypeError, match="Append ToTensor"):
        P.ComposeOp([P.ToPIL()])()(rgb)
    assert vision.ComposeOp is P.ComposeOp


# -- transforms.py_transforms -----------------------------------------------------------------------------------


def test_compose_and_random_choices():
    rgb = _rgb()
    out = T.Compose([P.ToPIL(), P.RandomHorizontalFlip(1.0), P.ToTensor()])(rgb)
    assert isinstance(out, tuple) and len(out) == 1
    np.testing.assert_array_equal(out[0], P.ToTensor()(rgb[:, ::-1]))
    assert T.Compose([lambda x, y: (x + y, x * y)])(2, 3) == (5, 6)
    assert T.Compose([P.ToPIL(), P.ToTensor()]).random is False
    assert not hasattr(T.Compose([P.ToPIL(), P.RandomHorizontalFlip()]), "random")
    with pytest.raises(ValueError, match="transforms list is empty."):
        T.Compose([])
    with pytest.raises(ValueError, match=r"transforms\[0\] is not callable."):
        T.Compose([1])
    with pytest.raises(TypeError, match="Compose was called without an image"):
        T.Compose([lambda x: x])()
    with pytest.raises(TypeError):
        T.Compose(lambda x: x)

    assert T.RandomApply([lambda x: x + 1], prob=1.0)(1) == 2 and T.RandomApply([lambda x: x + 1], 0)(1) == 1
    applied = sum(T.RandomApply([lambda x: x + 1], 0.7)(0) for _ in range(400))
    assert 240 <= applied <= 320
    with pytest.raises(ValueError):
        T.RandomApply([lambda x: x], 1.5)
    with pytest.raises(TypeError):
        T.RandomApply(lambda x: x)
    choices = {T.RandomChoice([lambda x: x + 1, lambda x: x + 2, lambda x: x + 3])(0) for _ in range(60)}
    assert choices == {1, 2, 3}
    orders = {T.RandomOrder([lambda x: x * 2, lambda x: x + 1])(1) for _ in range(60)}
    assert orders == {3, 4}  # (1 * 2) + 1 and (1 + 1) * 2
    ds.config.set_seed(9)
    first = [T.RandomChoice([lambda x: x + 1, lambda x: x + 2])(0) for _ in range(20)]
    ds.config.set_seed(9)
    assert first == [T.RandomChoice([lambda x: x + 1, lambda x: x + 2])(0) for _ in range(20)]
    with pytest.raises(ValueError):
        T.RandomOrder([])


def test_one_hot_op():
    label = np.array([[1], [3]])
    out = T.OneHotOp(4, 0.2)(label)
    want = np.eye(4)[label] * 0.8 + 0.05
    assert out.shape == (2, 1, 4) and out.dtype == np.float64
    np.testing.assert_allclose(out, want)
    np.testing.assert_array_equal(T.OneHotOp(3)(np.array(2, np.int32)), [0, 0, 1])
    with pytest.raises(ValueError, match="should be int"):
        T.OneHotOp(3)(np.array([1.0]))
    with pytest.raises(ValueError, match="is smaller than the category number"):
        T.OneHotOp(3)(np.array([3]))
    with pytest.raises(ValueError):
        T.OneHotOp(3)([1])
    with pytest.raises(TypeError):
        T.OneHotOp(3.0)
    with pytest.raises(ValueError):
        T.OneHotOp(3, 1.5)


# -- vision / c_transforms additions ---------------------------------------------------------------------------


def test_crop_flips_random_resize():
    rgb = _rgb(10, 12)
    np.testing.assert_array_equal(C.Crop((2, 3), (4, 5))(rgb), rgb[2:6, 3:8])
    np.testing.assert_array_equal(vision.Crop([0, 0], 3)(rgb[..., 0]), rgb[:3, :3, 0])
    with pytest.raises(RuntimeError):
        C.Crop((8, 0), 4)(rgb)
    with pytest.raises(TypeError):
        C.Crop(2, 4)
    with pytest.raises(ValueError):
        C.Crop((-1, 0), 4)
    with pytest.raises(ValueError):
        C.Crop((0, 0), 0)
    np.testing.assert_array_equal(C.HorizontalFlip()(rgb), rgb[:, ::-1])
    np.testing.assert_array_equal(C.VerticalFlip()(rgb), rgb[::-1])
    with pytest.raises(RuntimeError):
        C.VerticalFlip()(rgb[None])
    np.testing.assert_array_equal(C.RandomVerticalFlip(1.0)(rgb), rgb[::-1])
    flips = sum(np.array_equal(C.RandomVerticalFlip()(rgb), rgb[::-1]) for _ in range(400))
    assert 160 <= flips <= 240
    with pytest.raises(ValueError):
        C.RandomVerticalFlip(-0.1)

    candidates = {mode: vision.Resize((5, 7), mode)(rgb) for mode in C.RandomResize.modes}
    seen = set()
    for _ in range(40):
        out = C.RandomResize((5, 7))(rgb)
        matches = {m for m, c in candidates.items() if np.array_equal(out, c)}
        assert matches
        seen |= matches
    assert len(seen) >= 3  # the four modes differ little on some pixels; most are told apart
    assert C.RandomResize(5)(rgb).shape == (5, 6, 3)
    a, b = C.RandomResize((4, 4))(rgb, rgb)
    np.testing.assert_array_equal(a, b)  # one mode for all the columns
    with pytest.raises(ValueError):
        C.RandomResize(0)
    with pytest.raises(TypeError):
        C.RandomResize((4, 4, 4))


# -- pipelines ---------------------------------------------------------------------------------------------------


def test_py_compose_in_a_map_is_seeded():
    images = np.stack([_rgb(32, 32, seed=s) for s in range(4)])

    def run():
        ds.config.set_seed(11)
        transform = T.Compose(
            [P.ToPIL(), P.RandomHorizontalFlip(), P.RandomCrop((32, 32), (4, 4, 4, 4)), P.ToTensor()]
        )  # the zoo's ResidualAttentionNet CIFAR-10 transform
        data = ds.NumpySlicesDataset({"image": images}, shuffle=False).map(operations=transform, input_columns="image")
        return [row["image"] for row in data.create_dict_iterator(output_numpy=True, num_epochs=1)]

    first = run()
    assert all(x.shape == (3, 32, 32) and x.dtype == np.float32 and 0 <= x.min() and x.max() <= 1 for x in first)
    np.testing.assert_array_equal(first, run())


def _save(path, array):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    Image.fromarray(array).save(path)


def test_zoo_padim_dataset(tmp_path):
    """research/cv/PaDiM/src/dataset.py's createDataset (imports changed only) on a synthetic MVTec category."""
    from zoo.padim.dataset import createDataset

    category = tmp_path / "bottle"
    rng = np.random.default_rng(0)
    pictures = {}
    for name in ("train/good/000.png", "train/good/001.png", "test/good/000.png", "test/crack/000.png"):
        pictures[name] = rng.integers(0, 256, (260, 250, 3), dtype=np.uint8)
        _save(str(category / name), pictures[name])
    mask = np.zeros((260, 250), np.uint8)
    mask[60:170, 40:130] = 255
    _save(str(category / "ground_truth/crack/000_mask.png"), mask)

    train, train_len, test, test_len = createDataset(str(tmp_path), "bottle", 2)
    assert (train_len, test_len) == (2, 2)
    mean, std = np.float32([0.485, 0.456, 0.406]), np.float32([0.229, 0.224, 0.225])

    def reference(array):  # Pillow's Lanczos resize to 256, the central 224 (offset 16), / 255, normalised
        resized = np.asarray(Image.fromarray(array).resize((256, 256), Image.Resampling.LANCZOS))[16:240, 16:240]
        chw = (resized.transpose(2, 0, 1) / 255.0).astype(np.float32)
        return (chw - mean[:, None, None]) / std[:, None, None]

    rows = list(test.create_dict_iterator(output_numpy=True, num_epochs=1))
    assert len(rows) == 1
    row = rows[0]
    assert row["img"].shape == (2, 3, 224, 224) and row["img"].dtype == np.float32
    np.testing.assert_array_equal(row["label"], [1, 0])  # sorted defect types: crack, good
    np.testing.assert_allclose(row["img"][0], reference(pictures["test/crack/000.png"]), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(row["img"][1], reference(pictures["test/good/000.png"]), rtol=1e-5, atol=1e-5)
    gt = np.asarray(Image.fromarray(mask).resize((256, 256), Image.Resampling.NEAREST))[16:240, 16:240] / 255.0
    np.testing.assert_array_equal(row["gt"][0], gt[None])
    assert row["gt"].shape == (2, 1, 224, 224) and not row["gt"][1].any()
    train_rows = list(train.create_dict_iterator(output_numpy=True, num_epochs=1))
    np.testing.assert_allclose(train_rows[0]["img"][1], reference(pictures["train/good/001.png"]), atol=1e-5)
