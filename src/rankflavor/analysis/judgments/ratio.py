r"""Exact least and greatest NDCG of each query over every grading of its holes.

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
   min(x, cut) slots. Both are sums of one function of each :math:`C_j`. A chain is a multiset
   of the A holes' gains in its best (worst) arrangement, so the greatest value over every
   grading is the greatest N(C)/D(C) over the chains, and the least the least.

5. **Dinkelbach.** The greatest ratio N/D over chains (D > 0) is found by Dinkelbach's method
   (W. Dinkelbach, "On nonlinear fractional programming", Management Science 13(7), 1967):
   from λ = N/D of a chain, take the chain maximising N - λD; stop when its ratio does not
   exceed λ (then max N - λD = 0 and λ is the greatest ratio); λ rises strictly, so it ends.
   Each step is a dynamic programme over :math:`0 \le C_1 \le \dots \le C_{m-1} \le n`: the
   best total with :math:`C_j = c` is :math:`F_j(c) + \max_{c' \le c}` (best with
   :math:`C_{j-1} = c'`), a running maximum, O(m n) per step. The least ratio likewise. Where
   the chains are few (:data:`ENUMERATE`) every one is scored at once instead. The queries of a
   measure are searched together (arrays of queries x levels x counts).

6. **Nothing to find.** When the judged part of the ideal has no positive gain, a grading with
   every A hole at a gain <= 0 leaves IDCG = 0 and the value is the ``empty`` policy's; the
   chains with at least one positive A hole (:math:`C_p \ge 1`, p the last positive level) are
   optimised as above, and the policy's value is compared with their extremes.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rankflavor.analysis.judgments.families import gain, numerator, numerator_measure, ranking
from rankflavor.analysis.judgments.scope import QueryScope, Rules
from rankflavor.errors import FlavorError

Floats = np.ndarray

#: Up to this many chains (for the longest list of A holes in a batch), every chain is scored at
#: once; beyond it Dinkelbach's method runs the dynamic programme. Both are exact (the tests
#: force each path).
ENUMERATE = 4000


@dataclass(frozen=True)
class Extreme:
    """One end of the interval: the value (None when every grading leaves nothing to find) and a
    grading attaining it (one grade per hole, in hole order)."""

    value: float | None
    grading: np.ndarray


def _cut(rules: Rules, n_ret: np.ndarray) -> np.ndarray:
    """How many ideal slots count per query (``ideal_cut``: k, min(k, hits) or all)."""
    f = rules.measure.flavor
    limit = np.inf if rules.k is None else float(rules.k)
    kind = str(f.ideal_cut)
    if kind == "none":
        return np.full(len(n_ret), np.inf)
    if kind == "hits":
        return np.minimum(limit, n_ret.astype(np.float64))
    return np.full(len(n_ret), limit)


def _max_ideal(rules: Rules, n_ret: np.ndarray, cut: np.ndarray) -> np.ndarray:
    """IDCG of ``ideal=max`` per query: gain(G) in every slot (``ndcg_kernel``)."""
    top = rules.measure.flavor.top_grade
    assert top is not None  # (the zero-imputed measure's kernel has refused ideal=max without it)
    slots = np.where(np.isinf(cut), n_ret, cut).astype(np.int64)
    g_top = float(gain(rules, np.array([top]))[0])
    recip = rules.reciprocal_discounts(int(slots.max(initial=0)) + 1)
    return np.asarray(np.concatenate([[0.0], np.cumsum(g_top * recip[1:])])[slots])


def emptiness(rules: Rules, scope: QueryScope) -> tuple[bool, bool, bool]:
    """(some grading leaves IDCG = 0, some grading makes it > 0, the zero-imputed IDCG = 0)."""
    b = _Batch(rules, [scope])
    base = bool(b.base_empty[0])
    if rules.ideal == "max":
        return base, not base, base
    g = rules.grade_gains
    n_a = int(b.n_a[0])
    return base and (n_a == 0 or bool((g <= 0).any())), (not base) or (n_a > 0 and bool((g > 0).any())), base


class _Batch:
    """The scopes of many queries laid end to end, with what every chain search reads."""

    def __init__(self, rules: Rules, scopes: Sequence[QueryScope]) -> None:
        self.rules, self.scopes = rules, scopes
        q = len(scopes)
        lengths = np.array([len(s.grade) for s in scopes], dtype=np.int64)
        self.seg = np.repeat(np.arange(q), lengths)
        self.start = np.cumsum(lengths) - lengths
        self.grade = np.concatenate([s.grade for s in scopes]) if q else np.zeros(0)
        self.rank = np.arange(len(self.grade)) - self.start[self.seg] + 1
        self.kept = np.concatenate([s.kept for s in scopes]) if q else np.zeros(0, dtype=bool)
        in_ideal = np.concatenate([s.in_ideal for s in scopes]) if q else np.zeros(0, dtype=bool)
        offsets = np.cumsum([0] + [int(s.group.max(initial=-1)) + 1 for s in scopes])
        self.group = (np.concatenate([s.group for s in scopes]) if q else np.zeros(0, dtype=np.int64)) + \
            np.repeat(offsets[:-1], lengths)
        self.n_ret = np.array([s.n_ret for s in scopes], dtype=np.int64)
        self.hole = np.isnan(self.grade)
        ideal = rules.ideal
        self.in_a = self.hole & (in_ideal if ideal in ("local", "recall") else ideal == "global")
        self.n_a = np.bincount(self.seg[self.in_a], minlength=q)
        self.blocks = self._blocks(in_ideal)
        self.weights = self._weights()
        self.cut = _cut(rules, self.n_ret)
        if ideal == "max":
            self.fixed: np.ndarray | None = _max_ideal(rules, self.n_ret, self.cut)
            self.base_empty = ~(self.fixed > 0)
            return
        self.fixed = None
        if ideal == "global":
            judged = [gain(rules, s.judgments) for s in scopes]
        else:
            judged = [gain(rules, s.grade[s.in_ideal & ~np.isnan(s.grade)]) for s in scopes]
        self.judged = [j[j > 0] for j in judged]
        self.base_empty = np.array([not len(j) for j in self.judged], dtype=bool)

    def _blocks(self, in_ideal: np.ndarray) -> np.ndarray:
        """Per query: a tie group ordered by grade holds a hole and another row (its holes have
        no fixed weight); such a group across the edge of a local or recall ideal is refused."""
        q = len(self.scopes)
        if not self.rules.tie or not self.hole.any():
            return np.zeros(q, dtype=bool)
        size = np.bincount(self.group)
        shared = self.hole & (size[self.group] > 1)
        if self.rules.ideal in ("local", "recall"):
            mixed = np.bincount(self.group, weights=in_ideal.astype(np.float64)) % size != 0
            bad = shared & mixed[self.group]
            if bad.any():
                raise FlavorError(
                    f"{self.rules.measure.name}: on query {self.scopes[int(self.seg[bad][0])].qid} a tie group ordered "
                    f"by grade (ties={self.rules.measure.flavor.ties}) holding an unjudged document lies across the "
                    "edge of the list the ideal is made of; the bound is not derived there (use another tie rule)")
        return np.bincount(self.seg[shared], minlength=q) > 0

    def _weights(self) -> np.ndarray:
        """The discount each position's gain gets (0 past the cut; a tie group's mean under
        ``ties=averaged``, where a row earns its group's mean gain): the coefficient of each
        position's gain in the DCG, which the rearrangement orders the holes by."""
        rules = self.rules
        w = rules.reciprocal_discounts(int(self.rank.max(initial=1)))[self.rank]
        w = np.where(self.rank <= rules.cut, w, 0.0)  # (cut <= depth: no row past the depth cut counts)
        if rules.averaged:
            k = self.kept
            sums = np.bincount(self.group[k], weights=w[k], minlength=len(self.group))
            sizes = np.bincount(self.group[k], minlength=len(self.group))
            w = np.where(k, (sums / np.maximum(sizes, 1))[self.group], 0.0)
        return np.asarray(w)

    def dcg(self, filled: np.ndarray) -> np.ndarray:
        """DCG per query of the grades ``filled`` (every position), by the DCG kernel."""
        rules = self.rules
        q = len(self.scopes)
        jq = np.concatenate([np.repeat(np.arange(q), [len(s.judgments) for s in self.scopes]), self.seg[self.hole]])
        jgrade = np.concatenate([*(s.judgments for s in self.scopes), filled[self.hole]])
        if rules.tie:  # (tie groups ordered by grade, as families.placed orders them)
            key = filled if rules.tie == "asc" else -filled
            filled = filled[np.lexsort((key, self.group))]
        kept = self.kept
        ranked = ranking(rules, np.bincount(self.seg[kept], minlength=q), filled[kept], self.group[kept], self.n_ret,
                         jq, jgrade)
        m = numerator_measure(rules)
        return np.asarray(m.spec.compute(ranked, m)[0], dtype=np.float64)

    def ideal_tables(self, gammas: Floats) -> tuple[Floats, Floats]:
        """B[q, j, c] for the chain levels j = 1..m-1 and c = 0..n_max, and the constant per
        query: a chain's IDCG is const + sum_j B_j(C_j) (module docstring, 4)."""
        q, m = len(self.scopes), len(gammas)
        width = int(self.n_a.max(initial=0)) + 1
        tables = np.zeros((q, max(m - 1, 0), width))
        if self.fixed is not None:
            return tables, self.fixed.copy()
        t = np.unique(np.concatenate([*self.judged, gammas[gammas > 0]]))[::-1]
        if not len(t):
            return tables, np.zeros(q)
        delta = t - np.append(t[1:], 0.0)
        above = np.zeros((q, len(t)), dtype=np.int64)  # judged gains >= each threshold
        for i, j in enumerate(self.judged):
            if len(j):
                above[i] = np.bincount(np.searchsorted(-t, -j), minlength=len(t)).cumsum()
        slots = np.array([len(j) for j in self.judged]) + self.n_a
        top = np.minimum(slots, self.cut).astype(np.int64)
        prefix = np.concatenate([[0.0], np.cumsum(self.rules.reciprocal_discounts(int(slots.max(initial=1)))[1:])])
        level = (gammas[None, :] >= t[:, None]).sum(axis=1)  # j(t): hole levels >= each threshold
        c = np.arange(width)[None, None, :]
        holes = np.where((level == m)[None, :, None], self.n_a[:, None, None],
                         np.where((level == 0)[None, :, None], 0, np.minimum(c, self.n_a[:, None, None])))
        part = delta[None, :, None] * prefix[np.minimum(above[:, :, None] + holes, top[:, None, None])]
        fixed = (level == 0) | (level == m)
        const = part[:, fixed, 0].sum(axis=1)
        for i in np.flatnonzero(~fixed).tolist():
            tables[:, level[i] - 1, :] += part[:, i, :]
        return tables, const


