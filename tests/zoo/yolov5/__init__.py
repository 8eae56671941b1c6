# ruff: noqa  (the model zoo's text as it is)
"""YOLOv5 as MindSpore's model zoo writes it: the files of mindspore-ai/models official/cv/YOLOv5 at commit
eab643f51336dbf7d711f02d27e6516e5affee59 (src/backbone.py, src/yolo.py, src/loss.py, src/lr_scheduler.py,
src/initializer.py, src/transforms.py, src/yolo_dataset.py, src/distributed_sampler.py, src/util.py; Apache-2.0)
with ``mindspore`` replaced by ``opforge`` in the imports and ``src.`` / ``model_utils.`` by relative imports.
Other changes: ``config`` a namespace of default_config.yaml's values, for the CPU and shrunk
(model_utils/config.py, for the zoo's yaml and argparse loading); src/util.py without its pycocotools scoring;
src/transforms.py and src/yolo_dataset.py import cv2_shim.py for their OpenCV calls and src/yolo_dataset.py
coco_shim.py for pycocotools' ``COCO`` index (neither OpenCV nor pycocotools is installed here). train.py's
``run_train`` needs COCO's evaluation (pycocotools): ``tests/test_zoo_yolov5.py`` checks the network (Focus input,
backbone, neck, the detection heads' box decoding), the GIoU, confidence and class losses and the whole
``YoloLossBlock`` against NumPy, runs ``create_yolo_dataset``'s training and evaluation pipelines on a COCO-style
folder, and train.py's training steps (``YOLOV5`` + ``default_recurisive_init`` + ``YoloWithLossCell``,
``get_lr``, ``nn.Momentum`` over ``get_param_groups`` with the static loss scale, ``nn.TrainOneStepCell`` with
``sens``) in graph mode on 64 x 64 images augmented by transforms.py's ``preprocess_fn``."""
