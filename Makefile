# The README's commands. `make test` is all a fresh Debian machine needs after the install command:
# it starts (installing if need be) a Docker Engine, builds the sandbox images, installs the tools
# the Docker tests need (btrfs-progs), then runs pytest.
PYTHON ?= python

.PHONY: test fast setup

setup:
	bash .ci/docker-engine.sh
	bash .ci/sandbox-images.sh
	bash .ci/test-tools.sh

# Two workers (pytest-xdist), a test file to each at a time: the Docker tests wait on the engine
# as much as they compute. Each worker is a session with its own sandbox tag (tests/conftest.py).
WORKERS ?= 2

test: setup
	$(PYTHON) -m pytest -n $(WORKERS) --dist loadfile

fast:
	$(PYTHON) -m pytest -n $(WORKERS) --dist loadfile -m "not docker and not slow"
