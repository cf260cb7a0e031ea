"""What produced a run: the typed ``gaia`` record in each log's task metadata, and what it decides.

``GaiaProvenance`` is written once, from the parsed parameters (``record.provenance_of``, in the
task's wing: reading a record never loads what writes it), into the log header (``inspect view``
shows it under the task's info), and validated whenever a log is read
(``GaiaProvenance.from_metadata``), so ``report``, ``compare`` and ``submission`` read typed fields
rather than string keys, and a damaged or hand-edited record is one line naming the field.

The record carries a ``schema_version``. Version 1 is the untyped dict inspect_gaia 0.1.0 wrote
(no version key); it reads as it is, with the fields added during 0.1.0 (``multimodal``,
``view_file``, ``sandbox_provider``, ``limits.disk``) at the values those runs had. Any change to
the fields bumps ``SCHEMA_VERSION`` (2: typed; 3: ``answer_sources``; 4: ``final_answer_ends``,
``image_digest``, a named ``question_set`` and ``web_tools``, the in-sandbox browser's and reader's
versions; 5: ``web_record``; 6: ``agent``, another agent than the default and its versions; 7:
``web_replay``; 8: ``web_archive``, the hash of a ``web_record=bodies`` run's archive, and a
replay's ``format`` and ``blocked_answer_sources``; 9: ``probe``, a run of
``inspect_gaia/gaia_probe``; 10: ``agent.identity``, the model name an agent CLI is told, and
``agent.configuration``); a record newer than this reader knows is refused with the fix
(upgrade), never half-read. An older record reads with ``final_answer_ends`` false,
``image_digest`` unknown (``None``), no ``web_tools``, no ``web_record``, no ``web_replay``, no
``web_archive`` and no ``probe``; one before 6 ran the default agent; an agent's record before 10
has no ``identity`` (Claude Code was told ``claude-sonnet-4-5`` then too, with any model but a
Claude: docs/agents.md).

One field is written after the run: ``web_archive`` (the archive is closed after inspect's last
write of the header), by an edit of inspect's own (``edit_eval_log``: the log's ``log_updates``
say who and why), so a log's current record (``EvalLog.metadata``) has it and the record as the
run began (``eval.metadata``) does not.

Which runs may be pooled is read off the typed record too (``comparable_settings``), in the shape
every harness's runs share (``comparability.pooled_settings``, beside ``comparability_flags``,
which say why a score is not a plain pass@1 GAIA score). What only records can tell is here: the
question set a group of runs asked (``question_set_flag``); the task's own defaults among those
settings are a default run's record (``record.default_settings``), handed in by the command line.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..defaults import PROVIDERS, SandboxKind
from ..errors import GaiaError, short, validation_problem
from ..imageref import identity, pinned_digest
from ..questions.dataset import LEVELS, Split
from ..questions.questionset import QuestionSetRecord, describe
from .comparability import OWN_HARNESS, Scaffold, pooled_settings
from .sandbox_ran import SandboxRan, replacement_flags, sandbox_setting

SCHEMA_VERSION = 10
"""Version of the ``gaia`` record this package writes; 1 is 0.1.0's untyped dict."""

METADATA_KEY = "gaia"
"""The key of the record in the task metadata (``log.eval.metadata``)."""

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


class AnswerSourcesRecord(_Record):
    """The known answer sources a run flagged samples for reading, and whether it blocked them."""

    list_sha256: str
    """The SHA-256 of the list used (the package's, plus ``blocklist``'s rules)."""
    blocklist: str | None = None
    """``-T blocklist``: the file that extended the package's list."""
    blocked: bool = False
    """``-T block_answer_sources``: sandboxes reached the network only through the run's proxy."""


class WebReplayRecord(_Record):
    """The archive a replayed run served its sandboxes from (``-T web_replay``)."""

    archive: str
    """Its file name (where it was is the user's machine's)."""
    sha256: str
    format: Literal["archive", "har"] = "archive"
    """A ``web_record=bodies`` archive (or a merge of them), or a HAR recorded elsewhere."""
    blocked_answer_sources: bool | None = None
    """Whether the run that recorded it refused answer sources (a replay applies no rule of its
    own: an archive of a run that did not block serves the pages it read); ``None``: the archive
    does not say (a HAR, or an archive from before schema 8 that refused nothing)."""


class WebArchiveRecord(_Record):
    """The archive of bodies a ``-T web_record=bodies`` run wrote beside its log."""

    archive: str
    """Its file name, in the log's folder."""
    sha256: str
    bytes: int = Field(ge=0)


