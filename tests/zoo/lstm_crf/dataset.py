# ruff: noqa  (the model zoo's text as it is)
"""
Data operations, will be used in train.py and eval.py
"""
import numpy as np
import opforge.dataset as ds

def get_data_set(word_index, tag_index, batch_size):
    """get the data for train and eval"""
    def generator_func():
        for i in range(len(word_index)):
            yield (np.array([j for j in word_index[i]]).astype(np.int32),
                   np.array([value for value in tag_index[i]]).astype(np.int32))

    data_set = ds.GeneratorDataset(generator_func, ["feature", "label"])
    data_set = data_set.shuffle(buffer_size=data_set.get_dataset_size())
    data_set = data_set.batch(batch_size=batch_size, drop_remainder=True)

    return data_set
