r"""Exact least and greatest NDCG of one query over every grading of its holes.

Notation: the holes of the query (:mod:`.scope`) get grades of S; what NDCG reads of a grade is
its gain, so let :math:`\gamma_1 > \dots > \gamma_m` be the distinct gains of S. A hole is *in
the ideal* (class A) when the document joins the list the ideal is made of: every hole under
``ideal=global`` (a graded hole joins the judgments), the kept rows under ``local``, the top K
under ``recall@K``, none under ``max`` (whose ideal is fixed). The others (class B) only add to the
DCG.

1. **B holes.** The ideal does not read them and the DCG is non-decreasing in each of their gains
   (a weight >= 0 per hole; inside a grade-ordered tie group see 3), so with the ideal fixed the
   greatest value puts every B hole at the greatest gain and the least at the least gain.

2. **A holes, one multiset.** Fix the multiset M of the A holes' gains. The ideal (the judged
   gains of its list with M, sorted, cut) depends on M alone, so IDCG is fixed and the value is
   extreme where the DCG is. Without a grade-ordered tie rule the DCG is
   :math:`C + \sum_h w_h g_h`, with :math:`w_h` the discount at the hole's rank (0 past the cut;
   under ``ties=averaged`` the mean discount of its tie group, since the group's mean gain is
   spread over it). By the rearrangement inequality the greatest DCG pairs the largest gains with
   the largest weights and the least DCG pairs them with the smallest. So in the *chain order* π
   (holes by weight, descending for the maximum, ascending for the minimum) the first
   :math:`c_1` holes get :math:`\gamma_1`, the next :math:`c_2` get :math:`\gamma_2`, ...

3. **Grade-ordered ties** (``pessimistic``, ``optimistic``; gains non-decreasing in the grade,
   else refused). A tie group holds fixed positions and sorts its documents by grade, so its DCG
   is the least (pessimistic) or greatest (optimistic) pairing of its multiset of gains with its
   discounts: raising one gain by δ raises it by between δ·(least discount of the group) and
   δ·(greatest). For two groups a before b (every discount of a >= every one of b), moving a
   larger gain from b into a in exchange for a smaller one loses at most what it gains, and each
   such exchange removes an inversion; so for a fixed multiset the greatest DCG fills the groups
   in rank order with the gains descending, the least in reverse rank order. Every hole outside
   a group is a group of one, so π is the rank order (reversed for the minimum).

4. **Separable chains.** Write :math:`C_j = c_1 + \dots + c_j` (:math:`C_0 = 0`,
   :math:`C_m = n`). The DCG of the chain is :math:`N_0 + \sum_{j<m} (\gamma_j - \gamma_{j+1})
   W[C_j]` with W the prefix sums of the weights in π (Abel summation); with tie groups, a layer
   decomposition over the gain thresholds shows that it is still :math:`N_0 + \sum_{j<m}
   A_j(C_j)` (the holes of a group with gain >= t are a prefix of it in π, so the count of them is
   a function of :math:`C_{j(t)}`), and :math:`A_j(c) = N(C^{j,c}) - N(C^{j+1,c})` where
   :math:`C^{j,c}` raises the first c holes of π from the lowest level to level j. The IDCG
   is a layer sum too: with the positive values :math:`t_1 > \dots > t_T` of the judged gains and
   of the γ, :math:`\Delta_i = t_i - t_{i+1}` (:math:`t_{T+1} = 0`),
   :math:`\mathrm{IDCG} = \sum_i \Delta_i\,P(J(\ge t_i) + C_{j(t_i)})`, where J counts the judged
   gains >= t, :math:`j(t)` the γ >= t and P(x) sums the ideal discounts of the first
   min(x, cut) slots. Both are sums of one function of each :math:`C_j`.

5. **Dinkelbach.** The greatest ratio N/D over chains (D > 0) is found by Dinkelbach's method
   (W. Dinkelbach, "On nonlinear fractional programming", Management Science 13(7), 1967):
   from λ = N/D of a chain, take the chain maximising N - λD; stop when its ratio does not
   exceed λ (then max N - λD = 0 and λ is the greatest ratio); λ rises strictly, so it ends.
   Each step is a dynamic programme over :math:`0 \le C_1 \le \dots \le C_{m-1} \le n`: the
   best total with :math:`C_j = c` is :math:`F_j(c) + \max_{c' \le c}` (best with
   :math:`C_{j-1} = c'`), a running maximum, O(m n) per step. The least ratio likewise.

6. **Nothing to find.** When the judged part of the ideal has no positive gain, a grading with
   every A hole at a gain <= 0 leaves IDCG = 0 and the value is the ``empty`` policy's; the
   chains with at least one positive A hole (:math:`C_p \ge 1`, p the last positive level) are
   optimised as above, and the policy's value is compared with their extremes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import kernels as K
from ..errors import FlavorError
from .families import discounts, gain, numerator
from .scope import QueryScope, Rules

Floats = np.ndarray


@dataclass(frozen=True)
class Ideal:
    """What the ideal of one query is made of: the judged gains of its list (positive ones
    count), the cut, and for ``ideal=max`` its fixed IDCG."""

    judged: Floats
    cut: float
    fixed: float | None

    @property
    def base_empty(self) -> bool:
        """No positive judged gain: the A holes decide whether IDCG > 0."""
        if self.fixed is not None:
            return not self.fixed > 0
        return not (self.judged > 0).any()


def ideal_of(rules: Rules, scope: QueryScope) -> Ideal:
    """The ideal's judged part under the ``ideal`` and ``ideal_cut`` knobs (``ndcg_kernel``)."""
    f = rules.measure.flavor
    limit = np.inf if rules.k is None else float(rules.k)
    cut = {"none": np.inf, "hits": min(limit, float(scope.n_ret))}.get(str(f.ideal_cut), limit)
    if rules.ideal == "max":
        top = f.top_grade
        if top is None:
            raise FlavorError("ideal=max needs the top grade of the label scale: set max_grade=G")
        slots = int(scope.n_ret if np.isinf(cut) else cut)
        denom = K.discount_denominators(f, max(slots, 1))
        g_top = float(gain(rules, np.array([top]))[0])
        return Ideal(np.zeros(0), cut, float(np.sum(g_top / denom[1:slots + 1])))
    if rules.ideal == "global":
        grades = scope.judgments
    else:
        grades = scope.grade[scope.in_ideal & ~np.isnan(scope.grade)]
    return Ideal(gain(rules, grades), cut, None)


