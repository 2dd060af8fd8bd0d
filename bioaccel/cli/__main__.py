"""``python -m bioaccel.cli``."""

from . import main

main(prog_name="bioaccel")
