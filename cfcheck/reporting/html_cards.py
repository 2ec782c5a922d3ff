"""The HTML scorecard's metric cards: per card of the run's scores, what it measures, its bar and why,
what the controls measured on each domain (the scorecard's ``calibration`` section) and each domain's
own bar (the scorecard's domain facts). A card is read from the scorecard's own ``cards`` section first
(a kind's own card, which this machine may not have), then from the registry (:meth:`Scorecard.card`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cfcheck.metrics.key import MetricKey
from cfcheck.reporting.html_blocks import card_anchor, e
from cfcheck.reporting.model import Scorecard

__all__ = ["cards_section", "domain_bar_lines", "evidence_lines"]


def _card_of_stored(name: str, cards: Any) -> str:
    """The card a stored metric name names, read in either spelling (:meth:`MetricKey.read`); a name that is
    no key is its own card part."""
    try:
        return MetricKey.read(str(name), cards).card
    except ValueError:
        return MetricKey.card_part(name)


def domain_bar_lines(
    domain_facts: Mapping[str, Any], key: str, cards: Mapping[str, Any] | None = None
) -> list[tuple[str, str]]:
    """(label, text) of each domain's own bar on card ``key`` (its variants too).

    Args:
        domain_facts: domain name → what the scorecard records of it (``profile.domains``,
            :attr:`Scorecard.domain_facts`).
        key: a metric card's key.
        cards: the card keys a stored name is read against (:attr:`Scorecard.card_order`); None: the
            registry's, the kinds' own cards included.
    """
    if cards is None:
        from cfcheck.kinds.registry import loaded_cards

        cards = loaded_cards()
    lines = []
    for domain, facts in sorted(domain_facts.items()):
        if not isinstance(facts, Mapping) or facts.get("bars") not in ("calibrated", "uncalibrated", "cards"):
            continue
        own = {
            k: v for k, v in (facts.get("domain_bars") or {}).items() if _card_of_stored(k, cards) == key
        }  # the card or a variant of it (card:variant; card_variant in scorecards written before one spelling)
        if not own and facts["bars"] != "cards":  # a bundled domain lists only the bars it adds to the cards'
            lines.append(
                (
                    f"bar on {domain}",
                    "none: the domain is uncalibrated (cfcheck calibrate --domain)"
                    if facts["bars"] == "uncalibrated"
                    else "none: its controls did not separate",
                )
            )
        lines += [
            (f"bar on {domain}" + (f" ({k})" if k != key else ""), f"{v['bar']}: {v['rationale']}")
            for k, v in sorted(own.items())
        ]
    return lines


def evidence_lines(card: Scorecard, key: str) -> list[tuple[str, str]]:
    """("measured on <domain>", sentence) of card ``key`` per domain in name order, from the scorecard's
    ``calibration`` section (a domain scored by several kinds: the first kind's entry that has the card);
    none for a scorecard without the section."""
    rows: list[tuple[str, str]] = []
    seen = set()
    for (_, domain), entry in sorted((card.calibration or {}).items(), key=lambda item: (item[0][1], item[0][0])):
        if domain in seen or key not in entry.evidence:
            continue
        seen.add(domain)
        rows += [(f"measured on {domain}", row.text()) for row in entry.evidence[key]]
    return rows


def cards_section(card: Scorecard) -> str:
    """The metric cards of the cards of ``card``'s scores, in score order."""
    from cfcheck.metrics.card import DIFFERENCES_HEADING, difference_lines

    keys = list(dict.fromkeys(score.card for score in card.scores))
    out = ["<h2>Metric cards</h2><p class='muted'>What each score measures, its bar and why the bar sits there.</p>"]
    for key in keys:
        metric = card.card(key)
        if metric is None:  # a card neither the scorecard nor this machine defines
            continue
        bar = metric.bar.describe() if metric.bar is not None else "none (reported without a verdict)"
        bar += "".join(f"; {name} profile: {b.describe()}" for name, b in metric.profile_bars.items())
        fields = [
            ("formula", metric.formula),
            ("direction", f"{metric.direction} is better" if metric.direction != "none" else "none"),
            ("range", f"[{metric.range[0]:g}, {metric.range[1]:g}] {metric.units}"),
            ("normalisation", metric.normalisation),
            ("abstentions", metric.abstentions),
            ("bar (bundled domains)", bar),
            ("rationale", metric.rationale or "-"),
            *evidence_lines(card, key),
            *domain_bar_lines(card.domain_facts, key, card.card_order),
            ("citation", metric.citation),
            ("notes", metric.notes or "-"),
            *((DIFFERENCES_HEADING, text) for text in difference_lines(metric)),
        ]
        items = "".join(f"<dt>{e(name)}</dt><dd>{e(value)}</dd>" for name, value in fields)
        out.append(
            f"<details class='card' id='{card_anchor(key)}'><summary><b>{e(metric.name)}</b> "
            f"<code>{e(key)}</code></summary><dl>{items}</dl></details>"
        )
    return "\n".join(out)
