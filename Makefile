# wulfbench: build, dependencies, run, tests, benchmarks, report, install.
# Knobs: override on the command line or in make.local.
#: MPI=openmpi (default) or MPI=mpich: which MPI and parallel HDF5 to build against, into build/ or build-mpich/
MPI    ?= openmpi
#: NATIVE=1: compile for this machine (-march=native) into its own folder (build-native/); docs/kernels.md
NATIVE ?= 0
#: UNSIGNED_CHAR=1: plain char unsigned, as on ARM, into build-uchar/
UNSIGNED_CHAR ?= 0
#: CFLAGS, LDFLAGS, CC: the compiler and its flags (the required ones are added to them)
CFLAGS ?= -O3 -g -fno-math-errno
LDFLAGS ?=
#: PYTHON=/usr/bin/python3: the interpreter with Debian's h5py, numpy and matplotlib
PYTHON ?= /usr/bin/python3
#: NP: ranks of make run (default: the cores, $(NP) here); MPIEXEC: the launcher
NP     ?= $(shell nproc 2>/dev/null || echo 2)
#: PREFIX=/usr/local (and DESTDIR): where make install puts things
PREFIX ?= /usr/local
#: RESULTS=results: the folder make run writes and make report reads
RESULTS ?= results
#: FUZZ_SECONDS=60: how long make fuzz runs
FUZZ_SECONDS ?= 60
#: ARCH=arm64, armhf or all (the default): which ARM roots make test-arm builds and tests
ARCH ?= all
FUZZ_CC ?= clang
SAN_MPI_TESTS ?= tests/mpi/test_fft.py tests/mpi/test_reliability.py
-include make.local

# `make` alone builds the program: the default goal is named, not left to whichever rule comes first
# (the version stamp's rule once did, and plain `make` built nothing).
.DEFAULT_GOAL := all

ifeq ($(MPI),openmpi)
CC      = mpicc
MPIEXEC ?= mpirun
OVERSUBSCRIBE = --oversubscribe
B       = build
HDF5_PKG = hdf5-openmpi
# Debian's libfftw3-mpi is built against Open MPI.
FFTW_MPI_LIBS ?= -lfftw3f_mpi -lfftw3_mpi
else ifeq ($(MPI),mpich)
CC      = mpicc.mpich
MPIEXEC ?= mpiexec.mpich
# Hydra runs more ranks than cores without being asked.
OVERSUBSCRIBE =
B       = build-mpich
HDF5_PKG = hdf5-mpich
#: FFTW_MPI_LIBS, FFTW_MPICH: the FFTW-MPI dfft links (MPICH: the one jobs/build-fftw-mpi.sh builds)
# Debian's FFTW-MPI is for Open MPI; jobs/build-fftw-mpi.sh (run by install-deps.sh mpich) builds it
# for MPICH into FFTW_MPICH. Without it dfft says it is missing, unless FFTW_MPI_LIBS names another.
FFTW_MPICH ?= /usr/local/lib/wulfbench-fftw-mpich
export WB_FFTW_MPICH = $(FFTW_MPICH)
FFTW_MPICH_FOUND = $(and $(wildcard $(FFTW_MPICH)/lib/libfftw3_mpi.so),$(wildcard $(FFTW_MPICH)/lib/libfftw3f_mpi.so))
FFTW_MPI_CFLAGS ?= $(if $(FFTW_MPICH_FOUND),-I$(FFTW_MPICH)/include)
FFTW_MPICH_RPATH = -Wl,-rpath,$(FFTW_MPICH)/lib
FFTW_MPI_LIBS ?= $(if $(FFTW_MPICH_FOUND),-L$(FFTW_MPICH)/lib $(FFTW_MPICH_RPATH) -lfftw3f_mpi -lfftw3_mpi)
else
$(error MPI=$(MPI) is not supported; use MPI=openmpi (the default) or MPI=mpich)
endif
ifeq ($(NATIVE),1)
B := $(B)-native
VARIANT_CFLAGS = -march=native
endif
# UNSIGNED_CHAR=1: plain char is unsigned, as on every ARM, in its own folder (build-uchar/), so a
# signed-char assumption fails here first; CI runs the unit suite so.
ifeq ($(UNSIGNED_CHAR),1)
B := $(B)-uchar
VARIANT_CFLAGS += -funsigned-char
endif
DEPS_MPI = $(if $(filter mpich,$(MPI)),mpich)
# The test harness picks the launcher and the build directory from this.
export WB_MPI = $(MPI)
export WB_BUILD = $(B)
# Without an FFTW-MPI to link, dfft is compiled out and reports that it is missing.
FFTW_MPI_DEF = $(if $(strip $(FFTW_MPI_LIBS)),,-DWB_NO_FFTW_MPI)

