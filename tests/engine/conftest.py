"""Shared fixtures: the knowledge base loaded once, and its two NeuronCores."""

import pytest

from trnkb.engine import NeuronCore


@pytest.fixture(scope="session")
def trn2(kb):
    return NeuronCore.from_kb(kb, "trainium2")


@pytest.fixture(scope="session")
def trn3(kb):
    return NeuronCore.from_kb(kb, "trainium3")
