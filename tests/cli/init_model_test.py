#!/usr/bin/env python3
"""A model from nothing, as issue 16 starts one: `vinci curriculum` and `vinci teach` write a corpus,
scripts/train_tokenizer.py trains a tokenizer on it with HF tokenizers, and `vinci init-model` writes
a random Qwen2-shaped checkpoint in shards. transformers, the reference, must read it as vinci does:
the same tokens for the corpus's files, the same chat prompt (tools included), and the same
log-probabilities for the tokens vinci generates (fp32, within 1e-4). The errors a user meets name
their file and field, and a failed init leaves nothing.

    init_model_test.py VINCI SOURCE_ROOT
"""
import json
import pathlib
import subprocess
import sys
import tempfile

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

VINCI, ROOT = sys.argv[1], pathlib.Path(sys.argv[2])
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "support"))
from checks import check, failures  # noqa: E402

TOLERANCE = 1e-4
SHARD_MIB = 4


def run(*args, expect=0):
    p = subprocess.run([str(a) for a in args], capture_output=True, text=True)
    check(p.returncode == expect, f"{' '.join(map(str, args[:3]))}: exit {p.returncode} (want {expect}): {p.stderr[-1500:]}")
    return p


def vinci_ids(model, text):
    p = run(VINCI, "tokenize", "--model", model, "--no-special", "--json", "--text", text)
    return json.loads(p.stdout)["ids"] if p.returncode == 0 else None


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        run(VINCI, "curriculum", "--out", work / "cur", "--elementwise", "8", "--rowwise", "8")
        run(VINCI, "teach", "--curriculum", work / "cur", "--out", work / "teach")
        run(sys.executable, ROOT / "scripts/train_tokenizer.py", "--corpus", work / "cur", work / "teach",
            ROOT / "prompts", ROOT / "skills", "--vocab-size", "1200", "--out", work / "tok")
        model = work / "model"
        p = run(VINCI, "init-model", "--config", ROOT / "configs/models/kernel_small.json", "--tokenizer", work / "tok",
                "--out", model, "--seed", "11", "--max-shard-mib", SHARD_MIB)
        print(p.stdout)
        if p.returncode != 0:
            return 1

        shards = sorted(model.glob("*.safetensors"))
        check(len(shards) > 1, f"a {SHARD_MIB} MiB limit shards a 10M-parameter fp32 model: {[s.name for s in shards]}")
        for s in shards:
            check(s.stat().st_size <= SHARD_MIB << 20, f"{s.name}: {s.stat().st_size} bytes, over {SHARD_MIB} MiB")
        config = json.loads((model / "config.json").read_text())
        check(config["vocab_size"] == 1216, f"vocab_size {config['vocab_size']}: 1200 tokens rounded up to 64s")

        hf_tokenizer = AutoTokenizer.from_pretrained(model)
        check(config["eos_token_id"] == hf_tokenizer.convert_tokens_to_ids("<|im_end|>"), "eos is <|im_end|>")
        texts = [f.read_text() for f in sorted((work / "teach").rglob("*.py"))[:6]]
        texts += ["x = 12.5e-3  # naïve ÿ\r\n\tdone", "<think>plan</think>\n<tool_call>{}</tool_call>"]
        for text in texts:
            want = hf_tokenizer(text, add_special_tokens=False)["input_ids"]
            got = vinci_ids(model, text)
            check(got == want, f"tokens of {text[:40]!r}: vinci {got and got[:12]} != transformers {want[:12]}")

        messages = [{"role": "system", "content": "You write fast kernels."},
                    {"role": "user", "content": "Fuse relu and scale:\n```python\ny = torch.relu(x) * 2\n```"}]
        tools = [{"type": "function", "function": {"name": "select_skills", "description": "Choose skills (≤ 3).",
                                                   "parameters": {"type": "object", "properties": {
                                                       "names": {"type": "array", "items": {"type": "string"}}}}}}]
        (work / "messages.json").write_text(json.dumps(messages))
        (work / "tools.json").write_text(json.dumps(tools))
        p = run(VINCI, "generate", "--model", model, "--device", "cpu", "--messages", work / "messages.json",
                "--tools", work / "tools.json", "--greedy", "--max-new-tokens", "6", "--json")
        if p.returncode != 0:
            return 1
        out = json.loads(p.stdout)
        prompt = hf_tokenizer.apply_chat_template(messages, tools=tools, add_generation_prompt=True, tokenize=True)
        prompt = prompt["input_ids"] if hasattr(prompt, "keys") else prompt
        check(out["prompt_ids"] == list(prompt), "the chat prompt with tools: vinci's ids are transformers'")
        check("select_skills" in hf_tokenizer.decode(prompt), "the template renders the tools")

        hf = AutoModelForCausalLM.from_pretrained(model, dtype=torch.float32).eval()
        with torch.no_grad():
            logp = torch.log_softmax(hf(torch.tensor([list(prompt) + out["ids"]])).logits[0].double(), -1)
        reference = [logp[len(prompt) - 1 + i, t].item() for i, t in enumerate(out["ids"])]
        worst = max(abs(a - b) for a, b in zip(reference, out["logprobs"]))
        print(f"max |logprob difference| vinci vs transformers: {worst:.2e}")
        check(len(out["ids"]) == 6 and worst < TOLERANCE, f"logprobs differ by {worst:.2e} (tolerance {TOLERANCE})")

        # What a user gets wrong: each a one-line error naming the cause, exit 4, and no folder left.
        small = work / "small_vocab.json"
        small.write_text(json.dumps({**json.loads((ROOT / "configs/models/kernel_small.json").read_text()),
                                     "vocab_size": 1000}))
        p = run(VINCI, "init-model", "--config", small, "--tokenizer", work / "tok", "--out", work / "bad", expect=4)
        check("vocab_size: 1000 is smaller than the tokenizer's 1200 tokens" in p.stderr, f"stderr: {p.stderr!r}")
        check(not (work / "bad").exists(), "a refused init left its folder")
        p = run(VINCI, "init-model", "--config", ROOT / "configs/models/kernel_small.json", "--tokenizer",
                work / "tok", "--out", model, expect=4)
        check("exists" in p.stderr, f"an existing --out: {p.stderr!r}")
        broken = work / "broken.json"
        broken.write_text('{"model_type": "qwen2",')
        p = run(VINCI, "init-model", "--config", broken, "--tokenizer", work / "tok", "--out", work / "bad", expect=4)
        check(str(broken) in p.stderr and "not JSON" in p.stderr, f"a broken config: {p.stderr!r}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
