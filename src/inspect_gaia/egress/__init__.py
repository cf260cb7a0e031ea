"""The run's egress: block, record, replay — the proxy's programs and the web record they write.

With ``-T block_answer_sources``, ``-T web_record`` or ``-T web_replay``, a run's sandboxes reach
the network only through a proxy of the run's own (mitmproxy). Its programs are here; none is in
its image, which holds mitmproxy alone, so changing them needs no new image: each is copied into
the run's proxy container (``shipped.PROXY_PROGRAMS``) and imports only the standard library and
its siblings. The container's lifecycle is the Docker provider's (``sandboxes/docker/egress.py``,
watched by ``egress_watch``; each sample's part of the record read by ``egress_record``, the bodies
kept by ``egress_archive``); the proxy's image is ``images/egress``.

The map (a test holds it to the folder: every module is named here):

* block: ``addon`` (the guard: refuses the known answer sources and, by ``netpolicy``, the host's
  and private addresses; every hook wrapped by ``failclosed`` to fail closed) with ``urlrules``
  (the URL rules, standard library only, which the detection and the page reader import too, so
  the proxy refuses exactly what is flagged);
* bound: ``bounds`` (what one connection and one sandbox may make mitmproxy hold: heads, unread
  input, handshakes, connections; HTTP/1.1 only, as the guard's docstring argues) and ``load``
  (what each sandbox holds of the proxy, published for the supervisor's blame);
* record: ``recorder`` (every request per sandbox, hashed as it streams) with ``record_files``
  (its per-sandbox files: appended to only, and capped) and ``bodies`` (the bodies it hashes and
  keeps, within their caps), and ``web_record`` (a recorded request as a log holds it: the host's
  side, shared by the run and the readers);
* replay: ``replay`` (a recorded web served in place of the guard) with ``replay_match`` (its
  match key and index, which the host keys archives with too);
* ``supervise``: keeps mitmdump answering, restarting it in place, and names the sandbox that held
  most of it when it does not;
* ``spec``: what the task hands the provider about all this: one typed record, ``EgressSpec``.

Host-side, never shipped: the recorded web as data. ``web_archive`` reads an archive as data
(regular files under ``record/``, nothing hidden, every body its hash) and writes what a replay's
proxy receives; ``har_read`` reads a HAR the same way, ``replay_source`` tells them apart (once per
file), ``replay_decoded`` makes the decoded twins of its content-coded responses (for a client
that does not accept their coding), ``har_write`` writes HAR 1.2 (``web export``), both decoding
with ``content_coding``, ``web_merge`` combines archives and HARs (``web merge``).
"""

MITMPROXY_VERSION = "11.0.2"
"""The newest mitmproxy for Python 3.11 (Debian bookworm's, the image's base); 11.1+ need 3.12."""

PROXY_IMAGE = f"inspect-gaia/egress-proxy:mitmproxy-{MITMPROXY_VERSION}"
"""The proxy image a run starts (``inspect-gaia image build --egress-proxy [--offline]``)."""
