"""The images ``inspect-gaia image build`` makes; what sits inside them is ``image_layout``'s.

The map (a test holds it to the folder: every module is named here):

* ``sandbox``: the sandbox image, by ``docker build`` from ``python:3.11`` or from Debian packages
  without a registry (``--offline``), with or without the attachment readers;
* ``layer``: how a layer (the browser, the agents) is built over the attachments image of the
  same path;
* ``browser``: the browser and page reader layer (``--browser``);
* ``agents``: the agent CLIs' layer (``--agents``), with ``agents_wheels.txt``;
* ``egress``: the egress proxy's image (mitmproxy, from PyPI; ``--egress-proxy``).
"""
