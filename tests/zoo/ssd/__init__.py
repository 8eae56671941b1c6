"""MindSpore model zoo's SSD (official/cv/SSD/src: ssd300 with the MobileNetV2 backbone), ``mindspore``
replaced by ``opforge``."""
