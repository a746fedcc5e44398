"""A third-party model under torch.compile and the Monitor: Hugging Face's GPT-2 in a tiny config
(2 layers, no weights downloaded), trained a few steps, its sequence length changed once. What the
run must say is what a user of that library needs to hear: the compiled frames that recompiled,
each with its guard, its cause and its fix, and the graph breaks the library's own code makes."""

import pytest
import torch

import recompdiag
from conftest import read_run

transformers = pytest.importorskip("transformers")
pytest.importorskip("torch._dynamo")


def test_gpt2_names_its_sequence_length_recompiles_and_its_graph_breaks(run_file):
    torch._dynamo.reset()
    torch.manual_seed(0)
    cfg = transformers.GPT2Config(n_layer=2, n_head=2, n_embd=32, vocab_size=128, n_positions=64)
    model = transformers.GPT2LMHeadModel(cfg)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    forward = torch.compile(model, backend="aot_eager", dynamic=False)
    with recompdiag.Monitor(model, opt, run_file, log_alerts=False, warmup_steps=2) as m:
        for i in range(6):
            ids = torch.randint(0, 128, (2, 16 if i < 3 else 24))  # longer from step 3
            with m.step(i) as s:
                loss = forward(input_ids=ids, labels=ids).loss
                loss.backward()
                opt.step()
                opt.zero_grad()
                s.loss = loss
    torch._dynamo.reset()
    run = read_run(run_file)
    ledger = [s["compiled"] for s in run["step"]]
    assert ledger[0]["compile_ids"] >= 1 and ledger[0]["graphs"] >= 1
    assert sum(c["compile_ids"] for c in ledger[1:3]) == 0  # steady at 16 tokens
    assert ledger[3]["compile_ids"] >= 1                    # 24 tokens: recompiled
    recompiles = [e for e in run["event"] if e["event"] == "compile"]
    assert recompiles and all(e["step"] == 3 for e in recompiles)
    assert {e["detail"].get("cause") for e in recompiles} == {"new_size"}
    assert all("size mismatch at index 1" in e["reason"] for e in recompiles)
    assert "compile_after_warmup" in run["step"][3]["alerts"]
    # The library's graph breaks are counted where they happen, each with dynamo's reason.
    breaks = [e for e in run["event"] if e["event"] == "graph_break"]
    assert sum(c["graph_breaks"] for c in ledger) == sum(e["detail"]["count"] for e in breaks)
