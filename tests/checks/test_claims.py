"""Agent claims checked against code facts: supported, contradicted with the line, unchecked."""

from __future__ import annotations

from veribot.checks.agent.claims import Claim, ClaimStatus, ProverAllowance, check_claims
from veribot.checks.agent.facts import Fact, FactSet
from veribot.checks.lang.pyfacts import code_facts

S, C, U = ClaimStatus.SUPPORTED, ClaimStatus.CONTRADICTED, ClaimStatus.UNCHECKED

HELPERS = """\
def is_empty(x: list[int]) -> bool:
    return len(x) == 0


def has_value(x: list[int]) -> bool:
    return not is_empty(x)
"""

# Seed 000 Fig. 19 in Python: the size is set before the early return in the new version.
BEFORE = HELPERS + """

def init(cache: list[int], size: int) -> int:
    cache.append(size)
    if size < 0:
        return 0
    cache.append(1 << size)
    return 1
"""
AFTER = HELPERS + """

def init(cache: list[int], size: int) -> int:
    cache.append(size)
    cache.append(1 << size)
    if size < 0:
        return 0
    return 1
"""
SOURCES = {"before": BEFORE, "after": AFTER}


def F(pred: str, *args: str | int) -> Fact:
    return Fact(pred, args)


def run(*facts: Fact, sources: dict[str, str] = SOURCES) -> list[Claim]:
    before = code_facts(BEFORE, "init", "before")
    after = code_facts(AFTER, "init", "after")
    return check_claims(FactSet(facts), before, after, sources)


def status(claims: list[Claim], fact: Fact) -> Claim:
    return next(c for c in claims if c.fact == fact)


def test_claims_in_or_derivable_from_the_code_are_supported() -> None:
    direct = F("def", "cache", "before", 13)
    member = F("def", "cache.items", "after", 11)  # a member: the object is defined there
    use = F("flow", "size", "before", 9, "size", "before", 13)
    text_cond = F("controldep", "cache", "before", 13, "size < 0", "false", "before", 11)
    claims = run(direct, member, use, text_cond)
    assert [c.status for c in claims] == [S, S, S, S], [c.why for c in claims]
    # A flow through a copy and the return is derivable from the code's flows.
    source = "def f(a: int) -> int:\n    y = a + 1\n    return y\n"
    facts = code_facts(source, "f", "before")
    chain = F("flow", "y", "before", 2, "$ret", "before", 3)
    (claim,) = check_claims(FactSet([chain]), facts, FactSet(), {"before": source})
    assert claim.status is S and "derivable" in claim.why


def test_a_claim_the_code_excludes_is_contradicted_with_its_line() -> None:
    # The agent says the new version, too, sets the second value only when size >= 0.
    wrong = F("controldep", "cache", "after", 11, "size < 0", "false", "after", 12)
    claims = run(wrong)
    (claim,) = claims
    assert claim.status is C
    assert claim.line == 11
    assert "line 11" in claim.why
    # A variable of the code at a line that does not define it.
    assert run(F("def", "size", "after", 12))[0].status is C


def test_temporaries_of_the_agent_are_matched_with_the_codes() -> None:
    """The formalizer is told to write ``t = a + b``: a name the code does not use names
    the code's temporary at that line (``$t4``, the condition ``size < 0``), consistently."""
    cond = [
        F("def", "t", "after", 12),
        F("binaryFunDef", "t", "<", "size", "0", "after", 12),
        F("controldep", "$ret", "after", 13, "t", "true", "after", 12),
    ]
    claims = run(*cond)
    assert [c.status for c in claims] == [S, S, S], [c.why for c in claims]
    assert all("t is the code's $t4" in c.why for c in claims)
    # One name, one temporary: the same ``t`` cannot also be the shift at line 11.
    reused = F("binaryFunDef", "t", "<<", "1", "size", "after", 11)
    shift = status(run(*cond, reused), reused)
    assert shift.status is C, shift.why
    # A temporary matching none of the code's, at a line computing nothing: unchecked.
    (stray,) = run(F("def", "ghost", "after", 14))
    assert stray.status is U and "matches none" in stray.why
    # ... but a claim no value could make true, at a line the code describes, is false.
    (impossible,) = run(F("binaryFunDef", "$ret", "+", "ghost", "1", "after", 14))
    assert impossible.status is C and "whatever ghost stand(s) for" in impossible.why


