"""URL rules: how a URL is normalised, which rule covers it, which URLs a text holds."""

from __future__ import annotations

import pytest

from inspect_gaia.answer_sources.sources import load_answer_sources
from inspect_gaia.egress.urlrules import (
    NESTED_IN_FULL,
    Rule,
    all_matches,
    embedded_urls,
    find_urls,
    glob_full,
    glob_prefix,
    match_url,
    normalise,
    parse_rule,
    request_match,
    variants,
)


def _rule(text: str) -> Rule:
    return parse_rule(text, "test")


@pytest.mark.parametrize(
    ("rule", "url", "covered"),
    [
        (
            "huggingface.co/datasets/gaia-benchmark",
            "https://huggingface.co/datasets/gaia-benchmark/GAIA/tree/main",
            True,
        ),
        (
            "huggingface.co/datasets/gaia-benchmark",
            "https://www.huggingface.co/datasets/Gaia-Benchmark/GAIA",
            True,
        ),
        (
            "huggingface.co/datasets/gaia-benchmark",
            "https://huggingface.co/datasets/other/GAIA",
            False,
        ),
        (
            "huggingface.co/datasets/gaia-benchmark",
            "https://nothuggingface.co/datasets/gaia-benchmark",
            False,
        ),
        (
            "huggingface.co/datasets/gaia-benchmark",
            "https://huggingface.co/datasets/x/../gaia-benchmark//GAIA",
            True,
        ),
        (
            "huggingface.co/datasets/gaia-benchmark",
            "https://huggingface.co/datasets/gaia%2Dbenchmark/GAIA",
            True,
        ),
        (
            "huggingface.co/datasets/gaia-benchmark",
            "huggingface.co:443/datasets/gaia-benchmark",
            True,
        ),
        (
            "agents-course-unit4-scoring.hf.space",
            "https://agents-course-unit4-scoring.hf.space/questions",
            True,
        ),
        (
            "*final-assignment*.hf.space",
            "https://someone-final-assignment-template.hf.space/",
            True,
        ),
        ("*final-assignment*.hf.space", "https://someone-homework.hf.space/", False),
        (
            "huggingface.co/spaces/*/*final*assignment*",
            "https://huggingface.co/spaces/ann/Final_Assignment_Template/blob/main/app.py",
            True,
        ),
        (
            "huggingface.co/spaces/*/*final*assignment*",
            "https://huggingface.co/spaces/ann/weather",
            False,
        ),
        (
            "datasets-server.huggingface.co/*dataset=gaia-benchmark/",
            "https://datasets-server.huggingface.co/rows?dataset=gaia-benchmark%2FGAIA&config=2023_all",
            True,
        ),
        (
            "*/*/2023/validation/metadata.",
            "https://raw.githubusercontent.com/a/b/main/GAIA/2023/validation/metadata.jsonl",
            True,
        ),
        (
            "*/*/2023/validation/metadata.",
            "https://raw.githubusercontent.com/a/b/main/GAIA/2023/test/metadata.jsonl",
            False,
        ),
    ],
)
def test_rules(rule: str, url: str, covered: bool) -> None:
    assert (match_url([_rule(rule)], url) is not None) is covered


def test_normalise() -> None:
    assert normalise("HTTPS://Example.ORG./A/%2e%2e/B?Q=a%2Bb+c") == (
        "example.org",
        "/b?q=a b c",
    )  # + is a space in a query
    assert normalise("example.org") == ("example.org", "/")
    assert normalise("http://") is None


@pytest.mark.parametrize("text", ["", "  ", "/datasets/x", "http:///x", "exa mple.org/x"])
def test_invalid_rules(text: str) -> None:
    with pytest.raises(ValueError, match="is not HOST or HOST/PATH"):
        _rule(text)


def test_a_scheme_in_a_rule_is_dropped() -> None:
    assert _rule("https://Mirror.example/GAIA") == Rule(
        "https://mirror.example/gaia", "mirror.example", "/gaia", "test"
    )


def test_find_urls() -> None:
    text = (
        "see https://www.google.com/url?q=https://huggingface.co/datasets/gaia-benchmark/GAIA&sa=U "
        "or hf.co/datasets/gaia-benchmark/GAIA, and "
        "https://search.example/?u=https%3A%2F%2Fmodelscope.cn%2Fdatasets%2FAI-ModelScope%2FGAIA; "
        "mail a@b.example"
    )
    found = list(find_urls(text))
    assert "https://huggingface.co/datasets/gaia-benchmark/GAIA&sa=U" in found
    assert "hf.co/datasets/gaia-benchmark/GAIA" in found
    assert "https://modelscope.cn/datasets/AI-ModelScope/GAIA" in found
    assert not any("b.example" in url for url in found)


