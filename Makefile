# The README's commands. `make test` is all a fresh Debian machine needs after the install command:
# it starts (installing if need be) a Docker Engine, builds the sandbox images, installs the tools
# the Docker tests need (btrfs-progs), then runs pytest.
PYTHON ?= python

.PHONY: test fast setup

setup:
	bash .ci/docker-engine.sh
	bash .ci/sandbox-images.sh
	bash .ci/test-tools.sh

test: setup
	$(PYTHON) -m pytest

fast:
	$(PYTHON) -m pytest -m "not docker and not slow"
