"""-T block_answer_sources=true without an engine: the parameters, the sandbox spec, a sandbox's
container arguments, the report's setting and flag, the proxy image's recipe."""

from __future__ import annotations

from typing import Any

import pytest

from inspect_gaia.answer_sources.sources import load_answer_sources
from inspect_gaia.egress import MITMPROXY_VERSION
from inspect_gaia.egress.spec import EGRESS_KEY, EgressSpec
from inspect_gaia.errors import GaiaParameterError
from inspect_gaia.image_layout import BUNDLE, CA_FILE
from inspect_gaia.images.egress import PURE_SOURCES, WHEELS, proxy_dockerfile
from inspect_gaia.logs.comparability import comparability_flags
from inspect_gaia.logs.provenance import GaiaProvenance
from inspect_gaia.record import provenance_of
from inspect_gaia.sandboxes.docker.egress import PORT, Egress, sample_kwargs, wanted
from inspect_gaia.sandboxes.docker.service import create_kwargs, service_config
from inspect_gaia.sandboxes.spec import gaia_compose, gaia_sandbox
from tests.helpers import invoke, parse_params

REFUSED: list[tuple[dict[str, Any], str]] = [
    ({"network": False}, "block_answer_sources needs network=true"),
    ({"sandbox": "compose"}, "only the default sandbox (gaia-docker) runs — drop sandbox=compose"),
    ({"sandbox": "k8s"}, "restrict egress with values.yaml's allowDomains"),
    ({"mcp_servers": "fetch"}, "mcp_servers run on the host, outside the egress proxy"),
    ({"web_search": True}, "web_search runs at the model provider, outside the egress proxy"),
    ({"block_answer_sources": "yes"}, "block_answer_sources must be true or false"),
]


@pytest.mark.parametrize(("raw", "message"), REFUSED, ids=[str(r) for r, _ in REFUSED])
def test_what_cannot_go_with_blocking_is_refused_in_one_line(
    raw: dict[str, Any], message: str
) -> None:
    with pytest.raises(GaiaParameterError) as caught:
        parse_params(**{"block_answer_sources": True, **raw})
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_recording_alone_puts_the_proxy_on_the_path_with_no_rule_and_the_same_needs() -> None:
    sources = parse_params(web_record=True).sources
    assert sources.egress == EgressSpec() and sources.proxied
    service = service_config(gaia_compose(egress=sources.egress))
    assert wanted(service) == EgressSpec()
    assert parse_params(web_record=True, block_answer_sources=True).sources.egress == (
        parse_params(block_answer_sources=True).sources.egress
    )
    refused: list[tuple[dict[str, object], str]] = [
        ({"network": False}, "web_record needs network=true: .* — drop web_record"),
        ({"sandbox": "compose"}, "drop sandbox=compose, or drop web_record"),
        ({"web_search": True}, "outside the egress proxy of web_record"),
        ({"web_record": "yes"}, "web_record must be true, false or bodies"),
    ]
    for raw, message in refused:
        with pytest.raises(GaiaParameterError, match=message):
            parse_params(**{"web_record": True, **raw})


def test_the_rules_reach_the_sandbox_spec_and_provenance(tmp_path: Any) -> None:
    extra = tmp_path / "extra.txt"
    extra.write_text("mirror.example/gaia\n")
    params = parse_params(block_answer_sources=True, blocklist=str(extra))
    assert params.sources.egress is not None
    assert params.sources.egress.rules[-1] == ("mirror.example/gaia", "extra.txt (blocklist)")
    record = provenance_of(params, prompt="p", image_id=None, sandbox_provider="gaia-docker")
    assert record.as_metadata()["answer_sources"]["blocked"] is True
    service = service_config(gaia_compose(egress=params.sources.egress))
    assert wanted(service) == params.sources.egress
    assert "environment" not in create_kwargs(service, "net")  # an extension, not a field
    assert parse_params().sources.egress is None
    assert EGRESS_KEY not in service_config(gaia_compose())
    spec = gaia_sandbox(egress=params.sources.egress)
    assert spec.type == "gaia-docker"


def test_a_sandbox_reaches_out_only_through_the_proxy() -> None:
    proxy = Egress(network="n1", outside="o1", proxy="p1", address="10.1.2.3", ca=b"CA")
    service = service_config(gaia_compose())
    kwargs = sample_kwargs(create_kwargs({**service, "environment": {"A": "1"}}, "run-net"), proxy)
    assert kwargs["host_config"]["network_mode"] == "n1"
    env = dict(item.split("=", 1) for item in kwargs["environment"])
    assert env["A"] == "1"
    for name in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy"):
        assert env[name] == f"http://10.1.2.3:{PORT}"
    assert env["NO_PROXY"] == env["no_proxy"] == "localhost,127.0.0.1,::1"
    assert env["SSL_CERT_FILE"] == env["REQUESTS_CA_BUNDLE"] == BUNDLE
    assert env["NODE_EXTRA_CA_CERTS"] == CA_FILE


