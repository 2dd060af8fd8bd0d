"""What :func:`bioaccel.msa` is asked to do: the operation (align, add, profile), its options
as one frozen object carried through the layers, and the one rule of which option applies to
which operation and mode (used by the Python API, so by the command line and R, which call it).

The rule (:data:`APPLIES`):

- ``align`` (sequences given): every option. In the ``accurate`` mode the scoring options
  (``matrix``, ``gap_open``, ``gap_extend``, ``term_gap``) do not apply (it scores with
  pair-HMM posteriors) and are refused naming the mode; with ``mode="auto"`` giving one of
  them chooses the ``fast`` mode, which uses it (``auto`` says so).
- ``add`` (``add=`` and ``to=``) and ``profile`` (``profile=``): the scoring options and
  ``threads`` (``add`` also ``keep_length``, ``fragments`` and ``format``, that of the
  sequences added); the new rows are aligned to fixed profiles by the fast mode's scoring,
  so ``mode="accurate"``, a ``guide_tree``, ``refine``, a GPU ``backend`` and ``devices``
  are refused naming the operation, and ``profile`` refuses ``format`` (each alignment is
  read in the format its file holds).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

#: the operations of :func:`bioaccel.msa`
OPERATIONS = ("align", "add", "profile")
#: the scoring options, which only the fast mode's scoring uses
SCORING = ("matrix", "gap_open", "gap_extend", "term_gap")
#: option -> its value when not given (what "given" means for the rule below)
DEFAULTS = {
    "matrix": "auto",
    "gap_open": None,
    "gap_extend": None,
    "term_gap": None,
    "guide_tree": "auto",
    "refine": "auto",
    "backend": "auto",
    "devices": None,
    "keep_length": False,
    "fragments": False,
    "mode": "auto",
    "format": None,
}
#: (operation, mode) -> the options of DEFAULTS that apply there (mode None: any mode)
APPLIES = {
    ("align", "fast"): {*SCORING, "guide_tree", "refine", "backend", "devices", "mode", "format"},
    ("align", "accurate"): {"guide_tree", "refine", "backend", "devices", "mode", "format"},
    ("add", None): {*SCORING, "keep_length", "fragments", "format"},
    ("profile", None): {*SCORING},
}
#: the command line's spelling of each option, for messages
CLI_NAMES = {k: "--" + k.replace("_", "-") for k in DEFAULTS}
CLI_NAMES["refine"] = "--refine/--refine-iterations"
CLI_NAMES["guide_tree"] = "--guide-tree"
CLI_NAMES["format"] = "--input-format"


@dataclass(frozen=True)
class MsaScoring:
    """The fast mode's scoring options (see :func:`bioaccel.msa`)."""

    matrix: object = "auto"
    gap_open: float | None = None
    gap_extend: float | None = None
    term_gap: float | None = None


@dataclass(frozen=True)
class MsaOptions:
    """One call of :func:`bioaccel.msa`: its operation and every option, checked once by
    :meth:`check` and passed down as one object."""

    operation: str = "align"
    mode: str = "auto"
    alphabet: object = "auto"
    scoring: MsaScoring = field(default_factory=MsaScoring)
    guide_tree: object = "auto"
    refine: object = "auto"
    threads: int = 0
    backend: str = "auto"
    devices: object = None
    progress: bool | None = None
    keep_length: bool = False
    fragments: bool = False
    format: str | None = None
    #: how messages spell options: "python" (``matrix=``) or "cli" (``--matrix``)
    spelling: str = "python"

    def value(self, name: str):
        if name in SCORING:
            return getattr(self.scoring, name)
        return getattr(self, name)

    def given(self) -> list[str]:
        """The options of :data:`DEFAULTS` set to something other than their default."""
        out = []
        for name, default in DEFAULTS.items():
            v = self.value(name)
            if isinstance(default, str):  # a matrix object or (match, mismatch) is given
                if not isinstance(v, str) or v.lower() != default:
                    out.append(name)
            elif v is not default and v != default:
                out.append(name)
        return out

    def given_scoring(self) -> list[str]:
        return [n for n in self.given() if n in SCORING]

    def name(self, option: str) -> str:
        return CLI_NAMES[option] if self.spelling == "cli" else f"{option}="

    def check(self, mode: str | None = None) -> None:
        """Refuse (ValueError, one line) an option that does not apply to this operation in
        ``mode`` (the chosen mode of ``align``; None for add and profile), naming the
        option and the operation or mode."""
        applies = APPLIES[(self.operation, mode if self.operation == "align" else None)]
        for option in self.given():
            if option in applies:
                continue
            if option == "mode" and self.mode.lower() == "fast":
                continue  # add and profile score as the fast mode does
            if self.operation == "align" and option in SCORING:
                fast = "--mode fast" if self.spelling == "cli" else "mode='fast'"
                raise ValueError(
                    f"{self.name(option)} does not apply to the accurate mode (it scores with "
                    f"pair-HMM posteriors, not a substitution matrix or gap penalties); use "
                    f"{fast} to align with it"
                )
            if option == "format":  # profile: two alignments, each read as its file says
                raise ValueError(
                    f"{self.name(option)} applies to the sequences to align or add; the two "
                    "alignments of a profile alignment are read in the format each file holds"
                )
            if self.operation == "align":  # keep_length, fragments
                adding = "--add and --to" if self.spelling == "cli" else "add= and to="
                raise ValueError(f"{self.name(option)} applies to adding sequences: give {adding}")
            what = (
                "adding sequences to an alignment"
                if self.operation == "add"
                else "aligning two alignments as profiles"
            )
            value = self.value(option)
            shown = (
                ""
                if isinstance(value, bool)
                else f" {value}"
                if self.spelling == "cli"
                else repr(value)
            )
            raise ValueError(
                f"{self.name(option)}{shown} does not apply to {what}: the new rows are "
                "aligned to fixed profiles with the fast mode's scoring (no guide tree, "
                "refinement, GPU stage or accurate mode)"
            )


def operation_of(sequences, add, to, profile) -> str:
    """The operation the arguments of :func:`bioaccel.msa` ask for, or a TypeError."""
    if profile is not None:
        if sequences is not None or add is not None or to is not None:
            raise TypeError("give either sequences, or add= and to=, or profile=, not several")
        if isinstance(profile, (str, os.PathLike)) or len(profile) != 2:
            raise TypeError("profile must be two alignments (paths or MultipleAlignments)")
        return "profile"
    if add is not None or to is not None:
        if sequences is not None:
            raise TypeError("give either sequences, or add= and to=, or profile=, not several")
        if add is None or to is None:
            raise TypeError(
                "adding sequences needs both add= (the new sequences) and to= (the existing "
                "alignment)"
            )
        return "add"
    if sequences is None:
        raise TypeError("msa() needs sequences (or add= and to=, or profile=)")
    return "align"
