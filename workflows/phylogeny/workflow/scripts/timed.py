"""timed.py STATS.json -- COMMAND...: run COMMAND, record where and how long it ran.

Run under `bioaccel gpu-run`, so CUDA_VISIBLE_DEVICES is the leased GPU ("" or unset: the
CPU). Writes {"gpu", "start", "end", "seconds", "exit_status"} atomically and returns
COMMAND's exit status (the stats file only when it succeeded)."""

import json
import os
import subprocess
import sys
import time


def main(argv):
    if len(argv) < 3 or argv[1] != "--":
        sys.exit("usage: timed.py STATS.json -- COMMAND...")
    stats, command = argv[0], argv[2:]
    start = time.time()
    code = subprocess.call(command)
    end = time.time()
    if code == 0:
        gpu = os.environ.get("CUDA_VISIBLE_DEVICES") or "cpu"
        tmp = f"{stats}.tmp{os.getpid()}"
        with open(tmp, "w") as f:
            json.dump(
                {
                    "gpu": gpu,
                    "start": start,
                    "end": end,
                    "seconds": end - start,
                    "exit_status": code,
                },
                f,
            )
        os.replace(tmp, stats)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
