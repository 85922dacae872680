"""A system as the workload layer sees it: a plain object of ranged inputs and a network.

Built from the knowledge base by :func:`trnkb.workload.fromkb.system`; nothing here reads
YAML or the KB. Units of the float ranges: FLOP/s, bytes, B/s, W, USD, dimensionless PUE.

Where the KB has no value for something a workload needs (chip power, capex, a chip's
scale-up or scale-out bandwidth), the value is a labelled assumption from the tables below,
with its basis, so the answer says what it rests on. These are the rows the knowledge base
should gain (see ``docs/workload.md``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from trnkb.workload.collectives import Network
from trnkb.workload.ranges import Input

# Peak-FLOP/s field of the chips table for each compute precision, first present wins.
PRECISION_FIELDS = {
    "bf16": ("dense_bf16",),
    "fp8": ("dense_fp8", "dense_mxfp8"),
    "mxfp8": ("dense_mxfp8", "dense_fp8"),
    "int8": ("dense_int8", "dense_fp8"),
    "fp4": ("dense_fp4", "dense_mxfp4"),
    "mxfp4": ("dense_mxfp4", "dense_fp4"),
}

_NO_SOURCE = "assumption: no source in the knowledge base gives it"

# All-in power per accelerator (chip, its share of host CPUs, NICs, switches, fans and
# power conversion), W, where the KB has neither a rack power nor a chip TDP.
ASSUMED_POWER = {
    "trainium2": (500, 650, 850, f"{_NO_SOURCE}; Trainium2-class air-cooled accelerator"),
    "trainium3": (800, 1050, 1400, f"{_NO_SOURCE}; seed 000 guesses 400-500 W for the chip alone "
                                   "and is contradicted elsewhere, so the range is wide"),
    "tpu-v5e": (200, 300, 400, f"{_NO_SOURCE}; inference-class TPU"),
    "tpu-v5p": (500, 650, 850, _NO_SOURCE),
    "tpu-v6e": (300, 450, 600, _NO_SOURCE),
    "tpu-v7": (800, 1100, 1400, f"{_NO_SOURCE}; liquid-cooled 1 kW-class TPU"),
    "mi455x": (1800, 2300, 2800, f"{_NO_SOURCE}; MI450-class liquid-cooled GPU in a 72-GPU rack"),
    "rubin": (1800, 2300, 2800, _NO_SOURCE),
}
# Multiplier from a chip TDP to all-in power per accelerator.
TDP_OVERHEAD = (1.15, 1.3, 1.45, "assumption: host CPUs, NICs, scale-up switches, fans and "
                                 "power conversion on top of the accelerator TDP")

# Capital cost per accelerator including its share of the rack and network, USD.
_CAPEX_BASIS = "placeholder assumption (no public source); set your own with capex_per_chip"
ASSUMED_CAPEX = {
    "trainium2": (8e3, 12e3, 18e3), "trainium3": (14e3, 20e3, 30e3),
    "h100": (25e3, 32e3, 40e3), "b200": (35e3, 45e3, 55e3), "gb200": (45e3, 55e3, 65e3),
    "gb300": (55e3, 65e3, 80e3), "rubin": (70e3, 85e3, 110e3),
    "mi300x": (18e3, 25e3, 32e3), "mi355x": (25e3, 35e3, 45e3), "mi455x": (40e3, 55e3, 70e3),
    "tpu-v5e": (5e3, 8e3, 12e3), "tpu-v5p": (10e3, 15e3, 20e3), "tpu-v6e": (8e3, 12e3, 16e3),
    "tpu-v7": (15e3, 25e3, 35e3),
}

# Scale-up and scale-out bandwidth per chip and direction, B/s, where the KB has none.
ASSUMED_SCALEUP = {
    "mi355x": (4.5e11, 5.4e11, 6.1e11,
               f"{_NO_SOURCE}; 7 Infinity Fabric links per GPU on the 8-GPU board"),
    "mi455x": (1.4e12, 1.8e12, 1.8e12, f"{_NO_SOURCE}; UALink-over-Ethernet rack (MI450X UALoE72)"),
}
ASSUMED_SCALEOUT = (2.5e10, 5e10, 1e11, f"{_NO_SOURCE}; 200-800 Gbit/s NIC per accelerator")


@dataclass
class System:
    """One rack SKU / scale-up domain and its chip, as ranged inputs (see the module docstring)."""

    id: str
    name: str
    chip: str
    vendor: str
    domain_size: int
    chips_per_rack: int | None
    peak: dict[str, Input]
    hbm_capacity: Input
    hbm_bandwidth: Input
    chip_power: Input
    pue: Input
    capex: Input
    network: Network
    scaleup_input: Input
    scaleout_input: Input
    generation: str | None = None
    notes: list[str] = field(default_factory=list)
    cloud_price: Input | None = None  # USD per chip-hour a renter pays (prices table)
    owner_price: Input | None = None  # USD per owned chip-hour, analyst all-in (prices table)

    def peak_input(self, precision: str) -> Input:
        """Peak dense FLOP/s at ``precision`` (raises ``KeyError`` naming what exists)."""
        if precision not in self.peak:
            have = ", ".join(sorted(self.peak)) or "none"
            raise KeyError(f"{self.chip} has no peak FLOP/s for {precision!r} in the knowledge "
                           f"base "
                           f"(it has: {have})")
        return self.peak[precision]

    def fallback_precision(self, wanted: str) -> str:
        """``wanted`` if the chip has a peak for it, else the nearest one (bf16, fp8, mxfp8...)."""
        if wanted in self.peak:
            return wanted
        for p in ("bf16", "fp8", "mxfp8", "int8", "fp4", "mxfp4"):
            if p in self.peak:
                return p
        return wanted

    def inputs(self, precision: str) -> dict[str, Input]:
        """The system's ranged inputs for a workload at ``precision``."""
        return {"peak_flops": self.peak_input(precision), "hbm_bandwidth": self.hbm_bandwidth,
                "hbm_capacity": self.hbm_capacity, "chip_power": self.chip_power,
                "pue": self.pue, "capex_per_chip": self.capex,
                "scaleup_bandwidth": self.scaleup_input, "scaleout_bandwidth": self.scaleout_input}