@pytest.mark.parametrize(
    ("url", "read_as"),
    [
        # ; path parameters, dropped as Tomcat and Jetty drop them (and kept, as nginx keeps them)
        ("http://huggingface.co/datasets;v=1/gaia-benchmark/GAIA", "/datasets/gaia-benchmark/gaia"),
        # backslashes are slashes to browsers and to IIS
        ("http://huggingface.co/datasets\\gaia-benchmark\\GAIA", "/datasets/gaia-benchmark/gaia"),
        ("http://huggingface.co\\datasets\\gaia-benchmark", "/datasets/gaia-benchmark"),
        ("http://huggingface.co/datasets%5Cgaia-benchmark", "/datasets/gaia-benchmark"),
        # .. percent-encoded twice, and three times
        ("http://huggingface.co/x/%252e%252e/datasets/gaia-benchmark", "/datasets/gaia-benchmark"),
        (
            "http://huggingface.co/x/%25252e%25252e/datasets/gaia-benchmark",
            "/datasets/gaia-benchmark",
        ),
    ],
)
def test_a_path_is_read_the_way_servers_read_it(url: str, read_as: str) -> None:
    assert ("huggingface.co", read_as) in variants(url)
    assert match_url([_rule("huggingface.co/datasets/gaia-benchmark")], url) is not None


def test_a_parameter_that_hides_a_dot_dot_is_read_both_ways() -> None:
    # Tomcat reads `..;` as `..` (leaving the dataset); nginx as a directory named `..;` (in it)
    url = "http://huggingface.co/datasets/gaia-benchmark/..;/GAIA"
    assert variants(url) == [
        ("huggingface.co", "/datasets/gaia"),
        ("huggingface.co", "/datasets/gaia-benchmark/..;/gaia"),
    ]
    assert match_url([_rule("huggingface.co/datasets/gaia-benchmark")], url) is not None


LISTED = "huggingface.co/datasets/gaia-benchmark"


@pytest.mark.parametrize(
    ("host", "target"),
    [
        ("web.archive.org", "/web/2024/https://huggingface.co/datasets/gaia-benchmark/GAIA"),
        ("web.archive.org", "/web/2024id_/huggingface.co/datasets/gaia-benchmark/GAIA"),
        ("r.jina.ai", "/https://huggingface.co/datasets/gaia-benchmark/GAIA"),
        ("relay.example", "/fetch?url=https%3A%2F%2Fhuggingface.co%2Fdatasets%2Fgaia-benchmark"),
        (
            "relay.example",
            "/fetch?url=https%253A%252F%252Fhuggingface.co%252Fdatasets%252Fgaia-benchmark",
        ),
        ("relay.example", "/fetch?url=huggingface.co/datasets/gaia-benchmark&x=1"),
        (
            "relay.example",
            "/a?u=http://b.example/?v=https://huggingface.co/datasets/gaia-benchmark",
        ),
        # backslashes after the host: WHATWG parsers (Node's new URL, browsers) read "/"
        ("relay.example", "/fetch?url=https://huggingface.co%5Cdatasets%5Cgaia-benchmark%5CGAIA"),
        ("relay.example", "/fetch?url=https://huggingface.co\\datasets\\gaia-benchmark"),
    ],
)
def test_a_listed_url_inside_a_relay_is_found(host: str, target: str) -> None:
    found = request_match([_rule(LISTED)], "https", [host], target)
    assert found is not None and "huggingface.co/datasets/gaia-benchmark" in found[0].lower()


def test_a_request_is_judged_under_every_name_it_gives() -> None:
    rules = [_rule(LISTED)]
    target = "/datasets/gaia-benchmark/GAIA"
    # by IP with the listed name as SNI or Host header, or an absolute-form authority
    assert request_match(rules, "https", ["10.9.8.7", "", "HuggingFace.co."], target) is not None
    assert request_match(rules, "http", ["unlisted.example:80", "huggingface.co:80"], target)
    assert request_match(rules, "http", ["[2001:db8::1]:443"], target) is None
    assert request_match(rules, "https", ["unlisted.example"], target) is None


