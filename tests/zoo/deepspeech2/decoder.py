"""deepspeech_pytorch.decoder's ``Decoder`` and ``GreedyDecoder`` (SeanNaren/deepspeech.pytorch, MIT),
the part greedydecoder.py builds on: the label maps, ``wer``/``cer`` by edit distance (python-Levenshtein's
``distance``: zoo.crnn.levenshtein) and ``convert_to_strings``."""

from zoo.crnn import levenshtein as Lev


class Decoder:
    def __init__(self, labels, blank_index=0):
        self.labels = labels
        self.int_to_char = dict(enumerate(labels))
        self.blank_index = blank_index
        space_index = len(labels)  # an out-of-range index when there is no space
        if " " in labels:
            space_index = labels.index(" ")
        self.space_index = space_index

    def wer(self, s1, s2):
        b = set(s1.split() + s2.split())
        word2char = dict(zip(b, range(len(b))))
        w1 = [chr(word2char[w]) for w in s1.split()]
        w2 = [chr(word2char[w]) for w in s2.split()]
        return Lev.distance("".join(w1), "".join(w2))

    def cer(self, s1, s2):
        s1, s2 = s1.replace(" ", ""), s2.replace(" ", "")
        return Lev.distance(s1, s2)


class GreedyDecoder(Decoder):
    def convert_to_strings(self, sequences, sizes=None, remove_repetitions=False, return_offsets=False):
        strings = []
        offsets = [] if return_offsets else None
        for x in range(len(sequences)):
            seq_len = sizes[x] if sizes is not None else len(sequences[x])
            string, string_offsets = self.process_string(sequences[x], seq_len, remove_repetitions)
            strings.append([string])  # one path
            if return_offsets:
                offsets.append([string_offsets])
        if return_offsets:
            return strings, offsets
        return strings
