"""The list of known answer sources: the package's file, a user's file, the hash."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from inspect_ai.model import ChatMessageAssistant
from inspect_ai.solver import TaskState
from inspect_ai.tool import ToolCall

from inspect_gaia.answer_sources.detect import contamination
from inspect_gaia.answer_sources.sources import PACKAGE_LIST, load_answer_sources
from inspect_gaia.egress.urlrules import match_url, parse_rule
from inspect_gaia.errors import GaiaParameterError
from inspect_gaia.record import provenance_of
from tests.helpers import parse_params

# One URL per kind of place the package's list names (none of them is ever fetched).
KNOWN = {
    "https://huggingface.co/datasets/gaia-benchmark/GAIA/resolve/main/2023/validation/metadata.parquet": "GAIA on Hugging Face",
    "https://huggingface.co/datasets/gaia-benchmark/results_public": "GAIA on Hugging Face",
    "https://huggingface.co/api/datasets/gaia-benchmark/GAIA/parquet/2023_all/validation/0.parquet": "GAIA on Hugging Face",
    "https://hf-mirror.com/datasets/gaia-benchmark/GAIA": "GAIA on Hugging Face",
    "https://gaia-benchmark-leaderboard.hf.space/": "GAIA on Hugging Face",
    "https://datasets-server.huggingface.co/first-rows?dataset=gaia-benchmark%2FGAIA&config=2023_all&split=validation": "GAIA on Hugging Face",
    "https://www.modelscope.cn/datasets/AI-ModelScope/GAIA/files": "GAIA on ModelScope",
    "https://modelscope.cn/api/v1/datasets/gaia-benchmark/GAIA/repo?Revision=master&FilePath=2023/validation/metadata.jsonl": "GAIA on ModelScope",
    "https://huggingface.co/datasets/miromind-ai/MiroFlow-Benchmarks/resolve/main/gaia-val.zip": "MiroFlow benchmark bundle",
    "https://agents-course-unit4-scoring.hf.space/questions": "Hugging Face agents course, unit 4",
    "https://huggingface.co/spaces/someone/Final_Assignment_Template/raw/main/app.py": "Hugging Face agents course, unit 4",
    "https://raw.githubusercontent.com/someone/agent/main/data/GAIA/2023/validation/metadata.jsonl": "GAIA files, any host",
    "https://github.com/someone/agent/tree/main/datasets--gaia-benchmark--GAIA/snapshots/x": "GAIA files, any host",
    # Issue #33: copies the list missed
    "https://raw.githubusercontent.com/RUC-NLPIR/WebThinker/refs/heads/main/data/GAIA/dev.json": "WebThinker's GAIA file",
    "https://github.com/xiaowu0162/WebThinker/blob/main/data/GAIA/dev.json": "WebThinker's GAIA file",
    # Round 5: the listed repository's archives and blob API hold the file too
    "https://github.com/RUC-NLPIR/WebThinker/archive/refs/heads/main.zip": "WebThinker's GAIA file",
    "https://codeload.github.com/RUC-NLPIR/WebThinker/zip/refs/heads/main": "WebThinker's GAIA file",
    "https://api.github.com/repos/RUC-NLPIR/WebThinker/git/blobs/5d2f0c": "WebThinker's GAIA file",
    "https://api.github.com/repos/RUC-NLPIR/WebThinker/tarball/main": "WebThinker's GAIA file",
    "https://huggingface.co/buckets/proy/GAIA-bucket/resolve/2023/validation/metadata.parquet": "GAIA bucket on the Hub",
    "https://huggingface.co/datasets/Intelligent-Internet/GAIA-Subset-Benchmark/viewer": "GAIA subsets and copies on the Hub",
    "https://huggingface.co/datasets/cmriat/gaia/viewer/default/validation": "GAIA subsets and copies on the Hub",
    "https://huggingface.co/spaces/bstraehle/gaia/resolve/main/files/gaia_validation.jsonl": "GAIA subsets and copies on the Hub",
}
INNOCENT = [
    "https://huggingface.co/datasets/other/dataset",
    "https://github.com/RUC-NLPIR/WebThinker",
    "https://huggingface.co/buckets/someone/weights",
    "https://huggingface.co/spaces/someone/weather",
    "https://en.wikipedia.org/wiki/Lighthouse",
    "https://modelscope.cn/models/qwen/Qwen3-8B",
    "https://arxiv.org/abs/2311.12983",
]


def test_the_package_list_names_each_kind_of_source() -> None:
    sources = load_answer_sources()
    for url, source in KNOWN.items():
        rule = match_url(sources.rules, url)
        assert rule is not None and rule.source == source, url
    for url in INNOCENT:
        assert match_url(sources.rules, url) is None, url


def test_every_entry_is_documented() -> None:
    data = yaml.safe_load(PACKAGE_LIST.read_text())
    for entry in data["sources"]:
        assert entry["name"] and len(entry["why"]) > 40 and entry["urls"], entry


def _url_of(rule: str) -> str:
    """A URL the rule covers: each ``*`` filled in, a bare ``*`` host given a name.

    A path ending in ``/`` or ``.`` gets a last part (a URL loses a trailing slash when normalised,
    and a trailing dot when found in text, where it ends a sentence).
    """
    host, slash, path = rule.partition("/")
    host = "mirror.example" if host == "*" else host.replace("*", "x")
    path = path.replace("*", "x") + ("x" if path.endswith(("/", ".")) else "")
    return f"https://{host}/{path}" if slash else f"https://{host}/"


def _called(command: str) -> TaskState:
    call = ToolCall(id="c1", function="bash", arguments={"cmd": command})
    return TaskState(
        model="scripted/x",  # type: ignore[arg-type]
        sample_id="0c5b0e3e-5e8f-4f5b-9a47-6f1e4c2b7d10",
        epoch=1,
        input="Here is the question:\n\nHow many?",
        messages=[ChatMessageAssistant(content="", tool_calls=[call])],
        metadata={"level": 1, "file_name": ""},
    )


def test_every_rule_parses_and_the_detection_reaches_it() -> None:
    """Each entry's rules and mentions, as a sample's tool call would hold them, flag that entry."""
    sources = load_answer_sources()
    for entry in yaml.safe_load(PACKAGE_LIST.read_text())["sources"]:
        for rule in entry["urls"]:
            parse_rule(rule, entry["name"])  # raises on a rule that is not HOST[/PATH]
            url = _url_of(rule)
            flags = contamination(_called(f"curl -sL '{url}'"), "", sources, graded=False)
            found = [(f["kind"], f.get("source")) for f in flags]
            assert ("answer_source", entry["name"]) in found, (rule, url, found)
        for mention in entry.get("mentions", []):
            flags = contamination(_called(f"head ./{mention}"), "", sources, graded=False)
            found = [(f["kind"], f.get("source")) for f in flags]
            assert ("dataset_reference", entry["name"]) in found, (mention, found)


def test_a_user_file_in_either_format(tmp_path: Path) -> None:
    lines = tmp_path / "lines.txt"
    lines.write_text("mirror.example/gaia   # a copy\n\nhttps://other.example/answers\n")
    as_yaml = tmp_path / "more.yaml"
    as_yaml.write_text(
        yaml.safe_dump(
            {
                "sources": [
                    {
                        "name": "Our mirror",
                        "urls": ["mirror.example/gaia"],
                        "mentions": ["ours/gaia"],
                    }
                ]
            }
        )
    )
    base = load_answer_sources()
    from_lines = load_answer_sources(str(lines))
    assert len(from_lines.rules) == len(base.rules) + 2
    assert from_lines.files == (str(PACKAGE_LIST), str(lines.resolve()))
    from_yaml = load_answer_sources(str(as_yaml))
    assert from_yaml.rules[-1].source == "Our mirror"
    assert ("ours/gaia", "Our mirror") in from_yaml.mentions
    assert len({base.sha256, from_lines.sha256, from_yaml.sha256}) == 3


def test_the_hash_is_over_the_rules_not_the_bytes(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    one, two = tmp_path / "a" / "extra.txt", tmp_path / "b" / "extra.txt"
    one.write_text("mirror.example/gaia\n")
    two.write_text("# the same rule, commented\n  MIRROR.example/gaia  \n")
    assert load_answer_sources(str(one)).sha256 == load_answer_sources(str(two)).sha256


def test_a_bad_user_file_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("fine.example/x\n/no-host\n")
    with pytest.raises(GaiaParameterError, match=r"blocklist .*bad.txt: '/no-host' is not HOST"):
        load_answer_sources(str(bad))
    broken = tmp_path / "broken.yaml"
    broken.write_text("sources: nope\n")
    with pytest.raises(GaiaParameterError, match="`sources` must be a list"):
        load_answer_sources(str(broken))


def test_the_task_parameter_and_its_provenance(tmp_path: Path) -> None:
    from inspect_gaia.options import GaiaParams

    extra = tmp_path / "extra.txt"
    extra.write_text("mirror.example/gaia\n")

    def record(params: GaiaParams) -> dict[str, Any]:
        made = provenance_of(params, prompt="p", image_id=None, sandbox_provider="x")
        return made.as_metadata()

    default = record(parse_params())
    assert default["answer_sources"] == {
        "list_sha256": load_answer_sources().sha256,
        "blocklist": None,
        "blocked": False,
    }
    params = parse_params(blocklist=str(extra))
    assert params.sources.answer_sources.rules[-1].pattern == "mirror.example/gaia"
    meta = record(params)
    assert meta["answer_sources"]["list_sha256"] == load_answer_sources(str(extra)).sha256
    assert meta["answer_sources"]["blocklist"] == str(extra)
    for bad, message in (
        ("", "blocklist must be a non-empty string"),
        ("/no/such", "is not a file"),
    ):
        with pytest.raises(GaiaParameterError, match=message):
            parse_params(blocklist=bad)


def test_rules_that_could_never_match_are_read_as_they_are_meant(tmp_path: Path) -> None:
    # a trailing dot on the host, a percent-escaped path: accepted before, but never matched
    extra = tmp_path / "extra.txt"
    extra.write_text("mirror.example./gaia%2Dcopy\nother.example/answers%5Cgaia\n")
    rules = load_answer_sources(str(extra)).rules
    for url in (
        "https://mirror.example/gaia-copy/metadata.jsonl",
        "http://other.example/answers/gaia",
    ):
        rule = match_url(rules, url)
        assert rule is not None and rule.source == "extra.txt (blocklist)", url


def test_every_rule_of_the_package_list_can_match() -> None:
    for rule in load_answer_sources().rules:
        assert rule.host == rule.host.strip(".") and "%" not in (rule.path or ""), rule
