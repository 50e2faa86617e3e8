# SPDX-License-Identifier: BSD-2-Clause
# pcprof: one non-recursive Makefile.
#   make            build/libpc.so
#   make check      unit tests (Check) and end-to-end tests under LD_PRELOAD
#   make check-release  the release's tests: make dist's tarball and the .deb
#   make demo       profile a bundled program and print gprof's flat profile
#   make install    PREFIX=/usr/local DESTDIR= (pcprof, libpc.so, man pages)
#   make bench      overhead, accuracy, size and PC_SCOPE=all figures
#   make dist       build/pcprof-VERSION.tar.gz, which builds and checks alone
# E2E_JOBS=N runs N cores' worth of end-to-end tests at once (default: one
# per core); E2E_ARGS adds run.py's arguments ("-k NAME -k NAME2": those only).
# DEVELOPER=1 turns warnings into errors; SANITIZE=address,undefined builds
# the gmon/ and tools/ code of the unit tests with sanitizers; V=1 shows
# command lines. Local settings go in config.mak.

-include config.mak

# the one place the version is said: pcprof --version, libpc.so's pc_version,
# its PC_VERBOSE line and manifests, make dist's name (debian/changelog and
# NEWS.md repeat it; tests/e2e/test_versions.py checks they agree)
VERSION	:= $(shell cat VERSION)

PREFIX	?= /usr/local
BINDIR	?= $(PREFIX)/bin
LIBDIR	?= $(PREFIX)/lib
MANDIR	?= $(PREFIX)/share/man
INCLUDEDIR ?= $(PREFIX)/include
DESTDIR	?=
CC	?= cc
CXX	?= c++
PKG_CONFIG ?= pkg-config
PYTHON	?= python3
SHELL	:= /bin/bash
B	:= build

BASE_CFLAGS := -std=gnu11 -O2 -g -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64
# every object's headers, as the compiler saw them (-MMD), read back below
DEP_FLAGS := -MMD -MP
ifeq ($(DEVELOPER),1)
BASE_CFLAGS += -Wall -Wextra -Werror -Wstrict-prototypes -Wmissing-prototypes \
	-Wvla -Wwrite-strings -Wshadow -Wno-unused-parameter
else
BASE_CFLAGS += -Wall
endif
ifneq ($(SANITIZE),)
SAN_FLAGS := -fsanitize=$(SANITIZE) -fno-omit-frame-pointer
endif

ifeq ($(V),1)
Q :=
say :=
else
Q := @
say = @printf '  %-7s %s\n' $(1) $(2);
endif

# ---------------------------------------------------------------- libpc.so
PRELOAD_SRC := preload/start.c preload/sample.c preload/threads.c \
	preload/timerlimits.c preload/sigview.c preload/sigcalls.c preload/altstack.c \
	preload/dump.c preload/lifecycle.c preload/unwind.c \
	preload/unwind_setup.c preload/arcs.c preload/stacks.c \
	preload/names.c preload/signals.c preload/objects.c preload/objfind.c \
	preload/objwrite.c preload/msg.c preload/out.c preload/summary.c \
	preload/timer.c preload/timercost.c preload/handler.c preload/settings.c \
	preload/snapshot.c preload/live.c preload/livegrow.c preload/livemap.c preload/livememcg.c preload/livegrower.c preload/recover.c preload/finish.c \
	preload/taskclock.c preload/next.c preload/pages.c preload/mappings.c \
	preload/wall.c preload/wall_acct.c preload/wall_events.c preload/wall_io.c preload/wall_unwind.c preload/wall_stackreuse.c preload/wall_walks.c preload/wall_mask.c preload/namespaces.c \
	preload/sandbox.c preload/timeline.c preload/markers.c \
	preload/own.c preload/vfork.c \
	preload/alloc.c preload/alloc_table.c preload/alloc_walk.c \
	gmon/write.c
# the live file's name and head, and whether its process still runs:
# libpc's pc_recover and pcprof ask
PRELOAD_SRC += gmon/live.c
# the wall sampler's tables, mapped as the threads need them
PRELOAD_SRC += preload/wall_mem.c
# the wall sampler's listing of the threads
PRELOAD_SRC += preload/wall_list.c
# the wall sampler's charge of the calls a thread times itself
PRELOAD_SRC += preload/wall_iotime.c
# the wall sampler's parsing of a thread's /proc lines
PRELOAD_SRC += preload/wall_parse.c
# the wall sampler's looks of a round, and its threads' starts and ends
PRELOAD_SRC += preload/wall_round.c
PRELOAD_SRC += preload/wall_cpuclock.c
# the wall sampler's reads of a thread's /proc files
PRELOAD_SRC += preload/wall_proc.c
# the waits with a mask of their own, for the sampling handler
PRELOAD_SRC += preload/waits.c
# small files read whole, and their numbers, without stdio
PRELOAD_SRC += preload/procread.c
PRELOAD_OBJ := $(PRELOAD_SRC:%.c=$(B)/pic/%.o)
UNWIND_CFLAGS = $(shell $(PKG_CONFIG) --cflags libunwind 2>/dev/null)
PRELOAD_CFLAGS = $(BASE_CFLAGS) -fPIC -fvisibility=hidden -pthread \
	$(UNWIND_CFLAGS) -I$(B) $(CPPFLAGS) $(CFLAGS)

all: $(B)/libpc.so

$(PRELOAD_OBJ): | deps-build
$(B)/pic/%.o: %.c
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(PRELOAD_CFLAGS) $(DEP_FLAGS) -c -o $@ $<

$(B)/libpc.so: $(PRELOAD_OBJ) preload/libpc.map
	$(call say,LD,$@)$(CC) -shared -pthread -o $@ $(PRELOAD_OBJ) \
		-Wl,--version-script=preload/libpc.map -Wl,--no-undefined \
		-Wl,-z,now -Wl,-z,relro $(LDFLAGS) -ldl