def _chains(n: int, rows: int) -> np.ndarray:
    """Every chain 0 <= C_1 <= ... <= C_rows <= n, one per row (kept)."""
    key = (n, rows)
    if key not in _CHAINS:
        _CHAINS[key] = np.array(list(itertools.combinations_with_replacement(range(n + 1), rows)),
                                dtype=np.int64).reshape(-1, rows)
    return _CHAINS[key]


_CHAINS: dict[tuple[int, int], np.ndarray] = {}


def _totals(num: Floats, den: Floats, n0: Floats, d0: Floats, chains: np.ndarray) -> tuple[Floats, Floats]:
    """Numerator and denominator of one chain per query (``chains``: queries x rows)."""
    q, rows = chains.shape
    qi, ji = np.arange(q)[:, None], np.arange(rows)[None, :]
    return n0 + num[qi, ji, chains].sum(axis=1), d0 + den[qi, ji, chains].sum(axis=1)


def _enumerated(num: Floats, den: Floats, n0: Floats, d0: Floats, n: np.ndarray, constrain: np.ndarray,
                maximize: bool) -> np.ndarray:
    """Per query the chain of greatest (least) ratio, every chain scored."""
    _, rows, width = num.shape
    chains = _chains(width - 1, rows)
    ji = np.arange(rows)[None, :]
    top = n0[:, None] + num[:, ji, chains].sum(axis=2)
    bottom = d0[:, None] + den[:, ji, chains].sum(axis=2)
    ok = chains[None, :, -1] <= n[:, None]
    ok &= (constrain[:, None] < 0) | (chains.T[np.maximum(constrain, 0)] >= 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(ok, top / np.where(ok, bottom, 1.0), -np.inf if maximize else np.inf)
    best = np.argmax(ratio, axis=1) if maximize else np.argmin(ratio, axis=1)
    return chains[best]


def _best_chains(f: Floats) -> np.ndarray:
    """Per query the chain 0 <= C_1 <= ... <= C_r maximising sum_j f[q, j, C_j]."""
    q, rows, width = f.shape
    idx = np.arange(width)[None, :]
    acc = f[:, 0, :].copy()
    back = []
    for j in range(1, rows):
        best = np.maximum.accumulate(acc, axis=1)
        back.append(np.maximum.accumulate(np.where(acc >= best, idx, 0), axis=1))
        acc = f[:, j, :] + best
    chain = np.empty((q, rows), dtype=np.int64)
    chain[:, -1] = np.argmax(acc, axis=1)
    qi = np.arange(q)
    for j in range(rows - 2, -1, -1):
        chain[:, j] = back[j][qi, chain[:, j + 1]]
    return chain


def _dinkelbach(num: Floats, den: Floats, n0: Floats, d0: Floats, n: np.ndarray, constrain: np.ndarray,
                maximize: bool) -> np.ndarray:
    """Per query the chain of greatest (least) ratio by Dinkelbach's method (module docstring, 5)."""
    q, rows, width = num.shape
    chain = np.repeat(n[:, None], rows, axis=1)  # every A hole at the top level: feasible
    top, bottom = _totals(num, den, n0, d0, chain)
    lam = top / bottom
    beyond = np.arange(width)[None, None, :] > n[:, None, None]
    held = np.flatnonzero(constrain >= 0)
    live = np.ones(q, dtype=bool)
    for _ in range(200):
        f = num - lam[:, None, None] * den
        if not maximize:
            f = -f
        f = np.where(beyond, -np.inf, f)
        f[held, constrain[held], 0] = -np.inf
        new = _best_chains(f)
        a, b = _totals(num, den, n0, d0, new)
        ratio = a / b
        better = live & ((ratio > lam) if maximize else (ratio < lam))
        if not better.any():
            break
        chain[better], lam[better] = new[better], ratio[better]
        live = better
    return chain


def ndcg_batch(rules: Rules, scopes: Sequence[QueryScope]) -> list[tuple[Extreme, Extreme, bool]]:
    """Per scope, the least and the greatest NDCG over the gradings that leave something to find
    (value None when none does), each with a grading attaining it (module docstring), and whether
    some grading leaves nothing to find."""
    if not scopes:
        return []
    b = _Batch(rules, scopes)
    gammas, rep = rules.gain_levels
    m = len(gammas)
    q = len(scopes)
    n = b.n_a
    width = int(n.max(initial=0)) + 1
    den, d0 = b.ideal_tables(gammas)
    p = int((gammas > 0).sum())
    empty = b.base_empty & ((p == 0) | (n == 0))
    constrain = np.where(b.base_empty & (p < m), p - 1, -1)
    a_pos = np.flatnonzero(b.in_a)
    a_seg = b.seg[a_pos]
    rows = m - 1
    many = math.comb(width - 1 + rows, rows) > ENUMERATE
    solve = _dinkelbach if many else _enumerated
    ends: list[list[Extreme]] = [[] for _ in range(q)]
    for maximize in (False, True):
        filled = b.grade.copy()
        filled[b.hole] = rep[0] if maximize else rep[-1]  # B holes (1.); A holes at the lowest level
        filled[b.in_a] = rep[-1]
        n0 = b.dcg(filled)
        w = b.weights[a_pos]
        in_block = b.blocks[a_seg]
        by_rank = np.where(in_block, a_pos if maximize else -a_pos, 0)  # (3.)
        by_weight = np.where(in_block, 0.0, -w if maximize else w)  # (2.)
        chain_pos = a_pos[np.lexsort((a_pos, by_weight, by_rank, a_seg))]
        within = np.arange(len(chain_pos)) - (np.cumsum(n) - n)[a_seg]
        num = np.zeros((q, max(rows, 0), width))
        if rows and len(a_pos):
            w_prefix = np.zeros((q, width))
            w_prefix[a_seg, within + 1] = b.weights[chain_pos]
            w_prefix = np.cumsum(w_prefix, axis=1)
            num = (gammas[:-1] - gammas[1:])[None, :, None] * w_prefix[:, None, :]
            for i in np.flatnonzero(b.blocks & (n > 0)).tolist():
                holes_at = b.start[i] + scopes[i].hole_rows
                num[i] = _block_table(rules, scopes[i], filled[holes_at], np.searchsorted(holes_at, chain_pos[a_seg == i]),
                                      rep, float(n0[i]), width)
        with np.errstate(divide="ignore", invalid="ignore"):
            chain = solve(num, den, n0, d0, n, constrain, maximize) if rows else np.zeros((q, 0), dtype=np.int64)
        top, bottom = _totals(num, den, n0, d0, chain)
        level = (chain[a_seg] <= within[:, None]).sum(axis=1)
        filled[chain_pos] = rep[level]
        for i, s in enumerate(scopes):
            grading = filled[b.start[i] + s.hole_rows]
            ends[i].append(Extreme(None if empty[i] else float(top[i] / bottom[i]), grading))
    can_empty = b.base_empty & ((n == 0) | bool((rules.grade_gains <= 0).any()) | (b.fixed is not None))
    return [(e[0], e[1], bool(c)) for e, c in zip(ends, can_empty, strict=True)]


def _block_table(rules: Rules, scope: QueryScope, grading: np.ndarray, at: np.ndarray, rep: np.ndarray, n0: float,
                 width: int) -> Floats:
    """A_j(c) of one query whose holes share grade-ordered tie groups (module docstring, 4): the
    DCG with the first c holes of the chain (hole numbers ``at``) raised from the lowest level to
    level j, less the same raised to level j + 1 (``grading``: every A hole at the lowest level)."""
    m = len(rep)
    n = len(at)
    tried = []
    for j in range(m - 1):
        gradings = np.repeat(grading[None, :], n + 1, axis=0)
        for c in range(1, n + 1):
            gradings[c, at[:c]] = rep[j]
        tried.append(numerator(rules, scope, gradings))
    tried.append(np.full(n + 1, n0))
    table = np.zeros((m - 1, width))
    table[:, : n + 1] = np.vstack([tried[j] - tried[j + 1] for j in range(m - 1)])
    return table


__all__ = ["ENUMERATE", "Extreme", "emptiness", "ndcg_batch"]
