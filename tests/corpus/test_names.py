"""Names that look alike (core/corpus/names.py): NFC and NFD spellings are one name, invisible characters,
odd spaces and C1 controls are refused with the line, the column and the character as U+XXXX, and names
that differ only by a Cyrillic or full-width letter are read as one, with both spellings shown, unless the merge
rule is turned off."""

from __future__ import annotations

import pytest

from ddr_explorer.core.corpus.issues import CorpusError
from ddr_explorer.core.corpus.readers import read_canonical

HEADER = "benchmark,task,model,scaffold,trial,result\n"


def _file(tmp_path, models: list[str], ext="csv"):
    rows = [f"b,t{t},{m},s,r{i},{(t + i) % 2}" for i, m in enumerate(models) for t in range(3)]
    p = tmp_path / f"c.{ext}"
    p.write_text(HEADER + "\n".join(rows) + "\n", encoding="utf-8")
    return p


def test_composed_and_decomposed_accents_are_one_model(tmp_path):
    nfc, nfd = "mod\u00e8le", "mode\u0300le"
    corpus = read_canonical(_file(tmp_path, [nfc, nfd]))
    assert list(corpus.table["model"].cat.categories) == [nfc]  # one model with two trials of each task
    assert corpus.n_records == 6 and corpus.table["model"].nunique() == 1
    (w,) = [w for w in corpus.warnings if w.code == "names-merged-nfc"]
    assert "U+00E8" in w.message and "U+0065 U+0300" in w.message and w.column == "model"


@pytest.mark.parametrize("name, char", [("gpt\u200b4", "U+200B ZERO WIDTH SPACE"),
                                        ("gpt\u00a04", "U+00A0 NO-BREAK SPACE"),
                                        ("gpt\u009b4", "U+009B control character"),
                                        ("gpt\u202e4", "U+202E RIGHT-TO-LEFT OVERRIDE")])
def test_invisible_characters_are_refused_with_line_column_and_code_point(tmp_path, name, char):
    with pytest.raises(CorpusError) as info:
        read_canonical(_file(tmp_path, ["gpt4", name]))
    (issue,) = info.value.issues
    assert issue.row == 5 and issue.column == "model"  # the first row of the second model
    assert f"the model name {name!r} holds {char}" in issue.message


def test_a_cyrillic_o_among_latin_letters_is_merged_with_both_spellings_shown(tmp_path):
    latin, mixed = "claude-opus", "claude-\u043epus"
    corpus = read_canonical(_file(tmp_path, [latin, mixed, latin]))
    # read as one model, the spelling used most (the model-key merges' rule), with a warning showing both
    assert list(corpus.table["model"].unique()) == [latin] and corpus.n_records == 9
    (w,) = [w for w in corpus.warnings if w.code == "look-alike-names-merged"]
    assert w.message.startswith(f"the model names {latin!r} and {mixed!r} print alike but differ ('o' U+006F "
                                "LATIN SMALL LETTER O against 'о' U+043E CYRILLIC SMALL LETTER O); they are read as "
                                f"one model, {latin!r}")
    assert "--keep-lookalike-names" in w.fix


def test_the_merge_rule_can_be_turned_off(tmp_path):
    from ddr_explorer.core.corpus.io import load_corpus
    from ddr_explorer.core.cli import main

    latin, mixed = "claude-opus", "claude-\u043epus"
    path = _file(tmp_path, [latin, mixed])
    kept = load_corpus(path, keep_lookalike_names=True)
    assert kept.table["model"].nunique() == 2  # they may be two models: the user said so
    (w,) = [w for w in kept.warnings if w.code == "look-alike-names"]
    assert "kept as 2 models" in w.message
    assert kept.provenance["load_options"].get("keep_lookalike_names") is True  # a session reopens it alike
    assert load_corpus(path).table["model"].nunique() == 1  # the rule is back for the next import
    assert main(["inspect", str(path), "--keep-lookalike-names", "--json"]) == 0