def a_holes(rules: Rules, scope: QueryScope) -> np.ndarray:
    """Which holes (in hole order) join the ideal's list (class A)."""
    holes = scope.hole_rows
    if rules.ideal == "global":
        return np.ones(len(holes), dtype=bool)
    if rules.ideal in ("local", "recall"):
        return scope.in_ideal[holes]
    return np.zeros(len(holes), dtype=bool)


def grouped(rules: Rules, scope: QueryScope) -> bool:
    """Some tie group holding a hole is ordered by grade (and so has no fixed weight per hole).
    A group that lies across the edge of a local or recall ideal's list is refused: which of
    its documents the list holds would depend on their grades."""
    if not rules.tie:
        return False
    holes = scope.hole_rows
    found = False
    for gid in np.unique(scope.group[holes]).tolist():
        cols = scope.group == gid
        if cols.sum() > 1:
            found = True
            if rules.ideal in ("local", "recall") and len(np.unique(scope.in_ideal[cols])) > 1:
                raise FlavorError(
                    f"{rules.measure.name}: on query {scope.qid} a tie group ordered by grade "
                    f"(ties={rules.measure.flavor.ties}) holding an unjudged document lies across the edge of the "
                    "list the ideal is made of; the bound is not derived there (use another tie rule)")
    return found


def emptiness(rules: Rules, scope: QueryScope) -> tuple[bool, bool, bool]:
    """(some grading leaves IDCG = 0, some grading makes it > 0, the zero-imputed value's IDCG = 0)."""
    ideal = ideal_of(rules, scope)
    n_a = int(a_holes(rules, scope).sum())
    g = gain(rules, rules.grades)
    base = ideal.base_empty
    if ideal.fixed is not None:
        return base, not base, base
    return base and (n_a == 0 or bool((g <= 0).any())), (not base) or (n_a > 0 and bool((g > 0).any())), base


@dataclass(frozen=True)
class Extreme:
    """One end of the interval: the value (None when every grading leaves nothing to find) and a
    grading attaining it (one grade per hole, in hole order)."""

    value: float | None
    grading: np.ndarray


def _ideal_tables(rules: Rules, ideal: Ideal, gammas: Floats, n: int) -> tuple[Floats, float]:
    """B_j(c) for the chain levels j = 1..m-1 (rows) and c = 0..n, and the constant: the IDCG
    of a chain is const + sum_j B_j(C_j) (module docstring, 4)."""
    m = len(gammas)
    tables = np.zeros((max(m - 1, 0), n + 1))
    if ideal.fixed is not None:
        return tables, ideal.fixed
    judged = ideal.judged[ideal.judged > 0]
    t = np.unique(np.concatenate([judged, gammas[gammas > 0]]))[::-1]
    if not len(t):
        return tables, 0.0
    delta = t - np.append(t[1:], 0.0)
    slots = len(judged) + n
    denom = K.discount_denominators(rules.measure.flavor, max(slots, 1))
    prefix = np.concatenate([[0.0], np.cumsum(1.0 / denom[1:slots + 1])])
    top = int(min(slots, ideal.cut))

    def p(x: np.ndarray | int) -> Floats:
        return np.asarray(prefix[np.minimum(x, top)])

    const = 0.0
    c = np.arange(n + 1)
    for ti, d in zip(t.tolist(), delta.tolist(), strict=True):
        above = int((judged >= ti).sum())
        j = int((gammas >= ti).sum())
        if j == 0:
            const += d * float(p(above))
        elif j == m:
            const += d * float(p(above + n))
        else:
            tables[j - 1] += d * p(above + c)
    return tables, const


