"""--method resolution and method-kind detection."""

from __future__ import annotations

import pytest
import torch

from cfcheck.kinds import MethodKind, accepts_generator, detect_kinds
from cfcheck.kinds.protocols import kind_detection


class Explainer:
    def explain(self, x, target, classifier):
        return x


class LatentExplainer:
    def explain(self, z, latent_classifier, generator):
        return z


class Attribution:
    def attribute(self, x, model, target):
        return x


class SCMGenerator:
    def counterfactual(self, x, parents, intervention):
        return x


@pytest.mark.parametrize(
    ("method", "kinds"),
    [
        (Explainer(), {MethodKind.VCE}),
        (LatentExplainer(), {MethodKind.LATENT}),
        (Attribution(), {MethodKind.ATTRIBUTION}),
        (SCMGenerator(), {MethodKind.SCM}),
        (object(), set()),
    ],
)
def test_kind_detection(method, kinds):
    assert detect_kinds(method) == kinds


class ExplainerWithAHelper:
    """A VCE as published code often writes one: a helper named like the SCM call."""

    def explain(self, x, target, classifier, *, generator=None):
        return self.counterfactual(x, target)

    def counterfactual(self, x, target):
        return x


def test_a_helper_named_like_another_kinds_call_is_not_that_kind():
    assert detect_kinds(ExplainerWithAHelper()) == {MethodKind.VCE}
    assert detect_kinds(ExplainerWithAHelper) == {MethodKind.VCE}  # the class (a return annotation) too
    found, ignored = kind_detection(ExplainerWithAHelper())
    assert [kind for kind, _ in found] == [MethodKind.VCE]
    assert "explain(x, target, classifier, *, generator=None)" in found[0][1]
    (reason,) = ignored
    assert "counterfactual(x, target) is not the scm call counterfactual(x, parents, intervention)" in reason


@pytest.mark.parametrize(
    "signature", ["x, parents, intervention", "x, *args", "*args, **kwargs", "x, parents, intervention, scale=1.0"]
)
def test_a_signature_that_can_take_the_call_is_that_kind(signature):
    namespace: dict = {}
    exec(f"class Generator:\n    def counterfactual(self, {signature}):\n        return None\n", namespace)
    assert detect_kinds(namespace["Generator"]()) == {MethodKind.SCM}
    assert detect_kinds(namespace["Generator"]) == {MethodKind.SCM}


def test_a_static_method_on_a_class_has_no_self_to_count():
    class Static:
        @staticmethod
        def attribute(x, model, target):
            return x

    assert detect_kinds(Static) == {MethodKind.ATTRIBUTION}
    assert detect_kinds(Static()) == {MethodKind.ATTRIBUTION}


def test_declared_kind_overrides_detection():
    class Declared(LatentExplainer):
        cfcheck_kind = "vce"

    assert detect_kinds(Declared()) == {MethodKind.VCE}


def test_declared_kind_must_be_known():
    class Declared:
        cfcheck_kind = "telepathy"

    with pytest.raises(ValueError, match="telepathy"):
        detect_kinds(Declared())


def test_generator_keyword_detection():
    assert not accepts_generator(Explainer().explain)
    assert accepts_generator(lambda x, target, classifier, generator=None: x)
    assert accepts_generator(lambda x, target, classifier, **kwargs: x)


def test_unknown_module_is_a_usage_error(pytester):
    result = pytester.runpytest("--method=no_such_module_anywhere")
    result.stderr.fnmatch_lines(["*--method=no_such_module_anywhere: no module named*"])
    assert result.ret == pytest.ExitCode.USAGE_ERROR


