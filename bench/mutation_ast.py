"""The mutations of issue #32 that mutmut does not make, one at a time, each against the tests that
run its line.

mutmut 3 makes most of the kinds the issue lists (flipped comparisons, swapped operators, +1 on
numbers, ``not`` removed) but only inside undecorated functions and methods, and it never swaps
min and max, subtracts 1, or negates an ``if``. This engine makes exactly those, so the two
engines together apply every kind the issue lists everywhere in a module:

everywhere
    ``min``/``max`` swapped (builtins, ``np.minimum``/``np.maximum`` and their ``.accumulate``,
    ``.min()``/``.max()``, ``argmin``/``argmax``, ``fmin``/``fmax``); ``-1`` on a number;
    the condition of an ``if``/``elif``/``while``/conditional expression/comprehension negated.
where mutmut does not mutate (module and class level, default arguments, decorated functions such
as properties and cached functions)
    also ``+1`` on a number, flipped comparisons (``<``/``<=``, ``>``/``>=``, ``==``/``!=``,
    ``in``/``not in``, ``is``/``is not``), swapped operators (``+``/``-``, ``*``/``/``, ``//``
    and ``%`` to ``/``, ``**`` to ``*``, ``<<``/``>>``, ``&``/``|``, ``^`` to ``&``, ``and``/``or``,
    unary ``-``/``+``) and ``not`` removed.

``--kinds all`` makes every kind everywhere (a stand-alone run, without mutmut).

How a mutant runs: the source tree is copied once to ``mutants-ast/src``; one baseline run of the
mapped test files under ``coverage`` (one context per test) says which tests execute each line.
A parent process that has imported the test suite's third-party modules (never rankflavor)
forks one child per mutant; the child imports rankflavor afresh from the copy, in which the
mutated file was written, and runs ``pytest -x`` on the tests that execute the mutated lines
(fastest first; every mapped test for a line only run at import time). Exit 0 is a survivor,
a failure is a kill, a child past its deadline (``3 x`` the baseline time of its tests ``+ 10 s``)
is a timeout. No bytecode is written, so no stale ``.pyc`` can stand in for a mutated file.
"""

from __future__ import annotations

import ast
import dataclasses
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

MINMAX = {"min": "max", "max": "min", "minimum": "maximum", "maximum": "minimum", "argmin": "argmax",
          "argmax": "argmin", "fmin": "fmax", "fmax": "fmin", "nanmin": "nanmax", "nanmax": "nanmin",
          "amin": "amax", "amax": "amin", "nanargmin": "nanargmax", "nanargmax": "nanargmin"}
COMPARE = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
           ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is}
BINOP = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult, ast.FloorDiv: ast.Div,
         ast.Mod: ast.Div, ast.Pow: ast.Mult, ast.LShift: ast.RShift, ast.RShift: ast.LShift,
         ast.BitAnd: ast.BitOr, ast.BitOr: ast.BitAnd, ast.BitXor: ast.BitAnd}
MUTMUT_DECORATORS = {"staticmethod", "classmethod"}


@dataclasses.dataclass(frozen=True)
class Mutant:
    """One mutation: ``path`` (relative to the source root), the byte span it replaces, the text."""

    path: str
    line: int
    end_line: int
    start: int  # byte offsets in the file
    end: int
    old: str
    new: str
    kind: str
    function: str

    @property
    def id(self) -> str:
        return f"{self.path}:{self.line}:{self.kind}:{self.old.strip()} -> {self.new.strip()}"


