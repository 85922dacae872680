"""MLA decode (DeepSeek-style latent attention, absorbed weights): FLOPs and HBM bytes by hand.

DeepSeek-V3 shapes (config.json): 128 heads, kv_lora_rank 512, qk_rope_head_dim 64,
qk_nope_head_dim 128, v_head_dim 128; bf16 (2 bytes).
"""

import json

import pytest
from typer.testing import CliRunner

from trnkb.cli import app
from trnkb.engine import mla_decode


def test_mla_decode_flops_and_bytes_match_a_hand_count(trn3):
    r = mla_decode(trn3, 4096, heads=128, batch=1)
    # per head: absorb in 128 x 512, scores 4096 x (512 + 64), PV 4096 x 512, absorb out
    # 512 x 128 multiply-adds: 65,536 + 2,359,296 + 2,097,152 + 65,536 = 4,587,520
    assert r.flops.to("FLOP").magnitude == 2 * 128 * 4_587_520 == 1_174_405_120
    # latent cache once: 4096 x 576 x 2 = 4,718,592 B; W_UK + W_UV: 128 x 512 x (128 + 128)
    # x 2 = 33,554,432 B; q (128 + 64) and output (128) per head: 128 x 320 x 2 = 81,920 B
    assert r.chip_figures["hbm_bytes"] == 4_718_592 + 33_554_432 + 81_920


def test_the_latent_cache_is_read_once_for_all_heads(trn3):
    # 16 vs 128 heads: the bytes differ only by the weights and the queries/outputs
    few, many = (mla_decode(trn3, 8192, heads=h, batch=2) for h in (16, 128))
    per_head = 512 * 256 * 2 + 2 * 320 * 2  # weights + (q, out) of 2 sequences
    assert many.chip_figures["hbm_bytes"] - few.chip_figures["hbm_bytes"] == 112 * per_head
    assert few.params["latent_cache_bytes"] == 2 * 8192 * 576 * 2


def test_mla_decode_at_128k_on_a_whole_chip_splits_the_cache_over_the_cores(trn3):
    r = mla_decode(trn3, 131072, heads=128, batch=1, cores=8)
    # each core reads 1/8 of the cache, loads the weights and its copy of q/out
    assert r.chip_figures["hbm_bytes"] == 131072 * 576 * 2 + 8 * (33_554_432 + 81_920)
    assert r.chip_figures["cores"] == 8
    one = mla_decode(trn3, 131072, heads=128, batch=1, cores=1)
    assert r.seconds < one.seconds / 4  # the key ranges run in parallel


def test_mla_decode_refuses_more_heads_than_partitions(trn3):
    with pytest.raises(ValueError, match="heads=129"):
        mla_decode(trn3, 1024, heads=129)


def test_engine_mla_cli_reports_flops_and_bytes():
    r = CliRunner().invoke(app, ["engine", "mla", "--seq-kv", "4096", "--json"],
                           catch_exceptions=False)
    out = json.loads(r.stdout)
    assert out["kernel"] == "mla_decode" and out["flops"] == 1_174_405_120
    assert out["latent_cache_bytes"] == 4096 * 576 * 2
