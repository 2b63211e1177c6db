"""``ddr fit`` says before it samples a fit that is not cached how large it is (the estimate before long
work the guide promises; a 600,000-record corpus started its fit without a word), and is silent on a hit."""

from __future__ import annotations

from ddr_explorer.core.cli import main as ddr


def test_ddr_fit_announces_an_uncached_fit_only(tmp_path, capsys, fake_sampler):
    corpus = tmp_path / "c.csv"
    corpus.write_text("benchmark,task,model,scaffold,result\n" + "".join(
        f"b,t{t},m{m},s,{(t * m + t) % 2}\n" for t in range(6) for m in range(3)))
    argv = ["fit", str(corpus), "--cache", str(tmp_path / "cache"), "--draws", "20", "--warmup", "10", "--chains", "2",
            "--formula", "y ~ (1|task) + (1|model)", "--json"]
    assert ddr(argv) in (0, 3)
    first = capsys.readouterr().err
    assert "ddr fit: no cached fit of y ~ (1|task) + (1|model) for c.csv with these sampler settings: sampling " \
           "it now (18 cells, 9 random effects)" in first
    assert "--preview" not in first
    assert ddr(argv) in (0, 3)
    assert "no cached fit" not in capsys.readouterr().err  # a cache hit: nothing to announce
