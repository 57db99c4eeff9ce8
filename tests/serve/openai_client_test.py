#!/usr/bin/env python3
"""`vinci serve` driven by the official `openai` Python client (ctest: Serve.OpenAiClient).

vinci serve runs the tiny Qwen2 fixture on the CPU; the client is a real peer we did not write.
Checked: the model list; greedy completions against transformers' golden ids (golden.json);
chat prompts against transformers' apply_chat_template ids (chat_golden.json); vLLM's token-id
fields and logprobs; concurrent clients batched together with answers equal to their solo ones;
seeded sampling; streaming (chunks reassembling to the non-streamed answer, n=2, the usage chunk,
and a client that leaves mid-stream); the errors a bad request gets, each
as the client's typed exception; and
vinci's own client (`vinci generate --llm`) getting token-exact, trainable results from it.
Usage: openai_client_test.py VINCI FIXTURES_DIR   (FIXTURES_DIR: tests/fixtures/llm)
"""
import concurrent.futures
import json
import pathlib
import re
import signal
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request

import openai

VINCI, FIXTURES = sys.argv[1], pathlib.Path(sys.argv[2])
QWEN2 = FIXTURES / "models" / "qwen2"
NAME = "tiny-qwen2"
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "support"))
from checks import check, failures  # noqa: E402


def start_server(*flags):
    """A `vinci serve` of the fixture on a free port: (process, its log file, its base URL)."""
    log = tempfile.NamedTemporaryFile("w+", prefix="vinci-serve-", suffix=".log", delete=False)
    proc = subprocess.Popen(
        [VINCI, "serve", "--model", QWEN2, "--device", "cpu", "--chat-template", FIXTURES / "templates" / "qwen2_5.jinja",
         "--served-model-name", NAME, "--port", "0", *flags],
        stdout=subprocess.PIPE, stderr=log, text=True)
    ready = proc.stdout.readline()
    match = re.search(r"http://127\.0\.0\.1:(\d+)/v1", ready)
    if not match:
        proc.kill()
        log.seek(0)
        sys.exit(f"vinci serve did not start: {ready!r}\n{log.read()}")
    return proc, log, f"http://127.0.0.1:{match.group(1)}/v1"


def stop_server(proc):
    proc.send_signal(signal.SIGTERM)
    try:
        rc = proc.wait(timeout=60)
        check(rc == 0, f"vinci serve exited {rc} on SIGTERM")
    except subprocess.TimeoutExpired:
        proc.kill()
        check(False, "vinci serve did not stop on SIGTERM")