def _best_chain(f: Floats) -> np.ndarray:
    """The chain 0 <= C_1 <= ... <= C_r <= n maximising sum_j f[j, C_j] (rows j, columns c)."""
    rows, width = f.shape
    idx = np.arange(width)
    acc = f[0].copy()
    back = []
    for j in range(1, rows):
        best = np.maximum.accumulate(acc)
        back.append(np.maximum.accumulate(np.where(acc >= best, idx, 0)))
        acc = f[j] + best
    chain = np.empty(rows, dtype=np.int64)
    chain[-1] = int(np.argmax(acc))
    for j in range(rows - 2, -1, -1):
        chain[j] = back[j][chain[j + 1]]
    return chain


def _dinkelbach(num: Floats, den: Floats, n0: float, d0: float, constrain: int | None,
                maximize: bool) -> tuple[np.ndarray, float, float]:
    """The chain of greatest (least) (n0 + sum num[j, C_j]) / (d0 + sum den[j, C_j]), with
    C_constrain >= 1 when given; returns it with its numerator and denominator."""
    rows, width = num.shape
    at = np.arange(rows)

    def totals(chain: np.ndarray) -> tuple[float, float]:
        return n0 + float(num[at, chain].sum()), d0 + float(den[at, chain].sum())

    chain = np.full(rows, width - 1, dtype=np.int64)
    top, bottom = totals(chain)
    if rows == 0:
        return chain, top, bottom
    lam = top / bottom
    for _ in range(200):
        f = num - lam * den
        if not maximize:
            f = -f
        if constrain is not None:
            f[constrain, 0] = -np.inf
        new = _best_chain(f)
        a, b = totals(new)
        if (a / b > lam) if maximize else (a / b < lam):
            chain, top, bottom, lam = new, a, b, a / b
        else:
            break
    return chain, top, bottom


def ndcg_extreme(rules: Rules, scope: QueryScope, maximize: bool) -> Extreme:
    """The greatest (``maximize``) or least NDCG over the gradings that leave something to find
    (value None when none does), with a grading attaining it."""
    grades = rules.grades
    g = gain(rules, grades)
    gammas = np.unique(g)[::-1]
    rep = np.array([grades[g == v].min() for v in gammas])
    m = len(gammas)
    holes = scope.hole_rows
    in_a = a_holes(rules, scope)
    blocks = grouped(rules, scope)
    grading = np.full(len(holes), rep[0] if maximize else rep[-1])  # B holes (1.)
    a_idx = np.flatnonzero(in_a)
    n = len(a_idx)
    if blocks:
        order = np.arange(n) if maximize else np.arange(n)[::-1]  # rank order (3.)
    else:
        w = discounts(rules, scope)[holes[a_idx]]
        order = np.lexsort((np.arange(n), -w if maximize else w))  # by weight (2.)
    chain_holes = a_idx[order]

    def graded(levels: np.ndarray) -> np.ndarray:
        out = grading.copy()
        out[chain_holes] = rep[levels]
        return out

    lowest = graded(np.full(n, m - 1))
    n0 = float(numerator(rules, scope, lowest)[0])
    num = np.zeros((max(m - 1, 0), n + 1))
    if m > 1 and n:
        if blocks:
            tried = []
            for j in range(m - 1):
                levels = np.where(np.arange(n)[None, :] < np.arange(n + 1)[:, None], j, m - 1)
                tried.append(numerator(rules, scope, np.vstack([graded(lv) for lv in levels])))
            tried.append(np.full(n + 1, n0))
            num = np.vstack([tried[j] - tried[j + 1] for j in range(m - 1)])
        else:
            prefix = np.concatenate([[0.0], np.cumsum(w[order])])
            num = (gammas[:-1] - gammas[1:])[:, None] * prefix[None, :]
    ideal = ideal_of(rules, scope)
    den, d0 = _ideal_tables(rules, ideal, gammas, n)
    if ideal.base_empty:
        p = int((gammas > 0).sum())
        if p == 0 or n == 0:
            return Extreme(None, lowest)
        constrain = p - 1 if p < m else None
    else:
        constrain = None
    chain, top, bottom = _dinkelbach(num, den, n0, d0, constrain, maximize)
    levels = np.searchsorted(np.append(chain, n), np.arange(n), side="right")
    return Extreme(top / bottom, graded(levels))


__all__ = ["Extreme", "Ideal", "a_holes", "emptiness", "grouped", "ideal_of", "ndcg_extreme"]
