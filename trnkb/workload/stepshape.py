"""Costs of a training step that its FLOPs over an MFU do not see: GEMM rows, kernel floors,
LoRA's adapters.

The ``mfu`` assumption (:mod:`~trnkb.workload.training`) is read on full pre-training runs
whose GEMMs have at least 8,192 rows per microbatch (the Llama 3 paper's 8,192-token
sequences, one or more per microbatch; MaxText's and the scaling book's examples likewise):
:data:`REF_ROWS`. Three costs move away from that reference and are charged here, each from
operator-level data or a documented implementation behaviour, none fitted to an end-to-end run:

* **GEMM rows.** A GEMM of ``M`` rows fills ``M / (M + m_half)`` of what a large one does
  (:mod:`~trnkb.workload.gemmfit`: ``gemm_m_half`` fitted to DeepGEMM/CUTLASS FP8 sweeps on
  NVIDIA, the reference engine on Trainium, the tile assumption elsewhere). A training
  microbatch's GEMMs have ``microbatch x seq / cp`` rows (tensor parallelism with sequence
  parallelism gathers the sequence back before each GEMM), so the GEMM time scales by
  :func:`gemm_rows_factor` = ``(1 + m_half / M) / (1 + m_half / REF_ROWS)`` (1 at the
  reference; 1.22 at ``M`` = 1,024 with NVIDIA's 296-row fit: context parallelism over 8
  chips of an 8,192-token sequence).
* **Kernel floors.** Every kernel of a layer's forward and backward costs at least
  ``kernel_overhead`` (:mod:`~trnkb.workload.kernelfit`: 3.44 us central, from B200 decode
  traces, range 1.34-8.82 us) beyond its roofline, serial on the stream:
  ``kernels x layers on the stage x microbatches x kernel_overhead`` per step
  (:func:`kernel_seconds`). ``train_kernels_per_layer``: a Transformer Engine layer (fused
  norm + cast + QKV GEMM, RoPE, fused attention, output GEMM, residual, fused norm + cast +
  gate/up GEMM, SwiGLU + cast, down GEMM, residual: 12-16 forward; backward the dgrad of each,
  the 4 weight-gradient GEMMs and their casts/transposes, about twice) is an assumption,
  30-45-60 (no per-kernel training trace was read). A LoRA step skips the base's 4
  weight-gradient GEMMs per layer and adds :data:`ADAPTER_KERNELS` per adapted matrix. At the
  reference (8,192 rows, a 70B layer) the floors are about 1% of the step: the MFU's evidence
  already holds that much, a double count accepted and stated.
* **LoRA adapters** (Hu et al. 2021; NeMo's ``LoraKQVAdapter``/``LoraDenseAttentionAdapter``:
  dropout, ``linear_in`` to rank ``r``, ``linear_out`` back, scaled add to the frozen
  projection's output). Their FLOPs (``6 P`` per token) are in the count; their time is not
  FLOPs but HBM traffic of the full-width activations they read and write
  (:func:`adapter_bytes_per_token`): forward, dropout reads and writes ``x`` (``2 d_in``),
  ``A`` reads it (``d_in``), ``B`` writes ``d_out``, the add reads two ``d_out`` and writes
  one (``4 d_out``); backward, ``B``'s dgrad and wgrad read the output gradient (``2 d_out``),
  ``A``'s wgrad reads the saved input (``d_in``), its dgrad writes ``d_in``, dropout's
  backward reads and writes it and the sum into the frozen path's input gradient reads two
  and writes one (``5 d_in``): ``8 d_in + 6 d_out`` elements of 2 bytes (bf16 activations)
  per token and adapted matrix, at the chip's HBM bandwidth (as the step's HBM floor). 10
  kernels per adapted matrix (4 forward, 6 backward).

* **The stack's GEMMs.** A LoRA step is the full step's FLOPs (``+ 2 N``) at ``mfu`` less
  the base's weight-gradient GEMMs at the GEMM efficiency of the chip's stack
  (``train_gemm_efficiency``: the CUTLASS FP8 fit on CUDA, AMD's hipBLASLt typical-attained
  fraction on ROCm, :mod:`~trnkb.workload.gemmfit`; elsewhere the 0.55-0.75-0.9 assumption
  the simulator uses), never faster than ``4 N / mfu`` (:func:`lora_compute_scale`): the
  norms, attention, activations and casts a frozen layer's backward still runs stay. On a
  ROCm stack ``mfu`` itself is scaled by ``mfu_stack_ratio`` = the ROCm GEMM efficiency over
  the CUDA one (MI300X fp8 0.395 / 0.53 = 0.75; the fast end AMD's max-achievable), because
  the MFU's evidence ran on CUDA and TPU stacks.

Context parallelism as NeMo's MLPerf LoRA implementations run it (``cp_comm_type: a2a``, the
default of their ``megatron_gpt_peft_tuning_config.yaml``; Transformer Engine's all-to-all,
DeepSpeed-Ulysses style) redistributes Q, K, V from sequence to head shards before attention
and O back after it, forward and (as gradients) backward: :func:`a2a_cp_bytes` per token and
layer, on the attention's critical path (not hidden). The default, ``ring``, is the exchange
of KV :mod:`~trnkb.workload.training` charges (Megatron's p2p ring).

A LoRA run whose plan shards the frozen base with ZeRO-3 (FSDP) all-gathers the base's
weights per microbatch forward and backward, as it would a trained model's
(:func:`frozen_gather_params`): sharding a frozen base is not free.
"""

