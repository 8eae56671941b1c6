# ruff: noqa  (the model zoo's text as it is)
"""FastText data preprocess: src/dataset.py's bucket padding and write_to_mindrecord (spaCy tokenising left
out: ``pad_to_buckets`` takes token-id rows, the rows ``FastTextDataPreProcess.load`` builds)."""
import os
import numpy as np
from opforge.mindrecord import FileWriter


def _get_bucket_length(x, bts):
    x_len = len(x)
    for index in range(1, len(bts)):
        if bts[index - 1] < x_len <= bts[index]:
            return bts[index]
    return bts[0]


def pad_to_buckets(dataset_list, buckets, feature_dict, pad=0):
    """The padding loop of FastTextDataPreProcess.load: pad each [src_tokens, length, label_idx] to its
    bucket's length and file it under that length in feature_dict."""
    for l in range(len(dataset_list)):
        bucket_length = _get_bucket_length(dataset_list[l][0], buckets)
        while len(dataset_list[l][0]) < bucket_length:
            dataset_list[l][0].append(pad)
        dataset_list[l][1] = len(dataset_list[l][0])
    example_data = []
    for idx in range(len(dataset_list)):
        example_data.append({
            "src_tokens": dataset_list[idx][0],
            "src_tokens_length": dataset_list[idx][1],
            "label_idx": dataset_list[idx][2],
        })
        for key in feature_dict:
            if key == example_data[idx]['src_tokens_length']:
                feature_dict[key].append(example_data[idx])
    return feature_dict


def write_to_mindrecord(data, path, shared_num=1):
    """generate mindrecord"""
    if not os.path.isabs(path):
        path = os.path.abspath(path)

    writer = FileWriter(path, shared_num)
    data_schema = {
        "src_tokens": {"type": "int32", "shape": [-1]},
        "src_tokens_length": {"type": "int32", "shape": [-1]},
        "label_idx": {"type": "int32", "shape": [-1]}
    }
    writer.add_schema(data_schema, "fasttext")
    for item in data:
        item['src_tokens'] = np.array(item['src_tokens'], dtype=np.int32)
        item['src_tokens_length'] = np.array(item['src_tokens_length'], dtype=np.int32)
        item['label_idx'] = np.array(item['label_idx'], dtype=np.int32)
        writer.write_raw_data([item])
    writer.commit()