PKGS     = fftw3f fftw3 $(HDF5_PKG)
VERSION := $(shell git describe --tags --always --dirty 2>/dev/null || echo 0.1)
GIT_REV := $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null)

USER_CFLAGS := $(strip $(CFLAGS) $(VARIANT_CFLAGS))
# 64-bit file offsets and time_t in a 32-bit build too (armhf): files past 2 GB, clocks past 2038.
override CFLAGS += $(VARIANT_CFLAGS) -D_FILE_OFFSET_BITS=64 -D_TIME_BITS=64 -std=c11 -Wall -Wextra -Wno-unused-parameter -MMD -MP -Isrc $(FFTW_MPI_CFLAGS) $(PKG_CFLAGS) $(FFTW_MPI_DEF) \
    -DWB_VERSION='"$(VERSION)"' -DWB_GIT_REV='"$(GIT_REV)"' -DWB_CFLAGS='"$(strip $(USER_CFLAGS))"'
override LDLIBS += $(FFTW_MPI_LIBS) $(PKG_LIBS) -lm -lpthread

# The sources that print or record the version, the commit or the flags are rebuilt when any of
# them changes, not only when they do: otherwise a result file names a commit it was not built
# from. A stamp holds the three, rewritten only when they differ.
VERSION_STAMP := $(B)/version.stamp
VERSION_TEXT  := $(strip $(VERSION) $(GIT_REV) $(USER_CFLAGS))
# Written by a rule, not while the Makefile is read: `make compare B=two.h5` gives B another meaning.
ifneq ($(shell cat $(VERSION_STAMP) 2>/dev/null),$(VERSION_TEXT))
$(VERSION_STAMP): FORCE
endif
$(VERSION_STAMP):
	@mkdir -p $(@D) && printf '%s\n' '$(subst ','\'',$(VERSION_TEXT))' >$@
VERSION_USERS := $(patsubst src/%.c,%.o,$(shell grep -rlE 'WB_(VERSION|GIT_REV|CFLAGS)' src --include='*.c'))
$(addprefix $(B)/obj/,$(VERSION_USERS)) $(addprefix $(B)/faults/,$(VERSION_USERS)): $(VERSION_STAMP)

# Open MPI refuses to start as root unless told twice; only root needs it (MPICH's hydra does not ask).
ifeq ($(MPI)$(shell id -u),openmpi0)
export OMPI_ALLOW_RUN_AS_ROOT = 1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM = 1
endif

# GCC 12 for aarch64 (Debian 12's, Raspberry Pi OS bookworm's) stops with an internal compiler error
# when it vectorises an fmax reduction over values widened from float. src/ avoids the pattern
# (fftw/fft.c); the test and bench drivers, whose own loops need no vectors, are built without loop
# vectorisation on that compiler (docs/kernels.md).
CC_MACHINE := $(shell $(CC) -dumpmachine 2>/dev/null)
CC_MAJOR   := $(shell $(CC) -dumpversion 2>/dev/null | cut -d. -f1)
TEST_CFLAGS := $(if $(and $(findstring aarch64,$(CC_MACHINE)),$(filter 10 11 12,$(CC_MAJOR)),$(shell $(CC) --version 2>/dev/null | grep -qi clang || echo gcc)),-fno-tree-loop-vectorize)

