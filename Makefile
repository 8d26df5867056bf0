# wulfbench: build, dependencies, run, tests, benchmarks, report, install.
# Knobs: override on the command line or in make.local.
CC      = mpicc
CFLAGS ?= -O3 -g -fno-math-errno
LDFLAGS ?=
PYTHON ?= /usr/bin/python3
MPIEXEC ?= mpirun
NP     ?= $(shell nproc 2>/dev/null || echo 2)
PREFIX ?= /usr/local
RESULTS ?= results
-include make.local

PKGS     = fftw3f fftw3 hdf5-openmpi
VERSION := $(shell git describe --tags --always --dirty 2>/dev/null || echo 0.1)
GIT_REV := $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null)

USER_CFLAGS := $(CFLAGS)
override CFLAGS += -std=c11 -Wall -Wextra -Wno-unused-parameter -MMD -MP $(PKG_CFLAGS) \
    -DWB_VERSION='"$(VERSION)"' -DWB_GIT_REV='"$(GIT_REV)"' -DWB_CFLAGS='"$(strip $(USER_CFLAGS))"'
override LDLIBS += $(PKG_LIBS) -lm -lpthread

# Open MPI refuses to start as root unless told twice; only root needs it.
ifeq ($(shell id -u),0)
export OMPI_ALLOW_RUN_AS_ROOT = 1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM = 1
endif