class _Sites(ast.NodeVisitor):
    """Every mutation of one module, in source order."""

    def __init__(self, path: str, source: bytes, every_kind: bool) -> None:
        self.path, self.source, self.every_kind = path, source, every_kind
        starts = [0]
        for line in source.splitlines(keepends=True):
            starts.append(starts[-1] + len(line))
        self.line_starts = starts
        self.mutants: list[Mutant] = []
        self.scope: list[str] = []
        self.reached = False  # inside a body mutmut mutates
        self.in_fstring = False
        self.classes = 0  # class bodies we are in

    # -- where we are --------------------------------------------------------------------------

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        # (decorators run at import: never mutated)
        outer_reached = self.reached
        top = len(self.scope) == 0 or (len(self.scope) == 1 and self.classes == 1)
        names = {d.id if isinstance(d, ast.Name) else "" for d in node.decorator_list}
        mutmut_here = outer_reached or (top and names <= MUTMUT_DECORATORS)
        self.reached = False
        for default in [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]:
            self.visit(default)
        self.scope.append(node.name)
        self.reached = mutmut_here
        for stmt in node.body:
            self.visit(stmt)
        self.scope.pop()
        self.reached = outer_reached

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.scope.append(node.name)
        self.classes += 1
        for stmt in node.body:
            self.visit(stmt)
        self.scope.pop()
        self.classes -= 1

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        return  # f-string parts have no reliable positions; their text is a message

    def visit_arguments(self, node: ast.arguments) -> None:
        return  # annotations (defaults are visited by _function)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)

    def visit_Expr(self, node: ast.Expr) -> None:
        if not (isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
            self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        return

    def visit_Assign(self, node: ast.Assign) -> None:
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return
        self.generic_visit(node)

    # -- the kinds -----------------------------------------------------------------------------

    def _all(self) -> bool:
        return self.every_kind or not self.reached

    def _offset(self, line: int, col: int) -> int:
        return self.line_starts[line - 1] + col

    def _add(self, node: ast.AST, new: str, kind: str, start: int | None = None, end: int | None = None) -> None:
        s = self._offset(node.lineno, node.col_offset) if start is None else start  # type: ignore[attr-defined]
        e = self._offset(node.end_lineno, node.end_col_offset) if end is None else end  # type: ignore[attr-defined]
        old = self.source[s:e].decode()
        self.mutants.append(Mutant(self.path, node.lineno, node.end_lineno or node.lineno,  # type: ignore[attr-defined]
                                   s, e, old, new, kind, ".".join(self.scope) or "<module>"))

    def _negate(self, test: ast.expr) -> None:
        if isinstance(test, ast.Name) and test.id == "TYPE_CHECKING":
            return
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and not self._all():
            return  # mutmut removes that ``not`` already
        s = self._offset(test.lineno, test.col_offset)
        e = self._offset(test.end_lineno, test.end_col_offset)  # type: ignore[arg-type]
        self._add(test, f"not ({self.source[s:e].decode()})", "negate")

    def visit_If(self, node: ast.If) -> None:
        self._negate(node.test)
        self.generic_visit(node)

    def visit_While(self, node: ast.While) -> None:
        self._negate(node.test)
        self.generic_visit(node)

    def visit_IfExp(self, node: ast.IfExp) -> None:
        self._negate(node.test)
        self.generic_visit(node)

    def visit_comprehension(self, node: ast.comprehension) -> None:
        for cond in node.ifs:
            self._negate(cond)
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        v = node.value
        if isinstance(v, bool) or not isinstance(v, int | float) or self.in_fstring:
            return
        self._add(node, f"({v - 1!r})", "minus1")
        if self._all():
            self._add(node, f"({v + 1!r})", "plus1")

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in ("min", "max") and isinstance(node.ctx, ast.Load):
            self._add(node, MINMAX[node.id], "minmax")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr in MINMAX:
            e = self._offset(node.end_lineno, node.end_col_offset)  # type: ignore[arg-type]
            self._add(node, MINMAX[node.attr], "minmax", start=e - len(node.attr), end=e)
        self.generic_visit(node)

    def _replace(self, node: ast.expr, mutated: ast.expr, kind: str) -> None:
        self._add(node, f"({ast.unparse(mutated)})", kind)

    def visit_Compare(self, node: ast.Compare) -> None:
        if self._all():
            for i, op in enumerate(node.ops):
                if type(op) in COMPARE:
                    ops = list(node.ops)
                    ops[i] = COMPARE[type(op)]()
                    self._replace(node, ast.Compare(node.left, ops, node.comparators), "compare")
        self.generic_visit(node)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        if self._all() and type(node.op) in BINOP:
            self._replace(node, ast.BinOp(node.left, BINOP[type(node.op)](), node.right), "operator")
        self.generic_visit(node)

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        if self._all():
            other = ast.Or() if isinstance(node.op, ast.And) else ast.And()
            self._replace(node, ast.BoolOp(other, node.values), "operator")
        self.generic_visit(node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> None:
        if self._all():
            if isinstance(node.op, ast.Not | ast.Invert):
                self._replace(node, node.operand, "negate")
            elif isinstance(node.op, ast.USub | ast.UAdd):
                flipped = ast.UAdd() if isinstance(node.op, ast.USub) else ast.USub()
                if not (isinstance(node.operand, ast.Constant)):
                    self._replace(node, ast.UnaryOp(flipped, node.operand), "operator")
        self.generic_visit(node)


def mutants_of(root: Path, path: str, every_kind: bool = False) -> list[Mutant]:
    """The mutations of ``root / path`` (complementing mutmut's, or ``every_kind``)."""
    source = (root / path).read_bytes()
    sites = _Sites(path, source, every_kind)
    sites.visit(ast.parse(source))
    out = []
    for m in sites.mutants:  # a mutant that does not parse is no mutant (e.g. ``not`` in a slice)
        try:
            ast.parse(source[:m.start] + m.new.encode() + source[m.end:])
        except SyntaxError:
            continue
        out.append(m)
    return out


# -- running ----------------------------------------------------------------------------------


def _third_party(repo: Path, src: Path, tests: list[str]) -> list[str]:
    """Modules importing rankflavor and the test files pulls in, less rankflavor and the tests."""
    code = ("import sys, importlib.util, json\n"
            f"sys.path[:0] = [{str(src)!r}, {str(repo)!r}]\n"
            "import rankflavor\n"
            f"for t in {tests!r}:\n"
            "    name = t[:-3].replace('/', '.')\n"
            "    try:\n        __import__(name)\n    except Exception:\n        pass\n"
            "print(json.dumps(sorted(m for m in sys.modules if not m.startswith(('rankflavor', 'tests', 'conftest', "
            "'__main__')))))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True, text=True, check=True)
    return list(json.loads(out.stdout.strip().splitlines()[-1]))


def _pytest_args(tests: list[str], deselect: str | None = None, extra: Sequence[str] = ()) -> list[str]:
    return [*tests, "-x", "-q", "-p", "no:cacheprovider", "-o", "addopts=", "-W", "ignore", "--no-header",
            "--hypothesis-seed=0", *(["-k", deselect] if deselect else []), *extra]


def _child(run: object, timeout: float) -> tuple[str, float]:
    """Fork: the child calls ``run()`` (its exit code is the status); the parent waits."""
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:  # child
        code = 3
        try:
            os.setpgid(0, 0)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            code = int(run())  # type: ignore[operator]
        finally:
            os._exit(code)
    deadline = t0 + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            code = os.waitstatus_to_exitcode(status)
            return ("survived" if code == 0 else "no tests" if code == 5 else "killed"), time.perf_counter() - t0
        if time.perf_counter() > deadline:
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(pid, 0)
            return "timeout", time.perf_counter() - t0
        time.sleep(0.02)


def run(repo: Path, files: list[str], tests: list[str], *, every_kind: bool = False, only: str | None = None,
        workdir: Path | None = None, log: io.TextIOBase | None = None,
        deselect: str | None = None, extra: Sequence[str] = ()) -> list[dict[str, object]]:
    """Every mutant of ``files`` (paths under ``src/``) against ``tests``; one record per mutant
    (``extra``: more pytest arguments, such as the group's hypothesis profile)."""
    log = log or sys.stderr  # type: ignore[assignment]
    workdir = workdir or repo / "mutants-ast"
    src = workdir / "src"
    if src.exists():
        shutil.rmtree(src)
    shutil.copytree(repo / "src", src, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    sys.dont_write_bytecode = True
    mutants = [m for f in files for m in mutants_of(src, f, every_kind)]
    if only:  # one or more id substrings, joined by " || "
        mutants = [m for m in mutants if any(part in m.id for part in only.split(" || "))]
    print(f"{len(mutants)} mutants in {len(files)} file(s); baseline with coverage ...", file=log, flush=True)
    for name in _third_party(repo, src, tests):
        try:
            __import__(name)
        except Exception:
            pass
    os.chdir(repo)
    sys.path[:0] = [str(src)]
    import coverage
    import pytest

    cov_file = workdir / "baseline.coverage"

    class Contexts:
        """Names coverage's context after the running test, and times each test."""

        def __init__(self, cov: coverage.Coverage) -> None:
            self.cov = cov
            self.durations: dict[str, float] = {}

        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_protocol(self, item, nextitem):  # type: ignore[no-untyped-def]
            self.cov.switch_context(item.nodeid)
            t = time.perf_counter()
            yield
            self.durations[item.nodeid] = time.perf_counter() - t
            self.cov.switch_context("")

    def baseline() -> int:
        cov = coverage.Coverage(data_file=str(cov_file), include=[str(src / f) for f in files])
        plugin = Contexts(cov)
        cov.start()
        code = pytest.main(_pytest_args(tests, deselect, extra), plugins=[plugin])
        cov.stop()
        cov.save()
        (workdir / "durations.json").write_text(json.dumps(plugin.durations))
        return int(code)

    status, took = _child(baseline, 3600)
    if status != "survived":
        raise SystemExit(f"the mapped tests fail without any mutant ({status}); fix them first: {tests}")
    durations = json.loads((workdir / "durations.json").read_text())
    data = coverage.CoverageData(basename=str(cov_file))
    data.read()
    by_line = {f: data.contexts_by_lineno(str(src / f)) for f in files}
    print(f"baseline {took:.0f} s, {len(durations)} tests", file=log, flush=True)

    records = []
    originals = {f: (src / f).read_bytes() for f in files}
    for i, m in enumerate(mutants, 1):
        lines = by_line[m.path]
        ctx: set[str] = set()
        for ln in range(m.line, m.end_line + 1):
            ctx.update(lines.get(ln, []))
        if "" in ctx or (not ctx and m.function == "<module>"):
            selected = list(durations)  # import-time code: every mapped test
        else:
            selected = sorted((c for c in ctx if c in durations), key=lambda c: durations[c])
        if not selected:
            status, took = "no tests", 0.0
        else:
            mutated = originals[m.path][:m.start] + m.new.encode() + originals[m.path][m.end:]
            (src / m.path).write_bytes(mutated)
            budget = 3 * sum(durations[c] for c in selected) + 10 + 2 * len(files)
            try:
                status, took = _child(lambda sel=selected: pytest.main(_pytest_args(sel, None, extra)), budget)
            finally:
                (src / m.path).write_bytes(originals[m.path])
        records.append({**dataclasses.asdict(m), "id": m.id, "status": status, "seconds": round(took, 2),
                        "tests": len(selected)})
        print(f"[{i}/{len(mutants)}] {status:8} {took:6.1f}s {m.id}", file=log, flush=True)
    return records
