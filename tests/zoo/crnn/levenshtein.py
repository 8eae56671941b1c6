"""``Levenshtein.distance`` (the pip package python-Levenshtein, which the zoo's metric.py imports): the edit
distance of two strings, insertions, deletions and substitutions costing 1."""


def distance(a, b):
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]
