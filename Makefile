# pipit - the README's commands. CMake does the building; this file holds the entry points.
#
#   make            bootstrap (first time), build build/pipit, libpipit.a and libpipit.so
#   make run        pipit's main job: the agent on the simulated camera, default model
#   make test       the whole suite: build + ctest, then the unit and model tests under
#                   ASan+UBSan, then the clang-format check
#   make llama-server   build llama.cpp's llama-server from the pinned tree into the cache
#                   (first time ~20 min; `make test` does it; PIPIT_NO_SERVER_BUILD=1 skips it
#                   and the cloud-server test then reports SKIP)
#   make source-build   build llama.cpp from the pinned source tree instead (slow, cached)
#
# Variables: JOBS (parallel build jobs, default 2), PIPIT_CACHE (download/build cache,
# default ~/.cache/pipit).

JOBS        ?= 2
PIPIT_CACHE ?= $(HOME)/.cache/pipit
export PIPIT_CACHE
CMAKE_FLAGS ?=
LAUNCHER    := $(shell command -v ccache >/dev/null 2>&1 && echo -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
CTEST_FLAGS ?= --output-on-failure
DEMO_MODEL  := build/test-models/tiny-spm.gguf
BUNDLED     := models/pipit-camera-v1.gguf
RUN_MODEL   := $(if $(wildcard $(BUNDLED)),$(BUNDLED),$(DEMO_MODEL))
RUN_SAY     := "zoom in to 2x" "night mode and a 3 second timer" "take a photo" "never mind" \
               "switch to the front camera and turn on the flash"

.PHONY: all bootstrap build run test test-unit test-asan format format-check source-build results clean \
	llama-server

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
	@$(MAKE) --no-print-directory format-check

test-asan: bootstrap
	@cmake -S . -B build-asan -DPIPIT_WERROR=ON -DPIPIT_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug \
	    $(LAUNCHER) $(CMAKE_FLAGS) >/dev/null
	@cmake --build build-asan -j$(JOBS)
	cd build-asan && ctest $(CTEST_FLAGS) -j1 -L 'unit|model' -LE slow

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

clean:
	rm -rf build build-asan build-source
