# Two commands on a fresh machine:
#   make run    install what is missing, then simulate configs/quickstart.toml (release build)
#   make test   install what is missing, then the lint gates (rustfmt, clippy with warnings as errors),
#               cargo test, the API docs (no broken links), the manual's links, the Python tests (reading,
#               netCDF tools, the python/ package) and the MPI test
#   make docs   the manual (mdBook, docs/) into target/book, with no broken link
# scripts/setup.sh installs only what is missing (HDF5 C library and tools, ncdump, h5py, pandas, xarray, netCDF4,
# matplotlib, and setuptools and wheel, which `pip install ./python` builds with).

CARGO ?= cargo
PYTHON ?= python3
TARGET_DIR := $(or $(CARGO_TARGET_DIR),target)

# With libhdf5-openmpi-dev also installed, pkg-config picks the MPI flavour of HDF5: then build
# against the serial one (Debian/Ubuntu layout), unless HDF5_DIR is already set.
SERIAL_HDF5 := /usr/lib/x86_64-linux-gnu/hdf5/serial
ifeq ($(origin HDF5_DIR), undefined)
ifneq ($(wildcard /usr/lib/x86_64-linux-gnu/hdf5/openmpi),)
ifneq ($(wildcard $(SERIAL_HDF5)/include/hdf5.h),)
export HDF5_DIR := $(SERIAL_HDF5)
endif
endif
endif

.PHONY: setup run test lint test-docs test-links test-python test-mpi bless reference docs

setup:
	bash scripts/setup.sh

run: setup
	$(CARGO) run --release -- run configs/quickstart.toml

test: setup
	$(MAKE) --no-print-directory lint
	$(CARGO) test --workspace
	$(MAKE) --no-print-directory test-docs
	$(MAKE) --no-print-directory test-links
	$(MAKE) --no-print-directory test-python
	$(MAKE) --no-print-directory test-mpi

# Formatting and clippy's lints are gates, not advice.
lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

# The API docs build without warnings (broken or private intra-doc links fail).
test-docs:
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --no-deps --workspace

# Every relative link and anchor of README.md, configs/README.md and the manual's Markdown resolves
# (the built HTML is checked by `make docs`, which needs mdBook).
test-links:
	$(PYTHON) scripts/check-links.py

# The binary `cargo test` built (the test profile), not a second build of the whole crate.
test-python:
	$(CARGO) build --profile test --bin hxsim
	HXSIM_BIN=$(TARGET_DIR)/debug/hxsim $(PYTHON) tests/python/test_hdf5.py
	HXSIM_BIN=$(TARGET_DIR)/debug/hxsim $(PYTHON) tests/python/test_netcdf.py
	HXSIM_BIN=$(TARGET_DIR)/debug/hxsim $(PYTHON) python/tests/test_hxsim_results.py

# mpirun -np 2/3/4 against the single-process result (installs Open MPI when missing).
test-mpi:
	bash scripts/test-mpi.sh

# After an intended change of the model: rewrite the stored results-identity summaries
# (tests/identity/expected.json) and say why in the commit message.
bless:
	HXSIM_BLESS=1 $(CARGO) test --test identity

# After a change to the config schema or a registry: regenerate the configuration reference
# (tests/reference.rs checks it is current).
reference:
	$(CARGO) run --quiet -- docs reference -o docs/reference.md

# The manual: mdBook builds docs/ into target/book, then every link of the built pages is checked.
# mdBook is installed when missing (about 4 minutes of build on 2 cores, so `make test` checks the
# Markdown sources instead and needs no mdBook).
MDBOOK ?= $(shell command -v mdbook 2>/dev/null || echo $(or $(CARGO_HOME),$(HOME)/.cargo)/bin/mdbook)
docs:
	@[ -x "$(MDBOOK)" ] || $(CARGO) install mdbook --locked --no-default-features --version '^0.5'
	$(MDBOOK) build docs
	$(PYTHON) scripts/check-links.py
	$(PYTHON) scripts/check-links.py --html target/book