from __future__ import annotations

from trnkb.workload.collfit import stack_of
from trnkb.workload.gemmfit import cuda_inputs, m_half_input, rocm_inputs
from trnkb.workload.kernelfit import POINTS as KERNEL_POINTS
from trnkb.workload.kernelfit import SOURCE as KERNEL_SOURCE
from trnkb.workload.lora import adapted_matrices
from trnkb.workload.models import Model
from trnkb.workload.ranges import Input, assumption

REF_ROWS = 8192  # GEMM rows per microbatch of the mfu assumption's evidence (module docstring)
ADAPTER_KERNELS = 10  # per adapted matrix and layer: 4 forward, 6 backward (module docstring)
BASE_WGRAD_GEMMS = 4  # QKV, output, gate/up, down: the weight-gradient GEMMs LoRA skips
_ACT_BYTES = 2.0  # bf16 activations
CP_COMMS = ("ring", "a2a")  # context parallelism's exchange (module docstring)


def a2a_cp_bytes(model: Model) -> tuple[float, float]:
    """``(qkv, o)`` bytes per token and layer an all-to-all context parallelism moves in one
    direction: Q, K, V (``(h + 2 k) x head_dim``) and the attention output (``h x v_dim``),
    bf16 (2 bytes)."""
    qkv = (model.attention_heads + 2 * model.kv_heads) * model.head_dim * _ACT_BYTES
    return qkv, model.attention_heads * model.v_dim * _ACT_BYTES