server, log, base = start_server("--max-batch", "16")
try:
    client = openai.OpenAI(base_url=base, api_key="unused", max_retries=0, timeout=300)

    # the model list
    models = [m.id for m in client.models.list().data]
    check(models == [NAME], f"models {models}")

    # greedy completions of the golden prompts, token for token against transformers
    golden = json.loads((QWEN2 / "golden.json").read_text())
    eos = json.loads((QWEN2 / "generation_config.json").read_text())["eos_token_id"]
    eos = set(eos if isinstance(eos, list) else [eos])
    for prompt, want in list(zip(golden["prompts"], golden["greedy"]))[1:3]:
        r = client.completions.create(model=NAME, prompt=prompt, max_tokens=len(want), temperature=0, logprobs=1,
                                      extra_body={"return_token_ids": True}).model_dump()
        cut = next((i + 1 for i, t in enumerate(want) if t in eos), len(want))
        c = r["choices"][0]
        check(c["token_ids"] == want[:cut], f"completion ids {c['token_ids']} != transformers' {want[:cut]}")
        check(c["prompt_token_ids"] == prompt, "completion prompt_token_ids echo the prompt")
        check(c["finish_reason"] == ("stop" if cut < len(want) else "length"), f"finish_reason {c['finish_reason']}")
        lp = c["logprobs"]["token_logprobs"]
        check(len(lp) == cut and all(-1e9 < x <= 1e-6 for x in lp), f"one logprob <= 0 per token: {lp}")
        u = r["usage"]
        check((u["prompt_tokens"], u["completion_tokens"], u["total_tokens"]) == (len(prompt), cut, len(prompt) + cut),
              f"usage {u}")

    # chat: the prompt is transformers' apply_chat_template, and vLLM's token-id fields come back
    case = next(c for c in json.loads((FIXTURES / "chat_golden.json").read_text())["cases"]
                if c["template"] == "qwen2_5" and c["add_generation_prompt"] and not c["extra"])
    extra = {"return_token_ids": True, "return_tokens_as_token_ids": True}
    r = client.chat.completions.create(model=NAME, messages=case["messages"], max_tokens=8, temperature=0, logprobs=True,
                                       extra_body=extra).model_dump()
    check(r["prompt_token_ids"] == case["ids"], "chat prompt_token_ids == transformers' apply_chat_template ids")
    choice = r["choices"][0]
    ids = choice["token_ids"]
    tokens = [t["token"] for t in choice["logprobs"]["content"]]
    check(tokens == [f"token_id:{i}" for i in ids], f"logprob tokens {tokens} name the ids {ids}")
    check(all(t["logprob"] <= 1e-6 for t in choice["logprobs"]["content"]), "chat logprobs <= 0")
    check(r["usage"]["prompt_tokens"] == len(case["ids"]) and r["usage"]["completion_tokens"] == len(ids), "chat usage")
    same = client.completions.create(model=NAME, prompt=case["ids"], max_tokens=8, temperature=0,
                                     extra_body={"return_token_ids": True}).model_dump()
    check(same["choices"][0]["token_ids"] == ids, "chat and completions agree on the same prompt ids")
    check(isinstance(choice["message"]["content"], str) and choice["finish_reason"] in ("stop", "length"), "chat message")

    # concurrent clients: batched together, each answer equal to the one it gets alone
    def ask(k):
        m = [{"role": "user", "content": f"Write kernel number {k} that adds vectors."}]
        return client.chat.completions.create(model=NAME, messages=m, max_tokens=6, temperature=0,
                                              extra_body={"return_token_ids": True}).choices[0].model_dump()["token_ids"]

    alone = [ask(k) for k in range(8)]
    # A second server whose idle backbone starts only when 8 requests are queued (its gather window
    # is longer than the test), so the 8 clients join one batch however slowly they arrive.
    gathering, gathering_log, gathering_base = start_server("--max-batch", "8", "--gather-ms", "600000")
    try:
        other = openai.OpenAI(base_url=gathering_base, api_key="unused", max_retries=0, timeout=300)

        def ask_there(k):
            m = [{"role": "user", "content": f"Write kernel number {k} that adds vectors."}]
            return other.chat.completions.create(model=NAME, messages=m, max_tokens=6, temperature=0,
                                                 extra_body={"return_token_ids": True}).choices[0].model_dump()["token_ids"]
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            together = list(pool.map(ask_there, range(8)))
    finally:
        stop_server(gathering)
    check(together == alone, f"concurrent answers {together} != solo answers {alone}")
    gathering_log.seek(0)
    batches = [int(rows) for rows in re.findall(r"joined a batch of (\d+)\)", gathering_log.read())]
    check(batches == [8] * 8, f"the 8 clients joined one batch of 8 (each one's batch: {batches})")

    # seeded sampling: n choices differ, and the same seed gives the same choices
    def sample():
        r = client.chat.completions.create(model=NAME, messages=case["messages"], max_tokens=8, temperature=1.0, n=2,
                                           seed=11, extra_body={"return_token_ids": True})
        return [c.model_dump()["token_ids"] for c in r.choices]

    first, second = sample(), sample()
    check(first == second, f"seeded sampling repeats: {first} vs {second}")
    check(first[0] != first[1], f"the n=2 choices differ: {first}")

    # errors: the client's typed exceptions, with the field named
    def raises(kind, param, **kwargs):
        try:
            client.chat.completions.create(**{"model": NAME, "messages": case["messages"], "max_tokens": 4, **kwargs})
        except kind as e:
            body = e.body if isinstance(e.body, dict) else {}
            check(param is None or body.get("param") == param, f"{kind.__name__} names {param}: {body}")
            return
        except openai.APIError as e:
            check(False, f"{kwargs}: {type(e).__name__} instead of {kind.__name__}: {e}")
            return
        check(False, f"{kwargs} was accepted")

    raises(openai.NotFoundError, "model", model="gpt-4o")
    raises(openai.BadRequestError, "messages", messages=[])
    raises(openai.BadRequestError, "logprobs", stream=True, logprobs=True)
    raises(openai.BadRequestError, "stream_options", stream_options={"include_usage": True})
    raises(openai.BadRequestError, "max_tokens", max_tokens=100000)
    raises(openai.BadRequestError, "n", n=0)
    raises(openai.BadRequestError, "temperature", temperature=-1)
    try:
        urllib.request.urlopen(urllib.request.Request(base + "/chat/completions", data=b"{not json",
                                                      headers={"Content-Type": "application/json"}))
        check(False, "a body that is not JSON was accepted")
    except urllib.error.HTTPError as e:
        body = json.loads(e.read())
        check(e.code == 400 and "not JSON" in body["error"]["message"], f"bad JSON: {e.code} {body}")
    try:
        urllib.request.urlopen(base + "/nothing")
        check(False, "an unknown route answered")
    except urllib.error.HTTPError as e:
        check(e.code == 404 and json.loads(e.read())["error"]["type"] == "NotFoundError", "unknown route: 404 in JSON")
    # vinci's own client against vinci serve: token-exact, so trainable (what `vinci optimize --llm` records)
    prompt, want = golden["prompts"][2], golden["greedy"][2]
    cut = next((i + 1 for i, t in enumerate(want) if t in eos), len(want))
    p = subprocess.run([VINCI, "generate", "--llm", base, "--model-name", NAME, "--prompt-ids", ",".join(map(str, prompt)),
                        "--greedy", "--max-new-tokens", str(len(want)), "--json"], capture_output=True, text=True, timeout=300)
    check(p.returncode == 0, f"vinci generate --llm against vinci serve exited {p.returncode}: {p.stderr[-1000:]}")
    if p.returncode == 0:
        got = json.loads(p.stdout)
        check(got["ids"] == want[:cut] and got["prompt_ids"] == prompt and got["token_ids_known"] is True,
              f"vinci's client: ids {got['ids']} (known: {got['token_ids_known']}) != transformers' {want[:cut]}")
        check(len(got["logprobs"]) == cut, "vinci's client: one logprob per token")

    # streaming: server-sent chunks through the client reassemble to the non-streamed answer
    whole = client.chat.completions.create(model=NAME, messages=case["messages"], max_tokens=24, temperature=0)
    parts, finish, usage, roles = {}, {}, None, 0
    for chunk in client.chat.completions.create(model=NAME, messages=case["messages"], max_tokens=24, temperature=0,
                                                stream=True, stream_options={"include_usage": True}):
        usage = chunk.usage or usage
        for c in chunk.choices:
            roles += c.delta.role == "assistant"
            parts[c.index] = parts.get(c.index, "") + (c.delta.content or "")
            finish[c.index] = c.finish_reason or finish.get(c.index)
    check(parts.get(0) == whole.choices[0].message.content,
          f"streamed chat text {parts.get(0)!r} != {whole.choices[0].message.content!r}")
    check(finish.get(0) == whole.choices[0].finish_reason and roles == 1, f"stream finish {finish}, role chunks {roles}")
    check(usage is not None and usage.completion_tokens == whole.usage.completion_tokens
          and usage.prompt_tokens == whole.usage.prompt_tokens, f"include_usage: {usage} vs {whole.usage}")
    seeded = dict(model=NAME, prompt=golden["prompts"][1], max_tokens=12, temperature=1.0, seed=3, n=2)
    plain = client.completions.create(**seeded)
    texts = {}
    for chunk in client.completions.create(**seeded, stream=True):
        for c in chunk.choices:
            texts[c.index] = texts.get(c.index, "") + c.text
    check([texts.get(0), texts.get(1)] == [c.text for c in sorted(plain.choices, key=lambda c: c.index)],
          f"streamed n=2 seeded completions {texts} != {[c.text for c in plain.choices]}")
    # a client that goes away mid-stream leaves the server serving (that its sequence is cancelled is
    # checked without a race in OpenAiServer.AClientThatLeavesMidStreamCancelsItsSequence)
    stream = client.chat.completions.create(model=NAME, messages=case["messages"], max_tokens=400, temperature=1.0,
                                            stream=True, extra_body={"ignore_eos": True})
    pieces = iter(stream)
    next(pieces), next(pieces)
    stream.close()
    check(client.models.list().data[0].id == NAME, "alive after a client left mid-stream")

    # the server still answers after all that
    check(client.models.list().data[0].id == NAME, "alive after the errors")
finally:
    stop_server(server)

log.seek(0)
if failures:
    print(log.read()[-4000:], file=sys.stderr)
    sys.exit(f"{len(failures)} checks failed")
print("vinci serve: every check passed with the official openai client", openai.__version__)
