"""python -m vinci_runner runner|zygote|import|compile|precompile: what runs inside vinci's sandbox.

It is started only by the trusted worker (python/vinci_worker) through vinci-sandbox; it answers
on the descriptors it is given and decides nothing.
"""
import argparse
import json
import sys


def main() -> int:
    p = argparse.ArgumentParser(prog="vinci_runner", description=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("runner", help="run one model's calls (a candidate's ModelNew or the reference Model)")
    r.add_argument("--control", type=int, required=True, help="the control socket's descriptor")
    r.add_argument("--buffer", type=int, default=-1, help="the shared output buffer's descriptor")
    r.add_argument("--inputs", type=int, default=-1, help="the shared input buffer's descriptor (timed CPU calls)")
    r.add_argument("--device", default="cpu")
    z = sub.add_parser("zygote", help="fork runners, each in namespaces of its own, from one interpreter that has "
                                      "torch imported (zygote.py)")
    z.add_argument("--control", type=int, required=True, help="the control socket's descriptor")
    z.add_argument("--device", default="cpu", help="the runners' device (the zygote itself never touches a GPU)")
    i = sub.add_parser("import", help="static checks, then import a candidate (the build step)")
    i.add_argument("--control", type=int, required=True)
    i.add_argument("--candidate", required=True)
    i.add_argument("--task", default="")
    i.add_argument("--scale", type=float, required=True, help="the task's size factor (the build step always names it)")
    i.add_argument("--policy", default="{}", help="the static checks' policy, as JSON")
    i.add_argument("--static-only", action="store_true", help="stop after the static report (no import)")
    c = sub.add_parser("compile", help="build one load_inline extension")
    c.add_argument("--arguments", required=True, help="a JSON file of load_inline's arguments")
    c.add_argument("--out", required=True, help="the folder to put the library in")
    c.add_argument("--work", default="", help="the folder to build in (default: --out)")
    c.add_argument("--pch", default="", help="a folder holding torch/extension.h precompiled for these flags")
    c.add_argument("--as-written", action="store_true",
                   help="build the CUDA sources as written, without first trying them with torch/extension.h "
                        "taken out (for measuring what that saves)")
    h = sub.add_parser("precompile", help="precompile torch/extension.h for extensions with given flags")
    h.add_argument("--flags", required=True, help='a JSON file: {"extra_cflags": [...], "with_cuda": bool}')
    h.add_argument("--out", required=True, help="the folder to write torch/extension.h.gch into")
    a = p.parse_args()
    if a.cmd == "runner":
        from .runner import serve
        return serve(a.control, a.buffer, a.inputs, a.device)
    if a.cmd == "zygote":
        from .zygote import serve as zygote_serve
        return zygote_serve(a.control, a.device.startswith("cuda"))
    if a.cmd == "import":
        from .importer import main as import_main
        return import_main(a.control, a.candidate, a.task, a.scale, json.loads(a.policy), a.static_only)
    if a.cmd == "precompile":
        from .precompiled_header import main as precompile_main
        return precompile_main(a.flags, a.out)
    from .compile import main as compile_main
    return compile_main(a.arguments, a.out, a.pch, lean_cuda=not a.as_written, work_dir=a.work)


if __name__ == "__main__":
    sys.exit(main())
