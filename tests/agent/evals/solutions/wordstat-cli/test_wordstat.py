from wordstat import main


def test_counts(tmp_path, capsys):
    path = tmp_path / "a.txt"
    path.write_text("a b\nc\n")
    assert main([str(path)]) == 0
    assert capsys.readouterr().out.strip() == "lines=2 words=3 chars=6"
