# ruff: noqa  (the model zoo's text as it is)
# Copyright 2020 Huawei Technologies Co., Ltd
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
"""
network config setting, will be used in train.py and eval.py

(The zoo's values shrunk for the tests: batch 4, 1 warm-up epoch; config_gpu's images 32 x 32
(``image_height`` / ``image_width``: create_dataset's crops) and 2 epochs; config_cpu's 5 epochs at a peak
learning rate of 0.002 (``lr``: the classifier's initial weights, normal with std sqrt(2 / num_classes), are
large for 10 classes, and the zoo's 0.1 at batch 4 diverges). ``ed`` stands for easydict's ``EasyDict`` (the
attribute reads these dicts get), as easydict is not installed here.)
"""


class ed(dict):
    """A dict whose keys read and write as attributes (easydict.EasyDict, for flat dicts)."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name, value):
        self[name] = value


config_gpu = ed({
    "num_classes": 1000,
    "image_height": 32,
    "image_width": 32,
    "batch_size": 4,
    "epoch_size": 2,
    "warmup_epochs": 1,
    "lr": 1.54,
    "momentum": 0.9,
    "weight_decay": 4e-5,
    "label_smooth": 0.1,
    "loss_scale": 1024,
    "save_checkpoint": True,
    "save_checkpoint_epochs": 1,
    "keep_checkpoint_max": 500,
    "save_checkpoint_path": "./checkpoint",
    "export_format": "MINDIR",
    "export_file": "mobilenetv3"
})

config_cpu = ed({
    "num_classes": 10,
    "image_height": 224,
    "image_width": 224,
    "batch_size": 4,
    "epoch_size": 5,
    "warmup_epochs": 1,
    "lr": 0.002,
    "momentum": 0.9,
    "weight_decay": 1e-4,
    "label_smooth": 0.1,
    "loss_scale": 1024,
    "save_checkpoint": True,
    "save_checkpoint_epochs": 1,
    "keep_checkpoint_max": 500,
    "save_checkpoint_path": "./checkpoint",
    "export_format": "MINDIR",
    "export_file": "mobilenetv3"
})

config_ascend = ed({
    "num_classes": 1000,
    "image_height": 224,
    "image_width": 224,
    "batch_size": 150,
    "epoch_size": 370,
    "warmup_epochs": 4,
    "lr": 1.54,
    "momentum": 0.9,
    "weight_decay": 4e-5,
    "label_smooth": 0.1,
    "loss_scale": 1024,
    "save_checkpoint": True,
    "save_checkpoint_epochs": 1,
    "keep_checkpoint_max": 500,
    "save_checkpoint_path": "./checkpoint",
    "export_format": "MINDIR",
    "export_file": "mobilenetv3"
})
