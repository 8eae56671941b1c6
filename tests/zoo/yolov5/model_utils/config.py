# ruff: noqa  (the model zoo's text as it is)
# Copyright 2021 Huawei Technologies Co., Ltd
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
# http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
# ============================================================================

"""The configuration of the zoo's model_utils/config.py (its ``Config`` namespace) with the values of
default_config.yaml, for the CPU (``device_target``) and shrunk for the tests: 4 classes (``num_classes``,
``labels``, ``coco_ids``, so ``out_channel`` is 27), at most 8 ground-truth boxes per scale (``max_box``), 64 x 64
test images (``testing_shape``, ``test_img_shape``), a 2-epoch cosine schedule with 1 warm-up epoch (``max_epoch``,
``T_max``, ``warmup_epochs``) and batches of 2 (``per_batch_size``). ``input_shape`` keeps the yaml's four
widths (yolov5s/m/l/x). The yaml/argparse loading is left out (the tests set the values)."""

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
    "outputs_url": "",
    "data_path": "/cache/data",
    "output_path": "/cache/train",
    "load_path": "/cache/checkpoint_path",
    "device_target": "CPU",
    "need_modelarts_dataset_unzip": True,
    "modelarts_dataset_unzip_name": "coco",
    # Train options
    "data_dir": "/data/coco",
    "per_batch_size": 2,
    "yolov5_version": "yolov5s",
    "pretrained_backbone": "",
    "resume_yolov5": "",
    "pretrained_checkpoint": "",
    "output_dir": "./output",
    "train_img_dir": "train2017",
    "train_ann_file": "annotations/instances_train2017.json",
    "lr_scheduler": "cosine_annealing",
    "lr": 0.01,
    "lr_epochs": "220,250",
    "lr_gamma": 0.1,
    "eta_min": 0.0,
    "T_max": 2,
    "max_epoch": 2,
    "warmup_epochs": 1,
    "weight_decay": 0.0005,
    "momentum": 0.9,
    "loss_scale": 1024,
    "label_smooth": 0,
    "label_smooth_factor": 0.1,
    "log_interval": 100,
    "ckpt_path": "outputs/",
    "is_distributed": 0,
    "bind_cpu": True,
    "device_num": 8,
    "rank": 0,
    "group_size": 1,
    "need_profiler": 0,
    "resize_rate": 10,
    "filter_weight": False,
    "save_ckpt_interval": 1,
    "save_ckpt_max_num": 10,
    # Eval options
    "pretrained": "",
    "log_path": "outputs/",
    "ann_val_file": "",
    "eval_nms_thresh": 0.6,
    "ignore_threshold": 0.7,
    "test_ignore_threshold": 0.001,
    "multi_label": True,
    "multi_label_thresh": 0.1,
    "save_prefix": "../eval_parallel",
    "run_eval": True,
    "eval_epoch_interval": 10,
    "eval_start_epoch": 100,
    "eval_parallel": True,
    "val_img_dir": "val2017",
    "val_ann_file": "annotations/instances_val2017.json",
    # Export options
    "device_id": 0,
    "batch_size": 1,
    "testing_shape": [64, 64],
    "ckpt_file": "",
    "file_name": "yolov5",
    "file_format": "MINDIR",
    "dataset_path": "",
    "ann_file": "",
    # Other default config
    "hue": 0.015,
    "saturation": 1.5,
    "value": 0.4,
    "jitter": 0.3,
    "num_classes": 4,
    "max_box": 8,
    "checkpoint_filter_list": [
        "feature_map.back_block1.conv.weight",
        "feature_map.back_block1.conv.bias",
        "feature_map.back_block2.conv.weight",
        "feature_map.back_block2.conv.bias",
        "feature_map.back_block3.conv.weight",
        "feature_map.back_block3.conv.bias",
    ],
    # h->w
    "anchor_scales": [[12, 16], [19, 36], [40, 28], [36, 75], [76, 55], [72, 146], [142, 110], [192, 243], [459, 401]],
    "out_channel": 27,  # 3 * (num_classes + 5)
    "input_shape": [
        [3, 32, 64, 128, 256, 512, 1],
        [3, 48, 96, 192, 384, 768, 2],
        [3, 64, 128, 256, 512, 1024, 3],
        [3, 80, 160, 320, 640, 1280, 4],
    ],
    # test_param
    "test_img_shape": [64, 64],
    "labels": ["person", "bicycle", "car", "motorcycle"],
    "coco_ids": [1, 2, 3, 4],
    "result_files": "./result_Files",
}

config = Config(DEFAULTS)
