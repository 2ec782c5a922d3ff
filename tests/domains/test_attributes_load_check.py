"""A user's domain whose attribute table or mechanisms are broken fails ``test_domain_loads`` once,
with the message naming the problem, as other broken domains do; a sound one passes it.

One pytest run (pytester) with three domains written as a user would: a folder of PNGs whose
attribute CSV lacks a row (its factory raises the table's DomainError), arrays whose user mechanism
does not invert (the load check runs it on the table's first rows), and a sound one.
"""

from __future__ import annotations

import textwrap

import pytest

DOMAINS = textwrap.dedent(
    '''
    """Three attribute-labelled domains: a broken table, a broken mechanism, a sound one."""
    from pathlib import Path

    import numpy as np

    from cfcheck.domains.attributes import Attributes, binary, continuous
    from cfcheck.domains.attributes_mechanisms import Mechanism
    from cfcheck.domains.data import ArraySource, FolderSource, ImageDomain

    HERE = Path(__file__).parent
    DECLARED = [continuous("a", bins=4), continuous("m", bins=4), binary("b")]
    GRAPH = {"m": ("a",)}


    def _arrays(n=200):
        rng = np.random.default_rng(0)
        a = rng.standard_normal(n)
        table = {"a": a, "m": 2 * a + rng.standard_normal(n), "b": np.arange(n) % 2}
        return ArraySource(rng.integers(0, 256, (n, 1, 8, 8), dtype=np.uint8), np.arange(n) % 2), table


    def broken_table():
        return ImageDomain("broken_table", FolderSource(HERE / "tree", mode="L"), root=HERE / "broken_table",
                           model_roles={}, attributes=Attributes(DECLARED, table=HERE / "attributes.csv", graph=GRAPH))


    def broken_mechanism():
        source, table = _arrays()
        wrong = Mechanism(abduct=lambda v, pa: v - 2 * pa["a"], predict=lambda u, pa: 3 * pa["a"] + u)
        attributes = Attributes(DECLARED, table=table, graph=GRAPH, mechanisms={"m": wrong})
        return ImageDomain("broken_mechanism", source, root=HERE / "broken_mechanism", model_roles={},
                           attributes=attributes)


    def sound():
        source, table = _arrays()
        right = Mechanism(abduct=lambda v, pa: v - 2 * pa["a"], predict=lambda u, pa: 2 * pa["a"] + u)
        attributes = Attributes(DECLARED, table=table, graph=GRAPH, mechanisms={"m": right})
        return ImageDomain("sound", source, root=HERE / "sound", model_roles={}, attributes=attributes)
    '''
)


def _tree_and_csv(root, per_class=20):
    import numpy as np
    from PIL import Image

    lines = ["file,a,m,b"]
    for label, name in enumerate(("dark", "light")):
        (root / "tree" / name).mkdir(parents=True)
        for i in range(per_class):
            Image.fromarray(np.full((8, 8), 100 * label + i, dtype=np.uint8), "L").save(
                root / "tree" / name / f"{i:03d}.png"
            )
            if (name, i) != ("light", 7):
                lines.append(f"{name}/{i:03d}.png,{i / 10},{i / 5 + label},{i % 2}")
    (root / "attributes.csv").write_text("\n".join(lines) + "\n")


def test_a_broken_attribute_table_or_mechanism_fails_the_load_check_once(pytester, single_torch_thread):
    _tree_and_csv(pytester.path)
    pytester.makepyfile(attribute_domains=DOMAINS)
    pytester.makefile(".toml", pyproject="[tool.cfcheck]\nprofile = 'quick'\n")
    specs = [f"--cfcheck-domain=attribute_domains.py:{name}" for name in ("broken_table", "broken_mechanism", "sound")]
    result = pytester.runpytest(
        "--method=cfcheck.fixtures.vce.identity", *specs, "-k", "test_domain_loads", "-p", "no:randomly", "-rA"
    )
    text = result.stdout.str()
    table_failure = "FAILED test_domains.py::test_domain_loads[attribute_domains.py:broken_table]"
    assert table_failure in text, text[-3000:]
    assert (
        f"{pytester.path / 'attributes.csv'}: no row for 1 of the 40 images of {pytester.path / 'tree'} ('light/007.png')"
        in text
    )
    assert "FAILED test_domains.py::test_domain_loads[broken_mechanism]" in text, text[-3000:]
    assert "the mechanism of attribute 'm' does not give back the observed values under the observed parents" in text
    assert "PASSED test_domains.py::test_domain_loads[sound]" in text, text[-3000:]
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed") == 2 and outcomes.get("passed") == 1, outcomes


@pytest.fixture(autouse=True)
def _forget_the_domain_module():
    yield
    import sys

    sys.modules.pop("attribute_domains", None)
