#!/usr/bin/env bash
# Sourced by the GPU scripts: installs the carried Debian headers (.device-deps) and the few
# runtime libraries the GPU machine lacks (utf8proc, cpp-httplib), so CMake finds them.
if [ -f .device-deps/setup-gpu-host.sh ]; then
  bash .device-deps/setup-gpu-host.sh >/dev/null
  L=/usr/lib/x86_64-linux-gnu
  for lib in libutf8proc libcpp-httplib; do cp -n /tmp/device-deps-root$L/$lib.so* $L/ 2>/dev/null; done
  [ -e $L/libutf8proc.so ] || ln -s $L/libutf8proc.so.2 $L/libutf8proc.so
fi