@pytest.mark.parametrize(
    "target",
    [
        "/wiki/Lighthouse_of_Alexandria?action=raw",
        "/search?q=gaia+benchmark+answers&hl=en",
        "/combine/npm/a@1/dist/a.min.js,npm/b@2/b.min.js",
        "/datasets/other/dataset/resolve/main/data.csv",
        "/r?u=https://en.wikipedia.org/wiki/Lighthouse",
    ],
)
def test_ordinary_requests_pass(target: str) -> None:
    rules = load_answer_sources().rules
    assert request_match(rules, "https", ["huggingface.co", "huggingface.co"], target) is None


@pytest.mark.parametrize(
    ("text", "host", "path"),
    [
        ("huggingface.co./datasets/gaia-benchmark", "huggingface.co", "/datasets/gaia-benchmark"),
        (".hf.co", "hf.co", None),
        ("huggingface.co/datasets/gaia%2Dbenchmark", "huggingface.co", "/datasets/gaia-benchmark"),
        (
            "huggingface.co/datasets%5Cgaia%252Dbenchmark",
            "huggingface.co",
            "/datasets/gaia-benchmark",
        ),
        ("huggingface.co/datasets\\gaia-benchmark", "huggingface.co", "/datasets/gaia-benchmark"),
    ],
)
def test_a_rule_is_read_as_the_urls_it_names(text: str, host: str, path: str | None) -> None:
    rule = _rule(text)
    assert (rule.host, rule.path) == (host, path)
    assert match_url([rule], f"https://www.{host}/datasets/gaia-benchmark/GAIA") is not None


def test_a_host_with_an_empty_label_is_refused() -> None:
    with pytest.raises(ValueError, match="is not HOST or HOST/PATH"):
        _rule("huggingface..co/datasets")


# -- bounded work on crafted input (a hang guard, not a timing: the old globs were cubic) ---------

MEGABYTE = 1 << 20


@pytest.mark.timeout(60)
def test_globs_are_linear_on_crafted_input() -> None:
    rules = load_answer_sources().rules
    # `*final*assignment*` over a path of many slashes and "final", never "assignment": cubic as
    # a regex (one 16 KB tool result took 36.6 s); here one scan per literal part
    path = "/spaces/" + "a/final" * (MEGABYTE // 7)
    assert match_url(rules, "https://huggingface.co" + path) is None
    assert not glob_prefix("/spaces/*/*final*assignment*", path)
    host = "final-" * (MEGABYTE // 6) + ".hf.space"
    assert not glob_full("*final-assignment*.hf.space", host)
    assert glob_full("*final-assignment*.hf.space", "x-final-assignment-y.hf.space")
    assert not glob_full("a*b*a", "ab")  # the last part may not overlap the ones before


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "text",
    [
        "http://" * (MEGABYTE // 7),
        "https://huggingface.co/spaces/x/" * (MEGABYTE // 32),
        "https%3A%2F%2Fa.example%2F" * (MEGABYTE // 26),
        "a." * (MEGABYTE // 2),
        "lorem ipsum example.com/a/b?u=http://c.example/ " * (MEGABYTE // 48),
    ],
    ids=["schemes", "nested-listed-host", "encoded", "dots", "prose"],
)
def test_finding_urls_reads_a_text_a_bounded_number_of_times(text: str) -> None:
    # what the matching reads is what find_urls yields: bounded by a multiple of the text
    yielded = sum(len(url) for url in find_urls(text))
    assert yielded <= 2 * (NESTED_IN_FULL + 2) * len(text)
    all_matches(load_answer_sources().rules, text)
    embedded = sum(len(url) for url in embedded_urls(text[:65536]))
    assert embedded <= 8 * (NESTED_IN_FULL + 2) * 65536


def test_nested_urls_are_each_found() -> None:
    inner = "https://huggingface.co/datasets/gaia-benchmark/GAIA"
    few = "https://a.example/?u=https://b.example/?v=" + inner
    assert inner in list(find_urls(few))
    # past NESTED_IN_FULL in one run, each is read up to the next: still found
    many = "".join(f"https://r{i}.example/?u=" for i in range(3 * NESTED_IN_FULL)) + inner
    assert inner in list(find_urls(many))
    assert match_url([_rule(LISTED)], inner) is not None
