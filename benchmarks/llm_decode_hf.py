#!/usr/bin/env python3
"""The reference point for llm_decode_bench: transformers' generate on the same model shape,
random weights, bf16, greedy, same prompt and new-token counts. Prints the same JSON lines."""
import argparse
import json
import statistics
import time

import torch
from transformers import AutoConfig, AutoModelForCausalLM


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--config-dir", required=True)
    parser.add_argument("--batch", default="1,16,64")
    parser.add_argument("--prompt", type=int, default=512)
    parser.add_argument("--new", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    torch.manual_seed(1)
    config = AutoConfig.from_pretrained(args.config_dir)
    with torch.device("cuda"):
        model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16, attn_implementation="sdpa").eval()
    generator = torch.Generator().manual_seed(0)

    def run(batch: int, new_tokens: int) -> float:
        ids = torch.randint(0, config.vocab_size, (batch, args.prompt), generator=generator).cuda()
        torch.cuda.synchronize()
        start = time.perf_counter()
        with torch.inference_mode():
            model.generate(ids, attention_mask=torch.ones_like(ids), do_sample=False, max_new_tokens=new_tokens,
                           min_new_tokens=new_tokens, pad_token_id=0)
        torch.cuda.synchronize()
        return time.perf_counter() - start

    run(1, 4)
    for batch in [int(b) for b in args.batch.split(",")]:
        prefill = statistics.median(run(batch, 1) for _ in range(args.repeats))
        total = statistics.median(run(batch, args.new) for _ in range(args.repeats))
        decode = total - prefill
        print(json.dumps({"engine": "transformers", "batch": batch, "prompt": args.prompt, "new_tokens": args.new,
                          "prefill_s": prefill, "total_s": total, "decode_s": decode,
                          "decode_tokens_per_s": batch * (args.new - 1) / decode,
                          "step_ms": decode / (args.new - 1) * 1e3}), flush=True)


if __name__ == "__main__":
    main()
