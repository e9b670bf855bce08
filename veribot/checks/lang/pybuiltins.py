"""Builtin functions and list methods over symbolic values.

A mixin of the executor: ``len``, ``abs``, ``min``, ``max``, ``sum``, ``any``, ``all``,
``range``, ``list``, ``tuple``, ``bool``, ``int``, ``float``, and the list methods that
read or mutate a list in place.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

import z3

from veribot.checks.lang.pyops import (
    FALSE,
    MAXSIZE,
    MUTATING_METHODS,
    TRUE,
    Operators,
    first_number,
    is_empty_literal,
    promote,
    search_term,
)
from veribot.checks.lang.pytypes import INT_OR_BOOL, BoolT, FloatT, IntT, PyType, StrT
from veribot.checks.lang.pyvalues import (
    FLOAT,
    RM,
    SBool,
    SFloat,
    SInt,
    SIntB,
    SNone,
    SRange,
    SSeq,
    SStr,
    STuple,
    SUnion,
    Unsupported,
    V,
    alternatives,
    merge,
    merge_many,
    number_of_code,
    py_str,
    sort_of,
    str_val,
    term,
    wrap,
)

if TYPE_CHECKING:
    from veribot.checks.lang.pyexec import State


def characters(text: z3.SeqRef) -> z3.SeqRef:
    """The one-character strings of ``text``, in order (what iterating a ``str`` gives)."""
    literal = z3.simplify(text)
    if literal.is_string_value():
        units = [z3.Unit(str_val(c)) for c in py_str(literal)]
        if not units:
            return z3.Empty(z3.SeqSort(z3.StringSort()))
        return units[0] if len(units) == 1 else z3.Concat(*units)
    char = z3.Const("c", z3.CharSort())  # one name: equal extensions are equal terms
    return z3.SeqMap(z3.Lambda([char], z3.Unit(char)), text)


class Builtins(Operators):
    """Calls of builtins and methods (calls of the module's own functions: ``pyexec``)."""

    def _mutate(self, name: str, seq: SSeq, new: z3.ExprRef, state: State) -> None:
        raise NotImplementedError

    def _escape(self, value: V) -> None:
        raise NotImplementedError

    def _adopt(self, seq: SSeq, item: V) -> SSeq:
        raise NotImplementedError

    def _coerce_elem(self, value: V, elem: PyType) -> V:
        raise NotImplementedError

    def builtin(self, name: str, args: list[V], state: State, line: int) -> V:
        if name in ("len", "abs", "float") and len(args) == 1 and isinstance(args[0], SUnion):
            parts = []
            for g, alt in args[0].alts:
                with self.assuming(state, g):
                    parts.append((g, self.builtin(name, [alt], state, line)))
            return merge_many(parts[:-1], parts[-1][1])
        if name == "len" and len(args) == 1:
            (v,) = args
            if isinstance(v, SSeq | SStr):
                return SInt(z3.Length(v.e))
            if isinstance(v, STuple):
                return SInt(z3.IntVal(len(v.items)))
            if isinstance(v, SRange):
                length = v.length()
                self.raise_if(length > MAXSIZE, "OverflowError", state)  # len() is a C ssize_t
                return SInt(length)
            if isinstance(v, SInt | SBool | SIntB | SFloat | SNone):
                self.raise_if(TRUE, "TypeError", state)
                return SInt(z3.IntVal(0))
            raise Unsupported(f"len of a {type(v).__name__}", line)
        if name == "abs" and len(args) == 1:
            (v,) = args
            if isinstance(v, SInt | SBool | SIntB):
                x = self._as_int(v, state)
                return SInt(z3.If(x < 0, -x, x))
            if isinstance(v, SFloat):
                return SFloat(z3.fpAbs(v.e))
            if isinstance(v, SUnion):
                parts = []
                for g, alt in v.alts:
                    with self.assuming(state, g):
                        parts.append((g, self.builtin("abs", [alt], state, line)))
                return merge_many(parts[:-1], parts[-1][1])
            if isinstance(v, SNone | SStr | SSeq | STuple):
                self.raise_if(TRUE, "TypeError", state)
                return SNone()
            raise Unsupported(f"abs of a {type(v).__name__}", line)
        if name in ("min", "max") and len(args) >= 2:
            result = args[0]
            for other in args[1:]:
                # min keeps the first of equal items, max too: replace only on strict order.
                op: ast.cmpop = ast.Lt() if name == "min" else ast.Gt()
                better = self.compare_op(op, other, result, state)
                result = merge(better, other, result)
            return result
        if name == "range" and 1 <= len(args) <= 3:
            ints = [self._as_int(a, state) for a in args]
            if len(ints) == 1:
                return SRange(z3.IntVal(0), ints[0], z3.IntVal(1))
            step = ints[2] if len(ints) == 3 else z3.IntVal(1)
            self.raise_if(step == 0, "ValueError", state)
            return SRange(ints[0], ints[1], step)
        if name == "bool" and len(args) == 1:
            return SBool(self.truthy(args[0], state))
        if name in ("list", "tuple") and len(args) == 1:
            (v,) = args
            if isinstance(v, STuple):
                v = self._as_seq(v)
            if isinstance(v, SStr):
                v = SSeq("tuple", StrT(), characters(v.e))
            if isinstance(v, SSeq):
                origin = self._new_origin() if name == "list" else None
                return SSeq(name, v.elem, v.e, origin)
            raise Unsupported(f"{name}() of a {type(v).__name__}", line)
        if name in ("list", "tuple") and not args:
            empty = z3.Empty(z3.SeqSort(z3.IntSort()))
            return SSeq(name, IntT(), empty, self._new_origin() if name == "list" else None)
        if name == "float" and len(args) == 1 and isinstance(args[0], SFloat):
            return args[0]  # float(x) is x itself for a float x
        numeric = len(args) == 1 and isinstance(args[0], SInt | SBool | SIntB)
        if name == "float" and numeric:
            return SFloat(self.to_float(args[0], state))
        if name == "int" and len(args) == 1 and isinstance(args[0], SInt | SBool | SIntB):
            return SInt(self._as_int(args[0], state))
        if name == "isinstance":
            raise Unsupported("isinstance", line)
        if name == "print":
            raise Unsupported("print (output is not compared)", line)
        raise Unsupported(f"{name}() with these arguments", line)

    def reduce(self, name: str, v: V, state: State) -> V:
        """``sum``/``min``/``max``/``any``/``all`` over one iterable."""
        if isinstance(v, STuple):
            v = self._as_seq(v)
        if isinstance(v, SRange):
            raise Unsupported(f"{name}() of a range", self.line)
        if not isinstance(v, SSeq):
            raise Unsupported(f"{name}() of a {type(v).__name__}", self.line)
        elem_sort = sort_of(v.elem)
        acc_i = z3.Int(self.fresh.name("acc"))
        x = z3.Const(self.fresh.name("x"), elem_sort)
        n = z3.Length(v.e)
        if v.elem == INT_OR_BOOL:
            return self._reduce_codes(name, v, state)
        if name == "sum":
            if isinstance(v.elem, IntT):
                f = z3.Lambda([acc_i, x], acc_i + x)
                return SInt(z3.SeqFoldLeft(f, z3.IntVal(0), v.e))
            if isinstance(v.elem, BoolT):
                f = z3.Lambda([acc_i, x], acc_i + z3.If(x, 1, 0))
                return SInt(z3.SeqFoldLeft(f, z3.IntVal(0), v.e))
            if isinstance(v.elem, FloatT):
                acc_f = z3.FP(self.fresh.name("acc"), FLOAT)
                f = z3.Lambda([acc_f, x], z3.fpAdd(RM, acc_f, x))
                total = z3.SeqFoldLeft(f, z3.FPVal(0.0, FLOAT), v.e)
                return merge(n == 0, SInt(z3.IntVal(0)), SFloat(total))
            raise Unsupported(f"sum() of {v.elem.text()} items", self.line)
        if name in ("any", "all"):
            if isinstance(v.elem, IntT):
                truth: z3.BoolRef = x != 0
            elif isinstance(v.elem, BoolT):
                truth = x
            else:
                raise Unsupported(f"{name}() of {v.elem.text()} items", self.line)
            acc_b = z3.Bool(self.fresh.name("acc"))
            if name == "any":
                f = z3.Lambda([acc_b, x], z3.Or(acc_b, truth))
                return SBool(z3.SeqFoldLeft(f, FALSE, v.e))
            f = z3.Lambda([acc_b, x], z3.And(acc_b, truth))
            return SBool(z3.SeqFoldLeft(f, TRUE, v.e))
        # min / max
        self.raise_if(n == 0, "ValueError", state)
        if isinstance(v.elem, IntT):
            first = v.e[0]
            if name == "min":
                f = z3.Lambda([acc_i, x], z3.If(x < acc_i, x, acc_i))
            else:
                f = z3.Lambda([acc_i, x], z3.If(x > acc_i, x, acc_i))
            rest = z3.SubSeq(v.e, 1, n - 1)
            return SInt(z3.SeqFoldLeft(f, first, rest))
        raise Unsupported(f"{name}() of {v.elem.text()} items", self.line)

    def _reduce_codes(self, name: str, v: SSeq, state: State) -> V:
        """``sum``/``min``/``max``/``any``/``all`` over ``int | bool`` items (see SIntB)."""
        acc = z3.Int(self.fresh.name("acc"))
        x = z3.Int(self.fresh.name("x"))
        n = z3.Length(v.e)
        num = number_of_code(x)
        if name == "sum":
            f = z3.Lambda([acc, x], acc + num)
            return SInt(z3.SeqFoldLeft(f, z3.IntVal(0), v.e))
        if name in ("any", "all"):
            flag = z3.Bool(self.fresh.name("acc"))
            if name == "any":
                g = z3.Lambda([flag, x], z3.Or(flag, num != 0))
                return SBool(z3.SeqFoldLeft(g, FALSE, v.e))
            g = z3.Lambda([flag, x], z3.And(flag, num != 0))
            return SBool(z3.SeqFoldLeft(g, TRUE, v.e))
        # min / max keep the first of equal items: the code says which one (True or 1).
        self.raise_if(n == 0, "ValueError", state)
        better = num < number_of_code(acc) if name == "min" else num > number_of_code(acc)
        f = z3.Lambda([acc, x], z3.If(better, x, acc))
        return SIntB(z3.SeqFoldLeft(f, v.e[0], z3.SubSeq(v.e, 1, n - 1)))

    def method_call(self, node: ast.Call, func: ast.Attribute, state: State) -> V:
        if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            raise Unsupported(f"keyword or * arguments to .{func.attr}()", node.lineno)
        obj = self.ev(func.value, state)
        method = func.attr
        if isinstance(obj, SUnion) and not method.startswith("__") and any(
                isinstance(alt, SNone) for _, alt in obj.alts):
            # `None` has no method but the special ones: the lookup raises before any
            # argument is evaluated; past it, the receiver is one of the other alternatives.
            self.raise_if(z3.Or([g for g, alt in obj.alts if isinstance(alt, SNone)]),
                          "AttributeError", state)
            rest = tuple((g, alt) for g, alt in obj.alts if not isinstance(alt, SNone))
            obj = rest[0][1] if len(rest) == 1 else SUnion(rest)
        args = self.ev_all(node.args, state, obj)
        if isinstance(obj, SSeq) and obj.kind == "list" and method in MUTATING_METHODS:
            if not isinstance(func.value, ast.Name):
                raise Unsupported(f".{method}() on an expression", node.lineno)
            return self.list_mutation(func.value.id, obj, method, args, state)
        numeric = isinstance(obj, SSeq) and obj.elem in (IntT(), INT_OR_BOOL) and len(args) == 1
        if numeric and isinstance(args[0], SInt | SBool | SIntB) and method in ("index", "count"):
            assert isinstance(obj, SSeq)
            x = self._as_int(args[0], state)
            if method == "index":
                pos = first_number(obj, x)
                self.raise_if(pos < 0, "ValueError", state)
                return SInt(pos)
            acc = z3.Int(self.fresh.name("acc"))
            y = z3.Int(self.fresh.name("x"))
            y_num = number_of_code(y) if obj.elem == INT_OR_BOOL else y
            f = z3.Lambda([acc, y], acc + z3.If(y_num == x, 1, 0))
            return SInt(z3.SeqFoldLeft(f, z3.IntVal(0), obj.e))
        if isinstance(obj, SSeq) and method == "index" and len(args) == 1:
            item = args[0]
            wanted = search_term(item, obj.elem)
            if wanted is None:
                raise Unsupported(f".index() of a {item.ty.text()}", node.lineno)
            pos = z3.IndexOf(obj.e, z3.Unit(wanted), 0)
            self.raise_if(pos < 0, "ValueError", state)
            return SInt(pos)
        if isinstance(obj, SSeq) and method == "count" and len(args) == 1:
            item = args[0]
            wanted = search_term(item, obj.elem)
            if wanted is None:
                raise Unsupported(f".count() of a {item.ty.text()}", node.lineno)
            acc = z3.Int(self.fresh.name("acc"))
            x = z3.Const(self.fresh.name("x"), sort_of(obj.elem))
            f = z3.Lambda([acc, x], acc + z3.If(x == wanted, 1, 0))
            return SInt(z3.SeqFoldLeft(f, z3.IntVal(0), obj.e))
        raise Unsupported(f"the method .{method}() on a {type(obj).__name__}", node.lineno)

    def list_mutation(self, name: str, seq: SSeq, method: str, args: list[V], state: State) -> V:
        if method == "append" and len(args) == 1:
            seq = self._adopt(seq, args[0])
            item = self._coerce_elem(args[0], seq.elem)
            self._escape(item)
            self._mutate(name, seq, z3.Concat(seq.e, z3.Unit(term(item))), state)
            return SNone()
        if method == "extend" and len(args) == 1:
            self._extend(name, seq, args[0], state)
            return SNone()
        if method == "pop" and len(args) <= 1:
            n = z3.Length(seq.e)
            if args:
                i = self._index_sized(args[0], state)
                idx = z3.If(i < 0, i + n, i)
            else:
                idx = n - 1
            self.raise_if(z3.Or(idx < 0, idx >= n), "IndexError", state)
            item = wrap(seq.elem, seq.e[idx])
            rest = z3.Concat(z3.SubSeq(seq.e, 0, idx), z3.SubSeq(seq.e, idx + 1, n - idx - 1))
            self._mutate(name, seq, rest, state)
            return item
        if method == "clear" and not args:
            self._mutate(name, seq, z3.Empty(seq.e.sort()), state)
            return SNone()
        if method == "insert" and len(args) == 2:
            n = z3.Length(seq.e)
            i = self._index_sized(args[0], state)
            idx = z3.If(i < 0, i + n, i)
            idx = z3.If(idx < 0, 0, z3.If(idx > n, n, idx))
            seq = self._adopt(seq, args[1])
            item = self._coerce_elem(args[1], seq.elem)
            new = z3.Concat(
                z3.SubSeq(seq.e, 0, idx), z3.Unit(term(item)), z3.SubSeq(seq.e, idx, n - idx)
            )
            self._mutate(name, seq, new, state)
            return SNone()
        if method == "remove" and len(args) == 1 and seq.elem in (IntT(), INT_OR_BOOL) and (
            isinstance(args[0], SInt | SBool | SIntB)
        ):
            n = z3.Length(seq.e)
            pos = first_number(seq, self._as_int(args[0], state))
            self.raise_if(pos < 0, "ValueError", state)
            rest = z3.Concat(z3.SubSeq(seq.e, 0, pos), z3.SubSeq(seq.e, pos + 1, n - pos - 1))
            self._mutate(name, seq, rest, state)
            return SNone()
        if method == "remove" and len(args) == 1:
            item = args[0]
            wanted = search_term(item, seq.elem)
            if wanted is None:
                raise Unsupported(f".remove() of a {item.ty.text()}", self.line)
            n = z3.Length(seq.e)
            pos = z3.IndexOf(seq.e, z3.Unit(wanted), 0)
            self.raise_if(pos < 0, "ValueError", state)
            rest = z3.Concat(z3.SubSeq(seq.e, 0, pos), z3.SubSeq(seq.e, pos + 1, n - pos - 1))
            self._mutate(name, seq, rest, state)
            return SNone()
        raise Unsupported(f"the list method .{method}()", self.line)

    def _index_sized(self, v: V, state: State) -> z3.ArithRef:
        """An argument CPython converts to a C ``ssize_t`` (``pop``, ``insert``)."""
        i = self._as_int(v, state)
        self.raise_if(z3.Or(i > MAXSIZE, i < -MAXSIZE - 1), "OverflowError", state)
        return i

    def _extend(self, name: str, seq: SSeq, other: V, state: State) -> None:
        """``seq.extend(other)`` and ``seq += other``: any iterable, a ``str`` by characters."""
        if isinstance(other, STuple):
            other = self._as_seq(other)
        if isinstance(other, SStr):
            if is_empty_literal(other.e):
                return
            if not isinstance(seq.elem, StrT):
                if not is_empty_literal(seq.e):
                    raise Unsupported("extending a list with items of another type", self.line)
                seq = SSeq(seq.kind, StrT(), z3.Empty(z3.SeqSort(z3.StringSort())), seq.origin)
            self._mutate(name, seq, z3.Concat(seq.e, characters(other.e)), state)
            return
        if isinstance(other, SSeq):
            seq, other = promote(seq, other)
            if other.elem != seq.elem:
                if is_empty_literal(other.e):
                    return
                if is_empty_literal(seq.e):
                    seq = SSeq(seq.kind, other.elem, z3.Empty(other.e.sort()), seq.origin)
                else:
                    raise Unsupported("extending a list with items of another type", self.line)
            self._mutate(name, seq, z3.Concat(seq.e, other.e), state)
            return
        not_iterable = SInt | SBool | SFloat | SNone
        if not all(isinstance(alt, not_iterable) for _, alt in alternatives(other)):
            raise Unsupported(f"extending a list with a {type(other).__name__}", self.line)
        self.raise_if(TRUE, "TypeError", state)  # not iterable
