# Thaw: the two commands a new machine needs are `make demo` and `make test`.
# Both install what is missing (pinned, idempotent), then build.

SHELL := /bin/bash
ROOT := $(abspath .)
BUILD ?= build
JOBS ?= 2
PY := $(ROOT)/.deps/venv/bin/python
THAW := $(ROOT)/$(BUILD)/bin/thaw
DEMO_WH := $(ROOT)/demo-warehouse

PREFIX ?= /usr/local

# Compiler cache (Debian's ccache, pinned in scripts/deps/debian-packages.txt).
# Paths are hashed relative to the checkout, so a fresh clone reuses what an
# earlier build on the machine compiled; a cold cache costs a few per cent.
export CCACHE_BASEDIR := $(ROOT)
export CCACHE_NOHASHDIR := true
CCACHE := -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache

.PHONY: deps deps-test build build-thaw install package demo test unit-test integration-test asan-test fuzz-test bench clean format

deps:
	@scripts/deps/install.sh

deps-test:
	@scripts/deps/install.sh --test

build: deps
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CCACHE) >/dev/null
	@ninja -C $(BUILD) -j$(JOBS) thaw thaw_unit_tests thaw_batch_tool thaw_rest_tool thaw_storage_tool \
	  thaw_kafka_source_tool thaw_registry_tool

# Only what `make demo` needs: the binary.
build-thaw: deps
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CCACHE) >/dev/null
	@ninja -C $(BUILD) -j$(JOBS) thaw

# The binary plus the Arrow libraries it loads (relative rpath): runs without
# this build tree or the venv. `make install PREFIX=$$HOME/.local`
install: build
	@cmake --install $(BUILD) --prefix $(PREFIX) --strip

# A Debian package (CPack DEB, packaging/): /usr/bin/thaw, the Arrow libraries
# in /usr/lib/thaw, man pages from --help, systemd units thaw-serve@.service and
# thaw-archive@.service. Prints the .deb's path. `sudo dpkg -i <it>`
package: build-thaw
	@ninja -C $(BUILD) -j$(JOBS) thaw_man
	@rm -f $(BUILD)/package/thaw_*.deb
	@cd $(BUILD) && cpack -G DEB >cpack.log 2>&1 || { cat cpack.log; exit 1; }
	@ls $(abspath $(BUILD))/package/thaw_*.deb

demo: build-thaw
	@$(PY) tests/integration/make_demo_table.py $(DEMO_WH) >/dev/null
	@echo "== thaw inspect (summary) =="
	$(THAW) inspect --catalog sqlite:///$(DEMO_WH)/catalog.db --table demo.orders
	@echo
	@echo "== thaw inspect: partition 1 from offset 10, 3 records =="
	$(THAW) inspect --catalog sqlite:///$(DEMO_WH)/catalog.db --table demo.orders --partition 1 --from-offset 10 --limit 3
	@scripts/deps/install-kafka.sh
	@scripts/demo-replay.sh $(THAW) $(DEMO_WH)
	@scripts/demo-serve.sh $(THAW) $(DEMO_WH)
	@scripts/demo-tiered.sh $(THAW) $(DEMO_WH)

# The Avro cross-check reads every manifest pyiceberg wrote for the demo table.
unit-test: build
	@$(PY) tests/integration/make_demo_table.py $(ROOT)/$(BUILD)/fixture-warehouse >/dev/null
	@cd $(BUILD) && ARROW_DEFAULT_MEMORY_POOL=system THAW_PYTHON=$(PY) THAW_TEST_FIXTURES=$(ROOT)/$(BUILD)/fixture-warehouse \
	  ctest --output-on-failure -j$(JOBS)

integration-test: build deps-test
	@THAW_BIN=$(THAW) $(PY) -m pytest -q --durations=25 tests/integration

# Unit tests once more under AddressSanitizer + UBSan.
asan-test: deps
	@cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DTHAW_SANITIZE=ON $(CCACHE) >/dev/null
	@ninja -C build-asan -j$(JOBS) thaw_unit_tests
	@cd build-asan && ARROW_DEFAULT_MEMORY_POOL=system ASAN_OPTIONS=detect_leaks=0 THAW_PYTHON=$(PY) \
	  THAW_TEST_FIXTURES=$(ROOT)/$(BUILD)/fixture-warehouse ctest --output-on-failure -j$(JOBS)

# Short libFuzzer runs of every parser of untrusted bytes.
fuzz-test: deps
	@scripts/fuzz.sh 10

test: deps-test unit-test integration-test asan-test fuzz-test

bench: build
	@scripts/bench.sh

format:
	@clang-format-14 -i $$(git ls-files 'src/*.cc' 'src/*.h' 'tests/*.cc' 'fuzz/*.cc' 'bench/*.cc')

clean:
	rm -rf $(BUILD) build-asan build-fuzz
