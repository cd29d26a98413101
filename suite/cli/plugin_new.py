"""``suite plugin new NAME``: scaffold a third-party technique plugin."""

from __future__ import annotations

import click

from suite.cli import main


@main.group("plugin")
def plugin_group() -> None:
    """Author third-party technique plugins."""


@plugin_group.command("new")
@click.argument("name")
@click.option("-o", "--output", "out_dir", default=".", show_default=True, type=click.Path(file_okay=False),
              help="Folder in which to create suite-NAME/.")
@click.option("--profile", default=None,
              help="Hardware profile of the generated claim and smoke scenarios (default: the NAME-testbed "
                   "profile the plugin ships).")
def plugin_new(name: str, out_dir: str, profile: str | None) -> None:
    """Create an installable plugin package suite-NAME with a small real technique (ring vs tree
    all-reduce: cost model over every network level + execute on arrays), its own hardware profile as
    package data, a claim with a null, and tests (hand calculation, oracle, the conformance kit, a
    slow wheel-install test)."""
    from suite.scaffold import scaffold_plugin

    root = scaffold_plugin(name, out_dir, profile)
    click.echo(f"created {root}")
    click.echo(f"next: cd {root} && pip install -e . && suite techniques && pytest -m \"not slow\"")
