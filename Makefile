# pipit - the README's commands. CMake does the building; this file holds the entry points.
#
#   make            bootstrap (first time), build build/pipit, libpipit.{a,so} (the runtime)
#                   and libpipit-tools.{a,so} (the tooling)
#   make run        pipit's main job: the agent on the simulated camera, default model
#   make test       the whole suite: build + ctest, then the unit and model tests under
#                   ASan+UBSan, then each fuzz target briefly (~20 s), then the clang-format check
#   make fuzz       the libFuzzer targets (clang, ASan+UBSan) in build-fuzz/, FUZZ_SECONDS each
#                   (default 120) on one core; a table of executions and findings (docs/fuzz.md)
#   make llama-server   build llama.cpp's llama-server from the pinned tree into the cache
#                   (first time ~20 min; `make test` does it; PIPIT_NO_SERVER_BUILD=1 skips it
#                   and the cloud-server test then reports SKIP)
#   make source-build   build llama.cpp from the pinned source tree instead (slow, cached)
#   make install    install the runtime (pipit.h, libpipit.a, libpipit.so.0, pipit.pc), the
#                   tooling (pipit_tools.h, libpipit-tools.a, libpipit-tools.so.0,
#                   pipit-tools.pc), the pipit command and the llama.cpp libraries into PREFIX
#                   (default /usr/local; DESTDIR too)
#
# Variables: JOBS (parallel build jobs, default 2), PIPIT_CACHE (download/build cache,
# default ~/.cache/pipit), FUZZ_SECONDS (make fuzz: seconds per target, default 120).

JOBS        ?= 2
FUZZ_SECONDS ?= 120
FUZZ_CC     ?= clang-14
FUZZ_CXX    ?= clang++-14
PIPIT_CACHE ?= $(HOME)/.cache/pipit
PREFIX      ?= /usr/local
export PIPIT_CACHE
CMAKE_FLAGS ?=
LAUNCHER    := $(shell command -v ccache >/dev/null 2>&1 && echo -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
CTEST_FLAGS ?= --output-on-failure
DEMO_MODEL  := build/test-models/tiny-spm.gguf
BUNDLED     := models/pipit-camera-v1.gguf
RUN_MODEL   := $(if $(wildcard $(BUNDLED)),$(BUNDLED),$(DEMO_MODEL))
RUN_SAY     := "zoom in to 2x" "night mode and a 3 second timer" "take a photo" "never mind" \
               "switch to the front camera and turn on the flash"

.PHONY: all bootstrap build run test test-unit test-asan format format-check source-build results clean install \
	llama-server fuzz fuzz-build fuzz-test

all: build

bootstrap:
	@scripts/bootstrap.sh

build: bootstrap
	@cmake -S . -B build -DPIPIT_WERROR=ON $(LAUNCHER) $(CMAKE_FLAGS) >/dev/null
	@cmake --build build -j$(JOBS)

# The agent on the simulated camera: the bundled model when it is there, else a random test
# model (its words are noise, but the grammar, the checks and the templates still hold).
run: build
	@test -f $(RUN_MODEL) || ./build/pipit make-model --vocab llama-spm --out $(RUN_MODEL)
	./build/pipit run --model $(RUN_MODEL) --threads 1 -v $(RUN_SAY)

test: build llama-server
	cd build && ctest $(CTEST_FLAGS) -j1
	@$(MAKE) --no-print-directory test-asan
	@$(MAKE) --no-print-directory fuzz-test
	@$(MAKE) --no-print-directory format-check

test-asan: bootstrap
	@cmake -S . -B build-asan -DPIPIT_WERROR=ON -DPIPIT_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug \
	    $(LAUNCHER) $(CMAKE_FLAGS) >/dev/null
	@cmake --build build-asan -j$(JOBS)
	cd build-asan && ctest $(CTEST_FLAGS) -j1 -L 'unit|model' -LE slow

# libFuzzer targets (fuzz/, docs/fuzz.md): clang from Debian (scripts/bootstrap.sh installs it;
# without it this fails, it never skips). The library is rebuilt there with coverage + ASan+UBSan.
fuzz-build: bootstrap
	@command -v $(FUZZ_CC) >/dev/null 2>&1 || { echo "fuzz: $(FUZZ_CC) not found:" \
	    "run scripts/bootstrap.sh as root (Debian packages clang-14 libclang-rt-14-dev)" >&2; exit 1; }
	@cmake -S . -B build-fuzz -DPIPIT_FUZZ=ON -DPIPIT_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	    -DCMAKE_C_COMPILER=$(FUZZ_CC) -DCMAKE_CXX_COMPILER=$(FUZZ_CXX) $(LAUNCHER) $(CMAKE_FLAGS) >/dev/null
	@cmake --build build-fuzz -j$(JOBS) --target fuzz-all

# each target for FUZZ_SECONDS, one after the other, one core
fuzz: fuzz-build
	fuzz/run-all.sh build-fuzz $(FUZZ_SECONDS)

# the ctest entries (label fuzz): seeds replayed, then ~20 s of fuzzing per target
fuzz-test: fuzz-build
	cd build-fuzz && ctest $(CTEST_FLAGS) -j1 -L fuzz

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

format-check:
	@clang-format --dry-run --Werror $$(git ls-files '*.c' '*.h') && echo "clang-format: clean"

# llama-server from the same pinned tree, cached in $(PIPIT_CACHE)/llama-server-<tag>/, for the
# cloud delegation test (tests/test-cloud.c --server through scripts/llama-server.sh).
llama-server: bootstrap
	@if [ "$${PIPIT_NO_SERVER_BUILD:-0}" != 1 ]; then \
	    PIPIT_SERVER_JOBS=$(JOBS) scripts/llama-server.sh build >/dev/null; fi

# llama.cpp built from the same pinned source tree (the path Android and other targets take).
source-build: bootstrap
	@cmake -S . -B build-source -DPIPIT_LLAMA_FROM_SOURCE=ON -DPIPIT_BUILD_TESTS=OFF \
	    -DGGML_NATIVE=OFF $(LAUNCHER) $(CMAKE_FLAGS) >/dev/null
	@cmake --build build-source -j$(JOBS) --target pipit
	./build-source/pipit make-model --vocab llama-spm --out build-source/demo.gguf
	./build-source/pipit demo --model build-source/demo.gguf --tokens 4

# docs/RESULTS.md: benchmarks and evaluations, regenerated (a few minutes; not a test)
results: build
	eval/results.sh

install: build
	@cmake --install build --prefix "$(PREFIX)"

clean:
	rm -rf build build-asan build-source build-fuzz
