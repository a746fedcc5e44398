"""A Hugging Face Trainer job of a tiny GPT-2 (no weights) under torch.compile, watched by
RecompdiagCallback: `python hf_job.py RUN_FILE [longest|fixed] [STEPS] [ACCUMULATE]`. `longest`
pads each batch to its longest sequence (a new length most batches: recompiles); `fixed` pads every
batch to 64."""

import sys

import torch
import torch._dynamo
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments

from recompdiag.integrations.transformers import RecompdiagCallback

out = sys.argv[1]
pad = sys.argv[2] if len(sys.argv) > 2 else "longest"
steps = int(sys.argv[3]) if len(sys.argv) > 3 else 24
accumulate = int(sys.argv[4]) if len(sys.argv) > 4 else 1
torch._dynamo.config.recompile_limit = 4  # the cliff within a short test
torch.manual_seed(0)
model = GPT2LMHeadModel(GPT2Config(n_layer=1, n_head=2, n_embd=16, vocab_size=64, n_positions=64))
g = torch.Generator().manual_seed(1)
data = [{"input_ids": torch.randint(0, 64, (int(torch.randint(8, 48, (1,), generator=g)),),
                                    generator=g).tolist()}
        for _ in range(steps * accumulate * 2)]


def collate(batch):
    n = max(len(b["input_ids"]) for b in batch) if pad == "longest" else 64
    ids = torch.zeros(len(batch), n, dtype=torch.long)
    for i, b in enumerate(batch):
        ids[i, : len(b["input_ids"])] = torch.tensor(b["input_ids"])
    return {"input_ids": ids, "labels": ids.clone()}


args = TrainingArguments(output_dir=out + ".trainer", per_device_train_batch_size=2,
                         gradient_accumulation_steps=accumulate, max_steps=steps,
                         torch_compile=True, torch_compile_backend="eager", report_to=[],
                         logging_steps=1000, save_strategy="no", use_cpu=True,
                         dataloader_num_workers=0, disable_tqdm=True)
Trainer(model=model, args=args, train_dataset=data, data_collator=collate,
        callbacks=[RecompdiagCallback(out=out, warmup_steps=2)]).train()
