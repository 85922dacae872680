"""Field dictionary, part 2: racks, network, datacenters, NeuronCores, fabrics,
models and prices (see :mod:`trnkb.spec.schema`)."""

from __future__ import annotations

from trnkb.spec.fields import NAME, NOTES, STATUSES, VENDOR, Field, Table, _n, _q, _t

__all__ = ["CORES", "DATACENTER", "FABRICS", "MODELS", "NETWORK", "POWER", "PRICES", "RACKS"]

RACKS = Table(
    "racks",
    "One row per rack SKU / scale-up domain (the world a chip reaches over scale-up links).",
    (
        NAME,
        VENDOR,
        Field("chip", "ref", "Accelerator in the domain.", ref="chips", required=True),
        Field("status", "label", "shipping, announced or retired.", choices=STATUSES),
        _t("marketing_name", "Vendor branding (e.g. Trn3 Gen2 UltraServer)."),
        _t("codename", "Supply-chain codename."),
        _t("topology", "Scale-up topology (2d-torus, 3d-torus, switched, ...)."),
        _t("cooling", "air or liquid."),
        _n("chips_per_tray", 1, 16, "Accelerators per compute (JBOG) tray."),
        _n("compute_trays_per_rack", 1, 72, "Compute trays per rack."),
        _n("chips_per_rack", 1, 576, "Accelerators per rack."),
        _n(
            "racks_per_domain",
            0.5,
            64,
            "Racks spanned by one scale-up domain (0.5 = half rack).",
            integer=False,
        ),
        _n("domain_size", 1, 100000, "Chips in one scale-up domain (world size)."),
        Field("host_cpu", "ref", "Host CPU.", ref="chips"),
        _n("host_cpus_per_rack", 0, 144, "Host CPUs per rack."),
        _n("host_cpu_trays_per_rack", 0, 16, "Separate CPU trays per rack."),
        _n("switch_trays_per_rack", 0, 32, "Scale-up switch trays per rack."),
        _n("scaleup_switches_per_rack", 0, 1000, "Scale-up switch chips per rack."),
        Field("scaleup_switch", "ref", "Scale-up switch used at launch.", ref="network"),
        Field("nic", "ref", "Scale-out NIC.", ref="network"),
        _n("nics_per_tray", 0, 16, "Scale-out NIC modules per compute tray."),
        _q(
            "scaleout_per_chip",
            "bandwidth",
            "Gbit/s",
            1,
            10000,
            "Scale-out bandwidth per chip in this SKU's main configuration.",
        ),
        _n("copper_cables", 0, 100000, "Copper cables per scale-up domain."),
        _q("rack_power", "power", "kW", 1, 2000, "Power per rack."),
        _q("domain_bf16", "compute_rate", "PFLOPS", 0.01, 1e6, "Dense BF16 FLOP/s of the domain."),
        _q(
            "domain_fp8",
            "compute_rate",
            "PFLOPS",
            0.01,
            1e6,
            "Dense FP8 / MXFP8 FLOP/s of the domain.",
        ),
        _q("domain_fp4", "compute_rate", "PFLOPS", 0.01, 1e6, "Dense FP4 FLOP/s of the domain."),
        _q("domain_hbm_capacity", "information", "TB", 0.01, 1e5, "HBM of the whole domain."),
        _q("domain_hbm_bandwidth", "bandwidth", "TB/s", 0.1, 1e6, "HBM bandwidth of the domain."),
        _q(
            "domain_scaleup_bandwidth",
            "bandwidth",
            "TB/s",
            0.1,
            1e6,
            "Aggregate scale-up bandwidth of the domain as a source states it.",
        ),
        NOTES,
    ),
)

