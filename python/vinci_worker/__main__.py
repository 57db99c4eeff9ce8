"""python -m vinci_worker judge|build-server: vinci's trusted evaluation worker.

Neither process ever imports a candidate's code: candidates run in sandboxed processes
(python/vinci_runner, through vinci-sandbox) that these processes start, feed and check.
"""
import argparse
import sys


def main() -> int:
    p = argparse.ArgumentParser(prog="vinci_worker", description=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)
    j = sub.add_parser("judge", help="evaluate candidates on one device: JSON-line requests on stdin")
    j.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N")
    b = sub.add_parser("build-server", help="the build step: one sandboxed import per candidate, compiles cached")
    b.add_argument("--device", default="cpu", help="cpu or cuda (whether compiles may see the GPU)")
    b.add_argument("--compile-timeout", type=float, default=900)
    for s in (j, b):
        s.add_argument("--cache", required=True, help="the cache directory (extensions live under ext/)")
        s.add_argument("--sandbox", required=True, help="the vinci-sandbox launcher")
        s.add_argument("--max-pids", type=int, default=1024, help="processes and threads per sandbox")
    args = p.parse_args()
    limits = {"max_pids": args.max_pids}
    if args.cmd == "judge":
        from .judge import serve
        return serve(args.device, args.cache, args.sandbox, limits)
    from .build import serve as serve_builds
    return serve_builds(args.cache, args.sandbox, args.device.startswith("cuda"), args.compile_timeout, limits)


if __name__ == "__main__":
    sys.exit(main())
