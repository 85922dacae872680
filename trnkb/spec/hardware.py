"""Field dictionary, part 1: chips, packages and HBM (see :mod:`trnkb.spec.schema`)."""

from __future__ import annotations

from trnkb.spec.fields import NAME, NOTES, STATUSES, VENDOR, Field, Table, _flops, _n, _q, _t

CHIPS = Table(
    "chips",
    "One row per accelerator (per GPU / per package) or host CPU.",
    (
        NAME,
        VENDOR,
        Field(
            "status",
            "label",
            "shipping, announced (targets only) or retired.",
            choices=STATUSES,
            required=True,
        ),
        Field(
            "family",
            "label",
            "Chip family shared by SKU variants of one silicon (h100 for H100 SXM, PCIe and "
            "NVL; b200 for HGX B200 and GB200); each variant row keeps its own clock, power "
            "and peaks.",
        ),
        _n("year", 2010, 2035, "Year of launch or general availability."),
        _t("process_node", "Foundry process of the compute dies (e.g. TSMC N3P)."),
        _n("compute_dies", 1, 16, "Compute dies per package."),
        _n(
            "cores",
            1,
            1_000_000,
            "Cores per chip (NeuronCores, TensorCores, SMs, XCD CUs; 900,000 on a wafer-scale "
            "chip).",
        ),
        _q("clock", "frequency", "GHz", 0.1, 6, "Clock of the matrix engine."),
        _flops("dense_fp32", "dense FP32"),
        _flops("dense_tf32", "dense TF32"),
        _flops("dense_bf16", "dense BF16/FP16"),
        _flops("dense_fp8", "dense FP8"),
        _flops("dense_int8", "dense INT8 (OP/s written as FLOP/s)"),
        _flops("dense_mxfp8", "dense OCP MXFP8"),
        _flops("dense_mxfp6", "dense OCP MXFP6"),
        _flops("dense_mxfp4", "dense OCP MXFP4"),
        _flops("dense_fp4", "dense FP4 (NVFP4 or the vendor's FP4)"),
        _q("sram", "information", "MiB", 0.1, 1e6, "On-chip SRAM (SBUF, L2, VMEM...)."),
        _q("hbm_capacity", "information", "GB", 1, 10000, "HBM capacity per chip.", tolerance=0.01),
        _q(
            "hbm_bandwidth",
            "bandwidth",
            "TB/s",
            0.1,
            100,
            "HBM bandwidth per chip.",
            tolerance=0.02,
        ),
        _q("tdp", "power", "W", 10, 10000, "Thermal design power per chip."),
        _t("scaleup_technology", "Scale-up link (NeuronLink v4, NVLink 5, ICI, UALink...)."),
        _n("scaleup_lanes", 1, 1000, "Active scale-up SerDes lanes per chip."),
        _q(
            "scaleup_bandwidth",
            "bandwidth",
            "GB/s",
            1,
            1e5,
            "Scale-up bandwidth per chip, per direction.",
        ),
        _q(
            "scaleup_bandwidth_bidir",
            "bandwidth",
            "GB/s",
            1,
            2e5,
            "Scale-up bandwidth per chip, both directions added, as a source states it.",
        ),
        _q(
            "scaleout_bandwidth",
            "bandwidth",
            "Gbit/s",
            1,
            1e5,
            "Scale-out (back-end NIC) bandwidth per chip, per direction.",
        ),
        _t("logical_core_modes", "Logical core groupings software offers (LNC modes)."),
        NOTES,
    ),
    prefix_fields=(_flops("sparse_", "structured-sparse"),),
)

PACKAGES = Table(
    "packages",
    "One row per chip package: interposer, substrate, dies, HBM sites, design partners.",
    (
        NAME,
        Field("chip", "ref", "Chip in this package.", ref="chips", required=True),
        _t("interposer", "Interposer technology (CoWoS-S / CoWoS-R / CoWoS-L / EMIB...)."),
        _n("interposer_assemblies", 1, 8, "Separate interposer assemblies in the package."),
        _n("interposer_rdl_layers", 1, 20, "Copper RDL layers in an organic interposer."),
        _n("substrate_layers", 1, 40, "Build-up layers of the package substrate."),
        _n("compute_dies", 1, 16, "Compute dies in the package."),
        _n("io_dies", 0, 16, "Separate I/O or base dies."),
        _n("hbm_sites", 1, 16, "HBM stacks placed on the package."),
        _q("c4_bump_pitch", "length", "um", 50, 500, "C4 bump pitch at the module boundary."),
        _t("frontend_design", "Who designs the logic (front end)."),
        _t("backend_design", "Who does physical and package design (back end)."),
        _t("serdes_ip", "Licensed SerDes / PHY IP."),
        NOTES,
    ),
)

HBM = Table(
    "hbm",
    "One row per chip's HBM configuration: enough to derive capacity and bandwidth.",
    (
        NAME,
        Field("chip", "ref", "Chip this memory belongs to.", ref="chips", required=True),
        _t("generation", "HBM generation (HBM2e, HBM3, HBM3E, HBM4...)."),
        _t("memory_vendor", "DRAM suppliers."),
        _n("stacks", 1, 16, "HBM stacks per chip."),
        _n("stack_height", 1, 16, "DRAM dies per stack (8-high, 12-high...)."),
        _q("die_density", "information", "Gbit", 1, 64, "Capacity of one DRAM die."),
        _q("capacity", "information", "GB", 1, 10000, "HBM capacity per chip as reported."),
        _q("pin_rate", "bandwidth", "Gbit/s", 1, 20, "Data rate per pin."),
        _q(
            "bus_width_per_stack",
            "information",
            "bit",
            512,
            4096,
            "Interface width of one stack (bits per transfer).",
        ),
        _q(
            "bandwidth",
            "bandwidth",
            "TB/s",
            0.1,
            100,
            "HBM bandwidth per chip as reported.",
            tolerance=0.02,
        ),
        NOTES,
    ),
)

DEVICES = Table(
    "devices",
    "One row per device string a framework or driver tool prints for a chip "
    "(torch.cuda.get_device_name, jax device_kind, amd-smi, neuron-ls), with its source; "
    "trnkb.peaks resolves these strings to chip rows.",
    (
        NAME,
        VENDOR,
        Field("chip", "ref", "Chip row (SKU) this string names.", ref="chips", required=True),
        _t("device_string", "The string exactly as the tool prints it."),
        _t(
            "reported_by",
            "Which call or tool prints it.",
            choices=("torch", "jax", "amd-smi", "rocm-smi", "nvidia-smi", "neuron-ls"),
        ),
        NOTES,
    ),
)
