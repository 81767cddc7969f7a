"""A library error names Python arguments (``tune_on=dev``); the CLI prints the flags that set them, read from the
command's own parser (sentret_core/cli/flags.py)."""

from __future__ import annotations

import argparse

from sentret_core.cli.flags import command_parser, flags_of, with_flags
from sentret_core.cli.main import build_parser
from sentret_core.errors import SentretError


def run_of(argv: list[str]) -> object:
    return build_parser().parse_args(argv).run


def test_each_argument_becomes_the_flag_of_the_command_that_ran() -> None:
    parser = build_parser()
    run = run_of(["parse", "demo", "--out", "x"])
    assert flags_of(command_parser(parser, run))["n_process"] == "--n-process"
    err = SentretError("n_process=0 and batch_size=8: each must be at least 1", arguments=("n_process", "batch_size"))
    assert with_flags(err, parser, run) == "--n-process 0 and --batch-size 8: each must be at least 1"
    both = SentretError("distractors= and min_candidates= apply to squad-support only",
                        arguments=("distractors", "min_candidates"))
    eval_run = run_of(["eval", "wikiqa", "--data", "x.tsv"])
    assert with_flags(both, parser, eval_run) == "--distractors and --min-candidates apply to squad-support only"


def test_only_the_listed_arguments_in_their_call_form_change() -> None:
    parser = build_parser()
    run = run_of(["parse", "demo", "--out", "x"])
    err = SentretError("model=numpy: not a spaCy model; the model= of a pipeline", arguments=("model",))
    assert with_flags(err, parser, run) == "--model numpy: not a spaCy model; the --model of a pipeline"
    unlisted = SentretError("model=numpy: not a spaCy model")
    assert with_flags(unlisted, parser, run) == "model=numpy: not a spaCy model"
    unknown = SentretError("no_such_option=1: bad", arguments=("no_such_option",))
    assert with_flags(unknown, parser, run) == "no_such_option=1: bad"  # no option stores there: as it is


def test_a_parser_without_subcommands_is_its_own_command() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--top-k", "-k", dest="top_k")
    assert command_parser(parser, None) is parser and flags_of(parser) == {"help": "--help", "top_k": "--top-k"}