NETWORK = Table(
    "network",
    "Links, scale-up switches, NICs, scale-out switch classes, EFA generations and lane budgets.",
    (
        NAME,
        VENDOR,
        Field(
            "category",
            "label",
            "What the row is.",
            required=True,
            choices=("link", "scaleup-switch", "nic", "scaleout-switch", "efa", "lane-budget"),
        ),
        Field("chip", "ref", "Chip a lane budget belongs to.", ref="chips"),
        _t("technology", "Protocol or standard (PCIe 6.0, NVLink 5, UALink, Ethernet...)."),
        _n("generation", 1, 20, "Generation number of the switch tray or protocol."),
        _q("lane_rate", "bandwidth", "Gbit/s", 1, 1000, "Data rate per lane per direction."),
        _n("lanes", 1, 10000, "Lanes of a switch or link."),
        _n("ports", 1, 10000, "Logical ports of a switch."),
        _n("lanes_per_port", 1, 64, "Lanes grouped into one port."),
        _q("port_speed", "bandwidth", "Gbit/s", 1, 10000, "Speed of one logical port."),
        _q(
            "switch_bandwidth",
            "bandwidth",
            "Tbit/s",
            0.1,
            1000,
            "Switch capacity, one direction, all ports.",
        ),
        _q("bandwidth", "bandwidth", "Gbit/s", 1, 1e6, "NIC or link bandwidth per direction."),
        _n("pcb_lanes", 0, 1000, "Lane budget: lanes to neighbours over PCB."),
        _n("backplane_lanes", 0, 1000, "Lane budget: backplane lanes, active plus redundant."),
        _n("backplane_active_lanes", 0, 1000, "Lane budget: active backplane lanes."),
        _n("backplane_redundant_lanes", 0, 1000, "Lane budget: redundant backplane lanes."),
        _n("cross_rack_lanes", 0, 1000, "Lane budget: lanes to the adjacent rack over AECs."),
        _n("total_lanes", 0, 1000, "Lane budget: all lanes, all media."),
        _n("active_lanes", 0, 1000, "Lane budget: active lanes, all media."),
        NOTES,
    ),
)

DATACENTER = Table(
    "datacenter",
    "Cooling archetypes with PUE, and campuses with their power.",
    (
        NAME,
        Field(
            "category",
            "label",
            "cooling-archetype or campus.",
            required=True,
            choices=("cooling-archetype", "campus"),
        ),
        _t("operator", "Who runs it."),
        _t("cooling", "Cooling method."),
        _t("location", "Where it is."),
        _n(
            "pue_typical",
            1.0,
            3.0,
            "Typical (annual) power usage effectiveness.",
            tolerance=0.02,
            integer=False,
        ),
        _n(
            "pue_peak", 1.0, 3.0, "PUE on peak (summer design) days.", tolerance=0.02, integer=False
        ),
        _q("facility_power", "power", "MW", 0.1, 10000, "Facility (grid) power."),
        _q("it_power", "power", "MW", 0.1, 10000, "IT power."),
        NOTES,
    ),
)

