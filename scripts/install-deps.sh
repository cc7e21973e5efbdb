#!/usr/bin/env bash
# Installs everything omniprof needs to build, run and test on Debian 12.
# Used by both README commands and by .ci/run; safe to run again.
# Usage: scripts/install-deps.sh [--bench]
set -euo pipefail

PKGS=(
	make gcc clang llvm pkg-config
	libbpf-dev bpftool
	libelf-dev libdw-dev zlib1g-dev libssl-dev
	libdebuginfod-dev libiberty-dev
	binutils xz-utils debuginfod
	protobuf-c-compiler libprotobuf-c-dev
	libcurl4-openssl-dev openssl
	libcmocka-dev
	golang-go protobuf-compiler
	g++ rustc
	libclang-rt-14-dev # libFuzzer for `make fuzz`
	python3
	strace # tests: a refused option must not reach bpf(2)
	fuse3 libfuse3-dev # the hung-file-server test (tests/workloads/fuse_hang.c)
	# The runtimes the e2e tests profile (src/interp/<runtime>/):
	openjdk-17-jdk-headless # HotSpot (java, javac, javap)
	ruby ruby-dev		# CRuby 3.1 (ruby-dev: C extensions built by the tests)
	perl			# Perl 5.36
	php-cli php-fpm php-opcache libfcgi-bin # PHP 8.2, its FPM and JIT; cgi-fcgi
)

# The agent's end-to-end tests run an OTLP receiver on Node.js (gRPC stack
# from npm, installed by the tests). Debian's nodejs ships npm separately;
# a Node.js that came with its own npm is kept as it is.
if ! command -v npm >/dev/null 2>&1; then
	PKGS+=(nodejs npm)
fi

# --bench: also the tools `make bench` compares omniprof with.
if [ "${1:-}" = "--bench" ]; then
	PKGS+=(linux-perf bpftrace)
fi

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if ((${#missing[@]})); then
	if [ "$(id -u)" -ne 0 ]; then
		echo "install-deps: missing packages (${missing[*]}); run as root or install them" >&2
		exit 1
	fi
	echo "install-deps: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
