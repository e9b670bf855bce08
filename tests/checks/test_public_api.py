"""The engine's public names do not drift without this test changing too."""

import veribot.checks


def test_public_names() -> None:
    assert sorted(veribot.checks.__all__) == [
        "Behaviour",
        "BehaviourKind",
        "Budget",
        "Counterexample",
        "Reason",
        "Result",
        "Verdict",
        "check_pair",
    ]
    for name in veribot.checks.__all__:
        assert getattr(veribot.checks, name) is not None


def test_a_pair_decides_through_the_public_api() -> None:
    before = "def f(x: int) -> int:\n    return x + x\n"
    after = "def f(x: int) -> int:\n    return 2 * x\n"
    result = veribot.checks.check_pair(before, after, "f")
    assert result.verdict is veribot.checks.Verdict.VERIFIED
    assert result.reason == veribot.checks.Reason.PROOF
