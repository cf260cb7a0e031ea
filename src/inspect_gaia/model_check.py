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

import re
import socket
import urllib.request
from urllib.parse import urlsplit

from ._compat import PrerequisiteError, active_model
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


MODEL_ADDRESS = "--model-base-url or the provider's *_BASE_URL"
"""Where ``--model``'s endpoint is set."""


def check_endpoint(
    model: str, base_url: str, role: str = "model", address: str = MODEL_ADDRESS
) -> None:
    """Refuse ``base_url`` when its host is unknown or refuses a TCP connection.

    ``role`` names what is checked (the run's ``model``, the ``judge``), ``address`` where its
    endpoint is set.

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
            f"cannot reach the {role} {model} at {base_url} ({_why(error)})",
            fix=f"start the endpoint or fix its address ({address}), then rerun",
        ) from None


def check_judge(name: str) -> None:
    """Refuse a ``--judge`` that cannot be asked, as a run's ``--model`` is: before any log is read.

    The name must say its provider, the provider must be inspect's, its SDK and key must be
    there (inspect's own check, its message made one plain line), and an endpoint with an
    explicit base URL must accept a TCP connection (``check_endpoint``). The judge is built as
    it is then asked (``scoring.judge.judge_model``); inspect keeps the one instance.

    Raises:
        GaiaModelError: One line naming the judge, what is wrong and the fix.
    """
    from .scoring.judge import judge_model

    flag = f"--judge {name}"
    provider = name.split("/", 1)[0]
    if "/" not in name.strip("/"):
        raise GaiaModelError(
            f"{flag}: the name says no provider",
            fix=f"write it provider/model, e.g. --judge openai/{name.strip('/') or 'gpt-4.1'}",
        )
    try:
        model = judge_model(name)
    except PrerequisiteError as error:  # a missing SDK or key: inspect's message, made plain
        said = _plain(str(error))
        key = re.search(r"\b([A-Z][A-Z0-9_]*_API_KEY)\b", said)
        raise GaiaModelError(
            f"{flag}: {said}",
            fix=f"set {key.group(1)} in the environment, or pick another --judge"
            if key
            else "install what it names, or pick another --judge",
        ) from None
    except ValueError as error:  # inspect's word for a provider it does not know
        raise GaiaModelError(
            f"{flag}: {_plain(str(error))}",
            fix="name one of inspect's providers (https://inspect.aisi.org.uk/providers.html), "
            "e.g. --judge openai/gpt-4.1",
        ) from None
    base_url = model.api.base_url
    if base_url:
        service = name.split("/")[1].upper() if provider == "openai-api" else ""
        address = f"{service}_BASE_URL" if service else "the provider's *_BASE_URL"
        check_endpoint(name, base_url, role="judge", address=address)


_MARKUP = re.compile(
    r"\[/?(?:bold|italic|underline|dim|red|green|blue|yellow|magenta|cyan|white)\]"
)
"""rich's style tags, which inspect's messages carry (``[bold][blue]JUDGE_API_KEY[/blue]…``)."""


def _plain(message: str) -> str:
    """The message of inspect's as one plain line: no markup, no ``ERROR:``, parts joined."""
    text = _MARKUP.sub("", message).removeprefix("ERROR:").strip()
    parts = [part.strip().rstrip(".") for part in re.split(r"\n\s*\n", text) if part.strip()]
    return "; ".join(" ".join(part.split()) for part in parts)


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
