"""A user's domain with declared attributes is a structural causal model: interventions land in
another bin, propagate to the intervened attribute's descendants only, through the user's mechanisms
(exactly the closed form) or through mechanisms cfcheck fits to the table (close to it), and the domain
has no true counterfactual (:mod:`cfcheck.domains.attributes_scm`, :mod:`cfcheck.domains.attributes_mechanisms`).

The tables are drawn from SCMs known by construction, with their exogenous noise kept, so every
counterfactual has an independent answer: the generating equations re-run on the same noise.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from cfcheck.domains import attributes_mechanisms
from cfcheck.domains.attributes import Attributes, binary, categorical, continuous
from cfcheck.domains.attributes_mechanisms import Mechanism
from cfcheck.domains.attributes_scm import AttributeSCM
from cfcheck.domains.base import INTERVENTION_COUNTERFACTUAL, MissingCapability, require
from cfcheck.domains.checks import domain_problems
from cfcheck.domains.data import ArraySource, ImageDomain
from cfcheck.domains.registry import DomainError
from cfcheck.kinds.scm.capabilities import StructuralCausalModel

pytestmark = pytest.mark.usefixtures("single_torch_thread")

# -- a mediator graph a → m → y, and r → y: the linear-Gaussian SCM -----------------------------------
LINEAR = [continuous("a"), continuous("m"), continuous("y"), continuous("r")]
MEDIATOR = {"m": ("a",), "y": ("m", "r")}
DESCENDANTS = {"a": {"m", "y"}, "m": {"y"}, "y": set(), "r": {"y"}}
EXACT = {
    "m": Mechanism(abduct=lambda v, pa: (v - 1.5 * pa["a"]) / 0.5, predict=lambda u, pa: 1.5 * pa["a"] + 0.5 * u),
    "y": Mechanism(
        abduct=lambda v, pa: (v - pa["m"] + 0.8 * pa["r"]) / 0.5,
        predict=lambda u, pa: pa["m"] - 0.8 * pa["r"] + 0.5 * u,
    ),
}


def _linear_world(n, seed=0):
    """Roots a, r ~ N(0, 1); m = 1.5 a + 0.5 ε_m; y = m − 0.8 r + 0.5 ε_y. Returns (table, noise)."""
    rng = np.random.default_rng(seed)
    a, r, e_m, e_y = (rng.standard_normal(n) for _ in range(4))
    noise = {"e_m": e_m, "e_y": e_y}
    return _linear_forward({"a": a, "r": r}, noise, {}), noise


def _linear_forward(roots, noise, do):
    """The generating equations, with ``do`` overriding any variable (float64 numpy)."""
    a = do.get("a", roots["a"])
    r = do.get("r", roots["r"])
    m = do.get("m", 1.5 * a + 0.5 * noise["e_m"])
    y = do.get("y", m - 0.8 * r + 0.5 * noise["e_y"])
    return {"a": a, "m": m, "y": y, "r": r}


def _images(n, seed=0):
    rng = np.random.default_rng(seed)
    return ArraySource(rng.integers(0, 256, (n, 1, 2, 2), dtype=np.uint8), np.arange(n) % 2, name="noise images")


def _domain(table, declared=LINEAR, graph=MEDIATOR, mechanisms=None, name="linear"):
    n = len(next(iter(table.values())))
    attributes = Attributes(declared, table=table, graph=graph, mechanisms=mechanisms)
    return ImageDomain(name, _images(n), root="unused", model_roles={}, attributes=attributes)


def _scored_rows(domain):
    split = domain.split("scored")
    return torch.arange(len(split)), split.index.numpy()


def _do(domain, factor, seed=0):
    """A do() of ``factor`` on every scored image, drawn by the domain; (index, parents, new values, table rows)."""
    index, rows = _scored_rows(domain)
    parents = domain.parents("scored", index)
    new = domain.sample_intervention(factor, parents, torch.Generator().manual_seed(seed))
    return index, parents, new, rows


@pytest.fixture(scope="module")
def exact():
    table, noise = _linear_world(600)
    return _domain(table, mechanisms=EXACT), table, noise


@pytest.fixture(scope="module")
def fitted(single_torch_thread):
    table, noise = _linear_world(2000)
    return _domain(table), table, noise


@pytest.mark.parametrize("factor", ["a", "m", "y", "r"])
def test_user_mechanisms_propagate_exactly_the_closed_form_to_descendants_only(exact, factor):
    domain, table, noise = exact
    index, parents, new, rows = _do(domain, factor)
    after = domain.counterfactual_parents("scored", index, {factor: new})
    roots = {k: table[k][rows] for k in ("a", "r")}
    truth = _linear_forward(roots, {k: v[rows] for k, v in noise.items()}, {factor: new.double().numpy()})
    for name in ("a", "m", "y", "r"):
        moved = after[name] != parents[name]
        if name == factor or name in DESCENDANTS[factor]:
            np.testing.assert_allclose(after[name].double().numpy(), truth[name], atol=2e-5, rtol=1e-5, err_msg=name)
            assert bool(moved.all()), f"do({factor}) must move {name} on every image"
        else:
            assert torch.equal(after[name], parents[name]), f"do({factor}) must leave {name} as observed"


def test_a_null_intervention_changes_nothing_through_either_kind_of_mechanism(exact, fitted):
    for domain, _, _ in (exact, fitted):
        index, _ = _scored_rows(domain)
        parents = domain.parents("scored", index)
        for factor in ("a", "m", "r"):
            after = domain.counterfactual_parents("scored", index, {factor: parents[factor].clone()})
            assert all(torch.equal(after[k], parents[k]) for k in parents), factor


def test_fitted_flows_give_a_childs_counterfactual_close_to_the_closed_form(fitted):
    """2,000 rows of the linear-Gaussian SCM; do(a) and do(m) drawn by the domain on its ~300 scored
    images. Tolerance: mean |error| ≤ 0.1 and 95th percentile ≤ 0.3 (the children's noise sd is 0.5;
    measured 0.03-0.05 mean, from the least-squares slopes and the residual spline). A mechanism
    that ignored the change of the parent would be off by |1.5 Δa| ≈ 1.7 on average."""
    domain, table, noise = fitted
    for factor in ("a", "m"):
        index, parents, new, rows = _do(domain, factor, seed=3)
        after = domain.counterfactual_parents("scored", index, {factor: new})
        roots = {k: table[k][rows] for k in ("a", "r")}
        truth = _linear_forward(roots, {k: v[rows] for k, v in noise.items()}, {factor: new.double().numpy()})
        for child in sorted(DESCENDANTS[factor]):
            error = np.abs(after[child].double().numpy() - truth[child])
            unmoved = np.abs(parents[child].double().numpy() - truth[child])
            assert error.mean() <= 0.1 and np.quantile(error, 0.95) <= 0.3, (factor, child, error.mean())
            assert unmoved.mean() > 5 * 0.1, "the check must tell a propagated child from an unmoved one"
        for name in set(parents) - DESCENDANTS[factor] - {factor}:
            assert torch.equal(after[name], parents[name]), (factor, name)


# -- a categorical parent of four values, a binary child --------------------------------------------
SITES = ("north", "south", "east", "west")
SITE_SHIFT = np.array([0.0, 1.0, -1.0, 2.0])
P_SMILE = np.array([0.1, 0.9, 0.2, 0.8])  # p(b = 1 | site): its most likely value is [0, 1, 0, 1][site]


def _site_world(n, seed=1):
    rng = np.random.default_rng(seed)
    site, a, e_c = rng.integers(0, 4, n), rng.standard_normal(n), rng.standard_normal(n)
    smile = (rng.random(n) < P_SMILE[site]).astype(int)
    table = {"site": np.array(SITES)[site], "a": a, "c": SITE_SHIFT[site] + 0.5 * a + 0.3 * e_c, "smile": smile}
    return table, {"site": site, "e_c": e_c}


SITE_DECLARED = [categorical("site", values=SITES), continuous("a", bins=5), continuous("c"), binary("smile")]
SITE_GRAPH = {"c": ("site", "a"), "smile": ("site",)}


@pytest.fixture(scope="module")
def sites(tmp_path_factory, single_torch_thread):
    """The site world's table written as a CSV (the site by name), read by a domain with fitted mechanisms."""
    table, truth = _site_world(2000)
    path = tmp_path_factory.mktemp("sites") / "attributes.csv"
    columns = zip(*(table[k].tolist() for k in ("site", "a", "c", "smile")))
    lines = ["site,a,c,smile"] + [f"{s},{a!r},{c!r},{b}" for s, a, c, b in columns]
    path.write_text("\n".join(lines) + "\n")
    attributes = Attributes(SITE_DECLARED, table=path, graph=SITE_GRAPH)
    return ImageDomain("sites", _images(len(table["a"])), root="unused", model_roles={}, attributes=attributes), truth