# the ITT collector (preload/itt.c): a library of its own, which programs
# instrumented with Intel ITT load by INTEL_LIBITTNOTIFY64; it reaches
# libpc through the marker API's weak references only
all: $(B)/libpc-itt.so
$(B)/libpc-itt.so: $(B)/pic/preload/itt.o
	$(call say,LD,$@)$(CC) -shared -pthread -o $@ $< -Wl,--no-undefined \
		-Wl,-z,now -Wl,-z,relro $(LDFLAGS)

# the allocation hooks (preload/alloc_hooks.c): a companion library that
# pcprof run --alloc preloads beside libpc.so, so that a program profiled
# without allocations has no malloc hooks; it reaches libpc through a
# weak reference only
all: $(B)/libpc-alloc.so
ALLOC_HOOKS_OBJ := $(B)/pic/preload/alloc_hooks.o $(B)/pic/preload/alloc_draw.o
$(B)/libpc-alloc.so: $(ALLOC_HOOKS_OBJ) preload/libpc-alloc.map
	$(call say,LD,$@)$(CC) -shared -pthread -o $@ $(ALLOC_HOOKS_OBJ) \
		-Wl,--version-script=preload/libpc-alloc.map -Wl,--no-undefined \
		-Wl,-z,now -Wl,-z,relro $(LDFLAGS) -ldl

