"""What produced a run: the typed ``gaia`` record in each log's task metadata, and what it decides.

``GaiaProvenance`` is written once, from the parsed parameters (``GaiaProvenance.of``), into the
log header (``inspect view`` shows it under the task's info), and validated whenever a log is read
(``GaiaProvenance.from_metadata``), so ``report``, ``compare`` and ``submission`` read typed fields
rather than string keys, and a damaged or hand-edited record is one line naming the field.

The record carries a ``schema_version``. Version 1 is the untyped dict inspect_gaia 0.1.0 wrote
(no version key); it reads as it is, with the fields added during 0.1.0 (``multimodal``,
``view_file``, ``sandbox_provider``, ``limits.disk``) at the values those runs had. Any change to
the fields bumps ``SCHEMA_VERSION``; a record newer than this reader knows is refused with the fix
(upgrade), never half-read.

Which runs may be pooled (``comparable_settings``) and why a score is not a plain pass@1 GAIA score
(``comparability_flags``) are decided here too, from the typed record.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ._params import DEFAULT_MAX_ATTEMPTS, DEFAULT_MESSAGE_LIMIT, LEVELS, GaiaParams, Split
from .dataset import DEFAULT_INPUT_PROMPT
from .errors import short
from .sandbox import PROVIDERS, SandboxKind

SCHEMA_VERSION = 2
"""Version of the ``gaia`` record this package writes; 1 is 0.1.0's untyped dict."""

METADATA_KEY = "gaia"
"""The key of the record in the task metadata (``log.eval.metadata``)."""

INSPECT_LIMITS = (
    "message_limit",
    "token_limit",
    "turn_limit",
    "time_limit",
    "working_limit",
    "cost_limit",
)
GENERATE_OPTIONS = ("temperature", "top_p", "max_tokens", "reasoning_effort")
"""inspect's run options that change results: the limits, and generation settings when given."""

DatasetSource = Literal["huggingface", "modelscope", "local"]


class _Record(BaseModel):
    # strict: a log is JSON, so a "2" or a true where a number belongs is damage, not a spelling
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


class ProvenanceLimits(_Record):
    """Every limit that can end a sample or constrain its sandbox."""

    message_limit: int = Field(ge=1)
    """The task's message limit (a ``--message-limit`` given to inspect is in the log's config)."""
    command_timeout: int = Field(ge=1)
    max_attempts: int = Field(ge=1)
    cpus: float | None = Field(gt=0)
    """CPUs per sandbox, as capped on the machine that ran it; ``None``: unlimited."""
    memory: str | None
    pids: int | None = Field(ge=1)
    disk: str | None = None


