"""An OpenAI-compatible server that plays every agent role of `vinci optimize` from a script, for
GPU runs of the whole loop without a model that can write kernels (benchmarks/optimize_gpu.sh).

selection  picks the first skill of the list it is shown;
policy     turn 1 answers a deliberately slow version of --solution (its kernel launched
           --slow-repeats times), later turns the solution itself;
summary    proposes one general skill (one fused launch instead of many);
verifier   (temperature 0) answers the solution.

Replies have vLLM's shape (prompt_token_ids, choices[].token_ids, logprobs as token_id:N), so the
episode vinci writes is token-level. Test tooling only: the C++ tests use tests/support/scripted_server.
"""
import argparse
import itertools
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SKILL = {
    "name": "fuse_elementwise_chain_single_launch",
    "description": "Compute a chain of elementwise ops in one kernel launch instead of one launch per op or per repeat.",
    "scope": "chains of elementwise or broadcast ops over the same tensors",
    "tags": ["fusion", "elementwise", "memory_bound"],
    "content": "## Motivation\nEach extra launch of a memory-bound kernel reads and writes the whole tensor again.\n"
               "## Key Idea\nLoad each element once, apply every op of the chain in registers, store once; launch "
               "the kernel once per forward.\n## Example\n```cuda\nfloat v = x[i]; v = v * y[i] + z[i]; "
               "out[i] = v > 0.f ? v : 0.f;\n```\n",
}


def slow_version(solution: str, repeats: int) -> str:
    """The solution with ModelNew.forward's returned expression computed `repeats` times."""
    head, cls = solution.split("class ModelNew", 1)
    match = re.search(r"^(\s+)return (.+)$", cls, re.M)
    indent, expr = match.group(1), match.group(2)
    loop = f"{indent}for _ in range({repeats - 1}):\n{indent}    {expr}\n"
    return head + "class ModelNew" + cls[:match.start()] + loop + cls[match.start():]


class Script:
    def __init__(self, solution: str, slow_repeats: int):
        self.fast = solution
        self.slow = slow_version(solution, slow_repeats)
        self.calls = itertools.count(1)
        self.lock = threading.Lock()

    def answer(self, body: dict) -> list[str]:
        messages = body["messages"]
        system, user = messages[0]["content"], messages[1]["content"]
        turns = sum(m["role"] == "assistant" for m in messages)
        if system.startswith("You choose optimization skills"):
            first = re.search(r"\n1\. (\S+)", user)
            args = {"think": "scripted", "selected_skills": [{"name": first.group(1) if first else "none", "reason": "first"}]}
            return [json.dumps({"name": "select_skills", "arguments": args})]
        if system.startswith("You maintain a library"):
            args = {"think": "scripted", "new_skills": [SKILL]}
            return [f"<tool_call>{json.dumps({'name': 'update_skill_library', 'arguments': args})}</tool_call>"]
        if body.get("temperature", 1.0) == 0.0:
            return [f"Strategy: one launch (verifier)\n```python\n{self.fast}```\n"]
        if turns == 0:
            return [f"Strategy: launch the kernel several times\n```python\n{self.slow}```\n"]
        return [f"Strategy: one launch\n```python\n{self.fast}```\n"]

    def completion(self, body: dict) -> dict:
        with self.lock:
            call = next(self.calls)
        choices = []
        for i in range(body.get("n", 1)):
            text = self.answer(body)[0]
            ids = [call * 100 + i * 10 + k for k in range(3)]
            logprobs = [{"token": f"token_id:{t}", "logprob": -0.5} for t in ids]
            choices.append({"index": i, "message": {"role": "assistant", "content": text},
                            "logprobs": {"content": logprobs}, "finish_reason": "stop", "token_ids": ids})
        return {"id": f"c{call}", "object": "chat.completion", "model": body.get("model", "scripted"),
                "prompt_token_ids": [call, 1, 2, 3], "choices": choices}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--port", type=int, default=8123)
    p.add_argument("--solution", required=True, help="a correct, fast ModelNew file for the task")
    p.add_argument("--slow-repeats", type=int, default=3)
    a = p.parse_args()
    script = Script(open(a.solution).read(), a.slow_repeats)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            reply = json.dumps(script.completion(body)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *args):
            pass

    ThreadingHTTPServer(("127.0.0.1", a.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