CORES = Table(
    "cores",
    "One row per NeuronCore generation: the parameters the reference engine runs on.",
    (
        NAME,
        Field("chip", "ref", "Chip that carries this core.", ref="chips", required=True),
        _n("pe_rows", 1, 1024, "Tensor engine systolic array rows (contraction, K)."),
        _n("pe_cols", 1, 1024, "Tensor engine systolic array columns (M)."),
        _n("fp8_pack", 1, 64, "K elements per PE per cycle for FP8 (double-row = 2)."),
        _n("mx_pack", 1, 64, "K elements per PE per cycle for MXFP8/MXFP4 (quad = 4)."),
        _n("mxfp8_pack", 1, 64, "K elements per PE per cycle for MXFP8 (default mx_pack)."),
        _n("mxfp4_pack", 1, 64, "K elements per PE per cycle for MXFP4 (default mx_pack)."),
        _t("matmul_dtypes", "TensorE GEMM input types the engine runs, space separated."),
        _q("tensor_clock", "frequency", "GHz", 0.1, 6, "Tensor engine clock."),
        _q("vector_clock", "frequency", "GHz", 0.1, 6, "Vector engine clock."),
        _q("scalar_clock", "frequency", "GHz", 0.1, 6, "Scalar (activation) engine clock."),
        _q("gpsimd_clock", "frequency", "GHz", 0.1, 6, "GpSimd engine clock."),
        _n("vector_lanes", 1, 4096, "Vector engine elements per cycle (BF16)."),
        _n("scalar_lanes", 1, 4096, "Scalar engine elements per cycle (BF16)."),
        _n("gpsimd_lanes", 1, 4096, "GpSimd engine elements per cycle."),
        _n(
            "vector_exp_speedup",
            1,
            16,
            "Throughput of the VectorE exponential relative to ScalarE activation(exp).",
            integer=False,
        ),
        _n("partitions", 1, 1024, "SBUF / PSUM partitions."),
        _q("sbuf_capacity", "information", "MiB", 1, 1024, "SBUF per core."),
        _q("psum_capacity", "information", "MiB", 0.1, 64, "PSUM per core."),
        _n("psum_banks", 1, 64, "PSUM banks."),
        _n("moving_free_max", 1, 65536, "Largest moving-tile free size of one matmul (fp32 PSUM)."),
        _n("dma_engines", 1, 256, "DMA engines per core."),
        _q("dma_bandwidth", "bandwidth", "GB/s", 1, 10000, "DMA bandwidth per core."),
        _q("dma_fixed_latency", "time", "ns", 1, 1e5, "Fixed cost to start one DMA transfer."),
        _n("matmul_min_cycles", 1, 1024, "Minimum TensorE cycles per matmul (MM_INIT_LATENCY)."),
        _n(
            "instruction_min_cycles",
            1,
            1024,
            "Minimum cycles of a vector/scalar instruction (MIN_II).",
        ),
        # engine cost constants (reference engine, issue 11)
        _n(
            "tensor_pipeline_cycles",
            1,
            4096,
            "TensorE fill + drain: cycles from a matmul's issue end to its result in PSUM.",
        ),
        _n(
            "ls_speedup",
            1,
            16,
            "LoadStationary speed relative to a MultiplyMoving of the same free size.",
        ),
        _n("fp32_matmul_factor", 1, 16, "Cost multiplier of a matmul with fp32 inputs."),
        _q(
            "dma_min_payload",
            "information",
            "B",
            1,
            65536,
            "Per-partition DMA payload below which a transfer is overhead-bound.",
        ),
        _n(
            "quantize_mx_rate", 1, 64, "VectorE quantize_mx input elements per partition per cycle."
        ),
        _n("gpsimd_start_cycles", 1, 10000, "GpSimd start cost of iota/affine_select."),
        # logical NeuronCores and fixed costs (reference engine, issue 20)
        _n("lnc_default", 1, 8, "Physical cores per logical NeuronCore by default (LNC)."),
        _n("lnc_max", 1, 8, "Largest LNC (physical cores per logical core) supported."),
        _n("hbm_banks", 1, 64, "HBM banks per chip (each shared by cores / banks cores)."),
        _q("kernel_launch", "time", "us", 0, 1000, "Kernel launch time outside its activity."),
        _q("kernel_start_end", "time", "us", 0, 1000, "Kernel start and end cost (setup, drain)."),
        _q("output_block_cost", "time", "us", 0, 100, "Cost per output block of a GEMM."),
        _n("output_block_rows", 1, 65536, "Rows of the output block output_block_cost is per."),
        _n("output_block_cols", 1, 65536, "Columns of that output block."),
        _n(
            "tensor_sustained",
            0.5,
            1,
            "TensorE sustained matmul rate as a fraction of the clock-derived peak.",
            integer=False,
        ),
        _q(
            "profiler_bf16_peak",
            "compute_rate",
            "TFLOPS",
            1,
            10000,
            "BF16 peak the Neuron profiler normalises MFU to, per logical core.",
        ),
        _q(
            "profiler_hbm_bandwidth",
            "bandwidth",
            "TB/s",
            0.1,
            100,
            "HBM bandwidth the Neuron profiler normalises MBU to, per chip.",
        ),
        _q("dense_bf16_per_core", "compute_rate", "TFLOPS", 1, 10000, "BF16 FLOP/s per core."),
        _q("dense_fp8_per_core", "compute_rate", "TFLOPS", 1, 10000, "FP8 FLOP/s per core."),
        _q("dense_mxfp8_per_core", "compute_rate", "TFLOPS", 1, 10000, "MXFP8 FLOP/s per core."),
        NOTES,
    ),
)

