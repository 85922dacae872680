"""Peak rates for a device string: what a training framework needs to compute MFU.

``trnkb.peaks("NVIDIA H100 80GB HBM3")`` resolves the string that
``torch.cuda.get_device_name()``, ``jax.devices()[0].device_kind``, ``amd-smi`` or
``neuron-ls`` prints to one chip row (one SKU: an H100 PCIe is not an H100 SXM) and returns
its sourced dense peak per dtype, HBM bandwidth and capacity, TDP and clock, each with the
source id the knowledge base prefers::

    >>> import trnkb.peaks
    >>> p = trnkb.peaks("NVIDIA H100 80GB HBM3")
    >>> p.chip, p.dense["bf16"].value / 1e12, p.dense["bf16"].source
    ('h100', 989.4, 'klockwood-h100')

A string naming several rows is refused with the candidates (:class:`AmbiguousDevice`);
an unknown one with the closest known strings (:class:`UnknownDevice`). Both are
``ValueError``.

Importing this module is light (standard library only: no pandas, pint or altair). It
reads a small JSON table generated from the specs (:mod:`trnkb.kb.peaks_table`), keyed by a
digest of the spec files; when the specs changed since the shipped table was built, the
table is rebuilt from the knowledge base once and cached per digest.

Units: every value is in SI base units, named in ``unit`` (FLOP/s, B/s, B, W, Hz).
"""

from __future__ import annotations

import sys
import types

from trnkb.spec.peaks_format import (
    DTYPES,
    FORMAT,
    read_snapshot,
    shipped_table,
    specs_digest,
    specs_dir,
)

TYPE_CHECKING = False  # typing and pathlib are not imported at run time (light import)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

# json and re are imported on first use: `import trnkb.peaks` stays cheap for a framework that
# imports it at start-up (bench/peaks_bench.py).



class AmbiguousDevice(ValueError):
    """The string names several chip rows; ``candidates`` lists them (chip ids)."""

    def __init__(self, device: str, candidates: list[str]) -> None:
        self.device = device
        self.candidates = candidates
        super().__init__(f"device {device[:200]!r} is ambiguous: it matches "
                         f"{', '.join(candidates)}; "
                         "give the full device string or a chip id")


class UnknownDevice(ValueError):
    """No device string or chip id matches; ``suggestions`` lists close known strings."""

    def __init__(self, device: str, suggestions: list[str]) -> None:
        self.device = device
        self.suggestions = suggestions
        hint = f" (did you mean {', '.join(map(repr, suggestions))}?)" if suggestions else ""
        super().__init__(f"unknown device {device[:200]!r}{hint}; `trnkb peaks --list` shows the "
                         "known strings")


class _Frozen:
    """Attributes set once in ``__init__``; equal when all slots are equal.

    (Not a dataclass: importing :mod:`dataclasses` costs more than the rest of this module.)
    """

    __slots__: tuple[str, ...] = ()

    def _set(self, **values: object) -> None:
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is read-only")

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and all(
            getattr(self, n) == getattr(other, n) for n in self.__slots__)

    def __hash__(self) -> int:
        return hash(tuple(repr(getattr(self, n)) for n in self.__slots__))

    def __repr__(self) -> str:
        inner = ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__slots__)
        return f"{type(self).__name__}({inner})"


class Peak(_Frozen):
    """One sourced value: ``value`` in SI ``unit`` (FLOP/s, B/s, B, W or Hz)."""

    __slots__ = ("value", "unit", "source", "kind", "locator", "density", "qualifier", "note")
    value: float
    unit: str
    source: str
    kind: str
    locator: str
    density: str
    qualifier: str
    note: str

    def __init__(self, value: float, unit: str, source: str, kind: str, locator: str = "",
                 density: str = "", qualifier: str = "", note: str = "") -> None:
        self._set(value=value, unit=unit, source=source, kind=kind, locator=locator,
                  density=density, qualifier=qualifier, note=note)

    def as_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__slots__
                if getattr(self, k) != "" or k in ("value", "unit")}


