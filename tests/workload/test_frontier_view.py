"""The frontier view: one curve per system, throughput up and interactivity down the sweep."""

import trnkb
from trnkb.views.frontier import frontier_chart, frontiers


def test_frontiers_table_and_chart() -> None:
    kb = trnkb.load()
    df = frontiers(kb, "llama-3-1-70b", {"gb300-nvl72": 8, "trn3-nl72x2-switched": 8},
                   input_len=512, output_len=128, points=4)
    assert set(df["system"]) == {"gb300-nvl72", "trn3-nl72x2-switched"}
    for _, d in df.groupby("system"):
        d = d.sort_values("concurrency")
        assert d["per_chip"].iloc[-1] > d["per_chip"].iloc[0]
        assert d["per_user"].iloc[-1] < d["per_user"].iloc[0]
        assert (d["per_chip_low"] <= d["per_chip"]).all()
        assert (d["per_chip"] <= d["per_chip_high"]).all()
    spec = frontier_chart(df, title="Llama 3.1 70B, 512 in / 128 out").to_dict()
    assert len(spec["layer"]) == 2


def test_frontiers_cite_what_moves_tokens_not_what_prices_them() -> None:
    kb = trnkb.load()
    df = frontiers(kb, "llama-3-1-70b", ["gb300-nvl72"], input_len=256, output_len=64, points=2)
    src = df.attrs["sources"]
    assert src == sorted(set(src))
    # specs/chips.yaml: GB300's 288 GB of HBM3E comes from NVIDIA's Blackwell Ultra blog
    assert "nvidia-blackwell-ultra-blog" in src
    # the model's architecture (specs/models.yaml) cites its Hugging Face config
    assert "hf-llama-3-1-70b-config" in src
    # GB300's owner price (specs/prices.yaml) only prices a result: not a frontier source
    assert "inferencex-app-gpu-specs" not in src
