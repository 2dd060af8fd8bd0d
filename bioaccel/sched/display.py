"""How the arbiter names times, durations and GPUs for people and for its files."""

from __future__ import annotations

import time

from ..devices import Device


def human_time(t: float) -> str:
    """A local time as ``2026-12-02 00:31:05``."""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t))


def human_duration(seconds: float) -> str:
    """``4.2 s``, ``3 min 05 s``, ``2 h 03 min``, ``3 d 04 h``."""
    s = max(0.0, float(seconds))
    if s < 60:
        return f"{s:.1f} s"
    m, sec = divmod(int(s), 60)
    if m < 60:
        return f"{m} min {sec:02d} s"
    h, m = divmod(m, 60)
    if h < 24:
        return f"{h} h {m:02d} min"
    d, h = divmod(h, 24)
    return f"{d} d {h:02d} h"


def token_of(device: Device) -> str:
    """The host-wide name of a GPU in the run directory (virtual GPUs never block real ones)."""
    text = "".join(c if c.isalnum() or c in "-_" else "_" for c in device.visible_id)
    return f"{'vgpu' if device.virtual else 'gpu'}-{text}"


def printable(text: object) -> str:
    """``text`` safe for a terminal: control characters (C0, DEL, C1, and the bidirectional
    overrides that reorder what is shown) as ``\\xNN``/``\\uNNNN``, bytes that were not UTF-8
    (surrogate escapes) as ``\\xNN``; everything else as given."""
    out = []
    for ch in str(text):
        o = ord(ch)
        if 0xDC80 <= o <= 0xDCFF:  # an undecodable byte, kept by surrogateescape
            out.append(f"\\x{o - 0xDC00:02x}")
        elif o < 0x20 or 0x7F <= o < 0xA0:
            out.append(f"\\x{o:02x}")
        elif 0xD800 <= o <= 0xDFFF or o in _BIDI or 0x2066 <= o <= 0x2069:
            out.append(f"\\u{o:04x}")
        else:
            out.append(ch)
    return "".join(out)


_BIDI = {0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x061C}
