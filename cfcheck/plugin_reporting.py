"""What cfcheck's reporting hooks (:mod:`cfcheck.plugin`) do beyond reading the session: count the
tests' outcomes, hand an xdist worker's records, costs and generation counts to the controller and
merge them there, gate the run on its baseline's vanished scores (:class:`BaselineGate`), and say the
run's summary at the end of the terminal report."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from cfcheck import faults
from cfcheck.core.devices import describe_device
from cfcheck.reporting import changes as status

if TYPE_CHECKING:  # the session loads only when a method is under test
    from cfcheck.session import CfcheckSession

#: what a worker hands the controller (``workeroutput`` keys, each a JSON string)
WORKER_OUTPUT = ("cfcheck_records", "cfcheck_costs", "cfcheck_generation", "cfcheck_device", "cfcheck_answer_read")


class OutcomeCounter:
    """Counts test outcomes, and each task's scoring time (its tests' call phases), for the
    scorecard (on the xdist controller, which sees all reports)."""

    def __init__(self, session: CfcheckSession) -> None:
        self.session = session
        self.outcomes = session.outcomes

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call":
            properties = dict(report.user_properties)
            task = next((v for k, v in properties.items() if k.endswith(".task")), None)
            kind = next((v for k, v in properties.items() if k.endswith(".kind")), None)
            domain = next((v for k, v in properties.items() if k.endswith(".domain")), None)
            if task is not None and kind is not None:
                self.session.costs.add_test_time(f"{kind}/{domain}/{task}", report.duration, properties)
        if report.failed and report.when != "call":
            self.outcomes["error"] += 1
        elif report.when == "call" or report.skipped:
            self.outcomes[report.outcome] += 1


class BaselineGate:
    """Registered with ``--cfcheck-baseline`` (:func:`install_baseline_gate`): notes every test that ran
    and, at the end of the session (on the xdist controller, which sees every report), finds the
    baseline's scores whose test ran without recording them. A run where one vanished, or where no score
    matched the baseline at all, fails (exit status 1) even if every test passed."""

    def __init__(self, session: CfcheckSession) -> None:
        self.session = session
        self.ran: set[str] = set()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.ran.add(report.nodeid)

    # not trylast: it runs before the plugin's own (trylast) writes the scorecard, which lists what vanished
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        config = session.config
        baseline = self.session.baseline
        if baseline is None or hasattr(config, "workeroutput") or config.option.collectonly:
            return
        recorded = [(r.key, r.legacy_key) for r in self.session.records]
        baseline.vanished = baseline.vanished_among(recorded, self.ran)
        unmatched = bool(recorded) and baseline.matched(recorded) == 0
        if (baseline.vanished or unmatched) and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED


def install_baseline_gate(config: pytest.Config, session: CfcheckSession) -> None:
    """Register :class:`BaselineGate` when the run has a baseline; a baseline of another profile is a usage
    error (its scores were measured on other sizes and judged by other bars)."""
    if session.baseline is None:
        return
    try:
        session.baseline.check_profile(session.profile.name)
    except ValueError as error:
        raise pytest.UsageError(f"--cfcheck-baseline: {error}") from None
    # a bar that changed since the baseline: said, and no known failure carries across it
    session.baseline.note_bar_changes(lambda domain, metric: current_bar(session, domain, metric))
    config.pluginmanager.register(BaselineGate(session), "cfcheck-baseline-gate")


def current_bar(session: CfcheckSession, domain: str, metric: str) -> str | None:
    """The run's bar of ``metric`` on ``domain``, described (None: no bar); LookupError for a domain
    the run does not have."""
    if domain not in session.domain_names():
        raise LookupError(f"domain {domain!r} is not in the run")
    bar = session.bars_for(domain).get(metric)
    return bar.describe() if bar is not None else None


#: lines per kind of change the terminal report lists (the rest are counted; changes.md has them all)
LISTED_CHANGES = 10


def baseline_lines(session: CfcheckSession) -> Iterator[str]:
    """The terminal report's lines about the baseline: each status's count, then the scores that got
    worse or were fixed, by name."""
    baseline = session.baseline
    if baseline is None:
        return
    counts = Counter(r.baseline_status for r in session.records if r.baseline_status)
    vanished = len(baseline.vanished)
    mode = session.profile.known_failures
    known = "xfailed" if mode != "fail" else "failed: --cfcheck-known-failures=fail"
    yield (
        f"against the baseline {baseline.source}: {counts[status.KNOWN_FAILURE] + counts[status.STILL_FAILING]} "
        f"known failures ({known}), {counts[status.NEW_FAILURE]} new failures, {counts[status.REGRESSED]} "
        f"regressed, {counts[status.ERROR]} could not be computed, {vanished} vanished, "
        f"{counts[status.FIXED] + counts[status.FIXED_STRICT]} fixed, {counts[status.IMPROVED]} improved"
    )
    for line in baseline.protocol_changes:  # made under another protocol: say what differs
        yield f"  {line}"
    for change in baseline.bar_changes[:LISTED_CHANGES]:
        yield f"  {change.describe()}"
    if len(baseline.bar_changes) > LISTED_CHANGES:
        yield f"  … and {len(baseline.bar_changes) - LISTED_CHANGES} more changed bars (the scorecard's baseline section)"
    named = {
        status.NEW_FAILURE: "new failure",
        status.REGRESSED: "regressed",
        status.ERROR: "could not be computed",
        status.STILL_FAILING: "known failure, failing",
        status.FIXED_STRICT: "fixed (strict: refresh the baseline to keep it)",
        status.FIXED: "fixed",
    }
    for which, label in named.items():
        keys = [r.key for r in session.records if r.baseline_status == which]
        for key in keys[:LISTED_CHANGES]:
            yield f"  {label}: {key}"
        if len(keys) > LISTED_CHANGES:
            yield f"  … and {len(keys) - LISTED_CHANGES} more {label}"
    for entry in baseline.vanished[:LISTED_CHANGES]:
        yield f"  vanished (its test ran, the score was not recorded): {entry.key}"
    if vanished > LISTED_CHANGES:
        yield f"  … and {vanished - LISTED_CHANGES} more vanished"
    recorded = [(r.key, r.legacy_key) for r in session.records]
    if recorded and baseline.matched(recorded) == 0:
        yield (
            "  no score of this run is in the baseline: it gated nothing (another seed, domain or selection "
            "than the baseline's?); the run fails"
        )


def hand_to_controller(cf_session: CfcheckSession, workeroutput: dict[str, Any], worker: str) -> None:
    """An xdist worker's part of the run, into its ``workeroutput`` for the controller."""
    workeroutput["cfcheck_records"] = cf_session.serialize_records()
    workeroutput["cfcheck_costs"] = cf_session.costs.serialize()
    workeroutput["cfcheck_device"] = json.dumps({worker: describe_device(cf_session.device)})
    # what the method read of the domain's answer on this worker (its fixture, its calls, cached tasks)
    workeroutput["cfcheck_answer_read"] = cf_session.answer_reads.serialize()
    workeroutput["cfcheck_generation"] = json.dumps(
        {k: v for k, v in cf_session.generation_summary().items() if k != "cache"}
    )


