"""``trnkb peaks "<device string>"``: the sourced dense peaks of the chip a framework names."""

from __future__ import annotations

from pathlib import Path

import typer

from trnkb.cli.kbcmds import JsonOpt, SpecsOpt, print_json

_SHOW = {"FLOP/s": "TFLOP/s", "B/s": "TB/s", "B": "GB", "W": "W", "Hz": "GHz"}


def _fmt(value: float, unit: str) -> str:
    from trnkb.units import Q_, format_quantity

    return format_quantity(Q_(value, unit).to(_SHOW.get(unit, unit)))


def peaks_command(
    device: str | None = typer.Argument(
        None, help="Device string as torch.cuda.get_device_name(), jax device_kind, amd-smi or "
                   "neuron-ls prints it (case and punctuation ignored), or a chip id."),
    dtype: str | None = typer.Option(
        None, "--dtype", help="Only this dtype's dense peak (fp32, tf32, bf16, fp16, fp8, "
                              "int8, fp4, mxfp8, mxfp6, mxfp4)."),
    list_strings: bool = typer.Option(False, "--list", help="List every known device string."),
    as_json: JsonOpt = False,
    specs: SpecsOpt = None,
) -> None:
    """Resolve a device string to its chip row and sourced dense peaks (for MFU).

    SKU-aware: 'NVIDIA H100 PCIe' and 'NVIDIA H100 80GB HBM3' are different rows; a
    string that names several rows ('NVIDIA H100') is refused with the candidates. Values
    are the knowledge base's preferred ones, each with its source id; a dtype without a
    sourced value is absent, never guessed.

    Example: ``trnkb peaks "NVIDIA H100 80GB HBM3" --dtype bf16 --json``
    """
    from trnkb.peaks import device_strings, peaks

    root = Path(specs) if specs is not None else None
    if list_strings:
        rows = device_strings(root)
        if as_json:
            print_json(rows)
        else:
            for d in rows:
                print(f"{d['string']:<28} {d['chip']:<12} {d['reported_by']:<9} {d['source']}")
        return
    if device is None or not device.strip():
        raise ValueError("give a device string (or --list)")
    p = peaks(device, root)
    if dtype is not None:
        p.peak(dtype)  # refuses an unknown dtype or one without a sourced value
    if as_json:
        print_json(p.as_dict(dtype))
        return
    print(f"{p.device!r} -> {p.chip} ({p.name}; family {p.family or '-'}, {p.status})")
    if p.device_source:
        print(f"  matched {p.matched!r} (source {p.device_source})")
    shown = {dtype.lower(): p.peak(dtype)} if dtype else p.dense
    for key, v in shown.items():
        print(f"  dense {key:<6} {_fmt(v.value, v.unit):>14}  {v.source} ({v.kind})")
    for key, v in p.unstated.items():
        if dtype is None or key == dtype.lower():
            print(f"  {key:<12} {_fmt(v.value, v.unit):>14}  {v.source} ({v.kind}; the source "
                  "does not say dense or sparse)")
    for key in ("hbm_bandwidth", "hbm_capacity", "tdp", "clock"):
        v = getattr(p, key)
        text = f"{_fmt(v.value, v.unit):>14}  {v.source} ({v.kind})" if v else "missing"
        print(f"  {key:<12} {text}")


def register(app: typer.Typer) -> None:
    app.command("peaks")(peaks_command)
