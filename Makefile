# wulfbench: build, dependencies, run, tests, benchmarks, report, install.
# Knobs: override on the command line or in make.local.
# MPI=openmpi (default) or MPI=mpich: which MPI and parallel HDF5 to build against, into build/ or build-mpich/.
MPI    ?= openmpi
CFLAGS ?= -O3 -g -fno-math-errno
LDFLAGS ?=
PYTHON ?= /usr/bin/python3
NP     ?= $(shell nproc 2>/dev/null || echo 2)
PREFIX ?= /usr/local
RESULTS ?= results
-include make.local

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
# Debian has no FFTW-MPI for MPICH; dfft says so unless FFTW_MPI_LIBS points at one built for MPICH.
FFTW_MPI_LIBS ?=
else
$(error MPI=$(MPI) is not supported; use MPI=openmpi (the default) or MPI=mpich)
endif
DEPS_MPI = $(if $(filter mpich,$(MPI)),mpich)
# The test harness picks the launcher and the build directory from this.
export WB_MPI = $(MPI)
# Without an FFTW-MPI to link, dfft is compiled out and reports that it is missing.
FFTW_MPI_DEF = $(if $(strip $(FFTW_MPI_LIBS)),,-DWB_NO_FFTW_MPI)

PKGS     = fftw3f fftw3 $(HDF5_PKG)
VERSION := $(shell git describe --tags --always --dirty 2>/dev/null || echo 0.1)
GIT_REV := $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null)

USER_CFLAGS := $(CFLAGS)
override CFLAGS += -std=c11 -Wall -Wextra -Wno-unused-parameter -MMD -MP $(PKG_CFLAGS) $(FFTW_MPI_DEF) \
    -DWB_VERSION='"$(VERSION)"' -DWB_GIT_REV='"$(GIT_REV)"' -DWB_CFLAGS='"$(strip $(USER_CFLAGS))"'
override LDLIBS += $(FFTW_MPI_LIBS) $(PKG_LIBS) -lm

# Open MPI refuses to start as root unless told twice; only root needs it (MPICH's hydra does not ask).
ifeq ($(MPI)$(shell id -u),openmpi0)
export OMPI_ALLOW_RUN_AS_ROOT = 1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM = 1
endif