# src/ is one folder per layer (README, module map); objects mirror it, e.g. build/obj/core/error.o.
SRC   := $(sort $(wildcard src/*/*.c src/*/*/*.c))
OBJ   := $(SRC:src/%.c=$(B)/obj/%.o)
FOBJ  := $(SRC:src/%.c=$(B)/faults/%.o)
LIB   := $(filter-out $(B)/obj/cli/main.o,$(OBJ))
UNITS := $(patsubst tests/unit/%.c,$(B)/tests/%,$(wildcard tests/unit/test_*.c))

.DELETE_ON_ERROR:
BUILD_DIRS = build build-mpich build-san build-native build-mpich-native build-uchar build-mpich-uchar

.PHONY: all units deps deps-test deps-arm deps-bench deps-fuzz run test test-unit test-mpi test-analysis test-transfer test-load \
        test-browser test-cluster validate-whatif test-arm test-slurm test-reliability test-sanitize test-install fuzz bench bench-cluster setup \
        report compare install uninstall clean help

all: $(B)/wulfbench $(B)/wulfbench.1 $(B)/wulfbench.bash  ## (what `make` alone does) build $(B)/wulfbench, its man page and completion

$(B)/wulfbench: $(OBJ)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The same program with test-only fault switches compiled in; never installed.
$(B)/wulfbench-faults: $(FOBJ)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# fft_mpi.c is compiled with or without FFTW-MPI: a stamp named after which one is rebuilt when that changes.
FFTW_MPI_STAMP = $(B)/fftw-mpi-$(if $(FFTW_MPI_DEF),no,yes).stamp
$(B)/obj/fftw/fft_mpi.o $(B)/faults/fftw/fft_mpi.o: $(FFTW_MPI_STAMP)
$(FFTW_MPI_STAMP):
	@mkdir -p $(B) && rm -f $(B)/fftw-mpi-*.stamp && touch $@

$(B)/obj/%.o: src/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c -o $@ $<

$(B)/faults/%.o: src/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -DWB_TEST_FAULTS=1 -c -o $@ $<

$(B)/tests/%: tests/unit/%.c $(LIB) | $(B)/tests
	$(CC) $(CFLAGS) $(TEST_CFLAGS) -Isrc -Itests/unit -o $@ $< $(LIB) $(LDLIBS)

# The unit test of what only the fault build does, a fake tree under WB_SYSFS_ROOT: the fault build's
# readers of the machine linked with the normal objects of the rest, three compiles more.
SYSFS_FOBJ := $(addprefix $(B)/faults/,core/sysfs.o core/sysinfo.o par/hostfacts.o)
$(B)/tests/test_sysfs: tests/unit/test_sysfs.c $(SYSFS_FOBJ) $(filter-out $(SYSFS_FOBJ:$(B)/faults/%=$(B)/obj/%),$(LIB)) | $(B)/tests
	$(CC) $(CFLAGS) $(TEST_CFLAGS) -Isrc -Itests/unit -o $@ $^ $(LDLIBS)

$(B)/tests build-san/tests build/fuzz:
	mkdir -p $@

# ASan and UBSan build in build-san/ (same sources, -O1, frame pointers kept).
SAN_FLAGS = -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
SOBJ := $(SRC:src/%.c=build-san/obj/%.o)
SUNITS := $(patsubst tests/unit/%.c,build-san/tests/%,$(wildcard tests/unit/test_*.c))

build-san/obj/%.o: src/%.c
	@mkdir -p $(@D)
	$(CC) $(filter-out -O3 -O2,$(CFLAGS)) $(SAN_FLAGS) -c -o $@ $<

build-san/wulfbench: $(SOBJ)
	$(CC) $(SAN_FLAGS) -o $@ $^ $(LDLIBS)

build-san/tests/%: tests/unit/%.c $(filter-out build-san/obj/cli/main.o,$(SOBJ)) | build-san/tests
	$(CC) $(filter-out -O3 -O2,$(CFLAGS)) $(SAN_FLAGS) -Isrc -Itests/unit -o $@ $^ $(LDLIBS)

# Open MPI's runtime leaks at exit by design, so leak checking is off (detect_leaks=0); every other
# ASan/UBSan report stops the process with exit 1 and fails the test.
SAN_ENV = ASAN_OPTIONS=detect_leaks=0:abort_on_error=0:halt_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

test-sanitize: build-san/wulfbench $(SUNITS)  ## unit tests and $(SAN_MPI_TESTS) under ASan+UBSan
	@wavs=$$(mktemp -d); bash tests/unit/make_wavs.sh "$$wavs" >/dev/null; fail=0; \
	for t in $(SUNITS); do echo "== $$t"; $(SAN_ENV) $$t "$$wavs" >"$$wavs.log" 2>&1 || fail=1; \
	  grep -E '^not ok|^skip -|ERROR: AddressSanitizer|runtime error' "$$wavs.log"; tail -1 "$$wavs.log"; done; \
	rm -rf "$$wavs" "$$wavs.log"; \
	$(SAN_ENV) WB_BIN=build-san/wulfbench $(PYTHON) -m pytest -q -p no:cacheprovider $(SAN_MPI_TESTS) || fail=1; \
	exit $$fail

# libFuzzer on the WAV decoder, from seeds made with sox at build time.
build/fuzz/fuzz_wav: tests/fuzz/fuzz_wav.c src/core/audio.c src/core/error.c | build/fuzz
	$(FUZZ_CC) -g -O1 -std=c11 -fsanitize=fuzzer,address,undefined -Isrc -o $@ $^ -lm

build/fuzz/seeds/.made: tests/fuzz/make_seeds.sh | build/fuzz
	bash tests/fuzz/make_seeds.sh build/fuzz/seeds >/dev/null && touch $@

fuzz: deps-fuzz     ## run the WAV fuzzer for FUZZ_SECONDS (default 60)
	@$(MAKE) --no-print-directory build/fuzz/fuzz_wav build/fuzz/seeds/.made
	mkdir -p build/fuzz/corpus
	build/fuzz/fuzz_wav -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -print_final_stats=1 \
	    build/fuzz/corpus build/fuzz/seeds

test-reliability: all  ## full disk on a tmpfs and a 30-kill loop per rank (root)
	bash tests/reliability/run.sh

deps:            ## install the Debian packages needed to build and run (asks sudo when not root)
	@bash jobs/install-deps.sh build $(DEPS_MPI) analysis

deps-test:       ## install what deps does, and what the tests need
	@bash jobs/install-deps.sh build $(DEPS_MPI) analysis test

deps-fuzz:       ## install clang and its fuzzer runtimes
	@bash jobs/install-deps.sh fuzz test

deps-arm:        ## install qemu-user and mmdebstrap for test-arm
	@bash jobs/install-deps.sh build analysis test arm

deps-bench:      ## install what deps does, and the reference programs of bench
	@bash jobs/install-deps.sh build $(DEPS_MPI) analysis test bench

run: deps        ## the main job: a baseline, `wulfbench suite` (paired baseline inside) on every core, a baseline again, the report
	@$(MAKE) --no-print-directory all
	@mkdir -p $(RESULTS)
	@stamp=$$(date -u +%Y%m%dT%H%M%SZ); host=$$(hostname -s); \
	suite=$(RESULTS)/suite-$$host-$$stamp.h5; before=$(RESULTS)/baseline-before-$$host-$$stamp.h5; \
	after=$(RESULTS)/baseline-after-$$host-$$stamp.h5; \
	base="fft --baseline --seconds 1,5,30 --files 1:16"; \
	set -x; \
	$(MPIEXEC) -np 1 $(B)/wulfbench $$base --label "baseline before, 1 process on $$host" -o $$before && \
	$(MPIEXEC) -np $(NP) $(OVERSUBSCRIBE) $(B)/wulfbench suite --label "suite, $(NP) ranks on $$host" -o $$suite && \
	$(MPIEXEC) -np 1 $(B)/wulfbench $$base --label "baseline after, 1 process on $$host" -o $$after && \
	$(PYTHON) -m analysis.drift $$before $$after && \
	$(PYTHON) -m analysis.report $$suite --baseline $$before --baseline $$after -o report
	@echo "report: report/index.html"

test: deps-test  ## unit, MPI integration and analysis tests; last line "N passed, N failed"
	@$(MAKE) --no-print-directory all $(B)/wulfbench-faults $(B)/tests/fake_vcio.so $(UNITS)
	@bash tests/run.sh unit mpi analysis

# The STFT of one WAV with its spectra and peaks written out, to compare builds across architectures.
$(B)/tests/wbspectra: tests/arm/wbspectra.c $(LIB) | $(B)/tests
	$(CC) $(CFLAGS) $(TEST_CFLAGS) -Isrc -o $@ $< $(LIB) $(LDLIBS)

units: $(UNITS)  ## build the C unit tests without running them

test-unit: $(UNITS)  ## the C unit tests and the source rules (part of test)
	@bash tests/run.sh unit

# The tests' stand-in for the Pi firmware's mailbox (tests/mpi/fake_vcio.c), preloaded into the fault build.
$(B)/tests/fake_vcio.so: tests/mpi/fake_vcio.c
	@mkdir -p $(dir $@)
	gcc -O2 -Wall -Wextra -shared -fPIC -o $@ $< -ldl

test-mpi: all $(B)/wulfbench-faults $(B)/tests/fake_vcio.so  ## the MPI integration tests (part of test)
	@$(if $(FFTW_MPI_DEF),echo "test-mpi: $(B)/wulfbench has no FFTW-MPI and its dfft tests are skipped; bash jobs/build-fftw-mpi.sh builds it for MPICH" >&2)
	@bash tests/run.sh mpi

test-analysis: all  ## the analysis tests (part of test)
	@bash tests/run.sh analysis

test-transfer: all $(B)/wulfbench-faults  ## the transfer tests alone
	$(PYTHON) -m pytest -q -p no:cacheprovider tests/mpi/test_transfer.py

test-load: all $(B)/wulfbench-faults  ## the load tests alone
	$(PYTHON) -m pytest -q -p no:cacheprovider tests/mpi/test_load.py

test-browser: all    ## the HTML report in headless Chromium
	bash tests/analysis/browser_check.sh

test-cluster: all $(B)/wulfbench-faults  ## the emulated cluster: links, faults, bad nodes, check, power, a partition, jobs/setup and its node steps, storage, the what-if's link, compute and nodes rows (root)
	@fail=0; for t in run check power netfault faults buys setup nodesteps storage sharefault; do echo "== tests/cluster/$$t.sh"; bash tests/cluster/$$t.sh || fail=1; done; \
	echo "== tests/cluster/whatif.sh (the link, compute and nodes sets)"; WB_WHATIF_SETS="link compute nodes" bash tests/cluster/whatif.sh || fail=1; exit $$fail

validate-whatif: all  ## analysis.whatif's predictions against emulated runs of every change (root; the disk row is not in CI: see docs/testing.md)
	bash tests/cluster/whatif.sh

test-arm: deps-arm   ## built and tested in Debian arm64 and armhf roots under qemu-user (root; ARCH=arm64, armhf or all, the default)
	@$(MAKE) --no-print-directory all $(B)/tests/wbspectra
	@bash tests/arm/run.sh $(ARCH)

test-slurm: all      ## a real one-node Slurm (slurmctld, slurmd, munge; root)
	bash tests/slurm/run.sh

bench: deps-bench    ## figures side by side with bare FFTW, NetPIPE, HPCC, IOR and fio, and Open MPI beside MPICH
	@$(MAKE) --no-print-directory all $(B)/tests/fft_ref $(B)/tests/fft_ref_native $(B)/tests/sendrecv_ref $(B)/tests/fft_pair
	@$(MAKE) --no-print-directory NATIVE=1 all
	bash tests/bench/fft_bench.sh
	bash tests/bench/transfer_bench.sh
	bash tests/bench/load_bench.sh
	bash tests/bench/power_bench.sh
	WB_BIN=$(B)/wulfbench bash tests/bench/io_bench.sh
	bash tests/bench/scale_bench.sh
	@if command -v mpicc.mpich >/dev/null; then $(MAKE) --no-print-directory MPI=mpich all; fi
	bash tests/bench/dfft_bench.sh
	bash tests/bench/heffte_bench.sh

$(B)/tests/fft_ref $(B)/tests/sendrecv_ref: $(B)/tests/%: tests/bench/%.c | $(B)/tests
	$(CC) $(CFLAGS) -o $@ $< $(LDLIBS)

# The reference as a user would build it for the machine in hand (issue 24).
$(B)/tests/fft_ref_native: tests/bench/fft_ref.c | $(B)/tests
	$(CC) $(CFLAGS) -march=native -o $@ $< $(LDLIBS)

# fft_pair: wulfbench's kernel, portable and NATIVE=1, beside the reference -O3 and -march=native,
# pass by pass in one process. The NATIVE=1 kernel's objects are merged and their names prefixed
# nat_, so both builds link into one program.
NATIVE_KOBJ := $(B)-native/obj/fftw/fft.o $(B)-native/obj/fftw/kernels.o
FORCE:
ifneq ($(NATIVE),1)
$(NATIVE_KOBJ): FORCE
	@$(MAKE) --no-print-directory NATIVE=1 $@
endif
$(B)/tests/nat_kernel.o: $(NATIVE_KOBJ) | $(B)/tests
	$(LD) -r -o $@.tmp $^
	nm -g --defined-only $@.tmp | awk 'NF == 3 { print $$3 " nat_" $$3 }' >$@.syms
	objcopy --redefine-syms=$@.syms $@.tmp $@
	rm -f $@.tmp $@.syms
$(B)/tests/fft_ref_o3.o: tests/bench/fft_ref_lib.c tests/bench/fft_ref.c | $(B)/tests
	$(CC) $(CFLAGS) -c -o $@ $<
$(B)/tests/fft_ref_nat.o: tests/bench/fft_ref_lib.c tests/bench/fft_ref.c | $(B)/tests
	$(CC) $(CFLAGS) -march=native -DREF_NATIVE -c -o $@ $<
$(B)/tests/fft_pair: tests/bench/fft_pair.c $(B)/tests/fft_ref_o3.o $(B)/tests/fft_ref_nat.o $(B)/tests/nat_kernel.o $(LIB)
	$(CC) $(CFLAGS) $(TEST_CFLAGS) -o $@ $^ $(LDLIBS)

bench-cluster: all  ## fft and pingpong figures on the emulated cluster for each link profile (root)
	bash tests/bench/cluster_bench.sh

setup: all          ## take the nodes of HOSTFILE to a checked cluster: make setup HOSTFILE=FILE [SETUP_ARGS="--no-wifi ..."]
	@test -n "$(HOSTFILE)" || { echo "make setup: give the hostfile: make setup HOSTFILE=hostfiles/mycluster" >&2; exit 2; }
	jobs/setup $(SETUP_ARGS) "$(HOSTFILE)"

report:              ## turn $(RESULTS)/*.h5 into report/index.html, figures, CSV
	$(PYTHON) -m analysis.report $(RESULTS) -o report

compare:             ## two runs side by side: make compare A=one.h5 B=two.h5 [OUT=compare]
	@test -n "$(A)" -a -n "$(B)" || { echo "make compare: give two result files: make compare A=results/one.h5 B=results/two.h5" >&2; exit 2; }
	$(PYTHON) -m analysis.compare "$(A)" "$(B)" -o "$(or $(OUT),compare)"

# Where install puts things; uninstall removes exactly these files and wulfbench's own folders.
BINDIR  = $(PREFIX)/bin
DATADIR = $(PREFIX)/share/wulfbench
DOCDIR  = $(PREFIX)/share/doc/wulfbench
MANDIR  = $(PREFIX)/share/man/man1
COMPDIR = $(PREFIX)/share/bash-completion/completions
DOCS    = README.md $(wildcard docs/*.md)

# Made by the program from its option tables, so they list what --help lists.
$(B)/wulfbench.1: $(B)/wulfbench
	$(B)/wulfbench --man > $@
$(B)/wulfbench.bash: $(B)/wulfbench
	$(B)/wulfbench --bash-completion > $@

install: all  ## program, report command, job scripts, analysis, man page, completion, docs under PREFIX
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(DATADIR) $(DESTDIR)$(DOCDIR) $(DESTDIR)$(MANDIR) $(DESTDIR)$(COMPDIR)
	install -m 755 $(B)/wulfbench $(DESTDIR)$(BINDIR)/wulfbench
	cp -r jobs hostfiles analysis $(DESTDIR)$(DATADIR)/
	find $(DESTDIR)$(DATADIR)/analysis -name __pycache__ -prune -exec rm -rf {} +
	printf '#!/bin/sh\n# The wulfbench analysis: result files to tables, figures and report/index.html.\nWB_PROG=wulfbench-report PYTHONPATH="%s$${PYTHONPATH:+:$$PYTHONPATH}" exec %s -m analysis.report "$$@"\n' \
	    '$(DATADIR)' '$(PYTHON)' > $(DESTDIR)$(BINDIR)/wulfbench-report
	chmod 755 $(DESTDIR)$(BINDIR)/wulfbench-report
	install -m 644 $(B)/wulfbench.1 $(DESTDIR)$(MANDIR)/wulfbench.1
	install -m 644 $(B)/wulfbench.bash $(DESTDIR)$(COMPDIR)/wulfbench
	install -m 644 $(DOCS) $(DESTDIR)$(DOCDIR)/

uninstall:           ## remove what install put under PREFIX (standard folders such as bin/ stay)
	rm -f $(DESTDIR)$(BINDIR)/wulfbench $(DESTDIR)$(BINDIR)/wulfbench-report
	rm -f $(DESTDIR)$(MANDIR)/wulfbench.1 $(DESTDIR)$(COMPDIR)/wulfbench
	rm -rf $(DESTDIR)$(DATADIR) $(DESTDIR)$(DOCDIR)

test-install: deps-test  ## a fresh clone built by plain make (and MPI=mpich), then install into a temporary PREFIX (and a DESTDIR), each installed command run, uninstall
	@$(MAKE) --no-print-directory all
	bash tests/install/run.sh

clean:               ## remove every build folder: $(BUILD_DIRS)
	rm -rf $(BUILD_DIRS)

help:                ## list the targets and knobs
	@awk -v B='$(B)' -v NP='$(NP)' -v RESULTS='$(RESULTS)' -v DIRS='$(BUILD_DIRS)' -v SAN='$(SAN_MPI_TESTS)' \
	  'function x(t) { gsub(/\$$\(B\)/, B, t); gsub(/\$$\(NP\)/, NP, t); gsub(/\$$\(RESULTS\)/, RESULTS, t); \
	                   gsub(/\$$\(BUILD_DIRS\)/, DIRS, t); gsub(/\$$\(SAN_MPI_TESTS\)/, SAN, t); return t } \
	   /^#: / { sub(/^#: /, ""); knobs = knobs "  " x($$0) "\n"; next } \
	   /^[a-z][a-z0-9-]*:.*## / { name = $$0; sub(/:.*/, "", name); text = $$0; sub(/^[^#]*## /, "", text); \
	                              printf "make %-16s %s\n", name, x(text) } \
	   END { printf "knobs (on the command line or in make.local):\n%s", knobs }' $(firstword $(MAKEFILE_LIST))

-include $(OBJ:.o=.d) $(FOBJ:.o=.d) $(SOBJ:.o=.d)
