"""python -m vinci_worker serve|build-server: the only Python in vinci (the benchmark format forces it)."""
import argparse
import sys


def main() -> int:
    p = argparse.ArgumentParser(prog="vinci_worker", description=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve", help="answer JSON-line requests on stdin for one device")
    s.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N")
    s.add_argument("--cache", required=True, help="the cache directory (extensions live under ext/)")
    b = sub.add_parser("build-server", help="answer build requests on stdin: static checks and extension builds, "
                       "one forked child per candidate")
    b.add_argument("--cache", required=True)
    args = p.parse_args()
    if args.cmd == "serve":
        from .worker import serve
        return serve(args.device, args.cache)
    from .build import serve as serve_builds
    return serve_builds(args.cache)


if __name__ == "__main__":
    sys.exit(main())
