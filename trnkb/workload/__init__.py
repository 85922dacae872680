"""The workload layer: what it takes to train and serve a model on each system, with ranges.

Sits beside :mod:`trnkb.calc`; takes plain objects built from the knowledge base by
:mod:`trnkb.workload.fromkb` (never YAML). Modules: :mod:`~trnkb.workload.models`
(parameters, FLOPs, KV bytes), :mod:`~trnkb.workload.plan` (parallelism plans, training
memory), :mod:`~trnkb.workload.training`, :mod:`~trnkb.workload.search` (plan search),
:mod:`~trnkb.workload.serving` (closed-form), :mod:`~trnkb.workload.simulation` (the
step-level simulator: :mod:`~trnkb.workload.scheduler`, :mod:`~trnkb.workload.stepcost`,
:mod:`~trnkb.workload.slo`), :mod:`~trnkb.workload.collectives` (collectives over the
scale-up fabric and scale-out network), :mod:`~trnkb.workload.cost` (TCO, power),
:mod:`~trnkb.workload.ranges` (inputs and results as ranges).

May import: :mod:`trnkb.topology`, :mod:`trnkb.engine`, :mod:`trnkb.kb`,
:mod:`trnkb.calc`, :mod:`trnkb.spec`, :mod:`trnkb.units`; never :mod:`trnkb.audit` or a
view.
"""

from trnkb.workload.fromkb import model, system
from trnkb.workload.lengths import Lengths
from trnkb.workload.models import Model
from trnkb.workload.plan import Plan
from trnkb.workload.ranges import Input, Ranged, assumption, user_value
from trnkb.workload.result import WorkloadResult
from trnkb.workload.search import plans
from trnkb.workload.serving import serve
from trnkb.workload.simulation import simulate
from trnkb.workload.slo import frontier, max_throughput, parse_slo
from trnkb.workload.stepcost import Layout
from trnkb.workload.system import System
from trnkb.workload.training import train

__all__ = ["Input", "Layout", "Lengths", "Model", "Plan", "Ranged", "System", "WorkloadResult",
           "assumption", "frontier", "max_throughput", "model", "parse_slo", "plans", "serve",
           "simulate", "system", "train", "user_value"]
