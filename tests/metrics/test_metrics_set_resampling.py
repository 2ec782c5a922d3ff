"""The batched set statistics (FidSets, KidSets, bootstrap_set_ci(resampled=...), score_realism's
engine path) against the slow per-resample computation they replace, kept here as the reference."""

from __future__ import annotations

import warnings
from unittest import mock

import numpy as np
import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st

from cfcheck.metrics import set_statistics
from cfcheck.metrics.realism import fid
from cfcheck.metrics.reference_sets import draw_reference, score_realism
from cfcheck.metrics.set_intervals import bootstrap_set_ci
from cfcheck.metrics.set_statistics import FidSets, KidSets, kid_all_pairs, set_statistic_engine

# --------------------------------------------------------------------- slow reference code


def slow_kid_all_pairs(real, fake, degree=3, gamma=None, coef=1.0) -> float:
    """Whole kernel matrices, as kid_all_pairs was computed before the blocked engine."""
    real, fake = torch.as_tensor(real, dtype=torch.float64), torch.as_tensor(fake, dtype=torch.float64)
    gam = 1.0 / real.shape[1] if gamma is None else gamma
    n, m = real.shape[0], fake.shape[0]
    k_rr = (real @ real.T * gam + coef) ** degree
    k_ff = (fake @ fake.T * gam + coef) ** degree
    k_rf = (real @ fake.T * gam + coef) ** degree
    within_r = (k_rr.sum() - k_rr.diagonal().sum()) / (n * (n - 1))
    within_f = (k_ff.sum() - k_ff.diagonal().sum()) / (m * (m - 1))
    return float(within_r + within_f - 2 * k_rf.sum() / (n * m))


