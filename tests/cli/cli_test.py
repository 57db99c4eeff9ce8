#!/usr/bin/env python3
"""The backbone's commands end to end: vinci generate, tokenize and chat (ctest: Cli.BackboneCommands).

The binary does all the work; this script runs it on the fixture checkpoints and compares what it
prints with the goldens that make_llm_fixtures.py wrote with transformers and tokenizers, and the
chat transcript with single-shot generations of the same conversation.
Usage: cli_test.py VINCI FIXTURES_DIR   (FIXTURES_DIR: tests/fixtures/llm)
"""
import json
import pathlib
import subprocess
import sys

VINCI, FIXTURES = sys.argv[1], pathlib.Path(sys.argv[2])
QWEN2, QWEN3 = FIXTURES / "models" / "qwen2", FIXTURES / "models" / "qwen3"
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "support"))
from checks import check, failures  # noqa: E402


def vinci(*args, stdin=b""):
    p = subprocess.run([VINCI, *map(str, args)], input=stdin, capture_output=True, timeout=600)
    return p.returncode, p.stdout, p.stderr.decode(errors="replace")


# generate: greedy continuations of the golden prompts, token for token, on the CPU in fp32
golden = json.loads((QWEN2 / "golden.json").read_text())
eos = json.loads((QWEN2 / "generation_config.json").read_text())["eos_token_id"]
eos = set(eos if isinstance(eos, list) else [eos])
for prompt, want in list(zip(golden["prompts"], golden["greedy"]))[1:3]:
    rc, out, err = vinci("generate", "--model", QWEN2, "--device", "cpu", "--prompt-ids", ",".join(map(str, prompt)),
                         "--greedy", "--max-new-tokens", len(want), "--json")
    check(rc == 0, f"generate exited {rc}: {err}")
    if rc != 0:
        continue
    got = json.loads(out)
    cut = next((i + 1 for i, t in enumerate(want) if t in eos), len(want))
    check(got["ids"] == want[:cut], f"greedy ids {got['ids']} != transformers' {want[:cut]}")
    check(got["prompt_ids"] == prompt, "prompt_ids echo the prompt")
    check(got["finish_reason"] == ("stop" if cut < len(want) else "length"), f"finish_reason {got['finish_reason']}")
    check(len(got["logprobs"]) == len(got["ids"]) and all(-1e9 < lp <= 1e-6 for lp in got["logprobs"]),
          f"one logprob <= 0 per token: {got['logprobs']}")

# tokenize: ids with and without the tokenizer's special tokens, against tokenizers
# (a spread of the edge cases: each run loads libtorch, and the tokenizer's own tests cover them all)
cases = [c for c in json.loads((FIXTURES / "tokenizer_golden.json").read_text())["cases"]
         if c["tokenizer"] == "tokenizer" and c["text"] and not c["text"].startswith("-")][::27]
check(len(cases) >= 5, f"only {len(cases)} tokenizer cases")
for c in cases:
    rc, out, err = vinci("tokenize", "--model", QWEN2, "--text", c["text"], "--json", "--no-special")
    check(rc == 0 and json.loads(out)["ids"] == c["ids"], f"tokenize {c['text']!r}: {out[:200]!r} {err}")
    rc, out, err = vinci("tokenize", "--model", QWEN2, "--text", c["text"])
    check(rc == 0 and out.decode().split() == [str(i) for i in c["ids_with_special"]], f"tokenize (plain) {c['text']!r}")

# chat: a greedy conversation keeps its history, /reset forgets it; each reply must be what
# generate gives for the same messages
template = FIXTURES / "templates" / "qwen3.jinja"
common = ["--model", QWEN3, "--device", "cpu", "--chat-template", template]
rc, transcript, err = vinci("chat", *common, "--max-new-tokens", 6, "--temperature", 0,
                            stdin=b"Write a softmax kernel.\nNow fuse it.\n/reset\nWrite a softmax kernel.\n/exit\n")
check(rc == 0, f"chat exited {rc}: {err}")


def reply(messages, path=pathlib.Path("cli-test-messages.json")):
    path.write_text(json.dumps(messages))
    rc, out, err = vinci("generate", *common, "--messages", path, "--greedy", "--max-new-tokens", 6)
    path.unlink()
    check(rc == 0, f"generate --messages exited {rc}: {err}")
    return out[:-1].decode(errors="replace")  # generate ends the text with one newline


first = reply([{"role": "user", "content": "Write a softmax kernel."}])
second = reply([{"role": "user", "content": "Write a softmax kernel."}, {"role": "assistant", "content": first},
                {"role": "user", "content": "Now fuse it."}])
check(transcript.decode(errors="replace") == f"{first}\n{second}\n{first}\n",
      f"chat transcript {transcript!r} != generate's replies {[first, second, first]!r}")
check(err.count("> ") == 5, f"chat prompts before each of its 5 input lines: {err!r}")

# errors name what is wrong
rc, _, err = vinci("generate", "--model", FIXTURES / "no-such-model", "--prompt", "x")
check(rc != 0 and "no-such-model" in err, f"a missing model directory is named: {err!r}")
rc, _, err = vinci("generate", "--model", QWEN2, "--device", "cpu", "--prompt-ids", "1,x,3")
check(rc != 0 and "'x' is not an integer" in err, f"a bad --prompt-ids item is named: {err!r}")

print(f"{'FAILED' if failures else 'passed'}: {len(failures)} failure(s)")
sys.exit(1 if failures else 0)
