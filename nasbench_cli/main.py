"""Entry point of the `nasbench` command: a click group whose subcommands load on demand.

Subcommand modules are imported only when used (or when `--help` lists them), and they import
heavy libraries (numpy, xgboost, matplotlib, torch) inside their functions, so `nasbench --help`
stays fast.
"""
import importlib
import sys

import click

from nasbench_cli import __version__

# name -> "module:attribute"; one place that lists every command.
COMMANDS = {
    "data": "nasbench_cli.commands.data:data",
    "query": "nasbench_cli.commands.query:query",
    "list": "nasbench_cli.commands.listing:list_cmd",
    "run": "nasbench_cli.commands.run:run",
    "plot": "nasbench_cli.commands.plot:plot",
    "report": "nasbench_cli.commands.report:report",
    "check": "nasbench_cli.commands.check:check",
    "export": "nasbench_cli.commands.export:export",
    "space": "nasbench_cli.commands.space:space",
    "features": "nasbench_cli.commands.features:features",
    "analyze": "nasbench_cli.commands.analyze:analyze",
    "proxies": "nasbench_cli.commands.proxies:proxies",
    "suite": "nasbench_cli.commands.suite:suite",
}


class LazyGroup(click.Group):
    """A click group that imports a subcommand's module only when it is needed."""

    def __init__(self, *args, lazy_commands=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.lazy_commands = dict(lazy_commands or {})

    def list_commands(self, ctx):
        return sorted(set(super().list_commands(ctx)) | set(self._available()))

    def _available(self):
        return [name for name, target in self.lazy_commands.items() if _module_exists(target)]

    def get_command(self, ctx, name):
        if name in self.lazy_commands and _module_exists(self.lazy_commands[name]):
            module_name, attr = self.lazy_commands[name].split(":")
            return getattr(importlib.import_module(module_name), attr)
        return super().get_command(ctx, name)


def _module_exists(target: str) -> bool:
    return importlib.util.find_spec(target.split(":")[0]) is not None


@click.group(cls=LazyGroup, lazy_commands=COMMANDS,
             context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="nasbench")
def group():
    """Benchmark NAS and HPO algorithms on NLP search spaces by replaying recorded training logs.

    Benchmarks: NAS-Bench-NLP's recurrent cells (ptb, wt2), NAS-Bench-BERT (bert), HW-GPT-Bench's
    GPT-2 decoders (gpt-s, gpt-m, gpt-l), NMTHPO's translation systems (nmt-en-ja, nmt-ja-en,
    nmt-ru-en, nmt-so-en, nmt-sw-en, nmt-zh-en; family nmt; each also as nmt-<pair>-updates on a
    cost-aware clock, family nmt-updates) and NMTLC's LoRA fine-tuning curves
    (lora-fr-en, lora-zh-en; family lora); `nasbench list` names the algorithms. An algorithm that
    "trains" an architecture is charged the recorded wall time of those epochs and sees the recorded
    validation losses; regret is measured on the test side, which it never sees.

    Exit codes: 0 success, 1 the run failed (or a check found a regression), 2 bad usage or input.
    """


class TerminalProgress:
    """The data layer's progress sink (benchmarks.core.progress) on a terminal: a rich bar on stderr
    from the first step of a piece of work to its last (rich is imported only then)."""

    def __init__(self):
        self.bar = self.task = self.what = None

    def __call__(self, what: str, done: int, total: int) -> None:
        if self.bar is None or what != self.what:
            self.close()
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.bar = Progress(TextColumn(what), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                                console=Console(stderr=True), transient=True)
            self.bar.start()
            self.task, self.what = self.bar.add_task("", total=total), what
        self.bar.update(self.task, completed=done)
        if done >= total:
            self.close()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
        self.bar = self.task = self.what = None


def cli(argv=None):
    """Run the CLI; user mistakes become one line on stderr and exit code 2."""
    from benchmarks.core import progress
    from benchmarks.core.errors import UserError

    if sys.stderr.isatty():
        progress.install(TerminalProgress())

    try:
        code = group.main(args=argv, prog_name="nasbench", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("interrupted", err=True)
        sys.exit(130)
    except click.UsageError as exc:          # a bad option or value: one line, like every user mistake
        hint = f" (see `{exc.ctx.command_path} --help`)" if exc.ctx is not None else ""
        click.echo(f"error: {exc.format_message()}{hint}", err=True)
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except UserError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        sys.exit(130)
    # without standalone mode, click returns the code of a `click.exceptions.Exit` instead of raising it
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    cli()
