# ruff: noqa  (the model zoo's text as it is)
"""The configuration of the zoo's src/config.py (its ``Config`` namespace) with the values of
efficientnet_b0_cifar10_config.yaml, shrunk for the tests: images resized to 32 (``resize_value``; the yaml
has 224), batch 4, 2 epochs, 1 worker, the CPU platform. The yaml/argparse loading is left out (the tests
set the values)."""

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
    "dataset": "CIFAR10",
    "data_path": "",
    "platform": "CPU",
    "distributed": False,
    "resume": "",
    "checkpoint": "",
    "random_seed": 1,
    "resize_value": 32,
    "size": [32, 32],
    "mean": [0.4914, 0.4822, 0.4465],
    "std": [0.247, 0.2435, 0.2616],
    "model": "efficientnet_b0",
    "drop": 0.2,
    "drop_connect": 0.2,
    "opt_eps": 0.0001,
    "lr": 0.0002,
    "batch_size": 4,
    "decay_epochs": 2.4,
    "warmup_epochs": 5,
    "decay_rate": 0.97,
    "weight_decay": 0.00001,
    "epochs": 2,
    "workers": 1,
    "amp_level": "O0",
    "opt": "rmsprop",
    "num_classes": 10,
    "gp": "avg",
    "momentum": 0.9,
    "warmup_lr_init": 0.0001,
    "smoothing": 0.1,
    "bn_tf": False,
    "save_checkpoint": True,
    "keep_checkpoint_max": 10,
    "loss_scale": 1024,
    "resume_start_epoch": 0,
    "width": 32,
    "height": 32,
    "ckpt_file": "",
    "file_name": "efficientnet",
    "file_format": "MINDIR",
    "device_target": "CPU",
}

config = Config(dict(DEFAULTS))