@pytest.mark.parametrize("as_path", [True, False])
def test_a_method_module_that_fails_to_import_is_one_usage_error(pytester, as_path):
    """The first mistake a user makes (a package their method needs is not installed) is one line
    naming the module, the line and the missing package, and the usage-error exit, not a traceback."""
    pytester.makepyfile(needs_more="import pytest\nimport a_package_nobody_installed\n")
    pytester.syspathinsert()
    result = pytester.runpytest("--method=needs_more.py" if as_path else "--method=needs_more")
    text = result.stderr.str() + result.stdout.str()
    assert "INTERNALERROR" not in text and "Traceback" not in text
    result.stderr.fnmatch_lines(
        [
            "*--method=needs_more*: importing *needs_more* failed at *needs_more.py:2: ModuleNotFoundError: "
            "No module named 'a_package_nobody_installed' (the package 'a_package_nobody_installed' is not "
            "installed in this environment)"
        ]
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR


def test_a_method_module_that_raises_while_importing(pytester):
    pytester.makepyfile(raises="import pytest\n\nraise RuntimeError('weights not found')\n")
    pytester.syspathinsert()
    result = pytester.runpytest("--method=raises")
    result.stderr.fnmatch_lines(
        ["*--method=raises: importing raises failed at *raises.py:3: RuntimeError: weights not found"]
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR


def test_the_pytest_command_finds_an_adapter_module_in_the_working_directory(pytester):
    """The README's ``pytest --method=my_adapter``: the ``pytest`` command, unlike ``python -m pytest``,
    does not put the working directory on sys.path; cfcheck looks there for the adapter's module."""
    import subprocess
    import sys
    from pathlib import Path

    command = Path(sys.executable).with_name("pytest")
    if not command.is_file():
        pytest.skip("no pytest command beside this interpreter")
    pytester.makepyfile(
        my_adapter="import pytest\n\n\nclass Same:\n    def explain(self, x, target, classifier):\n"
        "        return x\n\n\n@pytest.fixture\ndef cf_method():\n    return Same()\n"
    )
    done = subprocess.run(
        [
            str(command),
            "--method=my_adapter",
            "--cfcheck-domain=morpho",
            "--cfcheck-profile=quick",
            "-k",
            "test_contract",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            "-q",
        ],
        cwd=pytester.path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert "no module named 'my_adapter'" not in done.stderr, done.stderr
    assert done.returncode == 0 and "2 passed" in done.stdout, done.stdout[-2000:] + done.stderr[-2000:]


def test_missing_file_is_a_usage_error(pytester):
    result = pytester.runpytest("--method=missing/adapter.py")
    result.stderr.fnmatch_lines(["*file*adapter.py does not exist*"])
    assert result.ret == pytest.ExitCode.USAGE_ERROR


def test_module_without_cf_method_is_a_usage_error(pytester):
    pytester.makepyfile(empty_adapter="X = 1\n")
    pytester.syspathinsert()
    result = pytester.runpytest("--method=empty_adapter")
    result.stderr.fnmatch_lines(["*defines no fixture named 'cf_method'*"])
    assert result.ret == pytest.ExitCode.USAGE_ERROR


def test_object_without_a_kind_is_a_usage_error(pytester):
    pytester.makepyfile(thing="class Thing:\n    pass\n")
    pytester.syspathinsert()
    result = pytester.runpytest("--method=thing:Thing")
    result.stderr.fnmatch_lines(["*implements no method kind*", "*explain(x, target, classifier)*"])
    assert result.ret == pytest.ExitCode.USAGE_ERROR


def test_unknown_attribute_is_a_usage_error(pytester):
    pytester.makepyfile(thing="class Thing:\n    pass\n")
    pytester.syspathinsert()
    result = pytester.runpytest("--method=thing:Other")
    result.stderr.fnmatch_lines(["*thing has no attribute 'Other'*"])


def test_bad_profile_setting_is_a_usage_error_with_method(pytester):
    pytester.makepyprojecttoml("[tool.cfcheck]\nn_per_sourse = 3\n")
    result = pytester.runpytest("--method=checked_before_the_method_loads")
    result.stderr.fnmatch_lines(["*unknown [[]tool.cfcheck[]] setting 'n_per_sourse'*"])
    assert result.ret == pytest.ExitCode.USAGE_ERROR


def test_without_method_the_plugin_stays_out_of_the_way(pytester):
    pytester.makepyfile("def test_plain():\n    assert True\n")
    result = pytester.runpytest()
    result.assert_outcomes(passed=1)
    assert not (pytester.path / "reports").exists()


def test_fixture_returning_no_kind_fails_once_with_the_expected_interface(pytester):
    pytester.makepyfile(
        bad_adapter="""
import pytest

@pytest.fixture
def cf_method():
    return 42
"""
    )
    pytester.syspathinsert()
    result = pytester.runpytest("--method=bad_adapter", "-k", "vce and (test_output_contract or test_deterministic)")
    result.stdout.fnmatch_lines(["*implements no method kind*", "*explain(x, target, classifier)*"])
    assert result.ret != pytest.ExitCode.OK
    outcomes = result.parseoutcomes()
    assert outcomes.get("errors", 0) == 1 and "passed" not in outcomes


def test_kind_mismatch_skips_with_reason(pytester):
    pytester.makepyfile(
        attribution_adapter="""
import pytest

class Saliency:
    def attribute(self, x, model, target):
        return x

@pytest.fixture
def cf_method():
    return Saliency()
"""
    )
    pytester.syspathinsert()
    result = pytester.runpytest("--method=attribution_adapter", "-k", "vce and test_output_contract", "-rs")
    result.stdout.fnmatch_lines(["*suite for vce methods; Saliency implements attribution*"])
    result.assert_outcomes(skipped=1)


def test_mask_shapes_are_checked():
    from cfcheck.kinds.calling import MethodOutputError, OutputSpec, check_output

    x = torch.rand(3, 1, 4, 4)
    with pytest.raises(MethodOutputError, match="validity mask"):
        check_output((x.clone(), torch.ones(2, dtype=torch.bool)), x, OutputSpec(call="explain"))
