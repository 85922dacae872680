"""The NeuronCore the engine runs on: plain parameters with units, built from the KB once.

The engine never reads the knowledge base; :meth:`NeuronCore.from_inputs` is the one place
that turns ``specs/cores.yaml`` (and the chip's HBM bandwidth and core count from
``specs/chips.yaml``), gathered by :mod:`trnkb.engine.snapshot`, into this object:
:meth:`NeuronCore.from_kb` from a loaded knowledge base, :meth:`NeuronCore.for_chip` from
the shipped snapshot when it is current. Every field has its source in the specs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pint

from trnkb.units.qtypes import Quantity

if TYPE_CHECKING:  # snapshot is imported where used: `python -m trnkb.engine.snapshot`
    from pathlib import Path

    from trnkb.engine.snapshot import CoreInputs, Value
    from trnkb.kb import KnowledgeBase

# TensorE K elements per PE per cycle: dtype -> the specs/cores.yaml fields holding its
# packing, first found wins (``mxfp8_pack``/``mxfp4_pack`` where a generation packs them
# differently, else the shared ``mx_pack``). The dtypes a core runs are its
# ``matmul_dtypes`` row (default: those with a packing).
PACK_FIELD: dict[str, tuple[str, ...]] = {"bf16": (), "fp8": ("fp8_pack",),
                                          "mxfp8": ("mxfp8_pack", "mx_pack"),
                                          "mxfp4": ("mxfp4_pack", "mx_pack")}


@dataclass(frozen=True)
class NeuronCore:
    """One NeuronCore generation.

    Quantities: clocks in GHz, capacities in bytes, bandwidth in B/s, latency in s.
    Counts are ints. ``mx_pack = 0`` means no MX matmul; ``vector_exp_speedup = 0``
    means no VectorE exponential (the exp runs on ScalarE).
    """

    name: str
    chip: str
    cores_per_chip: int
    pe_rows: int
    pe_cols: int
    fp8_pack: int
    mx_pack: int
    tensor_clock: Quantity
    vector_clock: Quantity
    scalar_clock: Quantity
    gpsimd_clock: Quantity
    vector_lanes: int
    scalar_lanes: int
    gpsimd_lanes: int
    vector_exp_speedup: int
    partitions: int
    sbuf_capacity: Quantity
    psum_capacity: Quantity
    psum_banks: int
    moving_free_max: int
    dma_engines: int
    dma_bandwidth: Quantity
    dma_fixed_latency: Quantity
    matmul_min_cycles: int
    instruction_min_cycles: int
    tensor_pipeline_cycles: int = 0
    ls_speedup: int = 1
    fp32_matmul_factor: int = 1
    dma_min_payload: Quantity | None = None
    quantize_mx_rate: int = 0  # 0: no VectorE quantize_mx (activations must arrive in MX)
    gpsimd_start_cycles: int = 0
    hbm_bandwidth: Quantity | None = None  # per chip, shared by its cores
    hbm_capacity: Quantity | None = None  # per chip
    # logical NeuronCores: physical cores per logical core AWS supports (default, max)
    lnc_default: int = 1
    lnc_max: int = 1
    hbm_banks: int = 0  # 0: not recorded
    # fixed and per-block costs outside the simulated schedule (None: not charged)
    kernel_launch: Quantity | None = None
    kernel_start_end: Quantity | None = None
    output_block_cost: Quantity | None = None
    output_block_rows: int = 0
    output_block_cols: int = 0
    tensor_sustained: float = 1.0  # TensorE sustained / peak instruction rate
    mxfp8_pack: int = 0  # 0: mx_pack
    mxfp4_pack: int = 0  # 0: mx_pack
    matmul_dtypes: tuple[str, ...] = ()  # empty: every dtype with a packing
    # what AWS's profiler normalises to: BF16 TFLOP/s per logical core, HBM TB/s per chip
    profiler_peaks: tuple[float, float] | None = None
    # ((dtype, chip peak from AWS's chip table), ...)
    published_peaks: tuple[tuple[str, Quantity], ...] = ()

    # ---- construction ----------------------------------------------------------------
    @classmethod
    def from_kb(cls, kb: KnowledgeBase, chip: str) -> NeuronCore:
        """The core of ``chip`` (``"trainium2"``, ``"trainium3"``) from the knowledge base."""
        from trnkb.engine.snapshot import core_inputs

        return cls.from_inputs(core_inputs(kb, chip))

    @classmethod
    def for_chip(cls, chip: str, specs: Path | None = None) -> NeuronCore:
        """The core of ``chip`` for the specs in ``specs`` (default: the shipped specs),
        equal to :meth:`from_kb`, without loading the knowledge base when the shipped
        snapshot (:mod:`trnkb.engine.snapshot`) was built from these specs."""
        from trnkb.engine.snapshot import all_inputs

        found = [c for c in all_inputs(specs) if c.chip == chip]
        if not found:
            raise KeyError(f"no NeuronCore row for chip {chip!r} in specs/cores.yaml")
        return cls.from_inputs(found[0])

    @classmethod
    def from_inputs(cls, inputs: CoreInputs) -> NeuronCore:
        """The core from its rows' values (:func:`trnkb.engine.snapshot.core_inputs`)."""
        rid, chip, row, chip_row = inputs.row, inputs.chip, inputs.core, inputs.chip_values

        def quantity(values: dict[str, Value], field: str) -> Quantity | None:
            v = values.get(field)
            if isinstance(v, str):
                raise ValueError(f"{rid}: {field} is text ({v!r}), not a quantity")
            return v

        def need(field: str) -> Quantity:
            q = quantity(row, field)
            if q is None:
                raise KeyError(f"{rid} has no value for {field!r} in specs/cores.yaml")
            return q

        def count(field: str, default: int | None = None) -> int:
            if default is not None and row.get(field) is None:
                return default
            return int(need(field).to("").magnitude)  # need raises when there is no value

        def opt(field: str, unit: str) -> Quantity | None:
            q = quantity(row, field)
            return None if q is None else q.to(unit)

        def chip_q(field: str) -> Quantity | None:
            return quantity(chip_row, field)

        sustained = quantity(row, "tensor_sustained")
        listed = row.get("matmul_dtypes")
        dtypes = tuple(str(listed).split()) if listed is not None else ()
        unknown = [d for d in dtypes if d not in PACK_FIELD]
        if unknown:
            raise ValueError(f"specs/cores.yaml: {rid}: matmul_dtypes: unknown {unknown}; the "
                             f"engine runs {', '.join(PACK_FIELD)}")
        prof = (opt("profiler_bf16_peak", "TFLOPS"), opt("profiler_hbm_bandwidth", "TB/s"))
        cap = chip_q("hbm_capacity")
        bandwidth = chip_q("hbm_bandwidth")
        n_cores = chip_q("cores")
        return cls(
            name=inputs.name,
            chip=chip,
            cores_per_chip=int(n_cores.to("").magnitude) if n_cores is not None else 1,
            pe_rows=count("pe_rows"),
            pe_cols=count("pe_cols"),
            fp8_pack=count("fp8_pack", 1),
            mx_pack=count("mx_pack", 0),
            tensor_clock=need("tensor_clock").to("GHz"),
            vector_clock=need("vector_clock").to("GHz"),
            scalar_clock=need("scalar_clock").to("GHz"),
            gpsimd_clock=need("gpsimd_clock").to("GHz"),
            vector_lanes=count("vector_lanes"),
            scalar_lanes=count("scalar_lanes"),
            gpsimd_lanes=count("gpsimd_lanes", count("partitions")),
            vector_exp_speedup=count("vector_exp_speedup", 0),
            partitions=count("partitions"),
            sbuf_capacity=need("sbuf_capacity").to("MiB"),
            psum_capacity=need("psum_capacity").to("MiB"),
            psum_banks=count("psum_banks"),
            moving_free_max=count("moving_free_max"),
            dma_engines=count("dma_engines"),
            dma_bandwidth=need("dma_bandwidth").to("GB/s"),
            dma_fixed_latency=need("dma_fixed_latency").to("ns"),
            matmul_min_cycles=count("matmul_min_cycles"),
            instruction_min_cycles=count("instruction_min_cycles"),
            tensor_pipeline_cycles=count("tensor_pipeline_cycles"),
            ls_speedup=count("ls_speedup"),
            fp32_matmul_factor=count("fp32_matmul_factor"),
            dma_min_payload=need("dma_min_payload").to("B"),
            quantize_mx_rate=count("quantize_mx_rate", 0),
            gpsimd_start_cycles=count("gpsimd_start_cycles"),
            published_peaks=tuple(
                (d, q.to("TFLOPS")) for d in PACK_FIELD
                if (q := chip_q(f"dense_{d}")) is not None),
            hbm_bandwidth=bandwidth.to("TB/s") if bandwidth is not None else None,
            hbm_capacity=cap.to("GiB") if cap is not None else None,
            mxfp8_pack=count("mxfp8_pack", 0),
            mxfp4_pack=count("mxfp4_pack", 0),
            matmul_dtypes=dtypes,
            lnc_default=count("lnc_default", 1),
            lnc_max=count("lnc_max", 1),
            hbm_banks=count("hbm_banks", 0),
            kernel_launch=opt("kernel_launch", "us"),
            kernel_start_end=opt("kernel_start_end", "us"),
            output_block_cost=opt("output_block_cost", "us"),
            output_block_rows=count("output_block_rows", 0),
            output_block_cols=count("output_block_cols", 0),
            tensor_sustained=(float(sustained.to("").magnitude) if sustained is not None
                              else 1.0),
            profiler_peaks=(None if prof[0] is None or prof[1] is None
                            else (float(prof[0].magnitude), float(prof[1].magnitude))),
        )

    # ---- derived figures -------------------------------------------------------------
    def clock(self, engine: str) -> Quantity:
        """Clock of a compute engine (``tensor``, ``vector``, ``scalar``, ``gpsimd``)."""
        q: Quantity = getattr(self, f"{engine}_clock")
        return q

    @property
    def dtypes(self) -> tuple[str, ...]:
        """GEMM input dtypes this core runs: ``matmul_dtypes``, else every dtype with a packing."""
        if self.matmul_dtypes:
            return self.matmul_dtypes
        return tuple(d for d in PACK_FIELD if self._pack(d))

    def _pack(self, dtype: str) -> int:
        fields = PACK_FIELD[dtype]
        if not fields:
            return 1
        for f in fields:
            p: int = getattr(self, f)
            if p:
                return p
        return 0

    def pack(self, dtype: str) -> int:
        """K elements each PE multiplies per cycle for ``dtype`` (1 for BF16).

        Raises ``ValueError`` for a dtype the core does not run (MX on Trainium2).
        """
        if dtype not in PACK_FIELD:
            raise ValueError(f"unknown matmul dtype {dtype!r}; expected one of "
                             f"{', '.join(PACK_FIELD)}")
        p = self._pack(dtype)
        if p == 0 and dtype.startswith("mx"):
            raise ValueError(f"{self.chip} ({self.name}) has no MX matmul, so {dtype} is not "
                             f"supported (MXFP8/MXFP4 TensorE arrived with NeuronCore-v4, "
                             f"Trainium3); use bf16 or fp8")
        if p == 0 or dtype not in self.dtypes:
            raise ValueError(f"{self.chip} ({self.name}) does not run {dtype} matmuls "
                             f"(specs/cores.yaml matmul_dtypes: {', '.join(self.dtypes)})")
        return p

    def peak_flops(self, dtype: str = "bf16", cores: int = 1) -> Quantity:
        """Dense peak of ``cores`` cores from the FLOPs calculator
        (:func:`trnkb.calc.flops.peak_flops`):
        cores x pe_rows x pe_cols x pack(dtype) x 2 FLOP x tensor_clock (TFLOP/s)."""
        from trnkb.calc.flops import peak_flops

        return peak_flops(cores, self.pe_rows, self.pe_cols, self.tensor_clock,
                          self.pack(dtype)).value.to("TFLOPS")

    def chip_peak_flops(self, dtype: str = "bf16") -> Quantity:
        """Derived peak of the whole chip: :meth:`peak_flops` over ``cores_per_chip`` cores."""
        return self.peak_flops(dtype, self.cores_per_chip)

    def published_peak(self, dtype: str) -> Quantity | None:
        """AWS's chip-table dense peak for ``dtype`` (specs/chips.yaml), or None."""
        return dict(self.published_peaks).get(dtype)

    @property
    def hbm_share(self) -> Quantity | None:
        """HBM bandwidth per core when every core streams: chip bandwidth / cores."""
        if self.hbm_bandwidth is None:
            return None
        q: Quantity = (self.hbm_bandwidth / self.cores_per_chip).to("GB/s")
        return q

    # ---- logical NeuronCores -----------------------------------------------------------
    def check_lnc(self, lnc: int) -> int:
        """``lnc`` if this core supports it (1 up to ``lnc_max``, dividing the chip's cores)."""
        if not isinstance(lnc, int) or not 1 <= lnc <= self.lnc_max \
                or self.cores_per_chip % lnc:
            raise ValueError(f"lnc={lnc!r}: {self.chip} supports logical NeuronCores of 1"
                             + (f" to {self.lnc_max}" if self.lnc_max > 1 else "")
                             + " physical cores (specs/cores.yaml lnc_max)")
        return lnc

    def logical_cores_per_chip(self, lnc: int) -> int:
        """Logical NeuronCores per chip: physical cores / lnc (4 on Trainium3 at LNC=2)."""
        return self.cores_per_chip // self.check_lnc(lnc)

    def lnc_hbm_share(self, lnc: int) -> Quantity | None:
        """HBM bandwidth one logical core gets when all stream: chip x lnc / cores (at LNC=2
        on Trainium2 one of the four HBM banks, each shared by two physical cores)."""
        if self.hbm_bandwidth is None:
            return None
        q: Quantity = (self.hbm_bandwidth * self.check_lnc(lnc) / self.cores_per_chip).to("GB/s")
        return q

    def lnc_hbm_capacity(self, lnc: int) -> Quantity | None:
        """HBM one logical core addresses: its bank (chip capacity / ``hbm_banks``). At
        LNC=1 the bank's two physical cores each address the whole bank (AWS's LNC page),
        so the figure is the same; without ``hbm_banks``, capacity x lnc / cores."""
        if self.hbm_capacity is None:
            return None
        self.check_lnc(lnc)
        per = self.hbm_banks if self.hbm_banks else self.cores_per_chip / lnc
        q: Quantity = (self.hbm_capacity / per).to("GiB")
        return q

    @property
    def dma_rate(self) -> Quantity:
        """Bandwidth one core's DMA gets: min(DMA bandwidth per core, HBM share per core)."""
        share = self.hbm_share
        if share is None or share >= self.dma_bandwidth:
            return self.dma_bandwidth
        return share

    @property
    def tile_cols(self) -> int:
        """Widest fp32 moving tile one PSUM bank holds: bank bytes / 4 (512 on NC-v3/v4),
        capped by ``moving_free_max``."""
        return min(self.moving_free_max, self.psum_bank_bytes // 4)

    @property
    def psum_bank_bytes(self) -> int:
        """Bytes per partition of one PSUM bank (2 KiB = 512 fp32)."""
        per_part = self.psum_capacity.to("B").magnitude / self.partitions
        return int(per_part // self.psum_banks)

    def describe(self) -> dict[str, Any]:
        """The parameters as plain strings/numbers (for display)."""
        out: dict[str, Any] = {}
        for k, v in self.__dict__.items():
            out[k] = f"{v:~P}" if isinstance(v, pint.Quantity) else v
        return out
