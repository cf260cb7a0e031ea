"""``inspect-gaia image build``: the sandbox image, with or without a registry."""

from __future__ import annotations

import shutil

import click

from ..egress import PROXY_IMAGE
from ..errors import GaiaError
from ..images.agents import agents_tag, build_agents
from ..images.browser import browser_tag, build_browser
from ..images.egress import build_proxy_from_registry, build_proxy_offline
from ..images.sandbox import build_from_registry, build_offline, default_tag, is_image_name
from ..sandboxes.docker import engine


@click.group(invoke_without_command=True)
@click.pass_context
def image(ctx: click.Context) -> None:
    """Build the sandbox image, with or without a registry."""
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help())


def _tag(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is not None and not is_image_name(value):
        raise click.BadParameter(
            f"{value!r} is not an image name: use [registry/]name[:tag] in lowercase letters, "
            "digits and . _ - such as inspect-gaia/sandbox:mine"
        )
    return value


@image.command()
@click.option(
    "--offline", is_flag=True, help="Build from Debian packages (debootstrap), no registry."
)
@click.option(
    "--attachments",
    is_flag=True,
    help="Add readers for GAIA attachments (xlsx, pdf, docx, pptx, images, ffmpeg).",
)
@click.option(
    "--browser",
    is_flag=True,
    help="The attachments image plus a headless browser (Chromium, Playwright MCP) and a page "
    "reader (mcp-server-fetch), for -T browser=true and -T web_reader=true.",
)
@click.option(
    "--agents",
    is_flag=True,
    help="The attachments image plus the agent CLIs (claude, codex, gemini, mini) for -T agent=.",
)
@click.option(
    "--egress-proxy",
    is_flag=True,
    help=f"Build the egress proxy image ({PROXY_IMAGE}: mitmproxy) instead of a sandbox image: "
    "-T block_answer_sources, -T web_record and -T web_replay run it.",
)
@click.option(
    "--tag",
    callback=_tag,
    help="Image tag (default: an inspect-gaia/sandbox tag for --offline/--attachments).",
)
@click.option("--force", is_flag=True, help="Rebuild even when the tag exists.")
def build(
    offline: bool,
    attachments: bool,
    browser: bool,
    agents: bool,
    egress_proxy: bool,
    tag: str | None,
    force: bool,
) -> None:
    """Build the GAIA sandbox image and print its tag; use it with `-T image=<tag>`.

    The engine is checked first: a build never starts without one. With --egress-proxy, the
    image of the proxy that -T block_answer_sources=true, -T web_record and -T web_replay run (the
    run finds it by its default tag).

    \b
    Examples:
      inspect-gaia image build --offline --attachments
      inspect-gaia image build --offline --browser
      inspect-gaia image build --offline --agents
      inspect-gaia image build --offline --egress-proxy
      inspect-gaia image build --tag my-registry.example/gaia:1
    """
    if egress_proxy and (attachments or browser or agents):
        extra = "--attachments" if attachments else "--browser" if browser else "--agents"
        raise GaiaError(f"{extra} is for sandbox images", fix="drop it with --egress-proxy")
    if browser and agents:
        raise GaiaError("--browser and --agents build two images", fix="pass one of them")
    engine.check_engine()
    if shutil.which("docker") is None:
        raise GaiaError("the docker CLI is not installed", fix="install it (Debian: docker-ce-cli)")
    chosen = tag or (
        PROXY_IMAGE
        if egress_proxy
        else browser_tag(offline)
        if browser
        else agents_tag(offline)
        if agents
        else default_tag(offline, attachments)
    )
    if engine.local_image_id(chosen) is not None and not force:
        click.echo(f"{chosen} is already present (--force rebuilds it)", err=True)
        click.echo(chosen)
        return

    def log(message: str) -> None:
        click.echo(f"… {message}", err=True)

    if egress_proxy:
        (build_proxy_offline if offline else build_proxy_from_registry)(chosen, log)
        click.echo(f"built {chosen}; runs with -T block_answer_sources=true use it", err=True)
        click.echo(chosen)
        return
    if browser:  # always with the attachment readers
        build_browser(chosen, offline, log)
        click.echo(
            f"built {chosen}; run with -T image={chosen} -T browser=true -T web_reader=true",
            err=True,
        )
        click.echo(chosen)
        return
    if agents:  # always with the attachment readers
        build_agents(chosen, offline, log)
        click.echo(f"built {chosen}; run with -T image={chosen} -T agent=<name>", err=True)
        click.echo(chosen)
        return
    if offline:
        build_offline(chosen, attachments, log)
    else:
        build_from_registry(chosen, attachments, log)
    click.echo(f"built {chosen}; run with -T image={chosen}", err=True)
    click.echo(chosen)