def test_a_categorical_parent_of_four_values_moves_its_children(sites):
    domain, truth = sites
    index, parents, new, rows = _do(domain, "site", seed=5)
    assert torch.equal(parents["site"], torch.from_numpy(truth["site"][rows]))  # held as the index of the name
    assert bool((new != parents["site"]).all()) and set(new.tolist()) == {0, 1, 2, 3}
    after = domain.counterfactual_parents("scored", index, {"site": new})
    # the continuous child: c* = shift(site*) + 0.5 a + 0.3 ε_c, same a and ε_c
    expected_c = SITE_SHIFT[new.numpy()] + 0.5 * parents["a"].double().numpy() + 0.3 * truth["e_c"][rows]
    error = np.abs(after["c"].double().numpy() - expected_c)
    assert error.mean() <= 0.1, error.mean()  # noise sd 0.3; the shifts between sites are 1 to 3
    # the binary child: a parent changed on every row, so it is the most likely value under the new site
    assert after["smile"].tolist() == (P_SMILE[new.numpy()] > 0.5).astype(int).tolist()
    assert torch.equal(after["a"], parents["a"])


def test_a_discrete_child_keeps_its_observed_value_where_no_parent_changed(sites):
    domain, _ = sites
    index, parents, new, _ = _do(domain, "site", seed=6)
    half = torch.arange(len(index)) % 2 == 0
    intervened = torch.where(half, new, parents["site"])  # half the rows keep their site
    after = domain.counterfactual_parents("scored", index, {"site": intervened})
    assert torch.equal(after["smile"][~half], parents["smile"][~half])
    assert after["smile"][half].tolist() == (P_SMILE[new[half].numpy()] > 0.5).astype(int).tolist()