def slow_bootstrap_set_ci(a, b, statistic, *, n_resamples, seed, point=None, method="bootstrap"):
    """One statistic call per resample on gathered rows; the resamples come from the same random
    stream as bootstrap_set_ci's (each stratum's R resamples at once: a's strata, then b's)."""
    stratified = isinstance(a, (tuple, list))
    parts_a, parts_b = (tuple(a), tuple(b)) if stratified else ((a,), (b,))
    rng = np.random.default_rng(seed)
    stats = np.empty(n_resamples)

    halves = method != "bootstrap"

    def indices(part):
        n = len(part)
        if halves:
            return np.stack([rng.permuted(np.arange(n)) for _ in range(n_resamples)])[:, : max(2, n // 2)]
        return rng.integers(0, n, size=(n_resamples, n))

    def call(x, y):
        return float(statistic(x, y) if stratified else statistic(x[0], y[0]))

    index_a, index_b = [indices(p) for p in parts_a], [indices(p) for p in parts_b]
    for i in range(n_resamples):
        a_sub = tuple(p[torch.from_numpy(ix[i])] for p, ix in zip(parts_a, index_a))
        b_sub = tuple(p[torch.from_numpy(ix[i])] for p, ix in zip(parts_b, index_b))
        stats[i] = call(a_sub, b_sub)
    low, high = np.percentile(stats, [2.5, 97.5])
    if halves:  # c² = rows kept / rows left out, over all blocks
        kept = sum(ix.shape[1] for ix in (*index_a, *index_b))
        left = sum(len(p) for p in (*parts_a, *parts_b)) - kept
        c = np.sqrt(kept / left) if left else 1.0
        if method == "null_corrected_half_sampling":  # random splits of each block's pooled rows
            pools = [torch.cat([p, q - q.mean(0) + p.mean(0)]) for p, q in zip(parts_a, parts_b)]
            orders = [np.stack([rng.permuted(np.arange(len(u))) for _ in range(n_resamples)]) for u in pools]
            null = np.array(
                [
                    call(
                        tuple(u[torch.from_numpy(o[i, : len(p)])] for u, o, p in zip(pools, orders, parts_a)),
                        tuple(u[torch.from_numpy(o[i, len(p) :])] for u, o, p in zip(pools, orders, parts_a)),
                    )
                    for i in range(n_resamples)
                ]
            )
            v_half, v_null = stats.var(ddof=1), null.var(ddof=1)
            c *= np.sqrt(max(v_half - 2 * v_null, v_null) / v_half)
        middle = point if method == "half_sampling" else np.median(stats)
        return point - c * (high - middle), point - c * (low - middle)
    if point is not None:
        bias = float(np.median(stats)) - point
        low, high = low - bias, high - bias
    return float(low), float(high)


def slow_score_realism(
    statistic, pool, pool_labels, fakes, classes, *, conditional, generator, n_resamples, seed, ci_method
):
    """score_realism with one statistic call per set and per resample (no engine)."""
    order = sorted(int(c) for c in classes.unique())
    counts = {c: int((classes == c).sum()) for c in order}
    draw = draw_reference(pool_labels, counts, generator=generator)
    fake_parts = tuple(fakes[classes == c] for c in order)
    reference = tuple(pool[draw.reference[c]] for c in order)
    weights = np.array([counts[c] for c in order], dtype=np.float64) / sum(counts.values())

    def pooled(real_parts, parts):
        if conditional:
            return float(sum(w * statistic(r, f) for w, r, f in zip(weights, real_parts, parts)))
        return statistic(torch.cat(real_parts), torch.cat(parts))

    value = pooled(reference, fake_parts)
    floors = [pooled(reference, tuple(pool[floor[c]] for c in order)) for floor in draw.floors]
    ci = slow_bootstrap_set_ci(
        reference, fake_parts, pooled, n_resamples=n_resamples, seed=seed, point=value, method=ci_method
    )
    return value, ci, floors


def slow_statistic(statistic):
    return slow_kid_all_pairs if statistic is kid_all_pairs else statistic


# --------------------------------------------------------------------------------- tests


def _close(fast, slow, rel=1e-9, abs_=1e-12):
    fast, slow = np.asarray(fast, dtype=np.float64), np.asarray(slow, dtype=np.float64)
    assert np.all(np.abs(fast - slow) <= rel * np.abs(slow) + abs_), (fast, slow)


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(2, 25),
    m=st.integers(2, 25),
    dim=st.integers(1, 5),
    resamples=st.integers(1, 4),
    degree=st.integers(1, 4),
    block=st.sampled_from([1, 7, 4_000_000]),
    seed=st.integers(0, 2**16),
)
def test_kid_resampled_equals_kid_of_the_gathered_rows(n, m, dim, resamples, degree, block, seed):
    rng = np.random.default_rng(seed)
    real, fake = torch.from_numpy(rng.normal(size=(n, dim))), torch.from_numpy(rng.normal(size=(m, dim)) + 0.3)
    index_r = rng.integers(0, n, size=(resamples, max(2, n // 2 + 1)))  # repeats allowed, any size
    index_f = rng.integers(0, m, size=(resamples, m))
    with mock.patch.object(set_statistics, "_BLOCK_ENTRIES", block):
        sets = KidSets(real, degree=degree)
        fast = sets.resampled(fake, index_r, index_f)
        whole = sets(fake)
    slow = [slow_kid_all_pairs(real[i], fake[j], degree=degree) for i, j in zip(index_r, index_f)]
    _close(fast, slow, abs_=1e-10)
    _close(whole, slow_kid_all_pairs(real, fake, degree=degree), abs_=1e-10)


@settings(max_examples=60, deadline=None)
@given(
    dim=st.integers(1, 6),
    n=st.integers(3, 24),
    m=st.integers(2, 24),
    resamples=st.integers(1, 4),
    block=st.sampled_from([1, 9, 4_000_000]),
    seed=st.integers(0, 2**16),
)
# a bootstrap of 3 fake rows that drew one row three times: a singular covariance although m > dim
@example(dim=1, n=6, m=3, resamples=1, block=1, seed=3)
def test_fid_resampled_equals_fid_of_the_gathered_rows(dim, n, m, resamples, block, seed):
    """Either set may have fewer rows than dimensions (each takes its own low-rank path)."""
    rng = np.random.default_rng(seed)
    real = torch.from_numpy(rng.normal(size=(n, dim)) * rng.uniform(0.5, 3.0, size=dim) + 5.0)
    fake = torch.from_numpy(rng.normal(size=(m, dim)) + 4.0)
    index_r = np.stack([rng.permutation(n)[: n // 2 + 1] for _ in range(resamples)])  # without repeats
    index_f = rng.integers(0, m, size=(resamples, m))  # with repeats (the bootstrap)
    with mock.patch.object(set_statistics, "_BLOCK_ENTRIES", block):
        fast = FidSets(real).resampled(fake, index_r, index_f)
    slow = [fid(real[i], fake[j]) for i, j in zip(index_r, index_f)]
    # rounding of a (near-)singular covariance is amplified by a square root: ~√eps·scale, in both
    # computations where a set has fewer rows than dimensions (its zero eigenvalues come out as
    # ±eps·scale, whose roots are ~1e-8·scale); checked against 50-digit arithmetic on one such
    # case, both were within 3e-7
    # the covariance is singular where a resample has no more distinct rows than dimensions (a
    # bootstrap draws repeats, so m > dim does not rule it out)
    distinct = min(len(np.unique(rows)) for rows in (*index_r, *index_f))
    _close(fast, slow, rel=1e-9, abs_=1e-7 if distinct > dim else 1e-6)


def test_fid_resampled_equals_fid_to_1e9_on_embedding_sized_sets():
    rng = np.random.default_rng(0)
    real, fake = torch.from_numpy(rng.normal(size=(900, 64))), torch.from_numpy(rng.normal(size=(300, 64)) * 1.2)
    index_r, index_f = rng.integers(0, 900, size=(5, 900)), rng.integers(0, 300, size=(5, 300))
    fast = FidSets(real).resampled(fake, index_r, index_f)
    _close(fast, [fid(real[i], fake[j]) for i, j in zip(index_r, index_f)])


def test_kid_all_pairs_is_blocked_and_equals_the_whole_matrices():
    rng = np.random.default_rng(1)
    real, fake = rng.normal(size=(301, 8)), rng.normal(size=(97, 8)) * 1.1
    with mock.patch.object(set_statistics, "_BLOCK_ENTRIES", 1000):
        blocked = kid_all_pairs(real, fake, degree=3, coef=0.5)
    _close(blocked, slow_kid_all_pairs(real, fake, degree=3, coef=0.5))
    _close(kid_all_pairs(real, fake), slow_kid_all_pairs(real, fake))


def test_engines_are_found_only_for_fid_and_kid_all_pairs():
    assert set_statistic_engine(fid) is FidSets and set_statistic_engine(kid_all_pairs) is KidSets
    assert set_statistic_engine(lambda a, b: 0.0) is None


@pytest.mark.parametrize(
    "method", ["bootstrap", "half_sampling", "centred_half_sampling", "null_corrected_half_sampling"]
)
@pytest.mark.parametrize("stratified", [False, True])
def test_generic_set_bootstrap_keeps_the_random_stream(method, stratified):
    rng = np.random.default_rng(2)
    a = [torch.from_numpy(rng.normal(size=(k, 3))) for k in (7, 12, 5)]
    b = [torch.from_numpy(rng.normal(size=(k, 3)) + 0.5) for k in (4, 9, 6)]
    if stratified:

        def statistic(x, y):
            return float(sum(fid(p, q) for p, q in zip(x, y)))
    else:
        a, b, statistic = a[1], b[1], fid
    point = statistic(a, b)
    kwargs = dict(n_resamples=40, seed=5, point=point, method=method)
    assert bootstrap_set_ci(a, b, statistic, **kwargs) == pytest.approx(
        slow_bootstrap_set_ci(a, b, statistic, **kwargs), rel=1e-12, abs=1e-12
    )


@pytest.mark.parametrize("method", ["bootstrap", "half_sampling"])
def test_batched_set_bootstrap_equals_the_loop(method):
    rng = np.random.default_rng(3)
    real, fake = torch.from_numpy(rng.normal(size=(80, 4))), torch.from_numpy(rng.normal(size=(60, 4)) + 0.2)
    sets = KidSets(real)
    point = sets(fake)
    kwargs = dict(n_resamples=120, seed=4, point=point, method=method)
    fast = bootstrap_set_ci(
        real, fake, kid_all_pairs, resampled=lambda i, j: sets.resampled(fake, i[0], j[0]), **kwargs
    )
    _close(fast, slow_bootstrap_set_ci(real, fake, slow_kid_all_pairs, **kwargs))


def _realism_data(n, pool_size, dim, classes, seed):
    gen = torch.Generator().manual_seed(seed)
    pool_labels = torch.randint(0, classes, (pool_size,), generator=gen)
    pool = torch.randn(pool_size, dim, generator=gen, dtype=torch.float64) + pool_labels[:, None] * 0.3
    fake_classes = torch.randint(0, classes, (n,), generator=gen)
    fakes = torch.randn(n, dim, generator=gen, dtype=torch.float64) * 1.1 + fake_classes[:, None] * 0.3
    return pool, pool_labels, fakes, fake_classes


@pytest.mark.parametrize("statistic", [fid, kid_all_pairs], ids=["fid", "kid"])
@pytest.mark.parametrize("conditional", [True, False], ids=["target", "domain"])
@pytest.mark.parametrize("fid_method", ["bootstrap", "null_corrected_half_sampling"])
def test_score_realism_equals_the_per_resample_computation(statistic, conditional, fid_method):
    if statistic is kid_all_pairs and fid_method != "bootstrap":
        pytest.skip("KID's interval is half-sampling")
    pool, pool_labels, fakes, fake_classes = _realism_data(300, 6000, 64, 5, seed=0)
    method = "half_sampling" if statistic is kid_all_pairs else fid_method
    kwargs = dict(conditional=conditional, n_resamples=60, seed=2, ci_method=method)
    fast = score_realism(
        statistic, pool, pool_labels, fakes, fake_classes, generator=torch.Generator().manual_seed(9), **kwargs
    )
    value, ci, floors = slow_score_realism(
        slow_statistic(statistic),
        pool,
        pool_labels,
        fakes,
        fake_classes,
        generator=torch.Generator().manual_seed(9),
        **kwargs,
    )
    # per-class FID here has ~60 bootstrap rows in 64-d: singular covariances, whose rounding the
    # square root amplifies (~√eps); everything else agrees to 1e-9
    rel = 1e-8 if (statistic is fid and conditional) else 1e-9
    _close([fast.value, *fast.ci, *fast.floors], [value, *ci, *floors], rel=rel)
    assert all(type(v) is float for v in (fast.value, *fast.ci, *fast.floors))


@settings(max_examples=15, deadline=None)
@given(
    n=st.integers(6, 40),
    dim=st.integers(1, 4),
    classes=st.integers(1, 3),
    conditional=st.booleans(),
    kid=st.booleans(),
    fid_method=st.sampled_from(["bootstrap", "null_corrected_half_sampling"]),
    seed=st.integers(0, 2**16),
)
def test_score_realism_engine_property(n, dim, classes, conditional, kid, fid_method, seed):
    pool, pool_labels, fakes, fake_classes = _realism_data(n, 40 * n, dim, classes, seed)
    statistic = kid_all_pairs if kid else fid
    kwargs = dict(conditional=conditional, n_resamples=15, seed=seed, ci_method="half_sampling" if kid else fid_method)
    if conditional or len(fake_classes.unique()) < classes:
        fake_classes = torch.arange(n) % classes  # every class has ≥ 2 counterfactuals
    try:
        fast = score_realism(
            statistic, pool, pool_labels, fakes, fake_classes, generator=torch.Generator().manual_seed(seed), **kwargs
        )
    except ValueError:  # a class without a covariance in a resample: the loop raises too
        return
    value, ci, floors = slow_score_realism(
        slow_statistic(statistic),
        pool,
        pool_labels,
        fakes,
        fake_classes,
        generator=torch.Generator().manual_seed(seed),
        **kwargs,
    )
    _close([fast.value, *fast.ci, *fast.floors], [value, *ci, *floors], rel=1e-8, abs_=1e-7)


def test_fid_resampled_mixes_factorised_and_singular_reference_covariances():
    """Resamples whose reference covariance is singular (fewer distinct rows than dimensions)
    cannot be Cholesky-factorised; they take the eigendecomposition route, the others do not."""
    rng = np.random.default_rng(3)
    real, fake = torch.from_numpy(rng.normal(size=(40, 6))), torch.from_numpy(rng.normal(size=(30, 6)) + 0.5)
    index_r = np.stack([rng.permutation(40)[:20], np.repeat(rng.permutation(40)[:4], 5)])  # full rank; rank 3 of 6
    index_f = rng.integers(0, 30, size=(2, 30))
    assert int(torch.linalg.cholesky_ex(torch.cov(real[index_r[1]].T))[1]) != 0  # the second is singular
    fast = FidSets(real).resampled(fake, index_r, index_f)
    # fid() takes the square root of a singular covariance (5 rows in 8 dimensions), which
    # carries ~√eps·scale of rounding; the low-rank route has none, so allow 1e-6 (FID ≈ 10)
    _close(fast, [fid(real[i], fake[j]) for i, j in zip(index_r, index_f)], rel=1e-9, abs_=1e-6)


@pytest.mark.parametrize("n_real, n_fake", [(20, 5), (5, 20), (40, 30)])  # fake < d, real < d, neither
def test_fid_resampled_routes_agree_with_fid_of_the_gathered_rows(n_real, n_fake):
    rng = np.random.default_rng(n_real + n_fake)
    real = torch.from_numpy(rng.normal(size=(n_real, 8)) * rng.uniform(0.5, 2.0, size=8))
    fake = torch.from_numpy(rng.normal(size=(n_fake, 8)) + 0.3)
    index_r, index_f = rng.integers(0, n_real, size=(6, n_real)), rng.integers(0, n_fake, size=(6, n_fake))
    fast = FidSets(real).resampled(fake, index_r, index_f)
    # fid() takes the square root of a singular covariance (5 rows in 8 dimensions), which
    # carries ~√eps·scale of rounding; the low-rank route has none, so allow 1e-6 (FID ≈ 10)
    _close(fast, [fid(real[i], fake[j]) for i, j in zip(index_r, index_f)], rel=1e-9, abs_=1e-6)


@settings(max_examples=25, deadline=None)
@given(
    n_real=st.integers(2, 40),
    sizes=st.lists(st.integers(2, 40), min_size=1, max_size=4),
    dim=st.integers(1, 8),
    seed=st.integers(0, 2**16),
)
def test_fid_sets_scores_every_fake_set_as_fid_does(n_real, sizes, dim, seed):
    """FidSets keeps the reference's moments and root between calls; each call must still give
    exactly fid() of that pair (the same operations), and match scipy's sqrtm formula."""
    import scipy.linalg

    rng = np.random.default_rng(seed)
    real = torch.from_numpy(rng.normal(size=(n_real, dim)) * rng.uniform(0.5, 2.0, size=dim))
    engine = FidSets(real)
    for size in sizes:
        fake = torch.from_numpy(rng.normal(size=(size, dim)) + rng.normal())
        value = engine(fake)
        assert value == fid(real, fake)
        r, f = real.numpy(), fake.numpy()
        s_r, s_f = np.atleast_2d(np.cov(r.T)), np.atleast_2d(np.cov(f.T))
        with warnings.catch_warnings():  # a singular product (fewer rows than dimensions) is expected here
            warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)
            root = scipy.linalg.sqrtm(s_r @ s_f).real
        expected = ((r.mean(0) - f.mean(0)) ** 2).sum() + np.trace(s_r) + np.trace(s_f) - 2 * np.trace(root)
        # sqrtm of a singular product (fewer rows than dimensions) carries ~√eps·scale of rounding
        assert value == pytest.approx(max(expected, 0.0), rel=1e-6, abs=1e-5 * (1 + np.trace(s_r) + np.trace(s_f)))