def test_full_width_letters_are_look_alikes_too(tmp_path):
    corpus = read_canonical(_file(tmp_path, ["GPT-5", "\uff27\uff30\uff34-5"]))
    assert [w.code for w in corpus.warnings if w.code.startswith("look-alike")] == ["look-alike-names-merged"]
    assert corpus.table["model"].nunique() == 1


def test_plain_names_pass_without_a_word(tmp_path):
    corpus = read_canonical(_file(tmp_path, ["gpt 4", "claude", "Qwen/Qwen3-8B", "modèle"]))
    assert not [w for w in corpus.warnings if w.code in ("look-alike-names", "look-alike-names-merged",
                                                        "names-merged-nfc")]


def test_a_200_kb_name_is_shortened_in_the_message(tmp_path):
    """An error message printed a 200 KB id whole (issues.shortened cuts every long run in every issue)."""
    long = "m" * 200_000
    with pytest.raises(CorpusError) as info:
        read_canonical(_file(tmp_path, ["gpt4", long + "\u00a0x"]))
    text = str(info.value)
    assert len(text) < 600 and "...(200,007 characters)" in text and "U+00A0 NO-BREAK SPACE" in text


def test_names_with_the_same_words_in_another_order_are_kept_apart_with_the_alias_line(tmp_path):
    # the Terminal-Bench 2.0 leaderboard's MAYA entry spells Claude Sonnet 4.5 "Claude 4.5 Sonnet"
    corpus = read_canonical(_file(tmp_path, ["Claude Sonnet 4.5", "Claude Sonnet 4.5", "Claude 4.5 Sonnet",
                                             "GPT-4.5", "GPT-5.4"]))
    assert corpus.table["model"].nunique() == 4  # kept apart: a merge needs the user's word
    (w,) = [w for w in corpus.warnings if w.code == "same-words-names"]
    assert w.message == ("the model names 'Claude Sonnet 4.5' and 'Claude 4.5 Sonnet' hold the same words in another "
                         "order or spelling; they are kept as 2 models.")
    assert '[models] "Claude 4.5 Sonnet" = "Claude Sonnet 4.5"' in w.fix  # the more used spelling is the target
    assert w.row == 2 and w.column == "model"  # GPT-4.5 and GPT-5.4 are not the same words: versions keep dots


def test_an_alias_file_renames_models_of_a_canonical_file_and_says_what_it_did(tmp_path):
    from ddr_explorer.core.corpus.io import load_corpus

    aliases = tmp_path / "a.toml"
    aliases.write_text('[models]\n"Claude 4.5 Sonnet" = "Claude Sonnet 4.5"\n"Cluade" = "Claude"\n')
    path = _file(tmp_path, ["Claude Sonnet 4.5", "Claude 4.5 Sonnet"])
    assert load_corpus(path).table["model"].nunique() == 2
    corpus = load_corpus(path, aliases=str(aliases))  # was dropped without a word for canonical files
    assert list(corpus.table["model"].unique()) == ["Claude Sonnet 4.5"] and corpus.n_records == 6
    codes = {w.code: w for w in corpus.warnings}
    assert "same-words-names" not in codes
    assert codes["names-renamed"].message == ("the alias file a.toml renamed 1 model name(s) on 3 rows: "
                                              "'Claude 4.5 Sonnet' -> 'Claude Sonnet 4.5'.")
    assert "'Cluade'" in codes["alias-unused"].message
    assert corpus.provenance["renames"]["model"] == {"Claude 4.5 Sonnet": "Claude Sonnet 4.5"}
    assert corpus.content_hash != load_corpus(path).content_hash  # another corpus for the fit cache


def test_a_rename_that_makes_two_rows_one_cell_is_refused_as_a_duplicate(tmp_path):
    from ddr_explorer.core.corpus.io import load_corpus

    aliases = tmp_path / "a.toml"
    aliases.write_text('[models]\n"b" = "a"\n')
    path = tmp_path / "c.csv"
    path.write_text(HEADER + "b0,t0,a,s,r1,1\nb0,t0,b,s,r1,0\n")
    with pytest.raises(CorpusError) as info:
        load_corpus(path, aliases=str(aliases))
    assert any("duplicate" in i.code for i in info.value.issues)