def test_user_mechanisms_with_a_categorical_parent_give_the_closed_form():
    table, truth = _site_world(400)
    table["site"] = truth["site"]  # codes are accepted as the values when the values are 0..3
    mechanisms = {
        "c": Mechanism(
            abduct=lambda v, pa: (v - torch.from_numpy(SITE_SHIFT).float()[pa["site"]] - 0.5 * pa["a"]) / 0.3,
            predict=lambda u, pa: torch.from_numpy(SITE_SHIFT).float()[pa["site"]] + 0.5 * pa["a"] + 0.3 * u,
        ),
        "smile": Mechanism(abduct=lambda v, pa: v, predict=lambda u, pa: u),  # smile does not depend on site here
    }
    declared = [categorical("site", count=4), *SITE_DECLARED[1:]]
    domain = _domain(table, declared, SITE_GRAPH, mechanisms, name="sites_exact")
    index, parents, new, rows = _do(domain, "site")
    after = domain.counterfactual_parents("scored", index, {"site": new})
    expected = SITE_SHIFT[new.numpy()] + 0.5 * table["a"][rows] + 0.3 * truth["e_c"][rows]
    np.testing.assert_allclose(after["c"].double().numpy(), expected, atol=2e-5)
    assert torch.equal(after["smile"], parents["smile"])


# -- bins: every intervention lands in another bin ----------------------------------------------------
finite = st.floats(-1e4, 1e4, allow_nan=False, width=32)


@settings(max_examples=60, deadline=None)
@given(
    column=arrays(np.float32, st.integers(4, 60), elements=st.one_of(finite, st.sampled_from([0.0, 1.0, 1.5]))),
    bins=st.one_of(st.integers(2, 12), st.lists(finite, min_size=3, max_size=8, unique=True).map(sorted)),
    outside=st.lists(st.floats(-1e6, 1e6, allow_nan=False, width=32), max_size=5),
    seed=st.integers(0, 2**31 - 1),
)
def test_a_continuous_intervention_always_lands_in_another_bin_inside_the_edges(column, bins, outside, seed):
    try:
        scm = AttributeSCM(Attributes([continuous("v", bins=bins)], table={}), {"v": torch.from_numpy(column)})
    except DomainError:  # quantile bins of too few distinct values: refused (tests/domains/test_attributes.py)
        assume(False)
    observed = torch.cat([torch.from_numpy(column), torch.tensor(outside, dtype=torch.float32)])
    new = scm.sample_intervention("v", {"v": observed}, torch.Generator().manual_seed(seed))
    edges = scm.edges["v"]
    assert new.dtype == torch.float32 and new.shape == observed.shape
    assert bool((scm.parent_bin("v", new) != scm.parent_bin("v", observed)).all())
    assert bool(((new >= edges[0]) & (new < edges[-1])).all())


