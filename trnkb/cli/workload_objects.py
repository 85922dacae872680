"""The model and system a ``trnkb workload`` command runs on, remembered across processes.

Building them needs the knowledge base: importing pandas and loading and deriving the
specs, about 0.45 s of the 1.2 s of CPU a cold ``trnkb workload serve`` costs. They are a
function of the spec files, trnkb's code and the ids asked for, nothing else, so they are
kept in trnkb's user cache under a SHA-256 of exactly those (``TRNKB_NO_CACHE=1`` turns it
off): edit a spec or a line of code and they are built again, so an entry is never stale.
Entries are read back with an unpickler that accepts only the classes the two objects hold;
an entry that does not read back is rebuilt. A refusal (an unknown id, a bad spec) comes
from the knowledge base as before: only built objects are remembered.
"""

from __future__ import annotations

import hashlib
import io
import pickle
from pathlib import Path
from typing import TYPE_CHECKING, Any

import trnkb
from trnkb.spec.peaks_format import specs_digest, specs_dir
from trnkb.userdirs import cache_dir, code_digest, store

if TYPE_CHECKING:
    from trnkb.workload import Model, System

MAX_ENTRIES = 32  # on disk; the oldest are removed beyond this


class _ObjectsUnpickler(pickle.Unpickler):
    """Only what a model and a system hold: trnkb's workload and topology objects, the
    fabric's networkx graph, pint quantities, numbers and containers."""

    MODULES = ("trnkb.workload.", "trnkb.topology.", "networkx.classes.", "pint.")
    BUILTINS = {"set", "frozenset", "tuple", "list", "dict", "float", "int", "slice"}
    # a fabric's cached hop matrix: arrays, nothing else of numpy
    NUMPY = {"_reconstruct", "ndarray", "dtype", "scalar"}

    def find_class(self, module: str, name: str) -> Any:
        if (module.startswith(self.MODULES) or module in ("pint", "copyreg")
                or (module == "builtins" and name in self.BUILTINS)
                or (module in ("numpy", "numpy._core.multiarray", "numpy.core.multiarray")
                    and name in self.NUMPY)):
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"{module}.{name} is not part of a model or a system")


def _entry(specs: Path | None, ids: tuple[str | None, ...]) -> Path | None:
    root = Path(specs) if specs is not None else specs_dir()
    folder = cache_dir("workload")
    if folder is None or not root.is_dir():
        return None
    h = hashlib.sha256(code_digest())
    h.update(specs_digest(root).encode())
    h.update(repr(ids).encode())
    return folder / f"{h.hexdigest()}.pickle"


def objects(specs: Path | None, model_id: str, system_id: str,
            gen: str | None) -> tuple[Model, System]:
    """The :class:`~trnkb.workload.Model` of ``model_id`` and the
    :class:`~trnkb.workload.System` of ``system_id`` under switch generation ``gen``, for
    the specs in ``specs`` (default: the shipped specs)."""
    entry = _entry(specs, (model_id, system_id, gen))
    if entry is not None and entry.exists():
        try:
            found = _ObjectsUnpickler(io.BytesIO(entry.read_bytes())).load()
            if isinstance(found, tuple) and len(found) == 2:
                return found[0], found[1]
        except Exception:  # truncated, foreign or from classes since changed: rebuild
            pass
    from trnkb import workload as W

    kb = trnkb.load(specs)
    built = W.model(kb, model_id), W.system(kb, system_id, gen)
    if entry is not None:
        try:
            store(entry, pickle.dumps(built, protocol=pickle.HIGHEST_PROTOCOL), MAX_ENTRIES)
        except Exception:  # an object that cannot be pickled is not remembered
            pass
    return built