# ---------------------------------------------------------------- pcprof
# tools/ follows the data (docs/ARCHITECTURE.md): inputs/, symbols/, model/,
# writers/, commands/; every C file of each is pcprof's
TOOLS_DIRS := base inputs symbols model writers commands
TOOLS_SRC := $(sort $(foreach d,$(TOOLS_DIRS),$(wildcard tools/$(d)/*.c))) \
	gmon/read.c gmon/write.c gmon/objects.c preload/taskclock.c
TOOLS_SRC += gmon/live.c
TOOLS_OBJ := $(TOOLS_SRC:%.c=$(B)/tool/%.o) $(B)/tool/gen/profile.pb-c.o
# libelf reads symbols; libdw (elfutils too) reads unwind tables for the
# function extents of stripped code; libdebuginfod fetches debug files
ELF_CFLAGS = $(shell $(PKG_CONFIG) --cflags libelf libdw libdebuginfod 2>/dev/null)
# (libdebuginfod's header only: symtab_debug.c loads the library when it
# first fetches, so that its libcurl is not loaded by every command)
ELF_LIBS = $(shell $(PKG_CONFIG) --libs libelf libdw 2>/dev/null || \
	echo -ldw -lelf) -ldl
# pprof's format: the C code for tools/writers/profile.proto is generated with
# protoc-c and runs on libprotobuf-c; zlib gzips it, as pprof files are
PROTO_CFLAGS = $(shell $(PKG_CONFIG) --cflags libprotobuf-c zlib 2>/dev/null)
PROTO_LIBS = $(shell $(PKG_CONFIG) --libs libprotobuf-c zlib 2>/dev/null || \
	echo -lprotobuf-c -lz)
TOOLS_CFLAGS = $(BASE_CFLAGS) $(SAN_FLAGS) $(ELF_CFLAGS) $(PROTO_CFLAGS) -Itools -I$(B) \
	-I$(B)/gen $(CPPFLAGS) $(CFLAGS)

all: $(B)/pcprof

$(TOOLS_OBJ): | deps-build
deps-build:
	@sh scripts/deps.sh build

$(B)/tool/%.o: %.c
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(TOOLS_CFLAGS) $(DEP_FLAGS) -c -o $@ $<

$(B)/gen/profile.pb-c.c: tools/writers/profile.proto | deps-build
	@mkdir -p $(dir $@)
	$(call say,PROTOC,$@)protoc-c --proto_path=tools/writers --c_out=$(B)/gen \
		tools/writers/profile.proto
$(B)/gen/profile.pb-c.h: $(B)/gen/profile.pb-c.c
# generated code: built without -Werror, whose warnings are not ours
$(B)/tool/gen/profile.pb-c.o: $(B)/gen/profile.pb-c.c
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) -std=gnu11 -O2 -g $(SAN_FLAGS) $(PROTO_CFLAGS) -I$(B)/gen \
		$(CFLAGS) -c -o $@ $<
$(B)/tool/tools/writers/export_pprof.o: $(B)/gen/profile.pb-c.h
# the flame graph's zoom script: tools/writers/flame.js less its head comment
# (line 1 to the first " */"), each line a C string, with sed alone
$(B)/gen/flame_js.h: tools/writers/flame.js
	@mkdir -p $(dir $@)
	$(call say,GEN,$@){ echo '/* made from tools/writers/flame.js by the Makefile */'; \
		echo 'static const char flame_js[] ='; \
		sed -e '1,/^ \*\/$$/d' -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' \
			-e 's/$$/\\n"/' tools/writers/flame.js; echo ';'; } > $@
$(B)/tool/tools/writers/flame.o: $(B)/gen/flame_js.h
# the x86_64 system calls' names for the waits of wall-clock profiles,
# from the kernel's header (#define __NR_read 0), by number, with sed alone
SYSCALL_HDR ?= $(firstword $(wildcard /usr/include/x86_64-linux-gnu/asm/unistd_64.h \
	/usr/include/asm/unistd_64.h))
$(B)/gen/syscalls.h: $(SYSCALL_HDR)
	@mkdir -p $(dir $@)
	@test -n "$(SYSCALL_HDR)" || { echo 'no asm/unistd_64.h: apt-get install linux-libc-dev' >&2; exit 1; }
	$(call say,GEN,$@){ echo '/* made from $(SYSCALL_HDR) by the Makefile */'; \
		echo 'static const char *const syscall_names[] = {'; \
		sed -n 's/^#define __NR_\([a-z0-9_]*\)[ \t]*\([0-9][0-9]*\)$$/\t[\2] = "\1",/p' \
			$(SYSCALL_HDR); echo '};'; } > $@
$(B)/tool/tools/symbols/waits.o: $(B)/gen/syscalls.h

# where `pcprof run` looks for an installed libpc.so, and the version;
# rewritten only when LIBDIR or VERSION changes, so that `make install
# PREFIX=...` rebuilds what it must
$(B)/config.h: FORCE
	@mkdir -p $(B)
	@{ echo '#define PC_LIBDIR "$(LIBDIR)"'; echo '#define PC_VERSION "$(VERSION)"'; } > $@.new
	@cmp -s $@.new $@ && rm -f $@.new || mv $@.new $@
$(B)/tool/tools/commands/run.o $(B)/tool/tools/commands/compare.o \
	$(B)/tool/tools/inputs/recover.o $(B)/tool/tools/commands/main.o \
	$(B)/pic/preload/summary.o $(B)/pic/preload/objwrite.o: $(B)/config.h
FORCE:

$(B)/pcprof: $(TOOLS_OBJ)
	$(call say,LD,$@)$(CC) $(TOOLS_CFLAGS) -o $@ $(TOOLS_OBJ) $(ELF_LIBS) $(PROTO_LIBS) \
		-ldl -lm $(LDFLAGS)

# ---------------------------------------------------------------- tests
HOST_CFLAGS := $(BASE_CFLAGS) $(SAN_FLAGS) $(CPPFLAGS) $(CFLAGS)
CHECK_CFLAGS = $(shell $(PKG_CONFIG) --cflags check 2>/dev/null)
CHECK_LIBS = $(shell $(PKG_CONFIG) --libs check 2>/dev/null)

# the suites, linked with every tools/ and gmon/ object of pcprof but its
# main(), built as pcprof's are (SANITIZE included), and libpc's settings
# reader, which touches no libpc state
UNIT_SRC := tests/unit.c tests/check_gmon.c tests/check_profil.c tests/check_stats.c \
	tests/check_flat.c tests/check_symtab.c tests/check_callgraph.c tests/check_flame.c \
	tests/check_settings.c tests/check_label.c tests/check_diff_model.c \
	tests/check_diff_compare.c tests/check_runfiles.c tests/check_launch.c \
	tests/check_jitdump.c tests/check_runexe.c tests/check_waits.c preload/settings.c \
	tests/check_wallstack.c \
	tests/check_history.c tests/check_sequential.c
UNIT_SRC += tests/check_formats.c
UNIT_SRC += tests/check_operands.c
UNIT_SRC += tests/check_fixture.c tests/check_writers.c
UNIT_SRC += tests/check_pprof.c tests/check_options.c tests/check_outputs.c \
	tests/check_diff_out.c
# the commands' own options, read through each command's entry; merge
UNIT_SRC += tests/check_commands.c
# gprof's view of a wall-clock profile (model/wallgmon.c)
UNIT_SRC += tests/check_wallgmon.c
# files written whole or not at all (base/outfile.c)
UNIT_SRC += tests/check_outfile.c
# pcprof's one-line messages, and memory there or its end (base/msg.c)
UNIT_SRC += tests/check_basemsg.c
UNIT_SRC += tests/check_dwcache.c
# hostile names in every export format, against golden files
UNIT_SRC += tests/check_hostile.c
# check_pprof.c decodes pprof's protobuf with the generated code
$(B)/host/tests/check_pprof.o: CHECK_CFLAGS += -I$(B)/gen $(PROTO_CFLAGS)
$(B)/host/tests/check_pprof.o: $(B)/gen/profile.pb-c.h
UNIT_OBJ := $(UNIT_SRC:%.c=$(B)/host/%.o) $(filter-out $(B)/tool/tools/commands/main.o,$(TOOLS_OBJ))

$(B)/host/%.o: %.c
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(HOST_CFLAGS) $(CHECK_CFLAGS) -Itools $(DEP_FLAGS) -c -o $@ $<

$(B)/tests/unit: $(UNIT_OBJ)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) $(HOST_CFLAGS) -o $@ $(UNIT_OBJ) $(CHECK_LIBS) $(ELF_LIBS) \
		$(PROTO_LIBS) -ldl -lm $(LDFLAGS)

# libpc's lock-free tables under threads: arcs.c, stacks.c and objfind.c
# alone, with tests/unit_preload.c standing in for start-up and live.c
# (libpc's state, its tables' memory) and gmon/ to write and read them back
PRELOAD_UNIT_SRC := tests/unit_preload.c tests/check_arcs.c tests/check_stacks.c \
	tests/check_objfind.c preload/arcs.c preload/stacks.c preload/objfind.c preload/pages.c \
	preload/livegrow.c preload/livemap.c preload/livememcg.c gmon/write.c gmon/read.c
# the wall sampler's memory, without malloc
PRELOAD_UNIT_SRC += tests/check_wallmem.c preload/wall_mem.c
# the walks the wall sampler keeps for reuse
PRELOAD_UNIT_SRC += tests/check_wallreuse.c preload/wall_stackreuse.c
# the wall sampler's parsing of a thread's /proc lines
PRELOAD_UNIT_SRC += tests/check_wallparse.c preload/wall_parse.c
# the timeline's ring
PRELOAD_UNIT_SRC += preload/timeline.c tests/check_timeline.c
# small files read whole (livememcg.c reads its numbers there)
PRELOAD_UNIT_SRC += preload/procread.c tests/check_procread.c
# which file each process writes; one-line messages; files written
# through a temporary, and the text's counters as histogram records
PRELOAD_UNIT_SRC += tests/check_names.c preload/names.c
PRELOAD_UNIT_SRC += tests/check_msg.c preload/msg.c
PRELOAD_UNIT_SRC += tests/check_out.c preload/out.c
# libpc's timers' share of the program's limits
PRELOAD_UNIT_SRC += tests/check_timerlimits.c preload/timerlimits.c
# the program's view of libpc's signals' mask
PRELOAD_UNIT_SRC += tests/check_sigview.c preload/sigview.c
# the marker API, into the timeline's ring
PRELOAD_UNIT_SRC += tests/check_markers.c preload/markers.c tests/unit_marks.c
# PC_VERBOSE's line and a failed write's (PC_VERSION from config.h)
PRELOAD_UNIT_SRC += tests/check_summary.c preload/summary.c
$(B)/host/preload/summary.o $(B)/host/tests/check_summary.o: \
	CHECK_CFLAGS += -I$(B)
$(B)/host/preload/summary.o $(B)/host/tests/check_summary.o: $(B)/config.h
# what libpc keeps of a vfork child's signal calls
PRELOAD_UNIT_SRC += tests/check_vfork.c preload/vfork.c
# libpc's alternate stack, and sigaltstack interposed (next.c: the real
# one)
PRELOAD_UNIT_SRC += tests/check_altstack.c preload/altstack.c preload/next.c
# code run from a second mapping of a file, and mlockall: libpc's mmap,
# munmap, mremap and mlockall, which this program's own calls go through
PRELOAD_UNIT_SRC += tests/check_mappings.c preload/mappings.c
# the wall sampler's signal mask while it walks
PRELOAD_UNIT_SRC += tests/check_wallmask.c preload/wall_mask.c
# the wall sampler's accounting of a thread's time, from made-up counters
PRELOAD_UNIT_SRC += tests/check_wallacct.c preload/wall_acct.c \
	preload/wall_iotime.c preload/wall_proc.c preload/wall_cpuclock.c
# the wall sampler's list of threads, over this process's own
PRELOAD_UNIT_SRC += tests/check_walllist.c preload/wall_list.c
# the ITT collector (libpc-itt.so), into the marker API
PRELOAD_UNIT_SRC += tests/check_itt.c preload/itt.c
# allocation profiling's countdowns and tables (not the hooks, which
# would interpose this program's malloc)
PRELOAD_UNIT_SRC += tests/check_alloc.c preload/alloc_table.c \
	preload/alloc_draw.c
PRELOAD_UNIT_OBJ := $(PRELOAD_UNIT_SRC:%.c=$(B)/host/%.o)

$(B)/tests/unit-preload: $(PRELOAD_UNIT_OBJ)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) $(HOST_CFLAGS) -pthread -o $@ $(PRELOAD_UNIT_OBJ) \
		$(CHECK_LIBS) -ldl -lm $(LDFLAGS)

# Programs the end-to-end tests run, each in the variants they need.
P := $(B)/tests/progs
PROG_CFLAGS := -O2 -g -pthread -Wall
PROGS := $(P)/three-pie $(P)/three-nopie $(P)/three-O0 $(P)/threads \
	$(P)/behave $(P)/oldsym $(P)/forker $(P)/syscalls $(P)/manythreads \
	$(P)/demo $(P)/pieces $(P)/libcall $(P)/cxx $(P)/three-static \
	$(P)/callers $(P)/callers-fp $(P)/stress $(P)/plugin.so $(P)/recurse \
	$(P)/endings $(P)/execer $(P)/spawner $(P)/coexist $(P)/pgbuilt \
	$(P)/early.so \
	$(P)/regress-base $(P)/regress-again $(P)/regress-slow $(P)/regress-fast \
	$(P)/libhot.so $(P)/slowlib/libhot.so $(P)/uselib $(P)/plugspin.so \
	$(P)/plugrun $(P)/jit $(P)/forkloop $(P)/periodic $(P)/tails \
	$(P)/three-percall $(P)/loops $(P)/loops-noinline $(P)/namedthreads \
	$(P)/hostile $(P)/hostile-asan $(P)/burn $(P)/asanexit $(P)/oddnames \
	$(P)/unwinder $(P)/copies-pie $(P)/copies-nopie $(P)/waits $(P)/blockers $(P)/sleepers $(P)/wallhost \
	$(P)/wallgate $(P)/wallgate-again $(P)/wallgate-slow
PROGS += $(P)/reuse35
PROGS += $(P)/sigmove
PROGS += $(P)/mem34_lock
PROGS += $(P)/fsync_cancel
PROGS += $(P)/writers_names $(P)/writers_sigs
PROGS += $(P)/sandbox
PROGS += $(P)/readers_nodump
PROGS += $(P)/lifecycle2
PROGS += $(P)/footprint
PROGS += $(P)/footprint_one
PROGS += $(P)/wallacct
PROGS += $(P)/wallstack $(P)/wallstack-fp
PROGS += $(P)/wallattr $(P)/wallattr-fp
PROGS += $(P)/wall35pool
PROGS += $(P)/wall35c
PROGS += $(P)/history-slow3
PROGS += $(P)/wallmem_lock $(P)/wallmem_count.so
PROGS += $(P)/users37 $(P)/users37_omp
PROGS += $(P)/flaky_waits
PROGS += $(P)/timeline38
PROGS += $(P)/markers38_itt $(P)/markers38_tbb
PROGS += $(P)/gate36_napper $(P)/gate36_napper-slow
PROGS += $(P)/alloc39 $(P)/alloc39stress $(P)/alloc39pp
PROGS += $(P)/alloc39gate $(P)/alloc39gate-more
PROGS += $(P)/alloc39walk $(P)/alloc39fork
PROGS += $(P)/alloc39boot.so

# test_host.py's ASan case: the runtime goes first in LD_PRELOAD, libpc after
# links libunwind, whose _Unwind_Backtrace comes first in its global scope
$(P)/unwinder: tests/progs/unwinder.c tests/progs/truth.h
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -o $@ $< -lunwind
$(P)/hostile-asan: tests/progs/hostile.c tests/progs/truth.h
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -fsanitize=address -fno-omit-frame-pointer -o $@ $<
# links the ASan runtime, as gcc builds -fsanitize=address programs
$(P)/asanexit: tests/progs/asanexit.c tests/progs/truth.h
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -fsanitize=address -o $@ $<
$(P)/loops-noinline: tests/progs/loops.c tests/progs/truth.h
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -DNO_INLINE=1 -o $@ $<
# test_callgraph.py's 3,000 functions, made and built once, not per run
PROGS += $(P)/chains37
$(B)/gen/chains37.c: tests/progs/chains37.py
	@mkdir -p $(dir $@)
	$(call say,GEN,$@)$(PYTHON) $< > $@.tmp && mv $@.tmp $@
$(P)/chains37: $(B)/gen/chains37.c tests/progs/truth.h
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) -O1 -Itests/progs -o $@ $<
# shipped.py's C++ program of exceptions, built once, not per run
PROGS += $(P)/exc37
$(P)/exc37: tests/progs/exc37.cc
	@mkdir -p $(dir $@)
	$(call say,CXX,$@)$(CXX) -O2 -g -o $@ $<
# test_host.py's Go program with cgo, built once where go is installed
GO ?= go
ifneq ($(shell command -v $(GO) 2>/dev/null),)
PROGS += $(P)/gocgo
endif
$(P)/gocgo: tests/progs/gocgo/main.go
	@mkdir -p $(dir $@)
	$(call say,GO,$@)GOCACHE=$(abspath $(B))/go/cache \
		GOPATH=$(abspath $(B))/go/path GOPROXY=off GOFLAGS= \
		CGO_ENABLED=1 GO111MODULE=on $(GO) build -o $@ $<
$(P)/three-pie: tests/progs/three.c tests/progs/truth.h
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -fPIE -pie -o $@ $<
$(P)/three-nopie: tests/progs/three.c tests/progs/truth.h
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -fno-pie -no-pie -o $@ $<
# copies: code run from a second mapping of its file, both kinds of program
$(P)/copies-pie: tests/progs/copies.c tests/progs/truth.h
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -fPIE -pie -o $@ $<
$(P)/copies-nopie: tests/progs/copies.c tests/progs/truth.h
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -fno-pie -no-pie -o $@ $<
$(P)/periodic: tests/progs/three.c tests/progs/truth.h
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -DPERIODIC=1 -o $@ $<
$(P)/three-percall: tests/progs/three.c tests/progs/truth.h
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -DTRUTH_BLOCK=1 -o $@ $<
$(P)/three-O0: tests/progs/three.c tests/progs/truth.h
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -O0 -fPIE -pie -o $@ $<
$(P)/three-static: tests/progs/three.c tests/progs/truth.h
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -static -o $@ $<
$(P)/libcall: tests/progs/libcall.c
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -fno-builtin -o $@ $<
$(P)/cxx: tests/progs/cxx.cc tests/progs/truth.h
	@mkdir -p $(dir $@)
	$(call say,CXX,$@)$(CXX) -O2 -g -Wall -o $@ $<
$(P)/alloc39pp: tests/progs/alloc39pp.cc
	@mkdir -p $(dir $@)
	$(call say,CXX,$@)$(CXX) -O2 -g -Wall -o $@ $<
# the gate on allocations' new build (test_alloc39.py): grow_site 1 % more
$(P)/alloc39gate-more: tests/progs/alloc39gate.c
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -DMORE=1 -o $@ $<
$(P)/callers-fp: tests/progs/callers.c tests/progs/truth.h
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -fno-omit-frame-pointer -o $@ $<
$(P)/pgbuilt: tests/progs/three.c tests/progs/truth.h
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -pg -o $@ $<
$(P)/regress-base: tests/progs/regress.c tests/progs/truth.h
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -o $@ $<
# the same source built twice, as a CI job builds a change that changes nothing
$(P)/regress-again: tests/progs/regress.c tests/progs/truth.h
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -o $@ $<
$(P)/regress-slow: tests/progs/regress.c tests/progs/truth.h
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -DSLOW=1 -o $@ $<
# pcprof history's slower commit (test_history.py): stage_transform 3 % slower
$(P)/history-slow3: tests/progs/regress.c tests/progs/truth.h
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -DSLOW=1 -DSLOW_PCT=3 -o $@ $<
$(P)/regress-fast: tests/progs/regress.c tests/progs/truth.h
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -DFAST=1 -o $@ $<
# the wall gate's builds (test_wall.py): the same twice, and one whose
# sleeper() sleeps 2 ms longer a round
$(P)/wallgate-again: tests/progs/wallgate.c tests/progs/truth.h
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -o $@ $<
$(P)/wallgate-slow: tests/progs/wallgate.c tests/progs/truth.h
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -DEXTRA_MS=2 -o $@ $<
# test_gate36.py's napper, its nap twice as long
$(P)/gate36_napper-slow: tests/progs/gate36_napper.c tests/progs/truth.h
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -DNAP_FACTOR=2 -o $@ $<
# test_wallstack.py's known waits, built with frame pointers too
$(P)/wallstack-fp: tests/progs/wallstack.c tests/progs/truth.h
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -fno-omit-frame-pointer -o $@ $<
# bench/wallattr.py's known waits in threads, for perf's frame-pointer view
$(P)/wallattr-fp: tests/progs/wallattr.c
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -fno-omit-frame-pointer -o $@ $<
# bench/wall.py's program, which test_offcpu.py runs too
$(P)/sleepers: bench/sleepers.c
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -o $@ $<
$(P)/early.so: tests/progs/early.c
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -shared -fPIC -o $@ $<
$(P)/libhot.so: tests/progs/libhot.c tests/progs/truth.h
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -shared -fPIC -Wl,-soname,libhot.so -o $@ $<
$(P)/slowlib/libhot.so: tests/progs/libhot.c tests/progs/truth.h
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -DHOT_UNITS=7 -shared -fPIC -Wl,-soname,libhot.so -o $@ $<
$(P)/uselib: tests/progs/uselib.c tests/progs/truth.h $(P)/libhot.so
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -o $@ $< -L$(P) -lhot -Wl,-rpath,'$$ORIGIN'
$(P)/plugspin.so: tests/progs/plugspin.c tests/progs/truth.h
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -shared -fPIC -o $@ $<
$(P)/plugrun: tests/progs/plugrun.c tests/progs/truth.h
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -o $@ $< -ldl
$(P)/wallmem_count.so: tests/progs/wallmem_count.c
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -shared -fPIC -o $@ $<
$(P)/alloc39boot.so: tests/progs/alloc39boot.c
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -shared -fPIC -o $@ $< -ldl
$(P)/plugin.so: tests/progs/plugin.c
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -shared -fPIC -o $@ $<
# two OpenMP regions of one function (libgomp comes with gcc)
$(P)/users37_omp: tests/progs/users37_omp.c tests/progs/truth.h
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -fopenmp -o $@ $<
# a TBB flow graph whose bodies TBB marks as ITT tasks (libtbb-dev)
$(P)/markers38_tbb: tests/progs/markers38_tbb.cc
	@mkdir -p $(dir $@)
	$(call say,CXX,$@)$(CXX) -O2 -g -Wall -DTBB_USE_PROFILING_TOOLS=1 -o $@ $< -ltbb -pthread
$(P)/%: tests/progs/%.c tests/progs/truth.h
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -o $@ $<

# The golden files afresh from what the writers print now (read git diff
# tests/golden before committing it); the unit suite's last test fails on
# a golden file that no test checked (a stale one: git rm it).
golden: $(B)/tests/unit
	UPDATE_GOLDEN=1 $(B)/tests/unit

# The Check suites and the fuzzers' corpora run beside the end-to-end
# tests, each into its own file in build/check/, printed when the end-to-end
# tests end: they are short processes that mostly wait for a core beside a
# CPU hog (the unit suite 53 s of wall time for 9 s of CPU at a load of 8
# to 13), 25 s or more of make check's time one after the other. The
# status is the first failure's.
CHECK_SIDE := unit unit-preload fuzz
check: deps-check all $(B)/tests/unit $(B)/tests/unit-preload $(PROGS)
	@rm -rf $(B)/check; mkdir -p $(B)/check || exit 1; \
	{ $(B)/tests/unit; echo $$? > $(B)/check/unit.rc; } > $(B)/check/unit.out 2>&1 & \
	{ $(B)/tests/unit-preload; echo $$? > $(B)/check/unit-preload.rc; } \
		> $(B)/check/unit-preload.out 2>&1 & \
	{ $(MAKE) --no-print-directory fuzz-if-possible FUZZ_SECONDS=0; \
		echo $$? > $(B)/check/fuzz.rc; } > $(B)/check/fuzz.out 2>&1 & \
	echo "check: the Check suites and the fuzzers' corpora run beside the end-to-end tests"; \
	$(PYTHON) tests/e2e/run.py --build $(B) $(if $(E2E_JOBS),-j $(E2E_JOBS)) $(E2E_ARGS); \
	rc=$$?; wait; \
	for s in $(CHECK_SIDE); do \
		echo "check: $$s:"; cat $(B)/check/$$s.out; \
		r=$$(cat $(B)/check/$$s.rc 2>/dev/null || echo 1); \
		if [ "$$r" != 0 ]; then echo "check: $$s failed (exit $$r)"; [ $$rc != 0 ] || rc=$$r; fi; \
	done; exit $$rc

deps-check:
	@sh scripts/deps.sh check $(B)/npm

# The release's tests (tests/release): make dist's tarball builds and passes
# its checks alone, the Debian package builds, passes lintian, installs,
# profiles and purges clean. Some 4 minutes; .ci/run runs it after make check.
check-release: deps-check all $(PROGS)
	$(PYTHON) tests/e2e/run.py --build $(B) --tests tests/release \
		$(if $(E2E_JOBS),-j $(E2E_JOBS)) $(E2E_ARGS)

# libFuzzer targets for the parsers, where clang's fuzzer runtime is
# installed: `make check` runs each on its corpus, every input once
# (FUZZ_SECONDS=0: the crashes found before stay found); `make
# fuzz-if-possible`, which .ci/run runs after the tests, fuzzes each for
# FUZZ_SECONDS.
FUZZ_SECONDS ?= 10
FUZZ_CC ?= clang
FUZZ_FLAGS := -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE
$(B)/fuzz/fuzz_gmon: tests/fuzz/fuzz_gmon.c gmon/read.c gmon/write.c gmon/gmon.h
	@mkdir -p $(dir $@)
	$(call say,FUZZCC,$@)$(FUZZ_CC) $(FUZZ_FLAGS) -Igmon -o $@ tests/fuzz/fuzz_gmon.c gmon/read.c gmon/write.c
$(B)/fuzz/fuzz_objects: tests/fuzz/fuzz_objects.c gmon/objects.c gmon/gmon.h
	@mkdir -p $(dir $@)
	$(call say,FUZZCC,$@)$(FUZZ_CC) $(FUZZ_FLAGS) -Igmon -o $@ tests/fuzz/fuzz_objects.c gmon/objects.c
FUZZ_SYMTAB_SRC := $(wildcard tools/symbols/symtab*.c)
# (and dwlines.c, with what it calls as fuzz_lines has it: symtab_fetch_end
# frees the command's DWARF handles)
FUZZ_DWLINES_SRC := tools/symbols/dwlines.c tools/inputs/files.c tools/base/msg.c \
	tools/base/escape.c tools/base/infile.c gmon/read.c gmon/objects.c
$(B)/fuzz/fuzz_symtab: tests/fuzz/fuzz_symtab.c $(FUZZ_SYMTAB_SRC) tools/symbols/symtab.h \
		tools/symbols/symtab_int.h $(FUZZ_DWLINES_SRC) tools/symbols/dwlines.h
	@mkdir -p $(dir $@)
	$(call say,FUZZCC,$@)$(FUZZ_CC) $(FUZZ_FLAGS) $(ELF_CFLAGS) -Itools -Itools/symbols -o $@ \
		tests/fuzz/fuzz_symtab.c $(FUZZ_SYMTAB_SRC) $(FUZZ_DWLINES_SRC) $(ELF_LIBS) -ldl

# files.c reads libpc's files with gmon/'s parsers, and escapes names in
# its messages with base/msg.c and escape.c
$(B)/fuzz/fuzz_lines: tests/fuzz/fuzz_lines.c $(FUZZ_DWLINES_SRC) tools/symbols/dwlines.h \
		gmon/gmon.h
	@mkdir -p $(dir $@)
	$(call say,FUZZCC,$@)$(FUZZ_CC) $(FUZZ_FLAGS) $(ELF_CFLAGS) -Itools -Itools/symbols -o $@ \
		tests/fuzz/fuzz_lines.c $(FUZZ_DWLINES_SRC) $(ELF_LIBS) -ldl

# jitmap.c holds what jitdump.c's functions become (jit_add, jit_disjoint)
$(B)/fuzz/fuzz_jitdump: tests/fuzz/fuzz_jitdump.c tools/symbols/jitdump.c tools/symbols/jitmap.c \
		tools/symbols/jit.h tools/inputs/files.c tools/base/msg.c tools/base/escape.c tools/base/infile.c gmon/read.c gmon/objects.c
	@mkdir -p $(dir $@)
	$(call say,FUZZCC,$@)$(FUZZ_CC) $(FUZZ_FLAGS) $(ELF_CFLAGS) -Itools -o $@ \
		tests/fuzz/fuzz_jitdump.c tools/symbols/jitdump.c tools/symbols/jitmap.c \
		tools/inputs/files.c tools/base/msg.c tools/base/escape.c tools/base/infile.c gmon/read.c gmon/objects.c

# pcprof history's record parser, with the same messages' helpers
$(B)/fuzz/fuzz_history: tests/fuzz/fuzz_history.c tools/inputs/history_file.c \
		tools/model/history.h tools/inputs/files.c tools/base/msg.c tools/base/escape.c tools/base/infile.c gmon/read.c gmon/objects.c
	@mkdir -p $(dir $@)
	$(call say,FUZZCC,$@)$(FUZZ_CC) $(FUZZ_FLAGS) $(ELF_CFLAGS) -Itools -o $@ \
		tests/fuzz/fuzz_history.c tools/inputs/history_file.c tools/inputs/files.c \
		tools/base/msg.c tools/base/escape.c tools/base/infile.c gmon/read.c gmon/objects.c $(ELF_LIBS) -ldl -lm

# Each fuzzer runs FUZZ_SECONDS on its corpus, FUZZ_JOBS of them at once
# (fuzz-if-possible: 2, half the wall time of one after another).
FUZZ_JOBS ?= 2
FUZZERS := gmon symtab objects lines jitdump history
FUZZ_LEN_symtab := 65536 -rss_limit_mb=1024
FUZZ_LEN_lines := 65536 -rss_limit_mb=1024
FUZZ_LEN_gmon := 65536
FUZZ_LEN_objects := 16384
FUZZ_LEN_jitdump := 16384
FUZZ_LEN_history := 16384
FUZZ_CORPUS_gmon := gmon
FUZZ_CORPUS_symtab := elf
FUZZ_CORPUS_objects := objects
FUZZ_CORPUS_lines := lines
FUZZ_CORPUS_jitdump := jitdump
FUZZ_CORPUS_history := history
FUZZ_ENV_lines := LSAN_OPTIONS=suppressions=tests/fuzz/lsan.supp

fuzz: $(addprefix fuzz-run-,$(FUZZERS))

fuzz-corpora: $(addprefix $(B)/fuzz/fuzz_,$(FUZZERS)) $(P)/libcall $(P)/cxx $(P)/loops
	@mkdir -p $(B)/fuzz/gmon $(B)/fuzz/elf $(B)/fuzz/objects $(B)/fuzz/crash
	@cp -f tests/fuzz/corpus/* $(B)/fuzz/gmon/
	@cp -f tests/fuzz/objects/* $(B)/fuzz/objects/
	@strip -o $(B)/fuzz/elf/libcall $(P)/libcall; strip -g -o $(B)/fuzz/elf/cxx $(P)/cxx
	@cp -f tests/fuzz/elf/* $(B)/fuzz/elf/
	@mkdir -p $(B)/fuzz/lines
	@cp -f $(P)/loops $(B)/fuzz/lines/loops; cp -f $(P)/cxx $(B)/fuzz/lines/cxx
	@mkdir -p $(B)/fuzz/jitdump
	@cp -f tests/fuzz/jitdump/* $(B)/fuzz/jitdump/
	@mkdir -p $(B)/fuzz/history
	@cp -f tests/fuzz/history/* $(B)/fuzz/history/

# how long a fuzzer runs: its corpus once (0), or FUZZ_SECONDS
FUZZ_FOR = $(if $(filter 0,$(FUZZ_SECONDS)),-runs=0,-max_total_time=$(FUZZ_SECONDS))
# a fuzzer's lines are printed together when it ends, not interleaved
fuzz-run-%: fuzz-corpora
	@echo "$(strip $(FUZZ_ENV_$*) $(B)/fuzz/fuzz_$* $(FUZZ_FOR)) $(B)/fuzz/$(FUZZ_CORPUS_$*)"; \
	out=$$($(FUZZ_ENV_$*) $(B)/fuzz/fuzz_$* $(FUZZ_FOR) \
		-max_len=$(FUZZ_LEN_$*) -artifact_prefix=$(B)/fuzz/crash/ -print_final_stats=1 \
		$(B)/fuzz/$(FUZZ_CORPUS_$*) 2>&1); st=$$?; \
	printf '%s\n' "$$out" | grep -E '^(stat::number_of_executed_units|==|SUMMARY)'; \
	test $$st -eq 0

fuzz-if-possible:
	@if $(FUZZ_CC) -fsanitize=fuzzer -x c /dev/null -o /dev/null 2>/dev/null || \
	    echo 'int LLVMFuzzerTestOneInput(const char *d, long n){return 0;}' | \
	    $(FUZZ_CC) -fsanitize=fuzzer -x c - -o /dev/null 2>/dev/null; then \
		$(MAKE) --no-print-directory -j$(FUZZ_JOBS) fuzz; \
	else echo "fuzz: skipped (no clang with libFuzzer; apt-get install clang libclang-rt-14-dev)"; fi

# ---------------------------------------------------------------- demo
# Every header compiles alone, cppcheck finds nothing, and no circle of
# more than 2 files or new function over 60 lines (scripts/lint.sh).
lint: deps-lint
	@sh scripts/lint.sh $(CC) $(BASE_CFLAGS) $(UNWIND_CFLAGS) $(ELF_CFLAGS) $(CHECK_CFLAGS)
deps-lint:
	@sh scripts/deps.sh lint

demo: deps-demo all $(P)/demo
	@echo '$$ LD_PRELOAD=$(B)/libpc.so $(P)/demo'
	@cd $(B) && LD_PRELOAD=$(CURDIR)/$(B)/libpc.so PC_VERBOSE=1 $(CURDIR)/$(P)/demo
	@echo
	@echo '$$ gprof -b -p $(P)/demo $(B)/gmon.out'
	@gprof -b -p $(P)/demo $(B)/gmon.out

deps-demo:
	@sh scripts/deps.sh demo

# ---------------------------------------------------------------- bench
bench: all $(PROGS)
	$(PYTHON) bench/run.py --build $(B)

# ---------------------------------------------------------------- dist
# The release tarball, $(B)/pcprof-VERSION.tar.gz: the files git tracks
# (as they are in the working tree: commit first), or, in an unpacked
# tarball, the files its MANIFEST lists; with that MANIFEST, so that it
# makes its own tarball again. Owners, order and times are fixed (the last
# commit's time, else MANIFEST's), so the same tree makes the same bytes.
DIST := pcprof-$(VERSION)
dist:
	@mkdir -p $(B)
	$(call say,DIST,$(B)/$(DIST).tar.gz)set -e; \
	if [ -e .git ] && git ls-files --error-unmatch Makefile >/dev/null 2>&1; then \
		{ git ls-files | grep -vx MANIFEST; echo MANIFEST; } | sort > $(B)/MANIFEST; \
		when=$$(git log -1 --format=%ct); \
	elif [ -f MANIFEST ]; then \
		cp MANIFEST $(B)/MANIFEST; when=$$(stat -c %Y MANIFEST); \
	else echo "make dist: neither a git checkout nor a release tarball (no MANIFEST)" >&2; exit 2; fi; \
	rm -rf $(B)/dist && mkdir -p $(B)/dist/$(DIST); \
	grep -vx MANIFEST $(B)/MANIFEST | tar -cf - -T - | tar -xf - -C $(B)/dist/$(DIST); \
	cp $(B)/MANIFEST $(B)/dist/$(DIST)/MANIFEST; \
	tar -C $(B)/dist --sort=name --owner=0 --group=0 --numeric-owner --mtime=@$$when \
		-cf - $(DIST) | gzip -9n > $(B)/$(DIST).tar.gz; \
	rm -rf $(B)/dist

# ---------------------------------------------------------------- install
# The manual's examples name libpc.so where this install puts it (LIBDIR).
install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man7
	install -m 0755 $(B)/pcprof $(DESTDIR)$(BINDIR)/pcprof
	install -m 0755 $(B)/libpc.so $(DESTDIR)$(LIBDIR)/libpc.so
	install -m 0755 $(B)/libpc-itt.so $(DESTDIR)$(LIBDIR)/libpc-itt.so
	install -m 0755 $(B)/libpc-alloc.so $(DESTDIR)$(LIBDIR)/libpc-alloc.so
	sed 's|/usr/local/lib/libpc\.so|$(LIBDIR)/libpc.so|g' docs/pcprof.1 > $(B)/pcprof.1
	sed -e 's|/usr/local/lib/libpc\.so|$(LIBDIR)/libpc.so|g' \
		-e 's|/usr/local/lib/libpc\\-alloc\.so|$(LIBDIR)/libpc\\-alloc.so|g' \
		docs/libpc.7 > $(B)/libpc.7
	install -m 0644 $(B)/pcprof.1 $(DESTDIR)$(MANDIR)/man1/pcprof.1
	install -m 0644 $(B)/libpc.7 $(DESTDIR)$(MANDIR)/man7/libpc.7
	install -d $(DESTDIR)$(INCLUDEDIR)/pcprof
	install -m 0644 include/pcprof/marker.h $(DESTDIR)$(INCLUDEDIR)/pcprof/marker.h

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/pcprof $(DESTDIR)$(LIBDIR)/libpc.so $(DESTDIR)$(LIBDIR)/libpc-itt.so \
		$(DESTDIR)$(LIBDIR)/libpc-alloc.so \
		$(DESTDIR)$(MANDIR)/man1/pcprof.1 $(DESTDIR)$(MANDIR)/man7/libpc.7 \
		$(DESTDIR)$(INCLUDEDIR)/pcprof/marker.h

clean:
	rm -rf $(B)

-include $(shell find $(B) -name '*.d' 2>/dev/null)

.PHONY: all check golden check-release demo lint bench dist install uninstall clean deps-build deps-check deps-demo deps-lint fuzz fuzz-if-possible fuzz-corpora
.DELETE_ON_ERROR:
