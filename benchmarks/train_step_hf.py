#!/usr/bin/env python3
"""The reference point for train_step_bench: the same policy-gradient step in PyTorch eager with
transformers' model of the same shape (random weights): fp32 master weights under bf16 autocast,
logits only at the positions that predict the response (logits_to_keep), PPO-clip token-mean loss,
gradient clipping at 1.0, torch.optim.AdamW. Prints the same JSON line."""
import argparse
import json
import statistics
import time

import torch
from transformers import AutoConfig, AutoModelForCausalLM


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--config-dir", required=True)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--prompt", type=int, default=512)
    parser.add_argument("--response", type=int, default=512)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--peak-tflops", type=float, default=989.0)
    args = parser.parse_args()

    torch.manual_seed(1)
    config = AutoConfig.from_pretrained(args.config_dir)
    with torch.device("cuda"):
        model = AutoModelForCausalLM.from_config(config, dtype=torch.float32, attn_implementation="sdpa")
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-6, weight_decay=0.0)
    seq = args.prompt + args.response
    ids = torch.randint(0, config.vocab_size, (args.batch, seq), generator=torch.Generator().manual_seed(0)).cuda()
    targets = ids[:, args.prompt:]
    advantages = torch.tensor([1.0 if b % 2 else -1.0 for b in range(args.batch)], device="cuda")[:, None]

    def logprobs():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(ids, logits_to_keep=args.response + 1).logits[:, :-1]
        return torch.log_softmax(logits.float(), -1).gather(-1, targets[..., None]).squeeze(-1)

    with torch.no_grad():
        rollout = logprobs()

    def step():
        ratio = torch.exp(logprobs() - rollout)
        loss = -torch.minimum(ratio * advantages, ratio.clamp(0.8, 1.28) * advantages).mean()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    times = []
    for i in range(args.warmup + args.steps):
        torch.cuda.synchronize()
        start = time.perf_counter()
        step()
        torch.cuda.synchronize()
        if i >= args.warmup:
            times.append(time.perf_counter() - start)
    median = statistics.median(times)
    h, inter, layers = config.hidden_size, config.intermediate_size, config.num_hidden_layers
    heads, kv = config.num_attention_heads, config.num_key_value_heads
    head_dim = getattr(config, "head_dim", None) or h // heads
    non_embedding = layers * (h * (heads + 2 * kv) * head_dim + heads * head_dim * h + 3 * h * inter)
    tokens, trained = args.batch * seq, args.batch * args.response
    flops = 6 * non_embedding * tokens + 6 * h * config.vocab_size * trained + 6 * layers * h * seq * tokens
    print(json.dumps({"engine": "pytorch-eager", "batch": args.batch, "prompt": args.prompt, "response": args.response,
                      "step_s": median, "tokens_per_s": tokens / median, "tflops": flops / median / 1e12,
                      "mfu": flops / median / (args.peak_tflops * 1e12),
                      "peak_memory_GB": torch.cuda.max_memory_allocated() / 1e9}))


if __name__ == "__main__":
    main()