class GaiaProvenance(_Record):
    """The ``gaia`` record of a log: dataset, prompt, agent, limits, sandbox and versions."""

    schema_version: int = 1
    split: Split
    levels: tuple[int, ...] = Field(min_length=1)
    hub: DatasetSource
    """Where the questions came from: a hub, or ``local`` (``dataset_path``)."""
    revision: str
    dataset_path: str | None
    prompt_template_sha256: str
    tools: tuple[str, ...] = Field(min_length=1)
    """The tools offered, in the order the agent got them (MCP servers as ``mcp:<command>``)."""
    multimodal: bool = False
    view_file: bool = False
    limits: ProvenanceLimits
    sandbox: SandboxKind
    sandbox_provider: str | None = None
    image: str
    image_id: str | None = None
    network: bool
    inspect_ai_version: str | None = None
    inspect_gaia_version: str | None = None

    @field_validator("levels", "tools", mode="before")
    @classmethod
    def _json_lists(cls, value: object) -> object:
        """JSON has lists where the record has tuples."""
        return tuple(value) if isinstance(value, list) else value

    @field_validator("levels")
    @classmethod
    def _gaia_levels(cls, levels: tuple[int, ...]) -> tuple[int, ...]:
        if not set(levels) <= set(LEVELS):
            raise ValueError("not a list of GAIA levels (1, 2, 3)")
        return levels

    @classmethod
    def of(
        cls, params: GaiaParams, *, prompt: str, image_id: str | None, sandbox_provider: str
    ) -> GaiaProvenance:
        """The record of a run with ``params``, for the log header."""
        return cls(
            schema_version=SCHEMA_VERSION,
            split=params.split,
            levels=params.levels,
            hub="local" if params.dataset_path else params.hub,
            revision=params.revision_read,
            dataset_path=params.dataset_path,
            prompt_template_sha256=hashlib.sha256(prompt.encode()).hexdigest(),
            tools=tuple(params.tools),
            multimodal=params.multimodal,
            view_file=params.view_file or params.multimodal,
            limits=ProvenanceLimits(
                message_limit=DEFAULT_MESSAGE_LIMIT,
                command_timeout=params.command_timeout,
                max_attempts=params.max_attempts,
                cpus=params.limits.effective_cpus(),
                memory=params.limits.memory,
                pids=params.limits.pids,
                disk=params.limits.disk,
            ),
            sandbox=params.sandbox,
            sandbox_provider=sandbox_provider,
            image=params.image,
            image_id=image_id,
            network=params.network,
            inspect_ai_version=_version("inspect_ai"),
            inspect_gaia_version=_version("inspect-gaia"),
        )

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, Any] | None) -> GaiaProvenance | None:
        """The record in a log's task metadata; ``None`` when there is none (not our log).

        Raises:
            ProvenanceError: The record is there but damaged, or newer than this reader.
        """
        record = (metadata or {}).get(METADATA_KEY)
        if record is None:
            return None
        if not isinstance(record, Mapping):
            raise ProvenanceError(f"{METADATA_KEY} is {short(record)}, not a mapping")
        version = record.get("schema_version", 1)
        if isinstance(version, int) and version > SCHEMA_VERSION:
            raise ProvenanceError(
                f"{METADATA_KEY}.schema_version is {version}, newer than this inspect_gaia reads "
                f"(up to {SCHEMA_VERSION})",
                fix="upgrade inspect-gaia (pip install -U inspect-gaia)",
            )
        try:
            return cls.model_validate(record)
        except ValidationError as ex:
            raise ProvenanceError(_first_problem(ex, METADATA_KEY)) from ex

    def as_metadata(self) -> dict[str, Any]:
        """The record as the task metadata holds it (plain JSON types)."""
        return self.model_dump(mode="json")

    def dataset_arguments(self, dataset_path: str | None = None) -> dict[str, Any]:
        """``gaia_dataset``'s hub, revision and dataset_path that read this run's questions again.

        Args:
            dataset_path: A local snapshot to read instead of the one the run read.
        """
        path = dataset_path or self.dataset_path
        if path is not None or self.hub == "local":
            return {"dataset_path": path, "revision": None}
        return {"hub": self.hub, "revision": self.revision, "dataset_path": None}

    def comparable_settings(
        self, *, model: str, task_version: str, epochs: int, run_config: Mapping[str, Any]
    ) -> dict[str, Any]:
        """What must be equal for two runs' samples to be pooled into one score.

        The model, split, task version and epochs; the agent's tools and modality; every limit that
        can end a sample (attempts, messages, tokens, time, cost, command timeout); the sandbox
        (kind, image, network, CPUs, memory, processes, disk); the prompt; generation settings
        given on the command line (``run_config``: inspect's limits and generation options). Not
        the levels or ids (pooling those is the point), the hub or inspect's version.
        """
        limits = self.limits
        return {
            "model": model,
            "split": self.split,
            "task_version": task_version,
            "epochs": epochs,
            "tools": list(self.tools),
            "multimodal": self.multimodal,
            "max_attempts": limits.max_attempts,
            **run_config,
            "command_timeout": limits.command_timeout,
            "sandbox": self.sandbox,
            "image": self.image,
            "network": self.network,
            "cpus": limits.cpus,
            "memory": limits.memory,
            "pids": limits.pids,
            "disk": limits.disk,
            "prompt_template_sha256": self.prompt_template_sha256,
        }


