from agent.strategies.first_look import BUDGET, files_to_show


def test_a_small_project_is_shown_whole_and_lock_files_are_not(tmp_path):
    (tmp_path / "app.py").write_text("print('hi')\n")
    (tmp_path / "Cargo.lock").write_text("# lock\n")
    assert files_to_show(tmp_path, ["app.py", "Cargo.lock"], "fix it") == {"app.py": "print('hi')\n"}


def test_in_a_larger_project_only_the_files_the_task_names_are_shown_within_the_budget(tmp_path):
    names = [f"m{i}.py" for i in range(30)]
    for name in names:
        (tmp_path / name).write_text(f"# {name}\n" + "x = 1\n" * 200)
    shown = files_to_show(tmp_path, names, "Fix the bug in m7.py; m12.py calls it")
    assert list(shown) == ["m7.py", "m12.py"]
    big = "line\n" * 5000
    (tmp_path / "big.py").write_text(big)
    shown = files_to_show(tmp_path, [*names, "big.py"], "refactor big.py")
    assert len(shown["big.py"]) <= BUDGET + 100 and "more lines: read_file shows them" in shown["big.py"]


def test_binary_and_linked_files_are_not_shown(tmp_path):
    (tmp_path / "data.bin").write_bytes(b"\xff\xfe\x00")
    (tmp_path / "link.py").symlink_to("/etc/passwd")
    assert files_to_show(tmp_path, ["data.bin", "link.py"], "look at data.bin and link.py") == {}


def test_files_in_dot_folders_are_not_shown(tmp_path):
    (tmp_path / ".agent" / "skills" / "deploy").mkdir(parents=True)
    (tmp_path / ".agent" / "skills" / "deploy" / "SKILL.md").write_text("secret steps\n")
    (tmp_path / "app.py").write_text("x = 1\n")
    assert files_to_show(tmp_path, [".agent/skills/deploy/SKILL.md", "app.py"], "deploy the app") == {
        "app.py": "x = 1\n"
    }


def test_dotfiles_are_not_shown_and_secret_values_are_redacted(tmp_path, monkeypatch):
    monkeypatch.setenv("SERVICE_API_KEY", "sk-live-0123456789")
    (tmp_path / ".env").write_text("SERVICE_API_KEY=sk-live-0123456789\n")
    (tmp_path / ".mcp.json").write_text("{}\n")
    (tmp_path / "client.py").write_text("KEY = 'sk-live-0123456789'\n")
    shown = files_to_show(tmp_path, [".env", ".mcp.json", "client.py"], "fix client.py, see .env")
    assert shown == {"client.py": "KEY = '[redacted: value of $SERVICE_API_KEY]'\n"}
