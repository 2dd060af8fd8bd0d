"""Foundation shared by every layer: nothing here imports another part of bioaccel except
:mod:`bioaccel.errors`.

- ``threads``: the one ``threads=`` rule (0 = all cores, else 1 to 4 x the logical CPUs);
- ``progress``: the progress bar every long command shows (rich);
- ``outputs``: the one rule that decides an output's format from its name;
- ``native``: the one loader of the compiled core ``bioaccel._native``;
- ``atomic``: outputs written atomically (temporary file + rename).
"""