def merge_from_worker(cf_session: CfcheckSession, output: dict[str, Any]) -> None:
    """A finished worker's part of the run (:func:`hand_to_controller`), into the controller's session."""
    if output.get("cfcheck_records"):
        cf_session.merge_records(output["cfcheck_records"])
    if output.get("cfcheck_costs"):
        cf_session.costs.merge(output["cfcheck_costs"])
    if output.get("cfcheck_generation"):
        cf_session.merge_generation(output["cfcheck_generation"])
    if output.get("cfcheck_device"):
        cf_session.devices.update(json.loads(output["cfcheck_device"]))
    if output.get("cfcheck_answer_read"):
        cf_session.answer_reads.merge(json.loads(output["cfcheck_answer_read"]))


def summary_lines(session: CfcheckSession, exitstatus: int, config: pytest.Config) -> Iterator[str]:
    """The lines of the terminal report's cfcheck section, one by one: what was deselected, the
    method's kinds, the scores' verdicts, the generation and the cache, the scorecard and its headline."""
    deselected = getattr(session, "deselected", None)
    if deselected:
        yield deselected
    for reason in session.kind_reasons or ():  # known where cf_method ran in this process (not under xdist)
        yield f"method kind {reason}"
    unusable = sorted({r.metric.removeprefix("domain:") for r in session.records if r.metric.startswith("domain:")})
    if unusable:
        yield f"not scored (failed the load check, see test_domain_loads): {', '.join(unusable)}"
    counts = {v: sum(1 for r in session.records if r.verdict == v) for v in ("pass", "fail", "inconclusive", "error")}
    regressed = sum(1 for r in session.records if r.regressed)
    yield (
        f"{len(session.records)} scores recorded: {counts['pass']} passed, {counts['fail']} failed, "
        f"{counts['inconclusive']} inconclusive, {counts['error']} could not be computed, "
        f"{len(session.records) - sum(counts.values())} without a bar; {regressed} regressed"
    )
    yield from baseline_lines(session)
    generated = session.generation_summary()
    extra = (
        f"the suites' further calls (composition cycles): {int(generated.get('extra_calls_generated', 0))} "
        f"made, {int(generated.get('extra_calls_from_cache', 0))} read from the cache; "
        if generated.get("extra_calls_generated") or generated.get("extra_calls_from_cache")
        else ""
    )
    yield (
        f"generation: {int(generated.get('tasks_generated', 0))} tasks generated by the method, "
        f"{int(generated.get('tasks_from_cache', 0))} read from the cache ({generated.get('seconds', 0.0):.1f} s); "
        f"{extra}{session.cache.stats.describe() if session.cache.directory is not None else 'cache: off'}"
    )
    if session.scorecard_path is None and not session.records and not config.option.collectonly:
        yield f"no score was recorded, so no scorecard was written (the last one in {session.run_dir} is left as it was)"
    if session.scorecard_path is not None:
        incomplete = ""
        if exitstatus == pytest.ExitCode.INTERRUPTED:
            cause = "SIGTERM" if config.stash.get(faults.sigterm_received_key, False) else "interrupted"
            incomplete = f" (incomplete: {cause})"
        yield f"scorecard: {session.scorecard_path}{incomplete}"
        from cfcheck.reporting.model import Scorecard
        from cfcheck.reporting.scorecard import load_scorecard

        yield Scorecard.from_json(load_scorecard(session.scorecard_path)).headline.sentence
        for failure in getattr(session, "format_failures", []):  # a plugin's format raised: the others were written
            yield f"ERROR: {failure}"
    yield from getattr(session, "baseline_notes", [])  # written with the scorecard: changes.md, a saved baseline
