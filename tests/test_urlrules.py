"""URL rules: how a URL is normalised, which rule covers it, which URLs a text holds."""

from __future__ import annotations

import pytest

from inspect_gaia.answer_sources.urlrules import Rule, find_urls, match_url, normalise, parse_rule


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
