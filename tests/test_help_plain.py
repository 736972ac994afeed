"""Command-line help is plain text: no reStructuredText markup (``...``, :func:)."""

from __future__ import annotations

import re

import pytest

from experiments import _cli
from jbandits.cli import main as cli_main

MARKUP = re.compile(r"``|:(func|class|mod|data|meth):`")


@pytest.mark.parametrize("argv", [["--help"], ["sweep", "--help"], ["list", "--help"]])
def test_jbandits_help_is_plain_text(argv, capsys):
    with pytest.raises(SystemExit):
        cli_main.main(argv)
    text = capsys.readouterr().out
    assert "usage: jbandits" in text
    assert not MARKUP.search(text), text


@pytest.mark.parametrize("argv", [["--help"], ["run", "--help"], ["list", "--help"]])
def test_experiments_help_is_plain_text(argv, capsys):
    with pytest.raises(SystemExit):
        _cli.build_parser().parse_args(argv)
    text = capsys.readouterr().out
    assert "usage: python -m experiments" in text
    assert not MARKUP.search(text), text
