# ruff: noqa  (the model zoo's text as it is)
"""The configuration of the zoo's src/model_utils/config.py (its ``Config`` namespace) with the values of
default_config_cpu.yaml (CIFAR-10, ``platform: 'CPU'``, ``amp_level: 'O0'``), shrunk for the tests: batch 2,
3 epochs, 1 worker, and default_config.yaml's peak learning rate 0.4 (``lr_max``; the CPU file's 0.1 hardly
moves the loss in the tests' 12 steps). The network and the dataset code fix the image size (299 x 299: ``Logits``' 8 x 8 average
pool and ``Dense(2048)``); the yaml/argparse loading is left out (the tests set the data and checkpoint
paths)."""

from pprint import pformat


class Config:
    """
    Configuration namespace. Convert dictionary to members.
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
    "dataset_path": "/cache/data",
    "ckpt_path": "/cache/data/",
    "checkpoint": "./inceptionv3/inceptionv3-rank3_1-247_1251.ckpt",
    "ckpt_file": "/cache/data/inceptionv3/inceptionv3-rank3_1-247_1251.ckpt",
    "resume": "",
    "is_distributed": False,
    "device_id": 0,
    "platform": "CPU",
    "file_name": "inceptionv3",
    "file_format": "MINDIR",
    "width": 299,
    "height": 299,
    "modelarts_dataset_unzip_name": "ImageNet_Original",
    "need_modelarts_dataset_unzip": True,
    "ckpt_save_dir": "./ckpt/",
    "result_path": "",
    "label_file": "",
    "random_seed": 1,
    "work_nums": 1,
    "decay_method": "cosine",
    "loss_scale": 1024,
    "batch_size": 2,
    "epoch_size": 3,
    "num_classes": 10,
    "ds_type": "cifar10",
    "ds_sink_mode": False,
    "smooth_factor": 0.1,
    "aux_factor": 0.2,
    "lr_init": 0.00004,
    "lr_max": 0.4,
    "lr_end": 0.000004,
    "warmup_epochs": 1,
    "weight_decay": 0.00004,
    "momentum": 0.9,
    "opt_eps": 1.0,
    "keep_checkpoint_max": 10,
    "is_save_on_master": 0,
    "dropout_keep_prob": 0.8,
    "has_bias": False,
    "amp_level": "O0",
}

config = Config(dict(DEFAULTS))
