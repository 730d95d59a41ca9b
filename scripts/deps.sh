#!/bin/sh
# SPDX-License-Identifier: MIT
# deps.sh - make sure the Debian packages the tests and the benchmark need
# are installed. Usage: scripts/deps.sh [test|bench|all]   (default all)
#
# As root on Debian it installs what is missing with apt-get. Elsewhere, or
# without root, it names what is needed in one message and fails, so that
# `make test` / `make bench` stop with that instead of a compiler error;
# `make test-normal` then runs the suite with what the machine has.
set -eu
what=${1:-all}
test_pkgs="gcc g++ clang libclang-rt-dev make python3 binutils pkg-config cmake meson ninja-build
  valgrind gcc-multilib libcriterion-dev musl-tools qemu-user
  libc6-dev-arm64-cross libgcc-12-dev-arm64-cross binutils-aarch64-linux-gnu
  libc6-dev-s390x-cross libgcc-12-dev-s390x-cross binutils-s390x-linux-gnu
  gcc-mingw-w64-x86-64-posix wine64"
bench_pkgs="g++ make python3 pkg-config libbenchmark-dev libjemalloc-dev libmimalloc-dev
  libglib2.0-dev gnuplot-nox"
case "$what" in
  test)  want=$test_pkgs ;;
  bench) want=$bench_pkgs ;;
  all)   want="$test_pkgs $bench_pkgs" ;;
  *) echo "usage: $0 test|bench|all" >&2; exit 2 ;;
esac

if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "deps: this is not a Debian system (no dpkg-query): install the equivalents of" >&2
  echo "deps:   $want" >&2
  echo "deps: then run the suite with 'make test-normal' (or 'make -k test')." >&2
  exit 1
fi

missing=""
for p in $want; do
  case " $missing " in *" $p "*) continue ;; esac
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing="$missing $p"
  fi
done
# gcc-multilib (the -m32 flavour) conflicts with Debian's gcc-ARCH-linux-gnu
# cross compilers: installing it would remove a user's. Where one is
# installed it is left out, and `make test` builds no -m32 flavour (it
# says so in its line).
case " $missing " in *" gcc-multilib "*)
  cross=$(dpkg-query -W -f='${Package} ${Status}\n' 'gcc-*-linux-gnu*' 2>/dev/null |
          awk '/install ok installed/ { print $1 }' | tr '\n' ' ')
  if [ -n "$cross" ]; then
    echo "deps: not installing gcc-multilib, which would remove: $cross(no -m32 tests)"
    missing=$(echo " $missing " | sed 's/ gcc-multilib / /')
    missing=${missing% }
  fi ;;
esac
# npm (for the Arrow reader of make test-formats) comes with some Node.js
# builds (NodeSource's nodejs bundles it, and conflicts with Debian's npm):
# where the command exists, the package is not needed.
case " $missing " in *" npm "*)
  if command -v npm >/dev/null 2>&1; then missing=$(echo " $missing " | sed 's/ npm / /'); fi ;;
esac
missing=$(echo "$missing" | sed 's/^ *//; s/^/ /')
[ "$missing" = " " ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "deps: installing:$missing"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # shellcheck disable=SC2086
  # --no-remove: never remove a package of the user's to make room
  apt-get install -y -qq --no-install-recommends --no-remove $missing
else
  echo "deps: missing Debian packages:$missing" >&2
  echo "deps: install them with: sudo apt-get install$missing" >&2
  echo "deps: or run what this machine has with 'make test-normal'." >&2
  exit 1
fi
