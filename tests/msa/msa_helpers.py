"""What several MSA test modules share: the BAliBASE oracle set (from tests.datasets, the one
data helper), a family simulator and the textbook LCS DP."""

from __future__ import annotations

from tests.datasets import BALIBASE, SHARED  # noqa: F401 (re-exported for the MSA tests)

AA = "ARNDCQEGHILKMFPSTWYV"


def random_family(rng, n, length, alphabet=AA, mutate=0.3):
    root = "".join(rng.choice(list(alphabet), length))
    out = []
    for _ in range(n):
        s = [c if rng.random() > mutate else rng.choice(list(alphabet)) for c in root]
        # a few deletions and insertions
        for _ in range(rng.integers(0, 3)):
            k = int(rng.integers(0, max(len(s), 1)))
            if rng.random() < 0.5:
                del s[k : k + int(rng.integers(1, 4))]
            else:
                s[k:k] = list(rng.choice(list(alphabet), int(rng.integers(1, 4))))
        out.append("".join(s) or alphabet[0])
    return out


def lcs_dp(a: str, b: str) -> int:
    """Textbook LCS length, the oracle of the bit-parallel kernel."""
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]
