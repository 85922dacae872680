import pytest

import trnkb


@pytest.fixture(scope="session")
def kb():
    return trnkb.load()
