#!/usr/bin/env python3
"""vinci's OpenAI client against `transformers serve` (ctest: Serve.TransformersServePeer).

`transformers serve` (transformers[serving], a real peer we did not write) serves the tiny Qwen2
fixture on the CPU; `vinci generate --llm` talks to it. transformers serve returns neither token
ids nor logprobs, and refuses vLLM's extra request fields: vinci must report that as a typed error
naming --no-vllm-extras; with it, give the text and mark the result as not trainable, its greedy
reply being the text transformers' own generate() gives for the same conversation. A prompt of
token ids, which this server refuses, must come back as vinci's typed bad_request error.
Usage: transformers_serve_test.py VINCI FIXTURES_DIR   (FIXTURES_DIR: tests/fixtures/llm)
"""
import json
import pathlib
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

import torch
import transformers

VINCI, FIXTURES = sys.argv[1], pathlib.Path(sys.argv[2])
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "support"))
from checks import check, failures  # noqa: E402


work = pathlib.Path(tempfile.mkdtemp(prefix="vinci-tf-serve-"))
# The fixture checkpoint has no chat template of its own; transformers serve reads it from here.
model_dir = work / "qwen2"
shutil.copytree(FIXTURES / "models" / "qwen2", model_dir)
config_path = model_dir / "tokenizer_config.json"
config = json.loads(config_path.read_text())
config["chat_template"] = (FIXTURES / "templates" / "qwen2_5.jinja").read_text()
config_path.write_text(json.dumps(config))

messages = [{"role": "system", "content": "You are a careful CUDA engineer."},
            {"role": "user", "content": "Write a kernel that adds two vectors."}]
(work / "messages.json").write_text(json.dumps(messages))
NEW_TOKENS = 8

# What transformers itself answers, greedily.
tokenizer = transformers.AutoTokenizer.from_pretrained(model_dir)
model = transformers.AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
prompt = tokenizer.apply_chat_template(messages, add_generation_prompt=True, return_tensors="pt", return_dict=True)
with torch.no_grad():
    out = model.generate(**prompt, max_new_tokens=NEW_TOKENS, do_sample=False)
new_ids = out[0, prompt["input_ids"].shape[1]:].tolist()
want_text = tokenizer.decode(new_ids, skip_special_tokens=True)
del model

with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
log = open(work / "transformers-serve.log", "w")
server = subprocess.Popen(["transformers", "serve", str(model_dir), "--device", "cpu", "--host", "127.0.0.1",
                           "--port", str(port)], stdout=log, stderr=subprocess.STDOUT)
try:
    deadline = time.time() + 600
    while True:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5)
            break
        except OSError:
            if server.poll() is not None or time.time() > deadline:
                sys.exit(f"transformers serve did not start: {(work / 'transformers-serve.log').read_text()[-3000:]}")
            time.sleep(1)
    base = f"http://127.0.0.1:{port}/v1"

    chat = [VINCI, "generate", "--llm", base, "--model-name", str(model_dir), "--messages", work / "messages.json",
            "--greedy", "--max-new-tokens", str(NEW_TOKENS), "--json"]
    # vLLM's extra fields are on by default; this server refuses unknown fields (422), and vinci must
    # say so as a typed error that names the way out.
    p = subprocess.run(chat, capture_output=True, text=True, timeout=600)
    check(p.returncode == 1 and "(bad_request)" in p.stderr and "--no-vllm-extras" in p.stderr
          and "return_token_ids" in p.stderr, f"vLLM's extras refused, with the hint: rc {p.returncode}, {p.stderr[-600:]!r}")

    p = subprocess.run(chat + ["--no-vllm-extras"], capture_output=True, text=True, timeout=600)
    check(p.returncode == 0, f"vinci generate --llm exited {p.returncode}: {p.stderr[-2000:]}")
    if p.returncode == 0:
        got = json.loads(p.stdout)
        check(got["text"] == want_text, f"text {got['text']!r} != transformers' greedy {want_text!r}")
        check(got["finish_reason"] == ("stop" if len(new_ids) < NEW_TOKENS else "length"), f"finish_reason {got['finish_reason']}")
        check(got["token_ids_known"] is False and got["ids"] == [], "no token ids from this server: not trainable")

    # A prompt of ids goes to /v1/completions, which this server refuses: a typed error, no crash.
    p = subprocess.run([VINCI, "generate", "--llm", base, "--model-name", str(model_dir), "--prompt-ids", "71,320,267",
                        "--greedy", "--max-new-tokens", "4", "--no-vllm-extras"], capture_output=True, text=True, timeout=600)
    check(p.returncode == 1 and "(bad_request)" in p.stderr and "prompt must be a string" in p.stderr,
          f"ids refused as bad_request with the server's words: rc {p.returncode}, {p.stderr[-600:]!r}")
finally:
    server.terminate()
    try:
        server.wait(timeout=60)
    except subprocess.TimeoutExpired:
        server.kill()
    log.close()

if failures:
    print((work / "transformers-serve.log").read_text()[-3000:], file=sys.stderr)
    sys.exit(f"{len(failures)} checks failed")
shutil.rmtree(work, ignore_errors=True)
print(f"vinci's client against transformers serve {transformers.__version__}: every check passed")
