"""python -m vinci_worker serve|build: the only Python in vinci (the benchmark format forces it)."""
import argparse
import sys


def main() -> int:
    p = argparse.ArgumentParser(prog="vinci_worker", description=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve", help="answer JSON-line requests on stdin for one device")
    s.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N")
    s.add_argument("--cache", required=True, help="the cache directory (extensions live under ext/)")
    b = sub.add_parser("build", help="static checks and extension build for one candidate")
    b.add_argument("--candidate", required=True)
    b.add_argument("--task", default="")
    b.add_argument("--cache", required=True)
    b.add_argument("--policy", default="", help="JSON: torch_ops, allow_precision_drop")
    b.add_argument("--scale", type=float, default=1.0, help="the task's --scale, for constructing ModelNew")
    args = p.parse_args()
    if args.cmd == "serve":
        from .worker import serve
        return serve(args.device, args.cache)
    from .build import main as build_main
    return build_main(args)


if __name__ == "__main__":
    sys.exit(main())
