"""What the peak-rate table is: dtypes, fields, SI units and the spec digest that keys it.

Shared by the light resolver :mod:`trnkb.peaks` (which reads the table) and
:mod:`trnkb.kb.peaks_table` (which builds it from the knowledge base). Standard library
only, so ``import trnkb.peaks`` stays light.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing and pathlib are not imported at run time (light import)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

FORMAT = 1
#: dtype name -> chips field of its dense peak (``fp16`` runs at the BF16 rate the field holds)
DTYPES: dict[str, str] = {
    "fp32": "dense_fp32", "tf32": "dense_tf32", "bf16": "dense_bf16", "fp16": "dense_bf16",
    "fp8": "dense_fp8", "int8": "dense_int8", "fp4": "dense_fp4", "mxfp8": "dense_mxfp8",
    "mxfp6": "dense_mxfp6", "mxfp4": "dense_mxfp4",
}
PEAK_FIELDS = tuple(dict.fromkeys(DTYPES.values()))
#: field -> the SI unit its value is written in, in the table
UNITS: dict[str, str] = {**{f: "FLOP/s" for f in PEAK_FIELDS}, "hbm_bandwidth": "B/s",
                         "hbm_capacity": "B", "tdp": "W", "clock": "Hz"}


def specs_dir() -> Path:
    """The shipped specs (``trnkb/specs`` in a wheel, ``specs/`` in a checkout)."""
    from importlib import resources
    from pathlib import Path

    packaged = resources.files("trnkb").joinpath("specs")
    if packaged.is_dir():
        return Path(str(packaged))
    return Path(__file__).resolve().parents[2] / "specs"


def specs_digest(root: Path) -> str:
    """SHA-256 of the spec table files of ``root`` (names and bytes; claims excluded)."""
    import hashlib
    from pathlib import Path

    h = hashlib.sha256()
    for path in sorted(Path(root).glob("*.yaml")):
        if path.name == "claims.yaml":
            continue
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def read_snapshot(path: Any, fmt: int) -> dict[str, Any] | None:
    """A shipped spec snapshot (JSON object of format ``fmt``) at ``path``; None if it is
    missing, unreadable or of another format (the caller then builds it from the KB)."""
    import json

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("format") == fmt else None


def shipped_table() -> Any:
    """Where the shipped table lives (``trnkb/data/peaks.json``, a Traversable)."""
    from importlib import resources

    return resources.files("trnkb").joinpath("data", "peaks.json")
