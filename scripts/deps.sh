#!/bin/sh
# deps.sh - make sure the Debian packages a target needs are installed.
# Usage: scripts/deps.sh test|bench|all
# As root it installs what is missing with apt-get; otherwise it names the
# missing packages and fails, so that `make test` / `make bench` stop with a
# clear message instead of a compiler error.
set -eu
what=${1:-all}
case "$what" in
  test)  want="libcriterion-dev pkg-config clang libclang-rt-dev valgrind gcc g++ gcc-multilib make python3 binutils" ;;
  bench) want="libbenchmark-dev libjemalloc-dev libmimalloc-dev gnuplot-nox g++ make python3" ;;
  all)   want="libcriterion-dev pkg-config clang libclang-rt-dev valgrind gcc g++ gcc-multilib make python3 binutils libbenchmark-dev libjemalloc-dev libmimalloc-dev gnuplot-nox" ;;
  *) echo "usage: $0 test|bench|all" >&2; exit 2 ;;
esac
missing=""
for p in $want; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing="$missing $p"
  fi
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "deps: installing:$missing"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # shellcheck disable=SC2086
  apt-get install -y -qq --no-install-recommends $missing
else
  echo "deps: missing Debian packages:$missing" >&2
  echo "deps: install them with: sudo apt-get install$missing" >&2
  exit 1
fi