class Peaks(_Frozen):
    """What :func:`peaks` resolves: the chip row and its sourced peaks.

    ``dense`` maps a dtype (:data:`DTYPES`) to its dense peak; dtypes the row has no
    sourced value for are absent (never guessed). A peak whose source does not say dense or
    sparse (AMD's MI455X targets, Microsoft's Maia 200 "over 10 PF FP4") is not a dense
    peak: it is kept apart in ``unstated`` with its source, for a reader to judge.
    """

    __slots__ = ("device", "chip", "name", "family", "status", "matched", "device_source",
                 "dense", "unstated", "hbm_bandwidth", "hbm_capacity", "tdp", "clock")
    device: str
    chip: str
    name: str
    family: str
    status: str
    matched: str  # the device string (or chip id) that matched
    device_source: str  # source of that device string ('' for a chip id)
    dense: dict[str, Peak]
    unstated: dict[str, Peak]
    hbm_bandwidth: Peak | None
    hbm_capacity: Peak | None
    tdp: Peak | None
    clock: Peak | None

    def __init__(self, *, device: str, chip: str, name: str, family: str, status: str,
                 matched: str, device_source: str, dense: dict[str, Peak] | None = None,
                 unstated: dict[str, Peak] | None = None, hbm_bandwidth: Peak | None = None,
                 hbm_capacity: Peak | None = None, tdp: Peak | None = None,
                 clock: Peak | None = None) -> None:
        self._set(device=device, chip=chip, name=name, family=family, status=status,
                  matched=matched, device_source=device_source, dense=dict(dense or {}),
                  unstated=dict(unstated or {}), hbm_bandwidth=hbm_bandwidth,
                  hbm_capacity=hbm_capacity, tdp=tdp, clock=clock)

    def peak(self, dtype: str) -> Peak:
        """The dense peak of ``dtype``; ValueError when the row has none sourced."""
        key = dtype.lower()
        if key not in DTYPES:
            raise ValueError(f"unknown dtype {dtype!r}: use one of {', '.join(DTYPES)}")
        if key not in self.dense:
            have = ", ".join(self.dense) or "none"
            also = (f"; its {key} figure's source does not say dense or sparse (see .unstated)"
                    if key in self.unstated else "")
            raise ValueError(f"{self.chip} has no sourced dense {key} peak (has: {have}){also}")
        return self.dense[key]

    def as_dict(self, dtype: str | None = None) -> dict[str, Any]:
        """JSON form; with ``dtype`` only that dtype's peak under ``dense``."""
        dense = {dtype.lower(): self.peak(dtype)} if dtype else self.dense
        out: dict[str, Any] = {
            "device": self.device, "chip": self.chip, "name": self.name, "family": self.family,
            "status": self.status, "matched": self.matched,
            "device_source": self.device_source,
            "dense": {k: v.as_dict() for k, v in dense.items()},
            "unstated": {k: v.as_dict() for k, v in self.unstated.items()
                         if dtype is None or k == dtype.lower()},
        }
        for key in ("hbm_bandwidth", "hbm_capacity", "tdp", "clock"):
            v = getattr(self, key)
            out[key] = v.as_dict() if v is not None else None
        return out




_CACHE: dict[str, dict[str, Any]] = {}


def _table(specs: Path | None = None) -> dict[str, Any]:
    """The table for ``specs`` (default: the shipped specs): the shipped JSON when its
    digest matches, else a cached or freshly built one."""
    from pathlib import Path

    root = Path(specs) if specs is not None else specs_dir()
    digest = specs_digest(root)
    if digest in _CACHE:
        return _CACHE[digest]
    table = read_snapshot(shipped_table(), FORMAT)
    if table is None or table.get("specs_digest") != digest:
        from trnkb.userdirs import cache_dir

        folder = cache_dir("peaks")
        cached = folder / f"{digest}.json" if folder is not None else None
        table = read_snapshot(cached, FORMAT) if cached is not None and cached.exists() else None
        if table is None or table.get("specs_digest") != digest:
            from trnkb.kb.peaks_table import build_table

            table = build_table(root)
            if cached is not None:
                import json

                try:
                    cached.write_text(json.dumps(table, sort_keys=True), encoding="utf-8")
                except OSError:
                    pass
    _CACHE[digest] = table
    return table


def _norm(s: str) -> str:
    import re

    return " ".join(re.sub(r"[\s_,;:()\[\]/-]+", " ", s.casefold()).split())


def device_strings(specs: Path | None = None) -> list[dict[str, str]]:
    """Every known device string: ``{"string", "chip", "reported_by", "source", ...}``."""
    return [dict(d) for d in _table(specs)["devices"]]