class WebToolsRecord(_Record):
    """The in-sandbox browser and page reader a run offered (``-T browser``, ``-T web_reader``)."""

    browser: bool
    web_reader: bool
    versions: dict[str, str] | None = None
    """From the image's labels (``chromium``, ``playwright_mcp``, ``mcp_server_fetch``, ...);
    ``None`` when the image could not be read (no engine, or an image pulled later)."""


class AgentRecord(_Record):
    """``-T agent``: another agent than the default, run in the sandbox through inspect's bridge."""

    name: str
    cli_version: str | None = None
    """The CLI's version, from the image's labels; ``None`` when the image could not be read."""
    inspect_swe_version: str | None = None
    identity: str | None = None
    """The model name the CLI was told it runs on, when not the run's model's own (Claude Code:
    ``claude-sonnet-4-5`` with any model but a Claude); ``None``: its own, or no name (and every
    record before 10)."""
    configuration: str | None = None
    """The configuration inspect_gaia gave the agent in place of its own (mini-swe-agent's GAIA
    one: ``gaia <sha256 of it, 12 hex>``); ``None``: its own (every record before 10)."""

    @property
    def label(self) -> str:
        """The agent as a flag names it: ``codex_cli 0.171.0 (inspect_swe 0.2.72)``.

        With the identity the CLI was told: ``..., told it is claude-sonnet-4-5``.
        """
        return (
            f"{self.name} {self.cli_version or '(version unknown)'}"
            + (f" (inspect_swe {self.inspect_swe_version})" if self.inspect_swe_version else "")
            + (f", told it is {self.identity}" if self.identity else "")
            + (f", configuration {self.configuration}" if self.configuration else "")
        )


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
    """The image reference as given (``-T image=``)."""
    image_id: str | None = None
    """The local image id the engine had when the task was built; ``None``: not there yet (the
    provider pulled it), no engine answered, or Kubernetes (the cluster pulls it)."""
    image_digest: str | None = None
    """The registry digest: the reference's own when pinned, else the pulled image's
    (``RepoDigests``); ``None`` for a local build, or when unknown."""
    network: bool
    inspect_ai_version: str | None = None
    inspect_gaia_version: str | None = None
    question_set: QuestionSetRecord | None = None
    """Questions left out or answers corrected; ``None`` (not written): the split as published."""
    answer_sources: AnswerSourcesRecord | None = None
    """``None``: a record from before version 3 (nothing blocked)."""
    final_answer_ends: bool = False
    """A plain-text ``FINAL ANSWER:`` (no tool call) ended the sample (``agents/basic.idle_guard``);
    ``False``: a record from before version 4, whose agent nudged such a sample to the message
    limit. Not a pooling setting: the answer scored is the same, only the cost differs (README,
    Deviations)."""
    web_tools: WebToolsRecord | None = None
    """``None`` (not written): no browser or reader in the sandbox (and every record before 4)."""
    web_record: bool | None = None
    """``True``: the sandboxes reached the web only through the run's egress proxy, which put each
    sample's requests into its store (``egress/web_record.STORE_KEY``): ``-T web_record`` (recording
    only) or ``-T block_answer_sources``. ``None`` (not written): no record (and every record
    before 5). The counts are the samples' (a log's header is written before any request)."""
    agent: AgentRecord | None = None
    """``None`` (not written): the default agent (and every record before 6)."""
    web_replay: WebReplayRecord | None = None
    """The sandboxes read a recorded web, not the live one (``-T web_replay``); ``None`` (not
    written): the live web (and every record before 7). Never pooled with a live run."""
    web_archive: WebArchiveRecord | None = None
    """The archive this run wrote (``-T web_record=bodies``), once it was closed: written by a
    post-eval edit (module docstring); ``None``: none, not yet, or a record before 8."""
    probe: bool | None = None
    """``True``: a run of ``inspect_gaia/gaia_probe``, which tries every route to the answers in
    its sandboxes and answers nothing: never a score, never pooled with a run that answered.
    ``None`` (not written): a run that answered (and every record before 9)."""

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
                fix="upgrade inspect-gaia (`pip install .` in a newer checkout)",
            )
        try:
            return cls.model_validate(record)
        except ValidationError as ex:
            raise ProvenanceError(validation_problem(ex, METADATA_KEY)) from ex

    def as_metadata(self) -> dict[str, Any]:
        """The record as the task metadata holds it (plain JSON types).

        A run of the split as published writes no ``question_set``, one without web tools no
        ``web_tools``, one without a proxy no ``web_record``: their records are what they were.
        """
        unset = {
            "question_set": self.question_set,
            "web_tools": self.web_tools,
            "web_record": self.web_record,
            "agent": self.agent,
            "web_replay": self.web_replay,
            "web_archive": self.web_archive,
            "probe": self.probe,
        }
        return self.model_dump(
            mode="json", exclude={name for name, value in unset.items() if value is None} or None
        )

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
        self,
        *,
        model: str,
        task_version: str,
        epochs: int,
        run_config: Mapping[str, Any],
        scaffold: Scaffold | None = None,
        sandbox_ran: SandboxRan | None = None,
    ) -> dict[str, Any]:
        """What must be equal for two runs' samples to be pooled into one score.

        The model, split, harness, task version and epochs; a solver that replaced the agent
        (``scaffold``), the tools really offered and the modality; every limit that can end a
        sample (attempts, messages, tokens, time, cost, command timeout); the sandbox (kind,
        image, network, CPUs, memory, processes, disk); the prompt; generation settings given on
        the command line (``run_config``: inspect's limits and generation options); the question
        set. Not the levels or ids (pooling those is the point), the hub or inspect's version.
        The sandbox is the provider that ran (``sandbox_ran``: the log's ``eval.sandbox``, which
        inspect's ``--sandbox`` may have replaced), and a run whose egress proxy never started
        does not count as blocked.
        """
        limits = self.limits
        return pooled_settings(
            model=model,
            split=self.split,
            harness=OWN_HARNESS,
            task_version=task_version,
            epochs=epochs,
            scaffold=scaffold,
            tools=self.tools,
            multimodal=self.multimodal,
            max_attempts=limits.max_attempts,
            run_config=run_config,
            record={
                "command_timeout": limits.command_timeout,
                "sandbox": sandbox_setting(self.sandbox, self.own_provider, sandbox_ran),
                "image": self.image_identity,
                "network": self.network,
                "cpus": limits.cpus,
                "memory": limits.memory,
                "pids": limits.pids,
                "disk": limits.disk,
                "prompt_template_sha256": self.prompt_template_sha256,
                "question_set": self.question_set and self.question_set.fingerprint(),
                "block_answer_sources": self.blocked_list(sandbox_ran),
                "agent": self.agent and self.agent.label,
                "web_replay": self.web_replay and self.web_replay.sha256,
                "probe": self.probe or None,
            },
        )

    @property
    def image_identity(self) -> str:
        """The image runs are pooled on and labelled by (``imageref.identity``)."""
        return identity(self.image, self.image_id, self.image_digest)

    @property
    def image_pinned(self) -> bool:
        """Whether the reference names one image for good (by digest)."""
        return pinned_digest(self.image) is not None

    @property
    def own_provider(self) -> str:
        """The sandbox provider the task asked for (an early 0.1.0 record: its kind's)."""
        return self.sandbox_provider or PROVIDERS[self.sandbox]

    def blocked_list(self, sandbox_ran: SandboxRan | None = None) -> str | bool:
        """The SHA-256 of the answer-source list the run's egress proxy refused, else ``False``.

        A setting of its own: runs that could reach the answer sources are never pooled with runs
        that could not, nor runs blocked by different lists. A run in a sandbox that replaced the
        task's (``sandbox_ran``) had no egress proxy, whatever it asked.
        """
        sources = self.answer_sources
        replaced = sandbox_setting(self.sandbox, self.own_provider, sandbox_ran) != self.sandbox
        blocked = sources is not None and sources.blocked and not replaced
        return sources.list_sha256 if sources is not None and blocked else False

    def sandbox_flags(self, sandbox_ran: SandboxRan | None) -> list[str]:
        """What a sandbox that replaced the task's did not apply (``sandbox_ran``)."""
        sources = self.answer_sources
        blocked = sources is not None and sources.blocked
        return replacement_flags(sandbox_ran, self.sandbox, self.own_provider, self.image, blocked)


class ProvenanceError(GaiaError):
    """A ``gaia`` record that does not validate: the problem names the field and what is wrong.

    Its parts stay apart for the log reader, which puts the log's name before the problem
    (``LogProblem``).
    """


def question_set_flag(records: Sequence[GaiaProvenance], questions: Iterable[str]) -> str | None:
    """``question set: 147 of 165, 9 answers corrected`` (or ``question set text-103: …``).

    Args:
        records: The group's runs' records (they share a question set: it decides pooling).
        questions: The task ids the group answered.

    Returns:
        The flag, or ``None`` when the runs asked the split as published.
    """
    sets = [record.question_set for record in records if record.question_set is not None]
    if not sets:
        return None
    present = set(questions)
    levels = {level for record in records for level in record.levels}
    of = sum(sets[0].split_questions.get(str(level), 0) for level in levels)
    corrected = {task_id for found in sets for task_id in found.corrected if task_id in present}
    return describe(len(present), of, len(corrected), sets[0].name)
