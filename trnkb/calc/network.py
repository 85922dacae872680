"""Scale-out: folded-Clos (fat-tree) fabric size from switch bandwidth and port speed.

A switch of bandwidth ``B`` split into logical ports of speed ``s`` has radix
``k = B / s``. In a non-blocking folded Clos every switch below the top layer uses half
its ports down and half up, so ``L`` layers connect ``2 (k/2)^L`` endpoints: ``k^2/2``
for two layers, ``k^3/4`` for three. Each layer below the top has ``2 (k/2)^(L-1)``
switches, the top layer half as many; every tier of links (endpoint-leaf, leaf-spine,
...) carries one link per endpoint.
"""

from __future__ import annotations

import math

from trnkb.calc._common import positive_count, quantity, result
from trnkb.calc.derivation import Result, count
from trnkb.units import Q_
from trnkb.units.qtypes import Quantity, QuantityLike, Sources

LAYER_NAMES = ("leaf", "spine", "core", "layer4", "layer5")


def radix(switch_bandwidth: QuantityLike, port_speed: QuantityLike) -> int:
    """Logical ports of a switch: ``floor(switch_bandwidth / port_speed)``."""
    k = quantity(switch_bandwidth, "bandwidth", "switch_bandwidth") / quantity(
        port_speed, "bandwidth", "port_speed"
    )
    # 12.8 Tbit/s / 100 Gbit/s is 128.00000000000003 in floating point
    return int(math.floor(k.to("").magnitude + 1e-9))


def fabric_size(
    switch_bandwidth: QuantityLike,
    port_speed: QuantityLike,
    layers: QuantityLike,
    oversubscription: QuantityLike = 1,
    *,
    sources: Sources = None,
) -> Result:
    """Endpoints of a folded Clos of identical switches.

    ``k = switch_bandwidth / port_speed``; non-blocking: ``endpoints = 2 (k/2)^layers``.
    With ``oversubscription`` o (down:up at the leaf, o >= 1) a leaf has
    ``k o/(1+o)`` ports down and ``k/(1+o)`` up; the layers above stay non-blocking, so
    the fabric connects ``2 (k/2)^layers x 2o/(1+o)`` endpoints.

    Outputs: ``radix``, ``switches_<layer>``, ``switches`` (total), ``links_<tier>``
    (per tier, endpoint links included), ``links`` (total).
    """
    sb = quantity(switch_bandwidth, "bandwidth", "switch_bandwidth")
    ps = quantity(port_speed, "bandwidth", "port_speed")
    n_layers = int(positive_count(layers, "layers").magnitude)
    if n_layers > len(LAYER_NAMES):
        raise ValueError(f"layers must be 1 to {len(LAYER_NAMES)}, got {n_layers}")
    o = positive_count(oversubscription, "oversubscription", integer=False)
    if o.magnitude < 1:
        raise ValueError("oversubscription is down:up and must be >= 1")
    k = radix(sb, ps)
    if k < 2:
        raise ValueError(f"radix {k} < 2: a port of {ps:~} does not fit {sb:~} twice")
    ratio = o.magnitude
    per_layer: dict[str, float]
    if n_layers == 1:
        endpoints = k
        per_layer = {"leaf": 1}
        links: dict[str, float] = {"links_endpoint": k}
    else:
        down = math.floor(k * ratio / (1 + ratio) + 1e-9)
        up = k - down
        # the layers above the leaves are `up` parallel planes, each a non-blocking
        # (layers-1)-layer fabric with 2 (k/2)^(layers-1) ports at its bottom: one per leaf
        leaves = 2 * (k / 2) ** (n_layers - 1)
        endpoints = leaves * down
        per_layer = {"leaf": leaves}
        for i in range(1, n_layers):
            per_plane = (k / 2) ** (n_layers - 2) * (2 if i < n_layers - 1 else 1)
            per_layer[LAYER_NAMES[i]] = up * per_plane
        links = {"links_endpoint": endpoints, f"links_leaf_{LAYER_NAMES[1]}": leaves * up}
        for i in range(1, n_layers - 1):
            links[f"links_{LAYER_NAMES[i]}_{LAYER_NAMES[i + 1]}"] = leaves * up
    outputs: dict[str, Quantity] = {"radix": Q_(k, "")}
    outputs |= {f"switches_{n}": Q_(round(v, 9), "") for n, v in per_layer.items()}
    outputs["switches"] = Q_(round(sum(per_layer.values()), 9), "")
    outputs |= {n: Q_(round(v, 9), "") for n, v in links.items()}
    outputs["links"] = Q_(round(sum(links.values()), 9), "")
    formula = "k = switch_bandwidth / port_speed; endpoints = 2 (k/2)^layers" + (
        " x 2o/(1+o)" if ratio > 1 else ""
    )
    return result(
        "fabric-size",
        formula,
        Q_(round(endpoints, 9), ""),
        {
            "switch_bandwidth": sb,
            "port_speed": ps,
            "layers": Q_(n_layers, ""),
            "oversubscription": o,
        },
        sources,
        outputs,
    )


def tor_fabric_size(
    switch_bandwidth: QuantityLike,
    port_speed: QuantityLike,
    endpoints_per_tor: QuantityLike,
    upper_layers: QuantityLike = 2,
    *,
    sources: Sources = None,
) -> Result:
    """The ToR-first fabric the sources describe for Trainium: chips reach a Top-of-Rack
    switch over copper, and each ToR has one uplink into every plane of a rail-optimised
    Clos of ``upper_layers`` layers (leaf and spine).

    ``k = switch_bandwidth / port_speed`` (of the plane switches);
    ``tors = 2 (k/2)^upper_layers`` (ports at the bottom of one plane);
    ``endpoints = tors x endpoints_per_tor``. With two upper layers a pod is the
    ``k/2`` ToRs under one leaf and there are ``k`` pods per plane.
    """
    sb = quantity(switch_bandwidth, "bandwidth", "switch_bandwidth")
    ps = quantity(port_speed, "bandwidth", "port_speed")
    per_tor = positive_count(endpoints_per_tor, "endpoints_per_tor", integer=False)
    up = int(positive_count(upper_layers, "upper_layers").magnitude)
    k = radix(sb, ps)
    if k < 2:
        raise ValueError(f"radix {k} < 2")
    tors = 2 * (k / 2) ** up
    value = count(tors * per_tor)
    outputs: dict[str, Quantity] = {
        "radix": Q_(k, ""),
        "tors": Q_(tors, ""),
        "pods": Q_(2 * (k / 2) ** (up - 1), ""),
        "tors_per_pod": Q_(k / 2, ""),
    }
    return result(
        "tor-fabric-size",
        "k = switch_bandwidth / port_speed; endpoints = 2 (k/2)^upper_layers x endpoints_per_tor",
        value,
        {
            "switch_bandwidth": sb,
            "port_speed": ps,
            "endpoints_per_tor": per_tor,
            "upper_layers": Q_(up, ""),
        },
        sources,
        outputs,
    )
