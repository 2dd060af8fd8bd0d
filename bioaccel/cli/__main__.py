"""``python -m bioaccel.cli``."""

from . import run

run()
