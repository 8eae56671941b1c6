"""The zoo's src/model_utils/config.py ``Config`` namespace with the values of config/ssd300_config.yaml
(model_name "ssd300": SSD300 over ``ssd_mobilenet_v2``), shrunk for the tests: 64 x 64 images, the backbone at
``width_mult=0.25`` (so the 13th layer's expansion has 144 channels, the last layer still 1280), feature maps
4, 2, 1, 1, 1, 1 (96 default boxes), 4 classes and narrow extra layers. The yaml/argparse loading is left
out (the tests set the values)."""

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
    "device_target": "CPU",
    "model_name": "ssd300",
    "img_shape": [64, 64],
    "num_ssd_boxes": 96,
    "match_threshold": 0.5,
    "nms_threshold": 0.6,
    "min_score": 0.1,
    "max_boxes": 100,
    "lr_init": 0.001,
    "lr_end_rate": 0.001,
    "warmup_epochs": 1,
    "momentum": 0.9,
    "weight_decay": 0.00015,
    "width_mult": 0.25,
    "num_default": [3, 6, 6, 6, 6, 6],
    "extras_in_channels": [32, 144, 1280, 64, 32, 32],
    "extras_out_channels": [144, 1280, 64, 32, 32, 16],
    "extras_strides": [1, 1, 2, 2, 2, 2],
    "extras_ratio": [0.2, 0.2, 0.2, 0.25, 0.5, 0.25],
    "feature_size": [4, 2, 1, 1, 1, 1],
    "min_scale": 0.2,
    "max_scale": 0.95,
    "aspect_ratios": [[], [2, 3], [2, 3], [2, 3], [2, 3], [2, 3]],
    "steps": [16, 32, 64, 64, 64, 64],
    "prior_scaling": [0.1, 0.2],
    "gamma": 2.0,
    "alpha": 0.75,
    "dataset": "other",
    "lr": 0.05,
    "mode_sink": "sink",
    "epoch_size": 2,
    "batch_size": 2,
    "loss_scale": 1024,
    "pre_trained": "",
    "pre_trained_epoch_size": 0,
    "freeze_layer": None,
    "checkpoint_filter_list": ["multi_loc_layers", "multi_cls_layers"],
    "classes": ["background", "circle", "square", "bar"],
    "num_classes": 4,
}

config = Config(DEFAULTS)