def shape_inputs(vendor: str, chip: str, precision: str) -> dict[str, Input]:
    """``gemm_m_half``, ``kernel_overhead``, ``train_kernels_per_layer``, the GEMM efficiency
    of the chip's stack (``train_gemm_efficiency``) and, on ROCm, ``mfu_stack_ratio``."""
    stack = stack_of(vendor, chip)
    cuda = cuda_inputs()
    m_half = cuda["gemm_m_half"] if stack == "nccl" else m_half_input(chip)
    lo, mid, hi = (t for _, t in KERNEL_POINTS)
    gemm = cuda["gemm_efficiency"]
    extra: dict[str, Input] = {}
    if stack == "rccl":
        gemm = rocm_inputs(chip, precision)["gemm_efficiency"]
        ref = cuda["gemm_efficiency"].mid
        extra["mfu_stack_ratio"] = Input(
            "mfu_stack_ratio", gemm.mid / ref, gemm.mid / ref, min(1.0, gemm.hi / ref), "",
            "fitted", f"ROCm GEMM efficiency {gemm.mid:.3f} (typical attained; fast end the "
            f"max-achievable {gemm.hi:.3f}) over the CUDA stack's {ref:.3f} (CUTLASS FP8 fit), "
            "gemmfit: the mfu assumption's evidence ran on CUDA and TPU stacks")
    elif stack != "nccl":
        gemm = assumption("gemm_efficiency", 0.55, 0.75, 0.9, "",
                          "no GEMM sweep of this chip's stack in the knowledge base")
    return {
        **extra,
        "train_gemm_efficiency": Input("train_gemm_efficiency", gemm.lo, gemm.mid, gemm.hi,
                                       "", gemm.kind, gemm.basis),
        "gemm_m_half": m_half,
        "kernel_overhead": Input(
            "kernel_overhead", lo, mid, hi, "s", "fitted",
            f"per kernel beyond its roofline: {KERNEL_SOURCE}; "
            + ", ".join(f"{w} {t * 1e6:.2f} us" for w, t in KERNEL_POINTS)
            + " (kernelfit); NVIDIA traces, an estimate elsewhere"),
        "train_kernels_per_layer": assumption(
            "train_kernels_per_layer", 30.0, 45.0, 60.0, "",
            "kernels of one transformer layer's forward and backward in training "
            "(Transformer Engine fused modules: 12-16 forward, about twice backward; "
            "stepshape module docstring)"),
    }


def lora_compute_scale(n_active: float, flops_per_token: float, mfu: float,
                       gemm_efficiency: float, m_half: float) -> float:
    """A LoRA step's compute time over ``flops_per_token / mfu`` (``flops_per_token``: the
    LoRA count, ``4 N + 6 P + 3 x attention``): the full step's FLOPs (``+ 2 N``) at
    ``mfu`` less the base's weight-gradient GEMMs (``2 N``) at the GEMM efficiency at
    :data:`REF_ROWS` rows, ``gemm_efficiency x REF_ROWS / (REF_ROWS + m_half)``, never below
    ``mfu`` (the wgrad never took longer than the step's average). ``n_active``: parameters
    per token; the rows factor of the step scales both terms alike."""
    e = max(gemm_efficiency * REF_ROWS / (REF_ROWS + m_half), mfu)
    full = (flops_per_token + 2.0 * n_active) / mfu - 2.0 * n_active / e
    return full / (flops_per_token / mfu)


def gemm_rows_factor(rows: float, m_half: float) -> float:
    """GEMM time at ``rows`` rows per microbatch relative to :data:`REF_ROWS` rows:
    ``(1 + m_half / rows) / (1 + m_half / REF_ROWS)``."""
    return (1.0 + m_half / rows) / (1.0 + m_half / REF_ROWS)


def kernel_seconds(kernels_per_layer: float, layers: int, microbatches: float,
                   overhead: float) -> float:
    """Seconds of kernel floors per step: ``kernels_per_layer x layers x microbatches x
    overhead`` (s per kernel)."""
    return kernels_per_layer * layers * max(microbatches, 1.0) * overhead


def adapter_bytes_per_token(model: Model, targets: tuple[str, ...]) -> float:
    """HBM bytes per token (all layers) of the adapters' kernels in a training step:
    ``(8 d_in + 6 d_out) x 2`` per adapted matrix and layer (module docstring)."""
    return sum((8 * din + 6 * dout) * _ACT_BYTES * n for din, dout, n in
               adapted_matrices(model, targets))


def adapter_kernels_per_layer(model: Model, targets: tuple[str, ...]) -> float:
    """Adapter kernels per layer (averaged over layers): :data:`ADAPTER_KERNELS` per adapted
    matrix."""
    return ADAPTER_KERNELS * sum(n for *_, n in adapted_matrices(model, targets)) / model.layers


def frozen_gather_params(model: Model, tp: int, pp: int, ep: int) -> tuple[float, float]:
    """``(dense, routed)`` frozen base parameters per chip a ZeRO-3 LoRA plan all-gathers
    (the shards of ``tp x pp``, routed experts also of ``ep``)."""
    p = model.params()
    dense = (p["total"] - p["routed_experts"]) / (tp * pp)
    return dense, p["routed_experts"] / (ep * tp * pp)