FABRICS = Table(
    "fabrics",
    "One row per scale-up domain x switch generation: how chips, switches and cables are wired.",
    (
        NAME,
        Field(
            "domain",
            "ref",
            "Rack / scale-up domain this wiring belongs to.",
            ref="racks",
            required=True,
        ),
        _t("generation", "Switch-tray generation (gen1, pex90144-x8, pex90144-x4, gen2, gen3)."),
        _t(
            "wiring",
            "How chips are joined: torus (direct neighbour links) or switch-planes.",
            choices=("torus", "switch-planes"),
        ),
        Field("switch", "ref", "Switch chip on the switch trays.", ref="network"),
        Field(
            "tray_switch", "ref", "Switch chip on the compute tray (PCB fan-out).", ref="network"
        ),
        Field("link", "ref", "Link technology; its lane_rate gives lane bandwidth.", ref="network"),
        Field(
            "lane_budget",
            "ref",
            "Per-chip lane budget (PCB / backplane / cross-rack).",
            ref="network",
        ),
        _n("torus_x", 1, 64, "Torus extent in x (chips)."),
        _n("torus_y", 1, 64, "Torus extent in y (chips)."),
        _n("torus_z", 1, 64, "Torus extent in z (chips)."),
        _n(
            "planes", 1, 64, "Switch planes per rack; a chip reaches only its own plane's switches."
        ),
        _n("switches_per_plane", 1, 256, "Switch-tray switch chips in one plane of one rack."),
        _n("switches_per_rack", 0, 1000, "Switch-tray switch chips per rack."),
        _n("tray_switches_per_tray", 0, 64, "Switch chips on each compute tray."),
        _n("tray_switches_per_rack", 0, 1000, "Switch chips on the compute trays of one rack."),
        _n(
            "switches_per_domain",
            0,
            10000,
            "All scale-up switch chips in the domain (switch trays and compute trays).",
        ),
        _n("lanes_per_port", 1, 64, "Lanes grouped into one switch port in this configuration."),
        _n("ports_per_chip_per_switch", 1, 64, "Ports from each chip to each switch of its plane."),
        _n("ports_used_per_switch", 0, 1000, "Ports of a switch-tray switch wired to chips."),
        _n("tray_switch_lanes_per_chip", 0, 64, "Lanes from a chip to each compute-tray switch."),
        _n("links_per_chip", 1, 1000, "Fabric links per chip (torus neighbours, NVLink links)."),
        NOTES,
    ),
)