@settings(max_examples=40, deadline=None)
@given(count=st.integers(2, 6), data=st.data(), seed=st.integers(0, 2**31 - 1))
def test_a_discrete_intervention_always_draws_another_value(count, data, seed):
    codes = data.draw(st.lists(st.integers(0, count - 1), min_size=1, max_size=50))
    codes = codes + list(range(count))  # every declared value occurs
    declared = binary("v") if count == 2 and data.draw(st.booleans()) else categorical("v", count=count)
    scm = AttributeSCM(Attributes([declared], table={}), {"v": torch.tensor(codes)})
    new = scm.sample_intervention("v", {"v": torch.tensor(codes)}, torch.Generator().manual_seed(seed))
    assert new.dtype == torch.int64 and bool((new != torch.tensor(codes)).all())
    assert bool(((new >= 0) & (new < count)).all())
    assert torch.equal(scm.parent_bin("v", new), new)


def test_the_other_bins_are_drawn_uniformly():
    scm = AttributeSCM(Attributes([continuous("v", bins=[0.0, 1.0, 2.0, 3.0, 4.0])], table={}), {"v": torch.rand(10)})
    new = scm.sample_intervention("v", {"v": torch.full((8000,), 0.5)}, torch.Generator().manual_seed(0))
    counts = torch.bincount(scm.parent_bin("v", new), minlength=4)
    assert counts[0] == 0 and all(abs(int(c) - 8000 / 3) < 4 * (8000 * 2 / 9) ** 0.5 for c in counts[1:]), counts


# -- the domain: an SCM without a true counterfactual -------------------------------------------------
def test_the_domain_is_a_structural_causal_model_without_a_true_counterfactual(exact):
    domain, _, _ = exact
    assert isinstance(domain, StructuralCausalModel)
    assert domain.factor_names == ("a", "m", "y", "r") and domain.categorical_factors == ()
    assert INTERVENTION_COUNTERFACTUAL not in domain.capabilities
    index, _, new, _ = _do(domain, "a")
    with pytest.raises(MissingCapability, match="real data has no true counterfactual"):
        domain.intervention_counterfactual("scored", index, {"a": new})
    with pytest.raises(MissingCapability):
        require(domain, INTERVENTION_COUNTERFACTUAL)


def test_a_domain_without_attributes_says_it_has_none():
    domain = ImageDomain("plain", _images(100), root="unused", model_roles={})
    assert domain.factor_names == ()
    with pytest.raises(ValueError, match="domain 'plain' declares no attributes: it has no structural causal model"):
        domain.parents("scored", torch.arange(2))
    assert domain.attribute_problems() == []


def test_malformed_interventions_are_named(exact):
    domain, _, _ = exact
    index = torch.arange(3)
    with pytest.raises(
        ValueError, match=r"unknown attribute 'age'; the domain's attributes are \['a', 'm', 'y', 'r'\]"
    ):
        domain.counterfactual_parents("scored", index, {"age": torch.zeros(3)})
    with pytest.raises(ValueError, match=r"attribute 'a': expected 3 values \(shape \(3,\)\), got shape \(2,\)"):
        domain.counterfactual_parents("scored", index, {"a": torch.zeros(2)})
    with pytest.raises(ValueError, match="attribute 'a': expected finite values"):
        domain.counterfactual_parents("scored", index, {"a": torch.tensor([0.0, float("nan"), 1.0])})


def test_a_code_out_of_range_is_named():
    table, _ = _site_world(300)
    domain = _domain(table, SITE_DECLARED, {}, name="roots_only")
    with pytest.raises(ValueError, match=r"attribute 'site' \(categorical\): expected codes in \[0, 3\]"):
        domain.counterfactual_parents("scored", torch.arange(2), {"site": torch.tensor([1, 4])})


