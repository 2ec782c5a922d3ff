"""A baseline: the stored scores of an earlier run, and how a score of this run compares with them.

A baseline is the scorecard JSON of a complete earlier run, failures included
(``--cfcheck-save-baseline``). Each score of a run is compared with its stored self,
direction-aware with its card's tolerance, and given a status
(:data:`cfcheck.reporting.tables.STATUSES`), stored on its record as ``baseline_status``:

- ``regressed``: worse than the baseline by more than its tolerance (fails);
- ``new_failure``: misses its bar now but did not in the baseline, or is not in it (fails);
- ``known_failure``: missed its bar in the baseline and misses it now, no worse beyond its
  tolerance (an expected failure, pytest's xfail: it does not fail the run);
- ``still_failing``: a known failure under ``--cfcheck-known-failures=fail`` (fails);
- ``fixed``: missed its bar in the baseline and passes now (reported as XPASS);
- ``fixed_strict``: the same under ``--cfcheck-known-failures=strict`` (fails until the baseline is
  refreshed, so the ratchet tightens);
- ``error``: could not be computed (fails);
- ``improved``: better than the baseline by more than its tolerance;
- ``unchanged``, or ``new`` for a passing score the baseline does not have.

A score of the baseline that the run does not record although its test ran has *vanished*
(:meth:`Baseline.vanished_among`); it fails the run too.

A baseline made under another protocol (:mod:`cfcheck.core.protocol`) is not gated against silently:
:meth:`Baseline.note_bar_changes` finds each stored score whose bar differs from the one that judges
it now (its stored ``threshold`` against the run's bar) and the run lists them (old → new). The
regression check on values still runs for those scores, but the "known failure" ratchet does not
cross a changed bar: a score that missed its old bar and misses the new one is a *new* failure, and
one that passes the new bar is not counted as fixed (:mod:`cfcheck.baseline.protocol`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from cfcheck.baseline.protocol import BarChange, bar_text
from cfcheck.core.keys import ScoreId
from cfcheck.reporting.scorecard import load_scorecard
from cfcheck.reporting.tables import (
    ERROR,
    FAILING_STATUSES,
    FIXED,
    FIXED_STRICT,
    IMPROVED,
    KNOWN_FAILURE,
    NEW,
    NEW_FAILURE,
    REGRESSED,
    STILL_FAILING,
    UNCHANGED,
)

#: verdicts of a stored score that missed its bar (so a failure now is a known one)
MISSED_VERDICTS = ("fail", "inconclusive")


@dataclass(frozen=True)
class Regression:
    key: str
    value: float
    baseline: float
    tolerance: float
    direction: str

    def describe(self) -> str:
        worse = "lower" if self.direction == "higher" else "higher"
        return (
            f"{self.key} regressed: {self.value:.4g} is {worse} than the baseline "
            f"{self.baseline:.4g} by more than the tolerance {self.tolerance:g}"
        )


@dataclass(frozen=True)
class StoredScore:
    """One score of the baseline, as its scorecard recorded it."""

    key: str
    value: float | None
    verdict: str | None
    ci_low: float | None = None
    ci_high: float | None = None
    threshold: str | None = None
    nodeid: str | None = None
    #: where it was measured: ``kind/domain/task`` (``-/-/task`` in a format 2 scorecard)
    where: str = "-"
    #: what was measured: ``suite/metric``
    score: str = "-"
    #: the bar that judges the score now, where it differs from the one that judged it in the
    #: baseline ("none": no bar now); None: the same bar (or not checked)
    bar_now: str | None = None

    @property
    def missed_bar(self) -> bool:
        """It failed its bar or its interval straddled it."""
        return self.verdict in MISSED_VERDICTS

    @property
    def known_failure(self) -> bool:
        """It missed the bar that judges it now too (a failure now is a known one): it missed its bar
        and that bar has not changed since."""
        return self.missed_bar and self.bar_now is None

    def describe(self) -> str:
        """ "0.55 [0.47, 0.64], fail" — its value, interval and verdict."""
        if self.value is None:
            return f"not computed ({self.verdict or 'no value'})"
        text = f"{self.value:.4g}"
        if self.ci_low is not None and self.ci_high is not None:
            text += f" [{self.ci_low:.4g}, {self.ci_high:.4g}]"
        changed = f" under the bar {bar_text(self.threshold)}, now {self.bar_now}" if self.bar_now is not None else ""
        return f"{text}, {self.verdict or 'no bar'}{changed}"


@dataclass(frozen=True)
class Judgement:
    """How one score of the run compares with the baseline."""

    status: str
    stored: StoredScore | None = None
    regression: Regression | None = None

    @property
    def fails_run(self) -> bool:
        return self.status in FAILING_STATUSES


def classify(
    stored: StoredScore | None,
    *,
    key: str,
    value: float,
    verdict: str | None,
    direction: str,
    tolerance: float,
    failing: bool,
    known_failures: str,
) -> Judgement:
    """The status of a score against its stored self (see the module's docstring).

    Args:
        stored: the baseline's score, or None when the baseline does not have it.
        key: the score's identity (named in a regression's message).
        value: the score's value now (NaN when it could not be computed).
        verdict: its verdict now: "pass", "fail", "inconclusive", "error" or None (no bar).
        direction: "higher" or "lower" is better ("none": no regression is possible).
        tolerance: how much worse than the baseline is not a regression (>= 0).
        failing: whether the score misses its bar now (a fail, or an inconclusive verdict that the
            run's ``inconclusive`` setting fails).
        known_failures: ``--cfcheck-known-failures``: "xfail", "strict" or "fail".

    Returns:
        The :class:`Judgement`: its status, the stored score and the regression if any.
    """
    if verdict == "error":
        return Judgement(ERROR, stored)
    if stored is None:
        return Judgement(NEW_FAILURE if failing else NEW)
    regression, moved_better = None, False
    if stored.value is not None and direction in ("higher", "lower") and math.isfinite(value):
        worse_by = stored.value - value if direction == "higher" else value - stored.value
        if worse_by > tolerance:
            regression = Regression(key, value, stored.value, tolerance, direction)
        moved_better = -worse_by > tolerance
    if regression is not None:
        return Judgement(REGRESSED, stored, regression)
    if failing:
        if stored.known_failure:
            return Judgement(STILL_FAILING if known_failures == "fail" else KNOWN_FAILURE, stored)
        return Judgement(NEW_FAILURE, stored)
    if verdict == "pass" and (stored.known_failure or stored.verdict == "error"):
        return Judgement(FIXED_STRICT if known_failures == "strict" else FIXED, stored)
    return Judgement(IMPROVED if moved_better else UNCHANGED, stored)


class BaselineError(ValueError):
    """A baseline file that cannot gate this run (the message says what to do)."""


class Baseline:
    """Stored scores keyed by record identity (:attr:`cfcheck.core.records.ScoreRecord.key`).

    A scorecard of format 2 or older has no kind or domain on its records; its scores are
    keyed ``metric[task]`` and matched by :attr:`ScoreRecord.legacy_key` (those runs measured
    one kind on one domain), so old baselines keep gating. Old baselines were saved only from runs
    without failures; their scores' verdicts (or ``passed``, before verdicts) are read alike.
    """

    def __init__(
        self,
        scores: Mapping[str, float],
        source: str = "<memory>",
        *,
        entries: Mapping[str, StoredScore] | None = None,
        method: str | None = None,
        profile: str | None = None,
    ) -> None:
        self.scores = dict(scores)
        self.entries: dict[str, StoredScore] = (
            dict(entries) if entries is not None else {k: StoredScore(k, v, None) for k, v in scores.items()}
        )
        self.source = source
        self.method = method
        self.profile = profile
        #: the baseline's scores whose test ran in this run without recording them (set at its end)
        self.vanished: list[StoredScore] = []
        #: the baseline scorecard's ``protocols`` (empty: saved before cfcheck recorded them)
        self.protocols: dict[str, Any] = {}
        #: the bars that judge its scores differently now (:meth:`note_bar_changes`)
        self.bar_changes: list[BarChange] = []
        #: how the run's protocols differ from the baseline's, one line each (set with the scorecard)
        self.protocol_changes: list[str] = []

    @classmethod
    def load(cls, path: Path) -> Baseline:
        """The baseline stored at ``path`` (a scorecard JSON).

        Raises:
            FileNotFoundError: no file there.
            ValueError: not a scorecard; :class:`BaselineError`: a scorecard of an incomplete run.
        """
        try:
            data = load_scorecard(path)
        except FileNotFoundError:
            raise
        except ValueError as error:
            raise BaselineError(f"{error}; save a baseline with --cfcheck-save-baseline PATH") from None
        return cls.from_scorecard(data, str(path))

    @classmethod
    def from_scorecard(cls, data: Mapping[str, Any], source: str) -> Baseline:
        """The baseline of a scorecard already read (``source`` names it in messages)."""
        if not isinstance(data.get("scores"), list):
            raise BaselineError(f"{source} has no list of scores: save a baseline with --cfcheck-save-baseline PATH")
        if data.get("status", "complete") != "complete":
            raise BaselineError(
                f"{source} is the scorecard of an incomplete run ({data.get('status')}): a baseline must record "
                "a complete run; rerun to the end with --cfcheck-save-baseline PATH"
            )
        legacy = int(data.get("format", 1)) < 3
        entries: dict[str, StoredScore] = {}
        for s in data["scores"]:
            identity = ScoreId.from_score(s)
            key = identity.legacy() if legacy else identity.serialise()
            verdict = s.get("verdict")
            if "verdict" not in s and s.get("passed") is not None:  # scorecards before verdicts
                verdict = "pass" if s["passed"] else "fail"
            entries[key] = StoredScore(
                key,
                _number(s.get("value")),
                verdict,
                _number(s.get("ci_low")),
                _number(s.get("ci_high")),
                s.get("threshold"),
                s.get("nodeid"),
                where=f"{s.get('kind', '-')}/{s.get('domain', '-')}/{s['task']}",
                score=f"{s.get('suite', '-')}/{s['metric']}",
            )
        scores = {k: e.value for k, e in entries.items() if e.value is not None}
        profile = data.get("profile")
        baseline = cls(
            scores,
            source,
            entries=entries,
            method=data.get("method"),
            profile=profile.get("name") if isinstance(profile, Mapping) else None,
        )
        baseline.protocols = dict(data.get("protocols") or {})
        return baseline

    def note_bar_changes(self, current_bar: Callable[[str, str], str | None]) -> list[BarChange]:
        """Mark every stored score whose bar differs from the one that judges it now (its
        :attr:`StoredScore.bar_now`), so the known-failure ratchet does not cross the change.

        Args:
            current_bar: (domain, metric) → the run's bar of that score, described (``">= 0.8"``;
                None: no bar); it raises LookupError or ValueError for a domain or metric it does not
                judge (such scores are left as they are).

        Returns:
            The changes, one per (kind/domain, metric, old bar, new bar), also kept in :attr:`bar_changes`.
        """
        counts: dict[tuple[str, str, str, str], int] = {}
        for key, entry in self.entries.items():
            kind, _, rest = entry.where.partition("/")
            domain = rest.partition("/")[0]
            metric = entry.score.partition("/")[2]
            if domain in ("", "-") or not metric:
                continue
            try:
                now = current_bar(domain, metric) or "none"
            except (LookupError, ValueError):
                continue
            old = bar_text(entry.threshold)
            if now != old:
                self.entries[key] = replace(entry, bar_now=now)
                found = (f"{kind}/{domain}", metric, old, now)
                counts[found] = counts.get(found, 0) + 1
        self.bar_changes = [BarChange(*found, scores) for found, scores in sorted(counts.items())]
        return self.bar_changes

    def check_profile(self, name: str) -> None:
        """BaselineError when the baseline was saved at another profile than ``name`` (its scores were
        measured on other sample sizes and judged by other bars)."""
        if self.profile is not None and self.profile != name:
            raise BaselineError(
                f"{self.source} was saved at the {self.profile} profile and this run is {name}: compare runs "
                f"of one profile (run with --cfcheck-profile={self.profile}, or save a baseline at {name})"
            )

    def get(self, *keys: str) -> float | None:
        """The stored value under the first of ``keys`` that the baseline has."""
        return next((self.scores[k] for k in keys if k in self.scores), None)

    def entry(self, *keys: str) -> StoredScore | None:
        """The stored score under the first of ``keys`` that the baseline has."""
        return next((self.entries[k] for k in keys if k in self.entries), None)

    def compare(self, keys: tuple[str, ...], value: float, direction: str, tolerance: float) -> Regression | None:
        """The regression of ``value`` against the stored one, or None (also when unknown)."""
        key = keys[0]
        stored = self.get(*keys)
        if stored is None or direction not in ("higher", "lower") or not math.isfinite(value):
            return None
        delta = stored - value if direction == "higher" else value - stored
        if delta > tolerance:
            return Regression(key, value, stored, tolerance, direction)
        return None

    def judge(
        self,
        keys: tuple[str, ...],
        *,
        value: float,
        verdict: str | None,
        direction: str,
        tolerance: float,
        failing: bool,
        known_failures: str,
    ) -> Judgement:
        """:func:`classify` the score stored under the first of ``keys`` the baseline has."""
        return classify(
            self.entry(*keys),
            key=keys[0],
            value=value,
            verdict=verdict,
            direction=direction,
            tolerance=tolerance,
            failing=failing,
            known_failures=known_failures,
        )

    def vanished_among(self, recorded: Iterable[tuple[str, str]], ran: Iterable[str]) -> list[StoredScore]:
        """The stored scores whose test ran (its node id is in ``ran``) but which the run did not record.

        Args:
            recorded: the run's scores as (key, legacy key) pairs.
            ran: node ids of the tests that ran (or were skipped) in this run.

        Returns:
            Those scores, in the baseline's order.
        """
        seen = {k for pair in recorded for k in pair}
        ran = set(ran)
        return [e for key, e in self.entries.items() if e.nodeid in ran and key not in seen]

    def matched(self, recorded: Iterable[tuple[str, str]]) -> int:
        """How many of the run's scores (key, legacy key pairs) the baseline has."""
        return sum(1 for pair in recorded if any(k in self.entries for k in pair))


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else None