def test_literals_are_compared_by_value() -> None:
    source = "def g(x: int) -> str:\n    s = 'hi'\n    return s\n"
    facts = code_facts(source, "g", "before")
    spelled = [F("flow", '"hi"', "before", 0, '"hi"', "before", 2), F("isConstantValue", '"hi"')]
    claims = check_claims(FactSet(spelled), facts, FactSet(), {"before": source})
    assert [c.status for c in claims] == [S, S], [c.why for c in claims]
    other = check_claims(
        FactSet([F("use", "'ho'", "before", 2), F("use", "1", "before", 2)]),
        facts,
        FactSet(),
        {"before": source},
    )
    assert [c.status for c in other] == [C, C]


def test_prover_checks_are_capped() -> None:
    right = F("exprEquiv", "has_value(x)", "len(x) > 0", "x: list[int]")
    also = F("exprEquiv", "has_value(x)", "not is_empty(x)", "x: list[int]")
    before = code_facts(BEFORE, "init", "before")
    after = code_facts(AFTER, "init", "after")
    claims = check_claims(FactSet([right, also]), before, after, SOURCES, max_proofs=1)
    assert sorted(c.status.value for c in claims) == ["supported", "unchecked"]
    assert any("cap reached" in c.why for c in claims)
    # One unit's judgements share the cap, and a claim judged again is not proved again.
    allowance = ProverAllowance(1)
    (first,) = check_claims(FactSet([right]), before, after, SOURCES, max_proofs=allowance)
    (again,) = check_claims(FactSet([right]), before, after, SOURCES, max_proofs=allowance)
    (other,) = check_claims(FactSet([also]), before, after, SOURCES, max_proofs=allowance)
    assert (first.status, again.status, other.status) == (S, S, U)
    assert allowance.left == 0 and len(allowance.done) == 1


def test_a_helper_claim_is_discharged_by_the_prover() -> None:
    right = F("exprEquiv", "has_value(x)", "len(x) > 0", "x: list[int]")
    wrong = F("exprEquiv", "has_value(x)", "is_empty(x)", "x: list[int]")
    claims = run(right, wrong)
    assert status(claims, right).status is S, status(claims, right).why
    refuted = status(claims, wrong)
    assert refuted.status is C
    assert "fails on input" in refuted.why


def test_claims_beyond_the_sources_stay_unchecked() -> None:
    library = F("exprEquiv", "has_value(s)", "not IsEmpty(s)", "")
    method = F("exprEquiv", "s.has_value()", "not s.is_empty()", "")
    elsewhere = F("def", "x", "helpers.py", 3)
    nested = F("binaryFun", "<<", "1", "size + 0", "before", 13)
    claims = run(library, method, elsewhere, nested)
    assert [c.status for c in claims] == [U, U, U, U]
    assert "IsEmpty" in status(claims, library).why
    # Without the helper definitions in the sources, the true claim is an assumption too.
    alone = run(F("exprEquiv", "has_value(x)", "len(x) > 0", "x: list[int]"),
                sources={"after": "def f():\n    pass\n"})
    assert alone[0].status is U


def test_variable_mappings_are_checked_by_their_definitions() -> None:
    before = "def f(a: int) -> int:\n    y = a + 1\n    return y\n"
    same = "def f(a: int) -> int:\n    z = 1 + a\n    return z\n"
    other = "def f(a: int) -> int:\n    z = a - 1\n    return z\n"
    claim = F("varMap", "y", "before", 2, "z", "after", 2)
    fb = code_facts(before, "f", "before")
    for after, expected in ((same, S), (other, C)):
        fa = code_facts(after, "f", "after")
        (result,) = check_claims(FactSet([claim]), fb, fa, {"before": before, "after": after})
        assert result.status is expected, result.why
    misplaced = F("varMap", "y", "before", 3, "z", "after", 2)
    fa = code_facts(same, "f", "after")
    (result,) = check_claims(FactSet([misplaced]), fb, fa, {"before": before, "after": same})
    assert result.status is C


def test_a_claim_about_a_helper_the_versions_define_differently_stays_unchecked() -> None:
    """``is_empty`` changed: the claim does not say which version's it means, so it is
    neither proved with one version's definition nor refuted with a mixture."""
    changed = {"before": BEFORE,
               "after": AFTER.replace("return len(x) == 0", "return len(x) <= 1")}
    claim = F("exprEquiv", "has_value(x)", "not is_empty(x)", "x: list[int]")
    (checked,) = run(claim, sources=changed)
    assert checked.status is U, checked
    assert "is_empty differ(s) between the versions" in checked.why
    (same,) = run(claim)
    assert same.status is S, same