# -- the load check -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("mechanism", "expected"),
    [
        (
            Mechanism(abduct=lambda v, pa: v - 1.5 * pa["a"], predict=lambda u, pa: 1.5 * pa["a"] + 0.5 * u),
            "the mechanism of attribute 'm' does not give back the observed values under the observed parents",
        ),
        (
            Mechanism(abduct=lambda v, pa: v, predict=lambda u, pa: u[:-1]),
            r"the mechanism of attribute 'm' fails on the table's first rows: ValueError: attribute 'm': expected 256 values",
        ),
        (
            Mechanism(abduct=lambda v, pa: v, predict=lambda u, pa: 1 / 0),
            "the mechanism of attribute 'm' fails on the table's first rows: ZeroDivisionError",
        ),
    ],
)
def test_a_broken_user_mechanism_is_a_load_check_problem(mechanism, expected):
    import re

    table, _ = _linear_world(400)
    domain = _domain(table, mechanisms={**EXACT, "m": mechanism}, name="broken")
    problems = domain_problems(domain)
    assert len(problems) == 1 and re.search(expected, problems[0]), problems


def test_the_load_check_passes_exact_and_fitted_mechanisms(exact, fitted, sites):
    for domain in (exact[0], fitted[0], sites[0]):
        assert domain_problems(domain) == [], domain.name


# -- fitting: deterministic, cached -------------------------------------------------------------------
def test_fitted_mechanisms_are_deterministic_and_a_second_domain_reads_them_from_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CFCHECK_CACHE_DIR", str(tmp_path / "cache"))  # an empty cache of this test's own
    fits = []
    fit_all = attributes_mechanisms._fit_all
    monkeypatch.setattr(attributes_mechanisms, "_fit_all", lambda *args: fits.append(1) or fit_all(*args))
    table, _ = _site_world(800)

    def mechanisms():
        domain = _domain(dict(table), SITE_DECLARED, SITE_GRAPH, name="cached")
        started = time.perf_counter()
        found = domain._scm.mechanisms
        return {name: m.state_dict() for name, m in found.items()}, time.perf_counter() - started

    first, fitting = mechanisms()
    second, reading = mechanisms()
    assert len(fits) == 1, "the second domain must read the fit from the cache, not fit again"
    assert reading < fitting / 5, (reading, fitting)  # measured: ~0.02 s against ~2 s
    monkeypatch.setenv("CFCHECK_NO_DERIVED_CACHE", "1")
    third, _ = mechanisms()
    assert len(fits) == 2
    for states in (second, third):  # read back, and fitted afresh: bit-identical
        assert states.keys() == first.keys() == {"c", "smile"}
        for name in first:
            assert all(torch.equal(first[name][k], states[name][k]) for k in first[name]), name


def test_the_declaration_modules_examples_run():
    import doctest

    from cfcheck.domains import attributes

    assert doctest.testmod(attributes).attempted >= 2 and doctest.testmod(attributes).failed == 0


def test_the_attributes_are_part_of_the_domains_protocol_identity():
    """Another table, another graph or other bins judge by other numbers: each changes the domain's
    part of its protocols' identity; the same declaration over the same table does not."""
    table, _ = _linear_world(300)
    same = _domain(table, mechanisms=EXACT).protocol_identity()
    assert _domain(table, mechanisms=EXACT).protocol_identity() == same
    assert (
        "attributes" in same
        and "attributes" not in ImageDomain("plain", _images(300), root="unused", model_roles={}).protocol_identity()
    )
    moved = {**table, "r": table["r"] + 0.25}
    assert _domain(moved, mechanisms=EXACT).protocol_identity()["attributes"]["table"] != same["attributes"]["table"]
    rewired = _domain(table, graph={"m": ("a",), "y": ("m", "r", "a")}, mechanisms=EXACT).protocol_identity()
    assert rewired["attributes"]["declaration"] != same["attributes"]["declaration"]
    rebinned = [continuous("a", bins=3), *LINEAR[1:]]
    assert (
        _domain(table, declared=rebinned, mechanisms=EXACT).protocol_identity()["attributes"]["bins"]
        != (same["attributes"]["bins"])
    )