class ProvenanceError(ValueError):
    """A ``gaia`` record that does not validate: ``str()`` names the field and what is wrong."""

    def __init__(self, problem: str, fix: str = "") -> None:
        """Keep the problem and its fix apart, for the reader to place the log's name."""
        super().__init__(problem)
        self.problem = problem
        self.fix = fix


@functools.cache
def default_settings() -> dict[str, Any]:
    """The task's defaults among ``comparable_settings`` (a report labels a group off these).

    Model and task version are not defaults of the task: a label names them whenever they differ.
    """
    default = GaiaProvenance.of(
        GaiaParams(),
        prompt=DEFAULT_INPUT_PROMPT,
        image_id=None,
        sandbox_provider=PROVIDERS["docker"],
    )
    config = {name: None for name in INSPECT_LIMITS} | {"message_limit": DEFAULT_MESSAGE_LIMIT}
    settings = default.comparable_settings(model="", task_version="", epochs=1, run_config=config)
    return {k: v for k, v in settings.items() if k not in ("model", "task_version")}


DEFAULT_TOOLS: tuple[str, ...] = tuple(GaiaParams().tools)


def comparability_flags(settings: Mapping[str, Any]) -> list[str]:
    """Why a run's score is not a plain pass@1 GAIA score with the default agent.

    Args:
        settings: A run's (or a group's) ``comparable_settings``.
    """
    flags: list[str] = []
    attempts = settings.get("max_attempts") or DEFAULT_MAX_ATTEMPTS
    if attempts > 1:
        flags.append(f"oracle retries, not pass@1 (max_attempts={attempts})")
    tools = list(settings.get("tools") or DEFAULT_TOOLS)
    if tools != list(DEFAULT_TOOLS):
        flags.append(f"non-default tools: {', '.join(tools)}")
    if settings.get("multimodal"):
        flags.append("multimodal: true")
    limit = settings.get("message_limit")
    if limit is not None and limit != DEFAULT_MESSAGE_LIMIT:
        flags.append(f"message limit {limit} (default {DEFAULT_MESSAGE_LIMIT})")
    return flags


# -- one line per damaged field --------------------------------------------------------------------

_EXPECTED = {
    "int": "not a whole number",
    "float": "not a number",
    "bool": "not true or false",
    "string": "not a string",
    "list": "not a list",
    "tuple": "not a list",
    "dict": "not a mapping",
    "model": "not a mapping",
}


def _first_problem(error: ValidationError, prefix: str) -> str:
    """The first problem of a validation error as ``<field> is <value>, <what is wrong>``."""
    first = error.errors(include_url=False)[0]
    where = ".".join([prefix, *map(str, first["loc"])])
    kind = first["type"]
    if kind == "missing":
        return f"{where} is missing"
    if kind == "extra_forbidden":
        return f"{where} is not a field of the record"
    if kind == "too_short":
        return f"{where} is empty"
    family = kind.split("_")[0]
    if family in _EXPECTED:
        expected = _EXPECTED[family]
    elif kind == "literal_error":
        expected = f"not one of {first['ctx']['expected']}"
    elif kind == "value_error":
        expected = str(first["ctx"]["error"])
    elif kind.startswith(("greater_than", "less_than")):
        expected = str(first["msg"]).lower().replace("input should", "should")
    else:
        expected = str(first["msg"]).lower()
    return f"{where} is {short(first['input'])}, {expected}"


def _version(package: str) -> str | None:
    if package == "inspect_ai":
        # the module attribute, not importlib.metadata: parsing inspect_ai's long METADATA costs
        # ~0.2 s inside a starting eval
        import inspect_ai

        return str(inspect_ai.__version__)
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None
