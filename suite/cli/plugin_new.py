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
@click.option("--profile", default="titanx-cluster-10gbe", show_default=True,
              help="Default hardware profile of the generated technique.")
def plugin_new(name: str, out_dir: str, profile: str) -> None:
    """Create an installable plugin package suite-NAME with a small real technique (ring vs tree
    all-reduce: cost model + execute on arrays), a claim, and tests that use the conformance kit."""
    from suite.scaffold import scaffold_plugin

    root = scaffold_plugin(name, out_dir, profile)
    click.echo(f"created {root}")
    click.echo(f"next: cd {root} && pip install -e . && suite techniques && pytest")
