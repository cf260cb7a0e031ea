"""``inspect-gaia image build``: the sandbox image, with or without a registry."""

from __future__ import annotations

import click

from ..image import build_from_registry, build_offline, default_tag, image_present


@click.group(invoke_without_command=True)
@click.pass_context
def image(ctx: click.Context) -> None:
    """Build the sandbox image, with or without a registry."""
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help())


@image.command()
@click.option(
    "--offline", is_flag=True, help="Build from Debian packages (debootstrap), no registry."
)
@click.option(
    "--attachments",
    is_flag=True,
    help="Add readers for GAIA attachments (xlsx, pdf, docx, pptx, images, ffmpeg).",
)
@click.option("--tag", help="Image tag (default depends on --offline/--attachments).")
@click.option("--force", is_flag=True, help="Rebuild even when the tag exists.")
def build(offline: bool, attachments: bool, tag: str | None, force: bool) -> None:
    """Build the GAIA sandbox image and print its tag; use it with `-T image=<tag>`.

    Example: inspect-gaia image build --offline --attachments
    """
    chosen = tag or default_tag(offline, attachments)
    if image_present(chosen) and not force:
        click.echo(f"{chosen} is already present (--force rebuilds it)", err=True)
        click.echo(chosen)
        return

    def log(message: str) -> None:
        click.echo(f"… {message}", err=True)

    if offline:
        build_offline(chosen, attachments, log)
    else:
        build_from_registry(chosen, attachments, log)
    click.echo(f"built {chosen}; run with -T image={chosen}", err=True)
    click.echo(chosen)
