"""Entry points: Typer apps, output rendering and the Textual dashboard (imported lazily)."""
