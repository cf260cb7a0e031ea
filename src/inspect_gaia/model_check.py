"""The run's model, checked when the task is created: before any sandbox, any question, any cost.

A run that cannot reach its model used to run every question anyway: each sample retried the
dead endpoint with inspect's backoff, errored, was scored wrong (``score_on_error``), and the run
exited 0 with 0.000 — on the full split, 165 sandboxes for nothing. Two cases are certain before
anything starts, and are refused here, from ``gaia``, in one line naming the model and the fix:

* **no model**: inspect runs ``none/none`` when neither ``--model`` nor ``INSPECT_EVAL_MODEL`` is
  given; its every generate fails;
* **an endpoint where nothing listens**: a model with an explicit base URL (``openai-api``,
  ``vllm``, ``ollama``, ``--model-base-url``) whose host does not resolve or whose port refuses a
  TCP connection. The check is a connection opened and closed: no request, no token, no cost.

What was weighed instead, and why not:

* inspect's ``fail_on_error`` counts errors of any kind; GAIA keeps ``score_on_error`` so that a
  question whose sandbox or model call failed stays in the denominator, and one threshold cannot
  tell a dead endpoint from one hard question.
* a one-token ``generate`` probe would also catch a bad key (401/403) and an unknown model name,
  but every run would pay a request, some providers refuse a one-token reply for their own
  reasons (reasoning models, minimum budgets), and the probe's answer would have to be read
  provider by provider. An endpoint that answers anything has been reached; what it answers is
  left to the run, and ``report`` flags a group whose every sample errored on its model call
  (``logs/coverage.py``) with the first error's line and the ``eval-retry`` that reruns it.
* a check in the sandbox provider's ``task_init`` would see the engine first, but not the k8s
  sandbox, and only the last of several ``--model``s; the task is created once per model.

Not checked: a host behind a proxy (``HTTPS_PROXY``/``ALL_PROXY`` and not in ``NO_PROXY``: the
client connects to the proxy, not the host), a hosted provider's default endpoint (it answers;
its failures are about keys), ``gaia()`` called outside ``eval`` (no model is active yet), and
``--model none`` given on purpose (a human agent) is refused too: the cost of the default case.
"""

from __future__ import annotations

import socket
import urllib.request
from urllib.parse import urlsplit

from ._compat import active_model
from .errors import GaiaError

CONNECT_TIMEOUT = 5.0
"""Seconds a TCP connection to the model's endpoint may take before it counts as unreachable."""
_PORTS = {"http": 80, "https": 443}


class GaiaModelError(GaiaError):
    """The run's model cannot be reached: refused before any sandbox starts."""


def check_model() -> None:
    """Refuse a run with no model, or whose model's endpoint does not accept a connection.

    Raises:
        GaiaModelError: No model was given, or its base URL's host is unknown or refuses.
    """
    model = active_model()
    if model is None:  # gaia() called outside eval: the model comes later
        return
    if str(model) == "none/none":
        raise GaiaModelError(
            "no model to run (inspect's none/none)",
            fix="pass --model provider/name (e.g. --model openai/gpt-4o) or set INSPECT_EVAL_MODEL",
        )
    base_url = model.api.base_url
    if base_url:
        check_endpoint(str(model), base_url)


def check_endpoint(model: str, base_url: str) -> None:
    """Refuse ``base_url`` when its host is unknown or refuses a TCP connection.

    Raises:
        GaiaModelError: The host does not resolve, or nothing listens at its port.
    """
    parts = urlsplit(base_url)
    host = parts.hostname
    if parts.scheme not in _PORTS or not host or _proxied(host):
        return
    port = parts.port or _PORTS[parts.scheme]
    try:
        socket.create_connection((host, port), timeout=CONNECT_TIMEOUT).close()
    except OSError as error:
        raise GaiaModelError(
            f"cannot reach the model {model} at {base_url} ({_why(error)})",
            fix="start the endpoint or fix its address (--model-base-url or the provider's "
            "*_BASE_URL), then rerun",
        ) from None


def _proxied(host: str) -> bool:
    proxies = urllib.request.getproxies()
    return bool(proxies.keys() & {"https", "http", "all"}) and not urllib.request.proxy_bypass(host)


def _why(error: OSError) -> str:
    if isinstance(error, socket.gaierror):
        return "name not known"
    if isinstance(error, ConnectionRefusedError):
        return "connection refused"
    if isinstance(error, TimeoutError | socket.timeout):
        return f"no answer in {CONNECT_TIMEOUT:.0f} s"
    return error.strerror or type(error).__name__
