# ruff: noqa  (the model zoo's text as it is)
"""The configuration of the zoo's src/utils/config.py (its ``Config`` namespace) with the values of
default_config.yaml, for the CPU (``device_target``) and shrunk for the tests: 2 epochs (1 at the initial
learning rate, 1 decaying: ``epoch_num``, ``n_epochs``, ``n_epochs_decay``) of a 2-image set (``dataset_size``),
images loaded at 262 x 262 (``load_size``; the dataset code crops 256 x 256 from them, and its random crop
offset needs a load size above 256). The yaml/argparse loading is left out (the tests set the data, output and
checkpoint paths)."""

from pprint import pformat


class Config:
    """
    Configuration namespace. Convert dictionary to members
    """
    def __init__(self, cfg_dict):
        for k, v in cfg_dict.items():
            if isinstance(v, (list, tuple)):
                setattr(self, k, [Config(x) if isinstance(x, dict) else x for x in v])
            else:
                setattr(self, k, Config(v) if isinstance(v, dict) else v)

    def __str__(self):
        return pformat(self.__dict__)

    def __repr__(self):
        return self.__str__()


DEFAULTS = {
    "enable_modelarts": False,
    "data_url": "",
    "train_url": "",
    "checkpoint_url": "",
    "data_path": "/cache/data",
    "output_path": "/cache/train",
    "load_path": "/cache/checkpoint_path",
    "device_target": "CPU",
    "enable_profiling": False,
    "need_modelarts_dataset_unzip": False,
    "run_distribute": False,
    "device_id": 0,
    "ckpt": None,
    "workers": 24,
    "mode": "sink",
    "epoch_size": 500,
    "pre_trained": "",
    "pre_trained_epoch_size": 0,
    "loss_scale": 1024,
    "filter_weight": False,
    "result_path": "",
    "img_path": "",
    "img_id_file": "",
    "train_data_dir": "data/datasets/facades/train/",
    "train_fakeimg_dir": "results/fake_img/",
    "loss_show_dir": "results/loss_show",
    "ckpt_dir": "results/ckpt",
    "save_graphs": False,
    "init_type": "normal",
    "init_gain": 0.02,
    "pad_mode": "CONSTANT",
    "load_size": 262,
    "batch_size": 1,
    "LAMBDA_Dis": 0.5,
    "LAMBDA_GAN": 1,
    "LAMBDA_L1": 100,
    "beta1": 0.5,
    "beta2": 0.999,
    "lr": 0.0002,
    "lr_policy": "linear",
    "epoch_num": 2,
    "n_epochs": 1,
    "n_epochs_decay": 1,
    "dataset_size": 2,
    "val_data_dir": None,
    "predict_dir": "results/predict/",
    "image_size": 256,
    "file_format": "MINDIR",
    "onnx_infer_data_dir": "data/facades/val/",
    "onnx_infer_dir": "results/onnx_infer/",
    "onnx_path": "pix2pix.onnx",
    "file_name": "pix2pix",
}

config = Config(dict(DEFAULTS))