def test_the_report_keeps_blocked_runs_apart_and_says_so() -> None:
    def record(**answer_sources: Any) -> GaiaProvenance:
        made = provenance_of(
            parse_params(), prompt="p", image_id=None, sandbox_provider="gaia-docker"
        )
        metadata = made.as_metadata()
        if answer_sources:
            metadata["answer_sources"] = answer_sources
        else:
            del metadata["answer_sources"]  # a log from before the setting existed
            metadata["schema_version"] = 2
        read = GaiaProvenance.from_metadata({"gaia": metadata})
        assert read is not None
        return read

    blocked = record(list_sha256="ab" * 32, blocked=True)
    assert blocked.blocked_list() == "ab" * 32
    assert record(list_sha256="x", blocked=False).blocked_list() is False
    assert record().blocked_list() is False
    settings = blocked.comparable_settings(model="m", task_version="1", epochs=1, run_config={})
    assert settings["block_answer_sources"] == "ab" * 32
    assert comparability_flags(settings)[-1] == (
        "answer sources blocked by the run's egress proxy (list sha256 abababababab)"
    )
    unblocked = record().comparable_settings(model="m", task_version="1", epochs=1, run_config={})
    assert not any("blocked" in flag for flag in comparability_flags(unblocked))
    assert len(load_answer_sources().sha256) == 64


def test_the_proxy_image_recipe() -> None:
    assert f"mitmproxy=={MITMPROXY_VERSION}" in proxy_dockerfile()
    assert WHEELS[0] == f"mitmproxy=={MITMPROXY_VERSION}"
    pinned = [w.split("==")[0].lower() for w in WHEELS + PURE_SOURCES]
    assert len(pinned) == len(set(pinned)) and all("==" in w for w in WHEELS + PURE_SOURCES)
    code, _, err = invoke("image", "build", "--egress-proxy", "--attachments")
    assert code == 1 and "drop it with --egress-proxy" in err


def test_the_proxy_is_supervised_streams_every_body_and_knows_the_host() -> None:
    from inspect_gaia.sandboxes.docker.egress import _command, _replay_command
    from inspect_gaia.shipped import PROXY_PROGRAMS

    command = _command("10.0.0.0/24", ["172.17.0.1", "172.18.0.1"], ["172.30.0.0/16"], False)
    assert not any(arg.startswith("gaia_bod") for arg in command)
    keeping = _command("10.0.0.0/24", [], [], True)  # -T web_record=bodies
    assert "gaia_bodies=true" in keeping and "gaia_record_dir=/egress/record" in keeping
    assert command[:5] == ["python3", "/egress/supervise.py", str(PORT), "--", "mitmdump"]
    assert {"stream_large_bodies=64k", "websocket=false", "gaia_clients=10.0.0.0/24"} <= set(
        command
    )
    # HTTP/1.1 to the sandboxes and to servers: no client window can park a body in the proxy
    assert "http2=false" in command and "http2=false" in _replay_command()
    assert "gaia_deny=172.17.0.1,172.18.0.1" in command
    assert "gaia_allow=172.30.0.0/16" in command
    # everything the container runs of ours is copied in per run: the image is mitmproxy alone
    shipped = {program.name for program in PROXY_PROGRAMS}
    assert shipped == {
        "addon.py",
        "bounds.py",
        "load.py",
        "recorder.py",
        "record_files.py",
        "bodies.py",
        "netpolicy.py",
        "failclosed.py",
        "supervise.py",
        "_urlrules.py",
        "replay.py",
        "replay_match.py",
    }
    # the guard decides first, the recorder writes down what it decided, into the run's folder
    scripts = [command[i + 1] for i, arg in enumerate(command) if arg == "-s"]
    assert scripts == ["/egress/addon.py", "/egress/recorder.py"]
    # a replay: the recorded web in place of the guard (whose options it then has not)
    replay = _replay_command()
    assert [replay[i + 1] for i, arg in enumerate(replay) if arg == "-s"] == [
        "/egress/bounds.py",  # the guard's caps and blame, without the guard
        "/egress/replay.py",
        "/egress/recorder.py",
    ]
    assert "gaia_replay=/egress/replay" in replay and not any("gaia_rules" in a for a in replay)
    assert "gaia_record_dir=/egress/record" in command


def test_upstream_certificates_are_verified_and_only_a_tests_ca_changes_which() -> None:
    """The stand-in web's CA (``TEST_CA_ENV``, tests only) replaces the public CAs; nothing turns
    verification off."""
    from inspect_gaia.sandboxes.docker.egress import _command

    public = _command("10.0.0.0/24", [], [], False)
    assert not any(arg.startswith(("ssl_verify_upstream", "ssl_insecure")) for arg in public)
    tested = _command("10.0.0.0/24", [], [], False, test_ca=True)
    assert "ssl_verify_upstream_trusted_ca=/egress/test-ca.pem" in tested
    assert not any(arg.startswith("ssl_insecure") for arg in tested)