MODELS = Table(
    "models",
    "One row per language model: the architecture the workload layer (trnkb.workload) runs on.",
    (
        NAME,
        VENDOR,
        _n("layers", 1, 1000, "Transformer blocks (num_hidden_layers)."),
        _n("d_model", 64, 100000, "Residual width (hidden_size)."),
        _n("attention_heads", 1, 1024, "Query heads (num_attention_heads)."),
        _n("kv_heads", 1, 1024, "Key/value heads (num_key_value_heads); = heads without GQA."),
        _n("head_dim", 8, 1024, "Width of one query/key head (head_dim, or d_model / heads)."),
        _t(
            "attention",
            "Attention kind: mha, gqa or mla (multi-head latent attention).",
            choices=("mha", "gqa", "mla"),
        ),
        _n("q_lora_rank", 1, 100000, "MLA: rank of the query down-projection."),
        _n("kv_lora_rank", 1, 100000, "MLA: rank of the compressed KV latent (cached)."),
        _n("qk_rope_head_dim", 1, 1024, "MLA: decoupled RoPE key width per head (cached once)."),
        _n("v_head_dim", 1, 1024, "Value head width where it differs from head_dim (MLA)."),
        _n("sliding_window", 1, 1e7, "Window of the sliding-window attention layers (tokens)."),
        _n("sliding_layers", 0, 1000, "Layers that use sliding-window attention."),
        _n("ffn_size", 1, 1e6, "Dense FFN intermediate size (intermediate_size)."),
        _t(
            "ffn_kind",
            "dense (two matrices) or gated (three: gate, up, down; SwiGLU).",
            choices=("dense", "gated"),
        ),
        _n("dense_layers", 0, 1000, "Layers with a dense FFN in an MoE model (first_k_dense)."),
        _n("experts", 1, 10000, "Routed experts per MoE layer."),
        _n("active_experts", 1, 1000, "Routed experts each token uses (top-k)."),
        _n("shared_experts", 0, 100, "Always-active shared experts per MoE layer."),
        _n("expert_ffn_size", 1, 1e6, "Intermediate size of one expert (moe_intermediate_size)."),
        _n("vocabulary", 1000, 1e7, "Vocabulary size (vocab_size)."),
        _t(
            "tied_embeddings",
            "tied when input and output embeddings share one matrix.",
            choices=("tied", "untied"),
        ),
        _t(
            "attention_bias",
            "bias when the q/k/v/o projections carry biases.",
            choices=("bias", "none"),
        ),
        _n("context_length", 512, 1e8, "Maximum context (max_position_embeddings), tokens."),
        _n("total_params", 1e6, 1e14, "Total parameters as the source reports them."),
        _n("active_params", 1e6, 1e14, "Parameters used per token as the source reports them."),
        NOTES,
    ),
)

PRICES = Table(
    "prices",
    "One row per public cloud price of an accelerator instance, as a source states it "
    "(with its date).",
    (
        NAME,
        VENDOR,
        Field("chip", "ref", "Accelerator in the instance.", ref="chips", required=True),
        _t("instance", "Instance or product name (p5.48xlarge, TPU v5e...)."),
        _t(
            "offer",
            "on-demand, capacity-block, spot, commitment (a reserved or multi-year rental), "
            "index (a rental-price index) or owner-tco (an analyst's all-in cost of owning one "
            "accelerator per hour, not a price anyone is charged).",
            choices=("on-demand", "capacity-block", "spot", "commitment", "index", "owner-tco"),
        ),
        _n("chips_per_instance", 1, 100000, "Accelerators the price covers."),
        _q("price", "cost_rate", "USD/h", 0.01, 1e5, "Price of the instance per hour."),
        _q("price_per_chip", "cost_rate", "USD/h", 0.01, 1e4,
           "Price per accelerator-hour: price / chips_per_instance (derived)."),
        NOTES,
    ),
)

POWER = Table(
    "power",
    "One row per published or estimated power figure that is not a chip or rack field: "
    "all-in provisioned power per accelerator (chip, host, network, cooling share) as an "
    "analyst or dashboard states it, or a measured system power during a published run.",
    (
        NAME,
        VENDOR,
        Field("chip", "ref", "Accelerator the figure is for.", ref="chips", required=True),
        _t("scope", "What the figure covers (e.g. all-in provisioned per GPU)."),
        _q("allin_power_per_chip", "power", "W", 10, 1e4,
           "All-in provisioned power per accelerator."),
        _t("run", "Id of the measured run in specs/ledger/runs.yaml whose power this is "
           "(the run carries the measured throughput)."),
        _q("system_power", "power", "W", 10, 1e8,
           "Measured average wall power of the whole system under test during the run."),
        _n("chips_per_system", 1, 1e6, "Accelerators in the system under test."),
        NOTES,
    ),
)
