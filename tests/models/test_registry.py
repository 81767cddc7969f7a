"""The model registry: names, aliases, parameter declarations and their validation."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from sentret_core import Index
from sentret_core.errors import SentretError
from sentret_core.index.artefacts import NAME as ARTEFACT_NAME
from sentret_core.models import MODELS, get_model, list_models, score
from sentret_core.models.core.families import FAMILIES, declare_family, undeclare_family
from sentret_core.models.core.params import ParamSpec
from sentret_core.models.core.registry import register, unregister

EXPECTED = [
    "tfisf.v1",
    "tfmix.v1",
    "idfdoc.v1",
    "tfmix-idfdoc.v1",
    "tfisf-con.v1",
    "tfisf-length.v1",
    "tfisf-con-length.v1",
    "bm25.v1",
    "bm25f.v1",
    "lm-jm.v1",
    "lm-dir.v1",
    "lm-3mm.v1",
    "lm-2s.v1",
    "lm-2si.v1",
    "lm-3mmpds.v1",
]
ALL = [spec.name for spec in list_models()]


def in_range(spec: ParamSpec, value: object) -> bool:
    if value is None:
        return spec.nullable
    if spec.choices is not None:
        return value in spec.choices
    if spec.artefact is not None:
        return isinstance(value, str) and ARTEFACT_NAME.fullmatch(value) is not None
    if spec.type is bool:
        return isinstance(value, bool)
    assert isinstance(value, (int, float))
    if spec.min_positive is not None and 0 < value < spec.min_positive:
        return False
    if spec.above_min and value == spec.min:
        return False
    return (spec.min is None or value >= spec.min) and (spec.max is None or value <= spec.max)


def test_every_expected_model_is_registered() -> None:
    assert set(EXPECTED) <= set(MODELS)
    assert [name for name in ALL if name in EXPECTED] == EXPECTED


@pytest.mark.parametrize("name", ALL)
def test_a_model_declares_everything_the_app_needs(name: str) -> None:
    spec = get_model(name)
    assert spec.display_name and spec.formula and spec.paper and spec.description
    assert spec.family in FAMILIES and FAMILIES[spec.family].description
    assert spec.name == f"{spec.base}.v{spec.version}"
    defaults = spec.defaults()
    for p in spec.param_specs():
        assert p.description, f"{name}.{p.name} has no description"
        assert p.type in (float, int, bool, str)
        assert in_range(p, p.default), f"{name}.{p.name} default {p.default!r} is outside its range"
        assert getattr(defaults, p.name) == p.default
        if p.type in (float, int) and not p.contextual:  # a contextual parameter has no control
            assert p.min is not None and p.max is not None and p.step, f"{name}.{p.name} needs a slider range"
        for value in p.grid or ():
            assert in_range(p, value), f"{name}.{p.name} grid value {value!r} is outside its range"
    described = spec.describe()
    assert described["name"] == name and len(described["params"]) == len(spec.param_specs())


def test_a_name_without_version_is_the_latest_version() -> None:
    for name in EXPECTED:
        base = name.rsplit(".v", 1)[0]
        assert get_model(base) is get_model(name)


def test_published_defaults() -> None:
    bm25f = get_model("bm25f").defaults()
    assert (bm25f.k1, bm25f.b, bm25f.w_context, bm25f.w_title, bm25f.window) == (0.26, 0.15, 0.23, 0.23, 2)  # type: ignore[attr-defined]
    bm25 = get_model("bm25").defaults()
    assert (bm25.k1, bm25.b, bm25.k3, bm25.idf) == (1.2, 0.75, 0.0, "rsj")  # type: ignore[attr-defined]
    assert get_model("tfisf-con").defaults().depth == 3  # type: ignore[attr-defined]
    mu_grid = next(p.grid for p in get_model("lm-dir").param_specs() if p.name == "mu")
    assert mu_grid == (1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000)
    lam_grid = next(p.grid for p in get_model("lm-jm").param_specs() if p.name == "lam")
    assert lam_grid == (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


def test_an_unknown_model_is_named_with_the_choices(small_index: Index) -> None:
    with pytest.raises(SentretError, match=r"'bm26'.*bm25\.v1.*lm-3mmpds\.v1"):
        score(small_index, "war", "bm26")
    with pytest.raises(SentretError, match=r"bm25\.v9"):
        get_model("bm25.v9")


ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", ALL)
def test_the_source_points_at_the_scorer(name: str) -> None:
    """``sentret models`` prints ModelSpec.source, "path:line" of the registered scorer."""
    spec = get_model(name)
    path, line = spec.source.rsplit(":", 1)
    lines = (ROOT / path).read_text(encoding="utf-8").splitlines()
    here = lines[int(line) - 1].strip()
    scorer = spec.scorer.__name__  # type: ignore[attr-defined]
    if here.startswith("@register("):  # the decorator right above the def: it names this model
        block = lines[int(line) - 1 :]
        end = next(i for i, text in enumerate(block) if text.startswith("def "))
        assert f'"{name}"' in block[0] + block[1] and block[end].startswith(f"def {scorer}(")
    else:
        assert re.match(rf"def {scorer}\(", here), here


@pytest.mark.parametrize("name", ALL)
def test_out_of_range_and_wrong_type_values_are_named(name: str) -> None:
    spec = get_model(name)
    for p in spec.param_specs():
        bad: list[object] = []
        if p.choices is not None:
            bad += ["nonsense", 3]
        elif p.artefact is not None:
            bad += ["", "Upper", "../escape", "a/b", ".hidden", "x" * 65, 3]
        elif p.type is bool:
            bad += ["maybe", 2.5]
        else:
            if p.max is not None:
                bad.append(p.max + 1)
            if p.min is not None:
                bad.append(p.min - 1)
            if p.min_positive is not None:
                bad.append(p.min_positive / 2)
            if p.above_min:
                bad.append(p.min)
            bad += ["abc", math.nan, math.inf, True]
            if p.type is int:
                bad.append(1.5)
        for value in bad:
            with pytest.raises(SentretError) as err:
                spec.resolve({p.name: value})
            message = str(err.value)
            assert name in message and repr(p.name) in message and "must be" in message, message


def test_an_unknown_parameter_lists_the_known_ones(small_index: Index) -> None:
    with pytest.raises(SentretError, match=r"bm25\.v1 has no parameter 'k2'.*k1, b, k3, idf"):
        score(small_index, "war", "bm25.v1", k2=1.0)
    with pytest.raises(SentretError, match="parameter-free"):
        score(small_index, "war", "tfisf.v1", alpha=0.5)


def test_mixture_weights_may_not_exceed_1() -> None:
    with pytest.raises(SentretError, match="'lam' \\+ 'gamma'"):
        get_model("lm-3mm").resolve({"lam": 0.7, "gamma": 0.5})
    with pytest.raises(SentretError, match="'lam' \\+ 'gamma'"):
        get_model("lm-3mmpds").resolve({"lam": 0.7, "gamma": 0.5})


def test_values_are_converted_from_strings_and_numbers(small_index: Index) -> None:
    p = get_model("bm25f").resolve({"k1": "1.5", "window": "3", "b_context": "none", "w_title": 1})
    assert (p.k1, p.window, p.b_context, p.w_title) == (1.5, 3, None, 1.0)  # type: ignore[attr-defined]
    p = get_model("lm-2si").resolve({"importance": "true", "mu": 250, "window": 2.0})
    assert (p.importance, p.mu, p.window) == (True, 250.0, 2)  # type: ignore[attr-defined]
    assert score(small_index, "war", "bm25", k1="0.9").params.k1 == 0.9  # type: ignore[attr-defined]


def test_a_model_of_an_undeclared_family_is_refused_and_declaring_it_lets_it_in() -> None:
    bm25 = get_model("bm25.v1")

    def register_toy() -> None:
        register("toyfamily.v1", display_name="Toy", family="toyfamily", params=type(bm25.defaults()),
                 explainer=bm25.explainer, formula="x", paper="none", description="a toy")(bm25.scorer)

    with pytest.raises(SentretError, match=r"no model family 'toyfamily'.*declare_family"):
        register_toy()
    assert "toyfamily.v1" not in MODELS
    declare_family("toyfamily", "a toy family", reads_postings=True)
    try:
        declare_family("toyfamily", "a toy family", reads_postings=True)  # the same again: a no-op
        with pytest.raises(SentretError, match="already declared"):
            declare_family("toyfamily", "another description")
        register_toy()
        assert get_model("toyfamily").family == "toyfamily"
    finally:
        if "toyfamily.v1" in MODELS:
            unregister("toyfamily.v1")
        undeclare_family("toyfamily")
    with pytest.raises(SentretError, match="lowercase"):
        declare_family("Toy Family", "spaces and capitals")


def test_the_families_that_read_postings_are_the_lexical_ones() -> None:
    import sentret_core.learning.scorer  # noqa: F401  registers ltr.v1
    assert {name for name, family in FAMILIES.items() if family.reads_postings} == {"bm25", "lm", "tfisf"}
    assert {spec.family for spec in list_models()} == set(FAMILIES)  # no family is declared without a model