SRC   := $(wildcard src/*.c)
OBJ   := $(SRC:src/%.c=$(B)/obj/%.o)
FOBJ  := $(SRC:src/%.c=$(B)/faults/%.o)
LIB   := $(filter-out $(B)/obj/main.o,$(OBJ))
UNITS := $(patsubst tests/unit/%.c,$(B)/tests/%,$(wildcard tests/unit/test_*.c))

.DELETE_ON_ERROR:
.PHONY: all deps deps-test deps-bench run test test-unit test-mpi test-analysis test-transfer test-load \
        test-browser test-cluster test-slurm bench bench-cluster report install uninstall clean help

all: $(B)/wulfbench

$(B)/wulfbench: $(OBJ)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The same program with test-only fault switches compiled in; never installed.
$(B)/wulfbench-faults: $(FOBJ)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(B)/obj/%.o: src/%.c | $(B)/obj
	$(CC) $(CFLAGS) -c -o $@ $<

$(B)/faults/%.o: src/%.c | $(B)/faults
	$(CC) $(CFLAGS) -DWB_TEST_FAULTS=1 -c -o $@ $<

$(B)/tests/%: tests/unit/%.c $(LIB) | $(B)/tests
	$(CC) $(CFLAGS) -Isrc -Itests/unit -o $@ $< $(LIB) $(LDLIBS)

$(B)/obj $(B)/faults $(B)/tests:
	mkdir -p $@

deps:            ## install the Debian packages needed to build and run (asks sudo when not root)
	@bash jobs/install-deps.sh build $(DEPS_MPI) analysis

deps-test:
	@bash jobs/install-deps.sh build $(DEPS_MPI) analysis test

deps-bench:
	@bash jobs/install-deps.sh build $(DEPS_MPI) analysis test bench

run: deps        ## the main job: `wulfbench suite` on every core, a one-process baseline, then the report
	@$(MAKE) --no-print-directory all
	@mkdir -p $(RESULTS)
	@stamp=$$(date -u +%Y%m%dT%H%M%SZ); host=$$(hostname -s); \
	suite=$(RESULTS)/suite-$$host-$$stamp.h5; base=$(RESULTS)/baseline-$$host-$$stamp.h5; \
	set -x; \
	$(MPIEXEC) -np $(NP) $(OVERSUBSCRIBE) $(B)/wulfbench suite --label "suite, $(NP) ranks on $$host" -o $$suite && \
	$(MPIEXEC) -np 1 $(B)/wulfbench fft --baseline --seconds 1,5,30 --files 1:16 \
	    --label "baseline, 1 process on $$host" -o $$base && \
	$(PYTHON) -m analysis.report $$suite --baseline $$base -o report
	@echo "report: report/index.html"

test: deps-test  ## unit, MPI integration and analysis tests; last line "N passed, N failed"
	@$(MAKE) --no-print-directory all $(B)/wulfbench-faults $(UNITS)
	@bash tests/run.sh unit mpi analysis

test-unit: $(UNITS)
	@bash tests/run.sh unit

test-mpi: all $(B)/wulfbench-faults
	@bash tests/run.sh mpi

test-analysis: all
	@bash tests/run.sh analysis

test-transfer: all $(B)/wulfbench-faults
	$(PYTHON) -m pytest -q -p no:cacheprovider tests/mpi/test_transfer.py

test-load: all $(B)/wulfbench-faults
	$(PYTHON) -m pytest -q -p no:cacheprovider tests/mpi/test_load.py

test-browser: all    ## the HTML report in headless Chromium
	bash tests/analysis/browser_check.sh

test-cluster: all    ## an emulated 3-node Pi cluster (network namespaces; root)
	bash tests/cluster/run.sh

test-slurm: all      ## a real one-node Slurm (slurmctld, slurmd, munge; root)
	bash tests/slurm/run.sh

bench: deps-bench    ## figures side by side with bare FFTW, NetPIPE and HPCC, and Open MPI beside MPICH
	@$(MAKE) --no-print-directory all $(B)/tests/fft_ref $(B)/tests/sendrecv_ref
	bash tests/bench/fft_bench.sh
	bash tests/bench/transfer_bench.sh
	bash tests/bench/load_bench.sh
	@if command -v mpicc.mpich >/dev/null; then $(MAKE) --no-print-directory MPI=mpich all; fi
	bash tests/bench/dfft_bench.sh

$(B)/tests/fft_ref $(B)/tests/sendrecv_ref: $(B)/tests/%: tests/bench/%.c | $(B)/tests
	$(CC) $(CFLAGS) -o $@ $< $(LDLIBS)

bench-cluster: all  ## fft and pingpong figures on the emulated cluster for each link profile (root)
	bash tests/bench/cluster_bench.sh

report:              ## turn $(RESULTS)/*.h5 into report/index.html, figures, CSV
	$(PYTHON) -m analysis.report $(RESULTS) -o report

install: all         ## install the program, job scripts and analysis under PREFIX
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/wulfbench
	install -m 755 $(B)/wulfbench $(DESTDIR)$(PREFIX)/bin/wulfbench
	cp -r jobs hostfiles analysis $(DESTDIR)$(PREFIX)/share/wulfbench/
	rm -rf $(DESTDIR)$(PREFIX)/share/wulfbench/analysis/__pycache__
	printf '#!/bin/sh\n# The wulfbench analysis: result files to tables, figures and report/index.html.\nPYTHONPATH="%s$${PYTHONPATH:+:$$PYTHONPATH}" exec %s -m analysis.report "$$@"\n' \
	    '$(PREFIX)/share/wulfbench' '$(PYTHON)' > $(DESTDIR)$(PREFIX)/bin/wulfbench-report
	chmod 755 $(DESTDIR)$(PREFIX)/bin/wulfbench-report

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/wulfbench $(DESTDIR)$(PREFIX)/bin/wulfbench-report
	rm -rf $(DESTDIR)$(PREFIX)/share/wulfbench

clean:
	rm -rf build build-mpich

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
	@echo "make install PREFIX=/usr/local   install wulfbench, wulfbench-report, job scripts and analysis"
	@echo "make deps         install build and run dependencies (Debian, Ubuntu, Raspberry Pi OS)"
	@echo "make clean        remove build/ and build-mpich/"
	@echo "make MPI=mpich ... the same against MPICH and its parallel HDF5, into build-mpich/"
	@echo "knobs: MPI CC CFLAGS PYTHON MPIEXEC NP PREFIX RESULTS FFTW_MPI_LIBS, or put them in make.local"

-include $(OBJ:.o=.d) $(FOBJ:.o=.d)
