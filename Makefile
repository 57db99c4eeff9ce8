# make run   installs what is missing, builds, evaluates the reference solutions of our suite and
#            opens the default skill library (seeded from skills/seed.jsonl)
# make test  installs what is missing, builds, and runs every test (what CI runs)
SHELL := /bin/bash
PYTHON ?= python3
BUILD ?= build
JOBS ?= $(shell nproc)
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
APT_PACKAGES := build-essential cmake ninja-build pkg-config nlohmann-json3-dev libcli11-dev libspdlog-dev \
	libfmt-dev libxxhash-dev libsqlite3-dev libcurl4-openssl-dev libcpp-httplib-dev libtomlplusplus-dev libgloo-dev libpcre2-dev libutf8proc-dev libgtest-dev libbenchmark-dev libseccomp-dev libhiredis-dev redis-server bubblewrap clang-format python3 python3-dev python3-pip
VINCI := $(BUILD)/src/cli/vinci

.PHONY: all deps apt-deps python-deps build test run clean

all: build

deps: apt-deps python-deps

apt-deps:
	@missing=$$(for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:" $$missing; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

# Every pin of requirements.txt is checked (torch by version prefix, so a GPU machine's
# 2.11.0+cu130 counts as installed); pip runs only when one is missing.
python-deps:
	@if ! $(PYTHON) scripts/requirements_met.py requirements.txt; then \
	  echo "installing pinned Python packages (requirements.txt)"; \
	  $(PYTHON) -m pip install -q -r requirements.txt || $(PYTHON) -m pip install -q --break-system-packages -r requirements.txt; \
	fi

build: deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE=$$(command -v $(PYTHON))
	cmake --build $(BUILD) -j $(JOBS)

# The unit tier first (minutes), then the pipeline tier (tests/CMakeLists.txt: ctest labels).
test: build
	cd $(BUILD) && VINCI_PYTHON=$(PYTHON) ctest --output-on-failure --timeout 3000 -j $(JOBS) -L unit
	cd $(BUILD) && VINCI_PYTHON=$(PYTHON) ctest --output-on-failure --timeout 3000 -j $(JOBS) -LE unit

# The main job: every reference solution of tasks/ through the evaluator, on the GPU when there is
# one (CUDA solutions, full sizes), else on the CPU (CPU solutions, sizes scaled down).
run: build
	@if [ -d /proc/driver/nvidia/gpus ] && [ -n "$$(ls /proc/driver/nvidia/gpus 2>/dev/null)" ]; then \
	  VINCI_PYTHON=$(PYTHON) $(VINCI) eval --tasks tasks --candidates tasks/solutions/cuda --device cuda --out results.jsonl; \
	else \
	  VINCI_PYTHON=$(PYTHON) $(VINCI) eval --tasks tasks --candidates tasks/solutions/cpu --device cpu --scale 0.05 \
	    --no-compile-baseline --out results.jsonl; \
	fi
	$(VINCI) report results.jsonl --tasks tasks --out-dir .
	@# The agents' default library: created from skills/seed.jsonl on first use.
	$(VINCI) skills stats
	$(VINCI) skills search "row-wise softmax with a warp reduction" -k 5

clean:
	rm -rf $(BUILD)
