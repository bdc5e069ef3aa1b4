"""slrlib.book.ch03_risk_checks: the independent references used in chapter 3, tested against
exact values, against the closed forms, and for their power to detect a wrong formula."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from slrlib.core.geometry import uniform_directions, manifold_directions, directions_with_overlaps
from slrlib import SLRTask, oracle_risk, overlaps, population_risk, zeta
from slrlib.book.ch03_risk_checks import (closed_form_vs_monte_carlo, gaussian_expectation, lemma18, lemma18_checks,
                                          points_from_specs, prop15_assembled, prop15_expectations,
                                          prop15_terms, risk_by_quadrature,
                                          zeta_derivative_checks, zeta_quadrature)
from slrlib import monte_carlo_risk, risk_from_overlaps
from slrlib.core.predictors import erf_attention

Z_TOL = 4.5


# ------------------------------------------------------------------ quadrature references
def test_gaussian_expectation_exact_moments():
    assert gaussian_expectation(lambda g: 1.0) == pytest.approx(1.0, abs=1e-13)
    assert gaussian_expectation(lambda g: g * g) == pytest.approx(1.0, abs=1e-12)
    assert gaussian_expectation(lambda g: g**4) == pytest.approx(3.0, abs=1e-11)
    assert gaussian_expectation(math.cos) == pytest.approx(math.exp(-0.5), abs=1e-13)
    assert gaussian_expectation(lambda g: float(g > 1.0)) == pytest.approx(0.5 * math.erfc(1 / math.sqrt(2)), abs=1e-12)


def test_zeta_quadrature_exact_special_values():
    t = np.linspace(-3, 3, 13)
    # s = 0: erf(t)^2 exactly; t = 0: (2/pi) arcsin(2 s^2 / (1 + 2 s^2)) (Sheppard).
    np.testing.assert_allclose(zeta_quadrature(t, 0.0), [math.erf(x) ** 2 for x in t], atol=1e-15)
    s = np.array([0.1, 0.5, 1.0, 3.0, 10.0])
    np.testing.assert_allclose(zeta_quadrature(0.0, s), 2 / np.pi * np.arcsin(2 * s**2 / (1 + 2 * s**2)), atol=1e-12)


@pytest.mark.parametrize("s", [0.0, 0.03, 0.4, 1.0, 2.5, 15.0])
def test_zeta_closed_form_matches_quadrature(s):
    t = np.linspace(-8, 8, 33)
    np.testing.assert_allclose(np.asarray(zeta(t, s)), zeta_quadrature(t, s), atol=1e-12, rtol=0)


def test_zeta_quadrature_detects_a_perturbed_formula():
    # The reference is sharp enough to see a wrong argument in Owen's T (a = 1/sqrt(1 + 2s^2)).
    from jax.scipy.special import owens_t

    t, s = 0.7, 0.9
    wrong = 1 - 8 * float(owens_t(math.sqrt(2) * t / math.sqrt(1 + 2 * s**2), 1 / math.sqrt(1 + 2 * s**2)))
    assert abs(wrong - float(zeta_quadrature(t, s))) > 1e-3


def test_zeta_quadrature_rejects_bad_input():
    with pytest.raises(ValueError, match="s must be >= 0"):
        zeta_quadrature(0.0, -1.0)
    with pytest.raises(ValueError, match="finite"):
        zeta_quadrature(np.nan, 1.0)


@pytest.mark.parametrize("a, b", [(0.0, 0.3), (0.7, 0.4), (2.5, -1.2), (-1.3, 2.0), (6.0, 0.1)])
def test_lemma18_identities_match_quadrature(a, b):
    rows = lemma18_checks(a, b)
    assert len(rows) == 9
    for row in rows:
        assert abs(row.difference) < 1e-12, row


def test_lemma18_checks_rejects_bad_input():
    with pytest.raises(ValueError, match="a must be"):
        lemma18_checks("x", 0.0)
    with pytest.raises(ValueError, match="s must be >= 0"):
        lemma18_checks(1.0, 0.0, t=0.0, s=-1.0)


def test_zeta_derivatives_and_heat_equation():
    t = np.array([-3.0, -0.5, 0.0, 0.3, 1.0, 2.5])
    s = np.array([0.1, 0.5, 1.0, 2.0, 0.7, 3.0])
    c = zeta_derivative_checks(t, s)
    np.testing.assert_allclose(c.grad_t, c.fd_t, atol=1e-7)
    np.testing.assert_allclose(c.grad_t, c.formula_t, atol=1e-14)
    np.testing.assert_allclose(c.grad_s, c.fd_s, atol=1e-7)
    np.testing.assert_allclose(c.grad_tt, c.fd_tt, atol=1e-5)
    # The heat equation on finite differences of values alone.
    np.testing.assert_allclose(c.fd_s, s * c.fd_tt, atol=1e-5)
    with pytest.raises(ValueError, match="s must be >= h"):
        zeta_derivative_checks(0.0, 0.0)


# ------------------------------------------------------------------ directions
@pytest.fixture(scope="module")
def directions():
    return SLRTask(d=12, L=3).oracle_directions(jax.random.key(5))


@pytest.mark.parametrize(
    "ov", [(0.6, 0.5, 0.4, -0.3, 0.2), (-0.3, 0.6, -0.5, 0.5, 0.4), (1.0, 1.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 0.0, 0.0),
           (0.8, 0.6, 0.0, -0.6, -0.36)]
)
def test_directions_with_overlaps_has_the_prescribed_overlaps(directions, ov):
    k_star, v_star = directions
    k, v = directions_with_overlaps(*ov, k_star, v_star, jax.random.key(0))
    assert float(jnp.linalg.norm(k)) == pytest.approx(1.0, abs=1e-13)
    assert float(jnp.linalg.norm(v)) == pytest.approx(1.0, abs=1e-13)
    np.testing.assert_allclose(np.array(overlaps(k, v, k_star, v_star)), ov, atol=1e-12)


@pytest.mark.roundoff
def test_directions_with_overlaps_key_changes_the_pair_not_the_risk(directions):
    k_star, v_star = directions
    task = SLRTask(d=12, L=3)
    k1, v1 = directions_with_overlaps(0.5, 0.4, 0.3, 0.2, 0.1, k_star, v_star, jax.random.key(1))
    k2, v2 = directions_with_overlaps(0.5, 0.4, 0.3, 0.2, 0.1, k_star, v_star, jax.random.key(2))
    assert float(jnp.linalg.norm(k1 - k2)) > 0.1
    r1 = population_risk(k1, v1, k_star, v_star, 0.7, task)
    r2 = population_risk(k2, v2, k_star, v_star, 0.7, task)
    assert float(r1) == pytest.approx(float(r2), abs=1e-12)


def test_directions_with_overlaps_rejects_impossible_overlaps(directions):
    k_star, v_star = directions
    with pytest.raises(ValueError, match="kappa\\^2 \\+ eta\\^2 must be <= 1"):
        directions_with_overlaps(0.9, 0.0, 0.0, 0.9, 0.0, k_star, v_star, jax.random.key(0))
    with pytest.raises(ValueError, match="not positive semi-definite"):
        directions_with_overlaps(-0.3, 0.7, -0.5, 0.6, -0.4, k_star, v_star, jax.random.key(0))
    small = SLRTask(d=3, L=2).oracle_directions(jax.random.key(0))
    with pytest.raises(ValueError, match="d >= 4"):
        directions_with_overlaps(0.1, 0.1, 0.1, 0.1, 0.1, *small, jax.random.key(0))


def test_random_manifold_directions_lie_on_the_manifold(directions):
    k_star, v_star = directions
    k, v = manifold_directions(jax.random.key(3), k_star, v_star, (50,))
    assert k.shape == v.shape == (50, 12)
    np.testing.assert_allclose(jnp.linalg.norm(k, axis=-1), 1.0, atol=1e-13)
    np.testing.assert_allclose(jnp.linalg.norm(v, axis=-1), 1.0, atol=1e-13)
    ov = overlaps(k, v, k_star, v_star)
    for x in (ov.theta, ov.eta, ov.rho):
        assert float(jnp.max(jnp.abs(x))) < 1e-12
    assert float(jnp.std(ov.kappa)) > 0.05 and float(jnp.std(ov.nu)) > 0.05  # not degenerate


def test_random_sphere_directions(directions):
    k, v = uniform_directions(jax.random.key(4), 12, (4000,))
    np.testing.assert_allclose(jnp.linalg.norm(k, axis=-1), 1.0, atol=1e-13)
    # Uniform on the sphere: E <k, e_1>^2 = 1/d.
    assert float(jnp.mean(k[:, 0] ** 2)) == pytest.approx(1 / 12, abs=0.01)  # about 6 standard errors
    k2, _ = uniform_directions(jax.random.key(4), 12, (4000,))
    np.testing.assert_array_equal(k, k2)


def test_points_from_specs(directions):
    k_star, v_star = directions
    specs = [("oracle", 0.1), ("sphere", 1.0), ("manifold", 0.3), ((0.6, 0.5, 0.4, -0.3, 0.2), 2.0)]
    labels, K, V, lams = points_from_specs(specs, k_star, v_star, jax.random.key(0))
    assert labels == ("oracle", "uniform on sphere", "random on M", "prescribed overlaps")
    assert K.shape == V.shape == (4, 12)
    np.testing.assert_allclose(lams, [0.1, 1.0, 0.3, 2.0])
    np.testing.assert_array_equal(K[0], k_star)
    with pytest.raises(ValueError, match="kind must be"):
        points_from_specs([("nowhere", 0.1)], k_star, v_star, jax.random.key(0))
    with pytest.raises(ValueError, match="pair"):
        points_from_specs(["oracle"], k_star, v_star, jax.random.key(0))


# ------------------------------------------------------------------ closed form vs Monte Carlo
def test_closed_form_vs_monte_carlo_agrees_and_has_power():
    task = SLRTask(d=6, L=3, gamma=0.8, eps=0.3)
    k_star, v_star = task.oracle_directions(jax.random.key(7))
    specs = [("oracle", 0.5), ("sphere", 1.0), ("manifold", 0.3), ((0.6, 0.5, 0.4, -0.3, 0.2), 1.5)]
    labels, K, V, lams = points_from_specs(specs, k_star, v_star, jax.random.key(8))
    res = closed_form_vs_monte_carlo(task, k_star, v_star, K, V, lams, jax.random.key(9), 40_000, labels=labels)
    np.testing.assert_allclose(res.closed_form, population_risk(K, V, k_star, v_star, lams, task), atol=1e-14)
    assert np.all(np.abs(res.z) < Z_TOL), res.z
    assert res.monte_carlo.n == 40_000 and len(res.rows()) == 4 and res.rows(prefix=["x"])[0][0] == "x"
    from slrlib.book.ch03_risk_checks import OVERLAP_HEADERS, VALUE_HEADERS

    names = ["A1", "A2", "A3", "A4"]
    ov_rows, val_rows = res.overlap_rows(names), res.value_rows(names)
    assert [len(r) for r in ov_rows] == [len(OVERLAP_HEADERS)] * 4
    assert [len(r) for r in val_rows] == [len(VALUE_HEADERS)] * 4
    assert ov_rows[3][0] == "A4" and ov_rows[3][1] == "prescribed overlaps"
    np.testing.assert_allclose(ov_rows[3][2:], (0.6, 0.5, 0.4, -0.3, 0.2), atol=1e-12)
    assert val_rows[0][1] == 0.5 and val_rows[0][2] == res.closed_form[0] and val_rows[0][4] == res.z[0]
    # Power: the same simulation tells the oracle's risk at lam = 0.5 from the one at lam = 0.6.
    wrong = float(oracle_risk(0.6, task))
    assert abs(res.monte_carlo.z_score(wrong)[0]) > 2 * Z_TOL


def test_closed_form_vs_monte_carlo_rejects_bad_input(directions):
    task = SLRTask(d=12, L=3)
    k_star, v_star = directions
    K = jnp.stack([k_star, k_star])
    with pytest.raises(ValueError, match="shape"):
        closed_form_vs_monte_carlo(task, k_star, v_star, K, K[:1], 0.1, jax.random.key(0), 10)
    with pytest.raises(ValueError, match="lams"):
        closed_form_vs_monte_carlo(task, k_star, v_star, K, K, -1.0, jax.random.key(0), 10)
    with pytest.raises(ValueError, match="labels"):
        closed_form_vs_monte_carlo(task, k_star, v_star, K, K, 0.1, jax.random.key(0), 10, labels=["a"])


# ------------------------------------------------------------------ risk by quadrature
OFF_POINTS = [  # (task, overlaps, lam): the chapter's three points, and more
    (SLRTask(d=400, L=10), (0.6, 0.5, 0.4, -0.3, 0.2), 0.1),
    (SLRTask(d=40, L=5, gamma=1.0, eps=0.5), (0.6, 0.5, 0.4, -0.3, 0.2), 0.3),
    (SLRTask(d=40, L=5, gamma=1.0, eps=0.5), (-0.3, 0.6, -0.5, 0.5, 0.4), 2.0),
    (SLRTask(d=40, L=20, gamma=0.3, eps=0.1), (-0.3, 0.6, -0.5, 0.5, 0.4), 1.0),
    (SLRTask(d=8, L=3, gamma=1.3, eps=0.2), (0.8, 0.6, 0.0, -0.6, -0.36), 0.7),
    (SLRTask(d=12, L=1), (0.5, 0.4, 0.3, 0.2, 0.1), 5.0),
]


@pytest.mark.parametrize("task, ov, lam", OFF_POINTS)
def test_risk_by_quadrature_matches_the_closed_form(task, ov, lam):
    r = risk_by_quadrature(*ov, lam, task)
    assert 0 < r.abserr < 1e-11 * r.value
    closed = float(risk_from_overlaps(*ov, lam, task))
    assert abs(r.value - closed) <= r.abserr + 1e-12 * closed


def test_risk_by_quadrature_special_cases():
    task = SLRTask(d=400, L=10, eps=0.3)
    # lam = 0: T = 0, the null risk gamma^2 + eps^2, whatever the overlaps.
    assert risk_by_quadrature(0.6, 0.5, 0.4, -0.3, 0.2, 0.0, task).value == pytest.approx(0.5 + 0.09, abs=1e-14)
    # The oracle: eq. (9), a separate closed form.
    for lam in (0.01, 0.1, 1.0):
        assert risk_by_quadrature(1, 1, 0, 0, 0, lam, task).value == pytest.approx(float(oracle_risk(lam, task)),
                                                                                 rel=1e-12)


@pytest.mark.parametrize("task, ov, lam", OFF_POINTS[1:3] + OFF_POINTS[4:5])
def test_risk_by_quadrature_matches_monte_carlo(task, ov, lam):
    # The quadrature shares no code with the simulation: SLRTask.sample and erf_attention.
    k_star, v_star = task.oracle_directions(jax.random.key(1))
    k, v = directions_with_overlaps(*ov, k_star, v_star, jax.random.key(2))
    est = monte_carlo_risk(lambda X: erf_attention(X, k, v, lam), task, k_star, v_star, jax.random.key(3),
                           n_samples=100_000)
    r = risk_by_quadrature(*ov, lam, task)
    assert abs(float(est.z_score(r.value))) < Z_TOL
    # and it has power (relative standard errors below 0.6 %): a 10 % error is far outside.
    assert abs(float(est.z_score(1.1 * r.value))) > 2 * Z_TOL


def test_risk_by_quadrature_sees_one_percent_of_the_erf_second_term(monkeypatch):
    # The coordinator's mutation: erf'' scaled by 1.01 in slrlib.core.risk scales exactly the
    # term -2 lam^2 gamma^4 eta rho / c2 erf''(a) of Proposition 15, which the comparison sees.
    import slrlib.core.risk as risk_module

    true_erf_second = risk_module.erf_second
    monkeypatch.setattr(risk_module, "erf_second", lambda x: 1.01 * true_erf_second(x))
    jax.clear_caches()
    try:
        for task, ov, lam in OFF_POINTS[:3]:
            r = risk_by_quadrature(*ov, lam, task)
            closed = float(risk_from_overlaps(*ov, lam, task))
            term = prop15_terms(*ov, lam, task)["-2λ²γ⁴ηρ/c₂ erf''(a)"]
            assert closed - r.value == pytest.approx(0.01 * term, rel=1e-6)
            assert abs(closed - r.value) > 100 * (r.abserr + 1e-12 * r.value)
    finally:
        monkeypatch.undo()
        jax.clear_caches()


@pytest.mark.parametrize("task, ov, lam", OFF_POINTS)
def test_prop15_terms_add_up_to_the_closed_form(task, ov, lam):
    # A transcription check: the term-by-term version and the library's kernel, two codes.
    terms = prop15_terms(*ov, lam, task)
    assert len(terms) == 14
    closed = float(risk_from_overlaps(*ov, lam, task))
    assert sum(terms.values()) == pytest.approx(closed, rel=1e-12)


def test_prop15_terms_on_the_manifold_reduce_to_lemma6():
    task = SLRTask(d=40, L=5, gamma=1.0, eps=0.5)
    terms = prop15_terms(0.7, 0.4, 0.0, 0.0, 0.0, 0.3, task)
    nonzero = {name for name, value in terms.items() if value != 0.0}
    assert nonzero == {"ε²", "γ²", "-2γ²ν erf(a)", "(q²θ² + γ²) ζ(λqκ, s)", "(L-1) ζ(0, λ)"}


def test_risk_by_quadrature_rejects_bad_input():
    task = SLRTask(d=40, L=5)
    with pytest.raises(ValueError, match="kappa must lie in"):
        risk_by_quadrature(1.5, 0, 0, 0, 0, 0.1, task)
    with pytest.raises(ValueError, match="lam"):
        risk_by_quadrature(0.5, 0, 0, 0, 0, -0.1, task)
    with pytest.raises(ValueError, match="task must be"):
        risk_by_quadrature(0.5, 0, 0, 0, 0, 0.1, "task")
    with pytest.raises(ValueError, match="task must be"):
        prop15_terms(0.5, 0, 0, 0, 0, 0.1, None)


# ------------------------------------------------ Proposition 15, expectation by expectation
def test_lemma18_items_special_values():
    items = lemma18(0.0, 0.3)  # a = 0: no randomness
    assert items["i"] == pytest.approx(math.erf(0.3), rel=1e-15)
    assert items["iii"] == pytest.approx(-2 * 0.3 * 2 / math.sqrt(math.pi) * math.exp(-0.09), rel=1e-14)
    assert items["v"] == 0.0
    assert lemma18(1.2, 0.0)["vi"] == 0.0  # odd integrand


@pytest.mark.parametrize("task, ov, lam", OFF_POINTS[1:3] + OFF_POINTS[4:5])
def test_prop15_expectations_match_monte_carlo(task, ov, lam):
    rows = prop15_expectations(*ov, lam, task, seed=3, n=200_000)
    assert len(rows) == 9
    assert max(abs(r.z) for r in rows) < Z_TOL, rows


@pytest.mark.parametrize("task, ov, lam", OFF_POINTS)
def test_prop15_assembled_equals_the_groups_of_terms(task, ov, lam):
    parts, terms = prop15_assembled(*ov, lam, task), list(prop15_terms(*ov, lam, task).values())
    groups = {"relevant": sum(terms[1:9]), "noise": terms[9] + terms[10], "noise pairs": terms[11],
              "cross": terms[12] + terms[13]}
    for name, value in groups.items():
        assert parts[name] == pytest.approx(value, rel=1e-12, abs=1e-14), name


def test_prop15_expectations_detect_a_wrong_identity(monkeypatch):
    import slrlib.book.ch03_risk_checks as mod
    task, ov, lam = OFF_POINTS[2]
    exact = mod.lemma18
    monkeypatch.setattr(mod, "lemma18", lambda a, b=0.0: {**exact(a, b), "vi": 1.5 * exact(a, b)["vi"]})
    rows = prop15_expectations(*ov, lam, task, seed=3, n=200_000)
    assert max(abs(r.z) for r in rows) > Z_TOL


def test_prop15_expectations_rejects_bad_input():
    task = SLRTask(d=40, L=5)
    with pytest.raises(ValueError, match="positive semi-definite"):
        prop15_expectations(0.5, 0.9, 0.0, 0.9, -0.9, 0.1, task)
    with pytest.raises(ValueError, match="n must be"):
        prop15_expectations(0.5, 0.5, 0.0, 0.0, 0.0, 0.1, task, n=1)
    with pytest.raises(ValueError, match="task must be"):
        prop15_assembled(0.5, 0, 0, 0, 0, 0.1, None)