def _resolve(device: str, table: dict[str, Any]) -> tuple[str, str, str]:
    """(chip id, matched string, its source) for ``device``; raises on ambiguity."""
    q = _norm(device)
    if not q:
        raise UnknownDevice(device, [])
    devs = table["devices"]
    exact = [d for d in devs if _norm(d["string"]) == q]
    if exact:
        chips = sorted({d["chip"] for d in exact})
        if len(chips) > 1:
            raise AmbiguousDevice(device, chips)
        return chips[0], exact[0]["string"], exact[0]["source"]
    if device.strip() in table["chips"]:  # a chip id, exactly as written, names one row
        cid = device.strip()
        return cid, cid, ""
    words = set(q.split())
    # a known string inside a longer one ("NVIDIA H100 80GB HBM3 MIG 3g.40gb"): the longest wins
    inside = [d for d in devs if set(_norm(d["string"]).split()) <= words]
    if inside:
        most = max(len(_norm(d["string"]).split()) for d in inside)
        inside = [d for d in inside if len(_norm(d["string"]).split()) == most]
        chips = sorted({d["chip"] for d in inside})
        if len(chips) > 1:
            raise AmbiguousDevice(device, chips)
        return chips[0], inside[0]["string"], inside[0]["source"]
    # a fragment of known strings ("H100"): one row or an ambiguity
    around = [d for d in devs if words <= set(_norm(d["string"]).split())]
    chips = sorted({d["chip"] for d in around})
    if len(chips) == 1:
        return chips[0], around[0]["string"], around[0]["source"]
    if len(chips) > 1:
        raise AmbiguousDevice(device, chips)
    close = [d["string"] for d in devs if words & set(_norm(d["string"]).split())]
    if not close:  # a near miss of a chip id or a string ("TRAINIUM3", "H1OO"): chip ids are
        import difflib  # matched as written, so a case variant is refused, naming the id

        names = {_norm(d["string"]): d["string"] for d in devs}
        names.update({c.casefold(): c for c in table["chips"]})
        close = [names[n] for n in difflib.get_close_matches(q[:200], list(names), n=3)]
    raise UnknownDevice(device, close[:5])


def _peak(entry: dict[str, Any] | None) -> Peak | None:
    if entry is None:
        return None
    return Peak(**{k: entry[k] for k in Peak.__slots__ if k in entry})


def peaks(device: str, specs: Path | None = None) -> Peaks:
    """Resolve ``device`` (a device string or chip id) to its chip row and sourced peaks.

    Parameters
    ----------
    device
        What ``torch.cuda.get_device_name()``, ``jax.devices()[0].device_kind``,
        ``amd-smi`` or ``neuron-ls`` prints (case and punctuation are ignored), or a
        chip id such as ``gb200``.
    specs
        Spec directory (default: the specs trnkb ships).

    Raises
    ------
    AmbiguousDevice
        The string names several rows (``candidates``).
    UnknownDevice
        Nothing matches (``suggestions``).
    """
    table = _table(specs)
    chip, matched, source = _resolve(device, table)
    row = table["chips"][chip]
    values = row["values"]
    dense: dict[str, Peak] = {}
    unstated: dict[str, Peak] = {}
    for dtype, fname in DTYPES.items():
        p = _peak(values.get(fname))
        if p is not None:
            (dense if p.density in ("", "dense") else unstated)[dtype] = p
    return Peaks(device=device, chip=chip, name=row.get("name", chip),
                 family=row.get("family", ""), status=row.get("status", ""), matched=matched,
                 device_source=source, dense=dense, unstated=unstated,
                 hbm_bandwidth=_peak(values.get("hbm_bandwidth")),
                 hbm_capacity=_peak(values.get("hbm_capacity")),
                 tdp=_peak(values.get("tdp")), clock=_peak(values.get("clock")))


class _CallableModule(types.ModuleType):
    """Lets ``trnkb.peaks(...)`` work whether ``trnkb.peaks`` is this module or the function
    (``import trnkb.peaks`` binds the module to the package attribute)."""

    def __call__(self, device: str, specs: Path | None = None) -> Peaks:
        return peaks(device, specs)


sys.modules[__name__].__class__ = _CallableModule
