"""python -m vinci_worker judge|build-server: vinci's trusted evaluation worker.

Neither process ever imports a candidate's code: candidates run in sandboxed processes
(python/vinci_runner, through vinci-sandbox) that these processes start, feed and check.
"""
import argparse
import sys

from .build_limits import BuildLimits


def main() -> int:
    p = argparse.ArgumentParser(prog="vinci_worker", description=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)
    j = sub.add_parser("judge", help="evaluate candidates on one device: JSON-line requests on stdin")
    j.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N")
    b = sub.add_parser("build-server", help="the build step: one sandboxed import per candidate, compiles cached")
    b.add_argument("--device", default="cpu", help="cpu or cuda (whether compiles may see the GPU)")
    b.add_argument("--compile-timeout", type=float, default=900, help="wall-clock seconds per extension build")
    defaults = BuildLimits()
    b.add_argument("--compile-memory", type=int, default=defaults.memory_bytes, metavar="BYTES",
                   help="resident memory of an extension build's whole process tree")
    b.add_argument("--compile-address-space", type=int, default=defaults.address_space_bytes, metavar="BYTES",
                   help="address space per build process (CPU builds only)")
    b.add_argument("--compile-cpu", type=int, default=defaults.cpu_seconds, metavar="SECONDS",
                   help="CPU time per build process")
    b.add_argument("--compile-disk", type=int, default=defaults.scratch_bytes, metavar="BYTES",
                   help="the private tmpfs a build works in")
    b.add_argument("--compile-output", type=int, default=defaults.output_bytes, metavar="BYTES",
                   help="the built library, and any one file a build writes")
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
    build_limits = BuildLimits(memory_bytes=args.compile_memory, address_space_bytes=args.compile_address_space,
                               cpu_seconds=args.compile_cpu, scratch_bytes=args.compile_disk,
                               output_bytes=args.compile_output)
    return serve_builds(args.cache, args.sandbox, args.device.startswith("cuda"), args.compile_timeout, limits,
                        build_limits)


if __name__ == "__main__":
    sys.exit(main())
