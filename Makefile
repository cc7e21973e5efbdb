# omniprof build. `make` builds build/omniprof; `make test` builds and runs every test.
# Sources are discovered by folder: a new src/<area>/<file>.c, bpf/<name>.bpf.c,
# tests/unit/test_<x>.c or tests/e2e/test_<x>.c needs no edit here.

BUILD    ?= build
CC       ?= gcc
CLANG    ?= clang
BPFTOOL  ?= bpftool
PROTOC_C ?= protoc-c
SAN      ?=

PKGS     := libbpf libelf libdw zlib libprotobuf-c libcrypto \
	    sqlite3 libnghttp2 # serve
# Opened at first use (dlopen, util/dynlib.h), not linked: their headers only.
# libcurl: the exporters; libdebuginfod: a debuginfod lookup; libmicrohttpd: serve
# and --metrics-listen. Linked, their constructors (GnuTLS, p11-kit) ran in every start.
DLOPEN_PKGS := libdebuginfod libcurl libmicrohttpd
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) $(DLOPEN_PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

.DEFAULT_GOAL := all # the first rule below is vmlinux.h's

GEN      := $(BUILD)/gen
CFLAGS   ?= -O2 -g
CFLAGS   += -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -fno-omit-frame-pointer \
	    -Isrc -Ibpf/include -I$(GEN) $(PKG_CFLAGS)
ifneq ($(SAN),)
CFLAGS   += -fsanitize=address,undefined -fno-sanitize-recover=all
LDFLAGS  += -fsanitize=address,undefined
endif
# libFuzzer builds (make fuzz): clang, coverage for the fuzzer in every object.
ifneq ($(FUZZ),)
CFLAGS   += -fsanitize=fuzzer-no-link
endif
LDLIBS   := $(PKG_LIBS) -liberty -lpthread

# ---- generated headers: vmlinux.h, BPF skeletons, protobuf-c ----------------
BPF_SRCS   := $(wildcard bpf/*.bpf.c)
BPF_OBJS   := $(BPF_SRCS:bpf/%.bpf.c=$(BUILD)/bpf/%.bpf.o)
SKELS      := $(BPF_SRCS:bpf/%.bpf.c=$(GEN)/%.skel.h)
PROTOS     := $(wildcard proto/*.proto)
PB_SRCS    := $(PROTOS:proto/%.proto=$(GEN)/%.pb-c.c)
PB_HDRS    := $(PB_SRCS:.c=.h)
GENERATED  := $(SKELS) $(PB_HDRS)

BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_x86 -Wall -Werror -Wno-unused-function \
	      -I$(GEN) -Ibpf -Ibpf/include $(shell pkg-config --cflags libbpf 2>/dev/null)

$(GEN)/vmlinux.h:
	@mkdir -p $(@D)
	@if [ ! -r /sys/kernel/btf/vmlinux ]; then \
		echo "error: this kernel has no BTF (/sys/kernel/btf/vmlinux missing)." >&2; \
		echo "       omniprof needs a kernel built with CONFIG_DEBUG_INFO_BTF=y (Debian 12's is)." >&2; \
		exit 1; fi
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@

$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c $(GEN)/vmlinux.h $(shell find bpf -name "*.h")
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(GEN)/%.skel.h: $(BUILD)/bpf/%.bpf.o
	$(BPFTOOL) gen skeleton $< > $@.tmp && mv $@.tmp $@

$(GEN)/%.pb-c.c $(GEN)/%.pb-c.h: proto/%.proto
	@mkdir -p $(GEN)
	$(PROTOC_C) --proto_path=proto --c_out=$(GEN) $<

# ---- the library and the binary ---------------------------------------------
SRCS     := $(filter-out src/cli/main.c,$(shell find src -name '*.c' | sort))
ASMS     := $(shell find src -name '*.S' | sort)
OBJS     := $(SRCS:%.c=$(BUILD)/obj/%.o) $(ASMS:%.S=$(BUILD)/obj/%.o) \
	    $(PB_SRCS:$(GEN)/%.c=$(BUILD)/obj/gen/%.o)
LIB      := $(BUILD)/libomniprof.a
BIN      := $(BUILD)/omniprof

all: $(BIN)

$(BUILD)/obj/%.o: %.c | $(GENERATED)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/obj/gen/%.o: $(GEN)/%.c | $(GENERATED)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Wno-unused-parameter -c $< -o $@

$(BUILD)/obj/%.o: %.S $(wildcard src/export/*.html src/serve/*.html)
	@mkdir -p $(@D)
	$(CC) -c $< -o $@

$(LIB): $(OBJS)
	@rm -f $@
	ar rcs $@ $^

$(BIN): $(BUILD)/obj/src/cli/main.o $(LIB)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

# ---- tests ------------------------------------------------------------------
UNIT_SRCS  := $(wildcard tests/unit/test_*.c)
E2E_SRCS   := $(wildcard tests/e2e/test_*.c)
TEST_LIB_SRCS := $(wildcard tests/lib/*.c)
TEST_BINS  := $(UNIT_SRCS:tests/%.c=$(BUILD)/tests/%) $(E2E_SRCS:tests/%.c=$(BUILD)/tests/%)
TEST_LIB_OBJS := $(TEST_LIB_SRCS:%.c=$(BUILD)/obj/%.o)

$(BUILD)/tests/%: tests/%.c $(TEST_LIB_OBJS) $(LIB) | $(GENERATED)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Itests/lib -MMD -MP $(LDFLAGS) $< $(TEST_LIB_OBJS) $(LIB) $(LDLIBS) -lcmocka -o $@

# Workloads are the programs the end-to-end tests profile. Each states its
# own compiler and flags on its first `// build: <command> <flags>` line so the
# unwinding conditions they exercise (frame pointers or not, optimisation,
# language) are explicit. C, C++ and Rust sources are built as
# `<command> <flags> SOURCE -o OUTPUT`, Go ones as `<command> -o OUTPUT SOURCE`;
# tests/workloads/lib/*.c are shared libraries the workloads load.
WL_DIR     := tests/workloads
WL_BUILD   := $(BUILD)/workloads
WL_HDRS    := $(wildcard $(WL_DIR)/*.h)
WL_LINE     = $$(sed -n 's|^// build: ||p' $< | head -n1)
WL_SRCS    := $(wildcard $(WL_DIR)/*.c $(WL_DIR)/*.cc $(WL_DIR)/*.rs $(WL_DIR)/*.go)
WL_LIBS    := $(patsubst $(WL_DIR)/lib/%.c,$(WL_BUILD)/lib/%.so,$(wildcard $(WL_DIR)/lib/*.c))
WORKLOADS  := $(foreach s,$(WL_SRCS),$(WL_BUILD)/$(basename $(notdir $(s)))) $(WL_LIBS)

$(WL_BUILD)/%: $(WL_DIR)/%.c $(WL_HDRS)
	@mkdir -p $(@D)
	$(WL_LINE) $< -o $@

$(WL_BUILD)/%: $(WL_DIR)/%.cc $(WL_HDRS)
	@mkdir -p $(@D)
	$(WL_LINE) $< -o $@

# rustc would try make's job server, whose descriptors it does not get.
$(WL_BUILD)/%: $(WL_DIR)/%.rs
	@mkdir -p $(@D)
	MAKEFLAGS= $(WL_LINE) $< -o $@

# Go keeps its build cache under the build folder: no HOME needed.
$(WL_BUILD)/%: $(WL_DIR)/%.go
	@mkdir -p $(@D)
	GOCACHE=$(abspath $(BUILD))/gocache GOPATH=$(abspath $(BUILD))/gopath GOFLAGS= \
		$(WL_LINE) -o $@ $<

$(WL_BUILD)/lib/%.so: $(WL_DIR)/lib/%.c $(WL_HDRS)
	@mkdir -p $(@D)
	$(WL_LINE) $< -o $@

# Java workloads the replay suite runs (tests/workloads/hotspot_chain/):
# javac's classes in build/workloads/hotspot_chain/.
JAVA_WL    := $(patsubst $(WL_DIR)/%.java,$(WL_BUILD)/%.class,$(wildcard $(WL_DIR)/hotspot_chain/*.java))
$(WL_BUILD)/%.class: $(WL_DIR)/%.java
	@mkdir -p $(@D)
	javac -d $(@D) $<

# The HotSpot end-to-end test's Java workloads (tests/e2e/test_hotspot.c),
# built with the JDK it runs (17) into its classes folder: part of the
# build, not of the test's run.
JDK17      := /usr/lib/jvm/java-17-openjdk-amd64
HS_CLASSES := $(BUILD)/tests/hotspot_classes
HS_MAIN    := $(addprefix $(WL_DIR)/,hotspot_chain/HotspotChain.java hotspot_jni/HotspotJni.java \
		hotspot_unload/HotspotUnload.java hotspot_deopt/HotspotDeopt.java)
HS_PLUGINS := $(wildcard $(WL_DIR)/hotspot_unload/plugins/*.java)
HS_REDEF   := $(WL_DIR)/hotspot_redefine/HotspotRedefine.java
HS_JNI_LIB := $(WL_DIR)/hotspot_jni/hotspot_jni.c
HS_MANIF   := $(WL_DIR)/hotspot_redefine/MANIFEST.MF
$(HS_CLASSES)/.built: $(HS_MAIN) $(HS_PLUGINS) $(HS_REDEF) $(HS_JNI_LIB) $(HS_MANIF)
	rm -rf $(@D) && mkdir -p $(@D)
	$(JDK17)/bin/javac -d $(@D) $(HS_MAIN)
	$(JDK17)/bin/javac -d $(@D)/plugins $(HS_PLUGINS)
	gcc -O2 -g -shared -fPIC -I$(JDK17)/include -I$(JDK17)/include/linux $(HS_JNI_LIB) \
		-o $(@D)/libhotspot_jni.so
	$(JDK17)/bin/javac -d $(@D)/redefine $(HS_REDEF)
	$(JDK17)/bin/jar cfm $(@D)/redefine.jar $(HS_MANIF) -C $(@D)/redefine .
	touch $@

# The agent's end-to-end tests run receivers on Node.js: their npm packages,
# pinned by the lock file, are installed under the build folder.
NODE_DIR   := $(BUILD)/node
$(NODE_DIR)/node_modules/.installed: tests/e2e/otlp/package.json tests/e2e/otlp/package-lock.json
	@mkdir -p $(NODE_DIR)
	cp $^ $(NODE_DIR)/
	cd $(NODE_DIR) && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# serve's browser test (tests/serve/browser.js): puppeteer-core, pinned by its
# lock file, drives Debian's /usr/bin/chromium (no browser is downloaded).
SERVE_NODE_DIR := $(BUILD)/serve-node
$(SERVE_NODE_DIR)/node_modules/.installed: tests/serve/package.json tests/serve/package-lock.json
	@mkdir -p $(SERVE_NODE_DIR)
	cp $^ $(SERVE_NODE_DIR)/
	cd $(SERVE_NODE_DIR) && PUPPETEER_SKIP_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# The replay suite (tests/replay/): the BPF unwinders run in user space over
# process snapshots, one binary from every .c there; cases in tests/replay/cases/.
REPLAY_SRCS := $(wildcard tests/replay/*.c)
REPLAY_BIN  := $(BUILD)/tests/replay/replay
REPLAY_CASES := $(sort $(wildcard tests/replay/cases/*.case))

$(REPLAY_BIN): $(REPLAY_SRCS) $(wildcard tests/replay/*.h) $(TEST_LIB_OBJS) $(LIB) | $(GENERATED)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Itests/lib -Itests/replay $(LDFLAGS) $(REPLAY_SRCS) $(TEST_LIB_OBJS) $(LIB) \
		$(LDLIBS) -o $@

# Fuzz targets (tests/fuzz/fuzz_<name>.c, each one LLVMFuzzerTestOneInput for
# one parser of untrusted bytes). `make test` builds each with a plain main
# that replays the committed seeds and every crash kept in
# tests/fuzz/regressions/<name>/; `make fuzz` builds them with clang's
# libFuzzer and runs each for FUZZ_SECONDS.
FUZZ_SRCS    := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_NAMES   := $(FUZZ_SRCS:tests/fuzz/%.c=%)
FUZZ_REPLAYS := $(FUZZ_NAMES:%=$(BUILD)/tests/fuzz/%)
FUZZ_SECONDS ?= 10

$(BUILD)/tests/fuzz/%: tests/fuzz/%.c tests/fuzz/standalone_main.c $(LIB) | $(GENERATED)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) $< tests/fuzz/standalone_main.c $(LIB) $(LDLIBS) -o $@

$(BUILD)/libfuzzer/%: tests/fuzz/%.c $(LIB) | $(GENERATED)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -fsanitize=fuzzer $< $(LIB) $(LDLIBS) -o $@

fuzz: $(WORKLOADS)
	$(MAKE) --no-print-directory BUILD=$(BUILD)/fuzz CC=$(CLANG) SAN=1 FUZZ=1 \
		$(FUZZ_NAMES:%=$(BUILD)/fuzz/libfuzzer/%)
	tests/fuzz/run.sh $(BUILD)/fuzz $(BUILD)/workloads $(FUZZ_SECONDS) $(FUZZ_NAMES)

tests: $(BIN) $(TEST_BINS) $(REPLAY_BIN) $(FUZZ_REPLAYS) $(WORKLOADS) $(JAVA_WL) $(HS_CLASSES)/.built \
       $(NODE_DIR)/node_modules/.installed $(SERVE_NODE_DIR)/node_modules/.installed

# No BPF and no privilege needed (it traces only its own children).
test-replay: $(REPLAY_BIN) $(WORKLOADS) $(JAVA_WL)
	OMNIPROF_BUILD=$(BUILD) $(REPLAY_BIN) $(REPLAY_CASES)

# The README's test command: every test, then the unit tests again under
# AddressSanitizer + UndefinedBehaviorSanitizer, and a subset of the
# end-to-end tests against omniprof built that way (tests/run.sh says which).
test: tests
	$(MAKE) --no-print-directory BUILD=$(BUILD)/asan SAN=1 asan-tests
	OMNIPROF_BUILD=$(BUILD) tests/run.sh $(BUILD) $(BUILD)/asan

asan-tests: $(BIN) $(UNIT_SRCS:tests/%.c=$(BUILD)/tests/%) $(REPLAY_BIN) $(FUZZ_REPLAYS)

# Measurements (not part of `make test`): bench/run.py writes bench/RESULTS.md.
# Its workloads in bench/workloads/ follow the `// build:` convention above.
BENCH_WL := $(patsubst bench/workloads/%.c,$(BUILD)/bench/workloads/%,$(wildcard bench/workloads/*.c))

$(BUILD)/bench/workloads/%: bench/workloads/%.c $(WL_HDRS)
	@mkdir -p $(@D)
	$(WL_LINE) $< -o $@

$(BUILD)/bench/stack_deltas_bench: bench/stack_deltas_bench.c $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $< $(LIB) $(LDLIBS) -o $@

# CPU of loading a table read back from the disk cache (worker and sampling thread).
$(BUILD)/bench/table_load_bench: bench/table_load_bench.c $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $< $(LIB) $(LDLIBS) -o $@

# CPU of the runtimes' first look at each file a process maps (inspect_file).
$(BUILD)/bench/inspect_bench: bench/inspect_bench.c $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $< $(LIB) $(LDLIBS) -o $@

# CPU per native frame named: the scope index against libdw's walks (issue 22).
$(BUILD)/bench/naming_bench: bench/naming_bench.c $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $< $(LIB) $(LDLIBS) -o $@
bench-tools: $(BUILD)/bench/naming_bench

# omniprof serve's store: ingest rate and query times over a fleet's hour.
$(BUILD)/bench/serve_bench: bench/serve_bench.c $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $< $(LIB) $(LDLIBS) -o $@

# The verifier's processed-instruction totals per BPF program and global function.
$(BUILD)/bench/verifier_stats: bench/verifier_stats.c $(SKELS) $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $< $(LIB) $(LDLIBS) -o $@

# The frame-pointer floor beside the sampler (bpf-cost): its own BPF object and
# skeleton under the bench folder, nothing of it in the shipped binary.
$(BUILD)/bench/fp_floor.bpf.o: bench/fp_floor.bpf.c bench/fp_floor.h $(GEN)/vmlinux.h
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -Ibench -c $< -o $@

$(BUILD)/bench/gen/fp_floor.skel.h: $(BUILD)/bench/fp_floor.bpf.o
	@mkdir -p $(@D)
	$(BPFTOOL) gen skeleton $< > $@.tmp && mv $@.tmp $@

$(BUILD)/bench/fp_floor: bench/fp_floor.c bench/fp_floor.h $(BUILD)/bench/gen/fp_floor.skel.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Ibench -I$(BUILD)/bench/gen $< $(shell pkg-config --libs libbpf) -o $@

bench-tools: $(BIN) $(WORKLOADS) $(BENCH_WL) $(BUILD)/bench/fp_floor $(BUILD)/bench/stack_deltas_bench $(BUILD)/bench/table_load_bench \
	     $(BUILD)/bench/inspect_bench $(BUILD)/bench/verifier_stats $(BUILD)/bench/serve_bench

bench: bench-tools
	scripts/install-deps.sh --bench
	python3 bench/run.py --build $(BUILD) --out bench/RESULTS.md

# `make install PREFIX=/usr DESTDIR=/tmp/stage`: the binary, its man page, bash
# completion, the agent's systemd unit and (when none is there yet) its config.
PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
MANDIR     ?= $(PREFIX)/share/man
SYSCONFDIR ?= $(if $(filter /usr,$(PREFIX)),/etc,$(PREFIX)/etc)
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
UNITDIR    ?= $(PREFIX)/lib/systemd/system

install: $(BIN)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(BASHCOMPDIR) \
		$(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSCONFDIR)/omniprof
	install -m 0755 $(BIN) $(DESTDIR)$(BINDIR)/omniprof
	install -m 0644 packaging/omniprof.1 $(DESTDIR)$(MANDIR)/man1/omniprof.1
	install -m 0644 packaging/bash-completion/omniprof $(DESTDIR)$(BASHCOMPDIR)/omniprof
	sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
		packaging/systemd/omniprof-agent.service.in > $(BUILD)/omniprof-agent.service
	install -m 0644 $(BUILD)/omniprof-agent.service $(DESTDIR)$(UNITDIR)/omniprof-agent.service
	[ -e $(DESTDIR)$(SYSCONFDIR)/omniprof/agent.conf ] || \
		install -m 0644 packaging/agent.conf $(DESTDIR)$(SYSCONFDIR)/omniprof/agent.conf

format:
	clang-format -i $$(find src bpf tests -name '*.[ch]' ! -path 'tests/workloads/*')

clean:
	rm -rf $(BUILD)

.PHONY: all tests test test-replay fuzz asan-tests bench bench-tools install format clean
.SECONDARY:
.DELETE_ON_ERROR:

-include $(shell find $(BUILD)/obj $(BUILD)/tests -name '*.d' 2>/dev/null)
