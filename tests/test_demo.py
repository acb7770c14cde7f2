"""The README's demo runs the seed's stories end to end on every transport and generation."""

import pytest

from mcp_resolve import demo


def test_the_demo_tells_every_story_over_stdio_and_http_on_both_generations(
    capsys: pytest.CaptureFixture[str],
) -> None:
    demo.main([])
    out = capsys.readouterr().out
    for transport in ("stdio", "http"):
        for mode in ("legacy", "2026-07-28"):
            assert f"== {transport}, {mode} " in out
    assert out.count("? /tmp/project has 2 file(s). Delete anyway?") == 4
    assert out.count("= deleted /tmp/project") == 4
    assert out.count("? No tables for 2 on 2025-12-25. Would you like to try another date?") == 4
    assert out.count("= Booked a table for 2 on 2025-12-27.") == 4
    assert out.count("Open this link to continue: https://pay.example.com/deposit/b42") == 4
    assert out.count("= Complete the payment in your browser.") == 4
    assert out.count("is out of stock; delivery takes 3 weeks. Order anyway?") == 4
    assert "error" not in out
