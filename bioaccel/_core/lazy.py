"""Names a package's ``__init__`` re-exports but loads on first use (PEP 562), so that
importing the package stays cheap: the one way every package does it."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any


def lazy_getattr(package: str, table: dict[str, tuple[str, str]]) -> Callable[[str], Any]:
    """The module ``__getattr__`` of ``package`` for ``table`` (public name -> (module
    relative to the package, attribute)): the attribute is imported when first asked for
    and kept in the package's namespace, so later lookups skip this function."""
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str):
        if name in table:
            module, attribute = table[name]
            value = getattr(importlib.import_module(module, package), attribute)
            namespace[name] = value
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