SRC   := $(wildcard src/*.c)
OBJ   := $(SRC:src/%.c=build/obj/%.o)
FOBJ  := $(SRC:src/%.c=build/faults/%.o)
LIB   := $(filter-out build/obj/main.o,$(OBJ))
UNITS := $(patsubst tests/unit/%.c,build/tests/%,$(wildcard tests/unit/test_*.c))

.DELETE_ON_ERROR:
.PHONY: all deps deps-test deps-bench run test test-unit test-mpi test-analysis test-transfer test-load \
        test-browser test-cluster test-slurm test-install bench bench-cluster report install uninstall clean help

all: build/wulfbench build/wulfbench.1 build/wulfbench.bash

build/wulfbench: $(OBJ)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The same program with test-only fault switches compiled in; never installed.
build/wulfbench-faults: $(FOBJ)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

build/obj/%.o: src/%.c | build/obj
	$(CC) $(CFLAGS) -c -o $@ $<

build/faults/%.o: src/%.c | build/faults
	$(CC) $(CFLAGS) -DWB_TEST_FAULTS=1 -c -o $@ $<

build/tests/%: tests/unit/%.c $(LIB) | build/tests
	$(CC) $(CFLAGS) -Isrc -Itests/unit -o $@ $< $(LIB) $(LDLIBS)

build/obj build/faults build/tests:
	mkdir -p $@

deps:            ## install the Debian packages needed to build and run (asks sudo when not root)
	@bash jobs/install-deps.sh build analysis

deps-test:
	@bash jobs/install-deps.sh build analysis test

deps-bench:
	@bash jobs/install-deps.sh build analysis test bench

run: deps        ## the main job: `wulfbench suite` on every core, a one-process baseline, then the report
	@$(MAKE) --no-print-directory all
	@mkdir -p $(RESULTS)
	@stamp=$$(date -u +%Y%m%dT%H%M%SZ); host=$$(hostname -s); \
	suite=$(RESULTS)/suite-$$host-$$stamp.h5; base=$(RESULTS)/baseline-$$host-$$stamp.h5; \
	set -x; \
	$(MPIEXEC) -np $(NP) --oversubscribe build/wulfbench suite --label "suite, $(NP) ranks on $$host" -o $$suite && \
	$(MPIEXEC) -np 1 build/wulfbench fft --baseline --seconds 1,5,30 --files 1:16 \
	    --label "baseline, 1 process on $$host" -o $$base && \
	$(PYTHON) -m analysis.report $$suite --baseline $$base -o report
	@echo "report: report/index.html"

test: deps-test  ## unit, MPI integration and analysis tests; last line "N passed, N failed"
	@$(MAKE) --no-print-directory all build/wulfbench-faults $(UNITS)
	@bash tests/run.sh unit mpi analysis

test-unit: $(UNITS)
	@bash tests/run.sh unit

test-mpi: all build/wulfbench-faults
	@bash tests/run.sh mpi

test-analysis: all
	@bash tests/run.sh analysis

test-transfer: all build/wulfbench-faults
	$(PYTHON) -m pytest -q -p no:cacheprovider tests/mpi/test_transfer.py

test-load: all build/wulfbench-faults
	$(PYTHON) -m pytest -q -p no:cacheprovider tests/mpi/test_load.py

test-browser: all    ## the HTML report in headless Chromium
	bash tests/analysis/browser_check.sh

test-cluster: all    ## an emulated 3-node Pi cluster (network namespaces; root)
	bash tests/cluster/run.sh

test-slurm: all      ## a real one-node Slurm (slurmctld, slurmd, munge; root)
	bash tests/slurm/run.sh

bench: deps-bench    ## figures side by side with bare FFTW, NetPIPE and HPCC
	@$(MAKE) --no-print-directory all build/tests/fft_ref build/tests/sendrecv_ref
	bash tests/bench/fft_bench.sh
	bash tests/bench/transfer_bench.sh
	bash tests/bench/load_bench.sh

build/tests/fft_ref build/tests/sendrecv_ref: build/tests/%: tests/bench/%.c | build/tests
	$(CC) $(CFLAGS) -o $@ $< $(LDLIBS)

bench-cluster: all  ## fft and pingpong figures on the emulated cluster for each link profile (root)
	bash tests/bench/cluster_bench.sh

report:              ## turn $(RESULTS)/*.h5 into report/index.html, figures, CSV
	$(PYTHON) -m analysis.report $(RESULTS) -o report

# Where install puts things; uninstall removes exactly these files and wulfbench's own folders.
BINDIR  = $(PREFIX)/bin
DATADIR = $(PREFIX)/share/wulfbench
DOCDIR  = $(PREFIX)/share/doc/wulfbench
MANDIR  = $(PREFIX)/share/man/man1
COMPDIR = $(PREFIX)/share/bash-completion/completions
DOCS    = README.md docs/schema.md $(wildcard docs/cluster.md)

# Made by the program from its option tables, so they list what --help lists.
build/wulfbench.1: build/wulfbench
	build/wulfbench --man > $@
build/wulfbench.bash: build/wulfbench
	build/wulfbench --bash-completion > $@

install: all build/wulfbench.1 build/wulfbench.bash  ## program, report command, job scripts, analysis, man page, completion, docs under PREFIX
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(DATADIR) $(DESTDIR)$(DOCDIR) $(DESTDIR)$(MANDIR) $(DESTDIR)$(COMPDIR)
	install -m 755 build/wulfbench $(DESTDIR)$(BINDIR)/wulfbench
	cp -r jobs hostfiles analysis $(DESTDIR)$(DATADIR)/
	rm -rf $(DESTDIR)$(DATADIR)/analysis/__pycache__
	printf '#!/bin/sh\n# The wulfbench analysis: result files to tables, figures and report/index.html.\nWB_PROG=wulfbench-report PYTHONPATH="%s$${PYTHONPATH:+:$$PYTHONPATH}" exec %s -m analysis.report "$$@"\n' \
	    '$(DATADIR)' '$(PYTHON)' > $(DESTDIR)$(BINDIR)/wulfbench-report
	chmod 755 $(DESTDIR)$(BINDIR)/wulfbench-report
	install -m 644 build/wulfbench.1 $(DESTDIR)$(MANDIR)/wulfbench.1
	install -m 644 build/wulfbench.bash $(DESTDIR)$(COMPDIR)/wulfbench
	install -m 644 $(DOCS) $(DESTDIR)$(DOCDIR)/

uninstall:           ## remove what install put under PREFIX (standard folders such as bin/ stay)
	rm -f $(DESTDIR)$(BINDIR)/wulfbench $(DESTDIR)$(BINDIR)/wulfbench-report
	rm -f $(DESTDIR)$(MANDIR)/wulfbench.1 $(DESTDIR)$(COMPDIR)/wulfbench
	rm -rf $(DESTDIR)$(DATADIR) $(DESTDIR)$(DOCDIR)

test-install: deps-test  ## install into a temporary PREFIX (and a DESTDIR), run each installed command, uninstall
	@$(MAKE) --no-print-directory all
	bash tests/install/run.sh

clean:
	rm -rf build

help:                ## list the targets
	@echo "make              build build/wulfbench"
	@echo "make run          install what is missing, run the suite on $(NP) ranks and a baseline, write report/"
	@echo "make test         install what is missing, run unit, MPI and analysis tests"
	@echo "make bench        figures beside bare FFTW, NetPIPE and HPCC"
	@echo "make bench-cluster  figures on the emulated cluster per link profile (root)"
	@echo "make report       report/ from $(RESULTS)/*.h5"
	@echo "make test-unit | test-mpi | test-analysis | test-transfer | test-load   parts of make test"
	@echo "make test-browser the report in headless Chromium"
	@echo "make test-cluster an emulated 3-node Pi cluster (root)"
	@echo "make test-slurm   a real one-node Slurm (root)"
	@echo "make install PREFIX=/usr/local   install wulfbench, wulfbench-report, job scripts, analysis, man page,"
	@echo "                  bash completion and docs (DESTDIR for packaging); make uninstall removes them"
	@echo "make test-install install into a temporary PREFIX and run each installed command"
	@echo "make deps         install build and run dependencies (Debian, Ubuntu, Raspberry Pi OS)"
	@echo "make clean        remove build/"
	@echo "knobs: CC CFLAGS PYTHON MPIEXEC NP PREFIX RESULTS, or put them in make.local"

-include $(OBJ:.o=.d) $(FOBJ:.o=.d)
