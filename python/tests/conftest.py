import json

import pytest


def read_run(path):
    """The records of a run file by type: header, steps, events, summary."""
    lines = [json.loads(line) for line in open(path)]
    by_type = {"run": [], "step": [], "event": [], "summary": []}
    for line in lines:
        by_type[line["type"]].append(line)
    return by_type


@pytest.fixture
def run_file(tmp_path):
    return str(tmp_path / "run.jsonl")


@pytest.fixture
def fresh_dynamo():
    """torch.compile's caches and counters reset around a test: its compiles are its own."""
    import torch._dynamo

    torch._dynamo.reset()
    yield
    torch._dynamo.reset()
