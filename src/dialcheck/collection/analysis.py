"""Context analysis (Sato et al. 2024, section 4.2): does a feature of a context make contradictory
replies more frequent?

For a boolean feature of contexts, the mean number of contradictory replies per context is compared
between contexts with and without it, with a one-tailed two-sample t-test (Welch by default, Student
with ``equal_var=True``) whose alternative is "more with the feature". The t distribution is computed
here (regularized incomplete beta by continued fraction), so no scipy is needed.

>>> round(t_sf(1.0, 1), 6), round(t_sf(2.0, 2), 6)  # Cauchy: 1/4; df=2: 1/2 - 1/sqrt(6)
(0.25, 0.091752)
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .records import CollectedReply, CollectionContext

__all__ = [
    "FEATURES",
    "FeatureTest",
    "TTest",
    "analyse_feature",
    "contradictions_per_context",
    "t_sf",
    "ttest_greater",
]


def _betacf(a: float, b: float, x: float, eps: float = 1e-14, max_iter: int = 500) -> float:
    # Lentz's continued fraction for the incomplete beta (Numerical Recipes, betacf).
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, max_iter + 1):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < eps:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta I_x(a, b).

    >>> round(betainc(2, 3, 0.4), 6)  # 1 - (0.6**4 + 4*0.4*0.6**3 ... ) = 0.5248
    0.5248
    """
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    lbt = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(lbt) * _betacf(a, b, x) / a
    return 1.0 - math.exp(lbt) * _betacf(b, a, 1.0 - x) / b


def t_sf(t: float, df: float) -> float:
    """P(T > t) for Student's t with ``df`` degrees of freedom."""
    if math.isnan(t) or df <= 0:
        return math.nan
    if math.isinf(t):
        return 0.0 if t > 0 else 1.0
    tail = 0.5 * betainc(df / 2.0, 0.5, df / (df + t * t))
    return tail if t > 0 else 1.0 - tail


@dataclass(frozen=True)
class TTest:
    """A one-tailed two-sample t-test of ``mean(a) > mean(b)``."""

    t: float
    df: float
    p: float


def _mean_var(xs: Sequence[float]) -> tuple[float, float]:
    m = sum(xs) / len(xs)
    return m, sum((x - m) ** 2 for x in xs) / (len(xs) - 1)


def ttest_greater(a: Sequence[float], b: Sequence[float], equal_var: bool = False) -> TTest:
    """One-tailed t-test that ``a`` has the larger mean (Welch unless ``equal_var``).

    >>> r = ttest_greater([3, 4, 5, 6], [1, 2, 3, 2], equal_var=True)
    >>> round(r.t, 4), r.df, round(r.p, 4)
    (3.2733, 6.0, 0.0085)
    """
    if len(a) < 2 or len(b) < 2:
        raise ValueError("each group needs at least two values")
    ma, va = _mean_var(a)
    mb, vb = _mean_var(b)
    na, nb = len(a), len(b)
    if equal_var:
        df = float(na + nb - 2)
        sp = ((na - 1) * va + (nb - 1) * vb) / df
        se2 = sp * (1 / na + 1 / nb)
    else:
        se2 = va / na + vb / nb
        denom = (va / na) ** 2 / (na - 1) + (vb / nb) ** 2 / (nb - 1)
        df = se2 * se2 / denom if denom > 0 else float(na + nb - 2)
    t = (ma - mb) / math.sqrt(se2) if se2 > 0 else (math.inf if ma > mb else -math.inf if ma < mb else math.nan)
    return TTest(t, df, t_sf(t, df) if not math.isnan(t) else 1.0)


_WH = {"what", "who", "whom", "whose", "which", "where", "when", "why", "how"}
_AUX = {
    "do", "does", "did", "is", "are", "was", "were", "am", "have", "has", "had", "can", "could", "will",
    "would", "shall", "should", "may", "might", "must", "don't", "doesn't", "didn't", "isn't", "aren't",
    "wasn't", "weren't", "haven't", "hasn't", "can't", "won't", "wouldn't", "shouldn't", "couldn't",
}  # fmt: skip


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z']+", text.lower())


def contains_how(c: CollectionContext) -> bool:
    """The question contains the word "how"."""
    return "how" in _words(c.question)


def declarative_yes_no(c: CollectionContext) -> bool:
    """The last question is declarative in form (no wh-word, no leading auxiliary), e.g. "You like it?"."""
    last = re.split(r"(?<=[.!?])\s+", c.question.strip())[-1]
    w = _words(last)
    return bool(w) and w[0] not in _AUX and not (_WH & set(w))


FEATURES: dict[str, Callable[[CollectionContext], bool]] = {
    "contains_how": contains_how,
    "declarative_yes_no": declarative_yes_no,
}


@dataclass(frozen=True)
class FeatureTest:
    """Mean contradictory replies per context with and without a feature, and the one-tailed test."""

    feature: str
    n_with: int
    n_without: int
    mean_with: float
    mean_without: float
    t: float
    df: float
    p: float
    alpha: float

    @property
    def significant(self) -> bool:
        return self.p < self.alpha

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON: a statistic that cannot be computed (no context has the feature) is ``None``, not NaN."""
        r = {
            k: (None if v != v else round(v, 6)) if isinstance(v, float) else v  # v != v: NaN
            for k, v in self.__dict__.items()
        }
        return {**r, "significant": self.significant}


def contradictions_per_context(replies: Iterable[CollectedReply]) -> dict[str, int]:
    """Number of replies labelled contradictory per context id (contexts with only other labels get 0)."""
    out: dict[str, int] = {}
    for r in replies:
        if r.label is not None:
            out[r.context_id] = out.get(r.context_id, 0) + int(r.label)
    return out


def analyse_feature(
    contexts: Sequence[CollectionContext],
    counts: Mapping[str, int],
    feature: str | Callable[[CollectionContext], bool],
    alpha: float = 0.01,
    equal_var: bool = False,
) -> FeatureTest:
    """Compare contexts with and without ``feature`` (a name in :data:`FEATURES` or a predicate) on the
    number of contradictory replies; contexts missing from ``counts`` are left out."""
    name = feature if isinstance(feature, str) else getattr(feature, "__name__", "predicate")
    pred = FEATURES[feature] if isinstance(feature, str) else feature
    with_, without = [], []
    for c in contexts:
        if c.id in counts:
            (with_ if pred(c) else without).append(float(counts[c.id]))
    mw = sum(with_) / len(with_) if with_ else math.nan
    mo = sum(without) / len(without) if without else math.nan
    if len(with_) >= 2 and len(without) >= 2:
        r = ttest_greater(with_, without, equal_var)
        t, df, p = r.t, r.df, r.p
    else:
        t, df, p = math.nan, math.nan, math.nan
    return FeatureTest(name, len(with_), len(without), mw, mo, t, df, p, alpha)
