"""The egress proxy of a run that cannot look its answers up (``-T block_answer_sources=true``).

``egress_image`` (a module above, as it builds on ``image``) builds the proxy's image (mitmproxy,
from PyPI); ``addon.py`` is the mitmproxy addon that refuses known answer sources and private
addresses (``netpolicy.py``), every hook of it wrapped to fail closed (``failclosed.py``), within
the bounds of ``bounds.py`` (what a connection and a sandbox may make mitmproxy hold), counting
what each sandbox holds (``load.py``); ``recorder.py`` records every request per sandbox
(``record_files.py``: its files, appended to and capped; ``bodies.py``: the bodies, hashed and
kept), ``replay.py`` serves a recorded web in place of the guard (``-T web_replay``; matched by
``replay_match.py``, which the run reads archives with too), ``supervise.py`` keeps mitmdump
answering and names the sandbox that held most of it when it does not; all are copied into each
run's proxy container (``shipped.PROXY_PROGRAMS``: none is in the image, which holds mitmproxy
alone, so changing them needs no new image) with ``urlrules.py``: the URL rules, standard library
only, which the scorer's detection (``answer_sources/``) and the in-sandbox page reader (``web/``)
import too, so the proxy refuses exactly what the detection flags. The container's lifecycle is
the Docker provider's: ``sandboxes/docker/egress.py``, watched by
``sandboxes/docker/egress_watch.py``.
"""

MITMPROXY_VERSION = "11.0.2"
"""The newest mitmproxy for Python 3.11 (Debian bookworm's, the image's base); 11.1+ need 3.12."""

PROXY_IMAGE = f"inspect-gaia/egress-proxy:mitmproxy-{MITMPROXY_VERSION}"
"""The proxy image a run starts (``inspect-gaia image build --egress-proxy [--offline]``)."""
