#!/usr/bin/env bash
# Sourced by the GPU scripts: installs the carried Debian headers (.device-deps) and the few
# runtime libraries the GPU machine lacks (utf8proc, cpp-httplib), so CMake finds them, and defines
# gpu_build.
if [ -f .device-deps/setup-gpu-host.sh ]; then
  bash .device-deps/setup-gpu-host.sh >/dev/null
  L=/usr/lib/x86_64-linux-gnu
  for lib in libutf8proc libcpp-httplib; do cp -n /tmp/device-deps-root$L/$lib.so* $L/ 2>/dev/null; done
  [ -e $L/libutf8proc.so ] || ln -s $L/libutf8proc.so.2 $L/libutf8proc.so
  # The sandbox: bubblewrap and libseccomp's link (the runtime library is the host's), when carried
  # (fetch-debs.sh with EXTRA_DEBS="bubblewrap libseccomp-dev").
  [ -x /tmp/device-deps-root/usr/bin/bwrap ] && ! command -v bwrap >/dev/null && cp /tmp/device-deps-root/usr/bin/bwrap /usr/local/bin/
  [ -e $L/libseccomp.so ] || { [ -e $L/libseccomp.so.2 ] && ln -s $L/libseccomp.so.2 $L/libseccomp.so; }
fi
# The sandbox's build needs seccomp.h; a carry without it fails in CMake with a less helpful line.
if [ ! -e /usr/include/seccomp.h ] && [ ! -e /tmp/device-deps-root/usr/include/seccomp.h ]; then
  echo "gpu_host_setup: seccomp.h is missing: run EXTRA_DEBS=\"bubblewrap libseccomp-dev\" bash ../shared/device/fetch-debs.sh here and carry .device-deps" >&2
fi

# Configures and builds vinci in $BUILD (Release, Ninja) with the given -D options and targets (none:
# everything), the log in $OUT/cmake.log, whose tail is shown before the script exits on a failure;
# then records the GPU in $OUT/gpu.txt.
#   gpu_build [-DOPTION=VALUE ...] [TARGET ...]
gpu_build() {
  local options=() targets=() a
  for a in "$@"; do
    case $a in -D*) options+=("$a") ;; *) targets+=(--target "$a") ;; esac
  done
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release "${options[@]}" >"$OUT/cmake.log" 2>&1 &&
    cmake --build "$BUILD" -j "$(nproc)" "${targets[@]}" >>"$OUT/cmake.log" 2>&1 ||
    { tail -40 "$OUT/cmake.log"; exit 1; }
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
}
