# pipit - the README's commands. CMake does the building; this file holds the entry points.
#
#   make            bootstrap (first time), build build/pipit, libpipit.a and libpipit.so
#   make run        pipit's main job on the default model
#   make test       the whole suite: build + ctest, then the unit and model tests under
#                   ASan+UBSan, then the clang-format check
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

.PHONY: all bootstrap build run test test-unit test-asan format format-check source-build clean

all: build

bootstrap:
	@scripts/bootstrap.sh

build: bootstrap
	@cmake -S . -B build -DPIPIT_WERROR=ON $(LAUNCHER) $(CMAKE_FLAGS) >/dev/null
	@cmake --build build -j$(JOBS)

run: build
	@test -f $(DEMO_MODEL) || ./build/pipit make-model --vocab llama-spm --out $(DEMO_MODEL)
	./build/pipit demo --model $(DEMO_MODEL)

test: build
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

# llama.cpp built from the same pinned source tree (the path Android and other targets take).
source-build: bootstrap
	@cmake -S . -B build-source -DPIPIT_LLAMA_FROM_SOURCE=ON -DPIPIT_BUILD_TESTS=OFF \
	    -DGGML_NATIVE=OFF $(LAUNCHER) $(CMAKE_FLAGS) >/dev/null
	@cmake --build build-source -j$(JOBS) --target pipit
	./build-source/pipit make-model --vocab llama-spm --out build-source/demo.gguf
	./build-source/pipit demo --model build-source/demo.gguf --tokens 4

clean:
	rm -rf build build-asan build-source
