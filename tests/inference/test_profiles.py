"""Profiles render the guide's commands exactly, follow each engine's speculative dialect, and refuse
what an engine lacks."""

from __future__ import annotations

from pathlib import Path

import pytest

from inference.engines.engine import Capabilities, parse_help
from inference.profiles import BUILTIN_PROFILES, ProfileError, load_profiles
from inference.render import render

GUIDE_BASELINE = (
    "-m gemma-4-31B-it-Q4_K_S.gguf --host 0.0.0.0 --port 8910 -np 1 -ngl all -b 2048 -ub 512 --ctx-size 32768 "
    "--cache-type-k q5_0 --cache-type-v q4_1 --flash-attn on --jinja --metrics --log-timestamps --log-prefix "
    "--reasoning off --temp 0.7 --top-k 64 --top-p 0.95 --min-p 0.0"
)
GUIDE_DFLASH = (
    "-m gemma-4-31B-it-Q4_K_S.gguf --spec-draft-model gemma4-31b-it-dflash-Q5_K_M.gguf --spec-type dflash "
    "--spec-dflash-cross-ctx 1024 --host 0.0.0.0 --port 8910 -np 1 --kv-unified -ngl all --spec-draft-ngl all "
    "-b 2048 -ub 512 --ctx-size 32768 --flash-attn on --cache-ram 0 --jinja --no-mmap --mlock --no-host --metrics "
    "--log-timestamps --log-prefix --reasoning off --temp 0.7 --top-k 64 --top-p 0.95 --min-p 0.0"
)
PATHS = {
    "gemma4-31b": Path("gemma-4-31B-it-Q4_K_S.gguf"),
    "gemma4-31b-dflash": Path("gemma4-31b-it-dflash-Q5_K_M.gguf"),
    "qwen2.5-coder-1.5b": Path("/m/q15.gguf"),
    "qwen2.5-coder-0.5b": Path("/m/q05.gguf"),
}


def beellama_caps() -> Capabilities:
    flags = {t for t in (GUIDE_BASELINE + " " + GUIDE_DFLASH).split() if t.startswith("-")}
    return Capabilities(
        flags=sorted(flags), spec_types=["none", "ngram-mod", "dflash"], cache_types=["f16", "q8_0", "q5_0", "q4_1"]
    )


def test_gemma_profiles_render_exactly_the_guide_commands():
    caps = beellama_caps()
    assert render(BUILTIN_PROFILES["gemma4-31b"], caps, PATHS, "0.0.0.0", 8910) == GUIDE_BASELINE.split()
    assert render(BUILTIN_PROFILES["gemma4-31b-dflash"], caps, PATHS, "0.0.0.0", 8910) == GUIDE_DFLASH.split()


def with_checkpoints(command: str, after: str, flag: str = "--ctx-checkpoints") -> list[str]:
    """The guide's command with the profiles' host-RAM limit on checkpoints, where the renderer puts it."""
    return command.replace(after, f"{after} {flag} 8").split()


@pytest.mark.parametrize("engine_name", ["beellama-v0.2", "beellama-v0.4", "upstream"])
def test_every_dialect_gets_the_checkpoint_limit(engine_name):
    """Each engine's real flag table has `--ctx-checkpoints`; the guide's commands gain `--ctx-checkpoints 8`."""
    from inference.engines.capabilities import known_engine

    caps = known_engine(engine_name).capabilities()
    paths = PATHS | {"gemma4-31b-dflash-upstream": Path("d.gguf"), "gemma4-31b-mtp": Path("m.gguf")}
    written_for = [p for p in BUILTIN_PROFILES.values() if engine_name in p.engines]
    assert len(written_for) >= 3
    for profile in written_for:
        args = render(profile, caps, paths, "127.0.0.1", 1)
        assert args[args.index("--ctx-checkpoints") + 1] == "8", profile.name
    if engine_name == "beellama-v0.2":
        dflash = render(BUILTIN_PROFILES["gemma4-31b-dflash"], caps, PATHS, "0.0.0.0", 8910)
        assert dflash == with_checkpoints(GUIDE_DFLASH, "--cache-ram 0")
    baseline = render(BUILTIN_PROFILES["gemma4-31b"], caps, PATHS, "0.0.0.0", 8910)
    assert baseline == with_checkpoints(GUIDE_BASELINE, "--flash-attn on")


def test_the_checkpoint_flag_follows_the_engine():
    """An engine with only the flag's first name gets that one; one with neither keeps no checkpoints to limit."""
    older = beellama_caps().model_copy(update={"flags": [*beellama_caps().flags, "--swa-checkpoints"]})
    args = render(BUILTIN_PROFILES["gemma4-31b"], older, PATHS, "0.0.0.0", 8910)
    assert args == with_checkpoints(GUIDE_BASELINE, "--flash-attn on", "--swa-checkpoints")
    assert "--ctx-checkpoints" not in render(BUILTIN_PROFILES["gemma4-31b"], beellama_caps(), PATHS, "0.0.0.0", 1)
    unset = BUILTIN_PROFILES["qwen-cpu"]  # the CPU profiles keep the engine's default
    assert unset.ctx_checkpoints is None and "--ctx-checkpoints" not in render(unset, older, PATHS, "127.0.0.1", 1)


def test_dflash_follows_the_upstream_dialect(engine):
    args = render(BUILTIN_PROFILES["gemma4-31b-dflash"], engine.capabilities, PATHS, "127.0.0.1", 8910)
    assert args[args.index("--spec-type") + 1] == "draft-dflash"
    assert "--spec-dflash-cross-ctx" not in args
    # upstream replaced `--no-mmap --mlock` with `--load-mode mlock`
    assert args[args.index("--load-mode") + 1] == "mlock" and "--mlock" not in args


def test_refuses_flags_the_engine_lacks():
    caps = beellama_caps()
    caps.flags.remove("--kv-unified")
    with pytest.raises(ProfileError, match=r"needs --kv-unified.*agent engine build"):
        render(BUILTIN_PROFILES["gemma4-31b-dflash"], caps, PATHS, "127.0.0.1", 1)
    with pytest.raises(ProfileError, match="cache type turbo3"):
        render(
            BUILTIN_PROFILES["gemma4-31b"].model_copy(update={"cache_type_k": "turbo3"}),
            beellama_caps(),
            PATHS,
            "127.0.0.1",
            1,
        )


def test_classic_draft_is_refused_on_beellama_and_dflash_on_plain_engines(engine):
    with pytest.raises(ProfileError, match="draft-simple"):
        render(BUILTIN_PROFILES["qwen-cpu-draft"], beellama_caps(), PATHS, "127.0.0.1", 1)
    plain = parse_help("--spec-type none,ngram-mod\n-m FNAME\n")
    with pytest.raises(ProfileError, match="does not speak"):
        render(BUILTIN_PROFILES["gemma4-31b-dflash"], plain, PATHS, "127.0.0.1", 1)


def test_cpu_profiles_render_on_the_built_engine(engine):
    for name in ("qwen-cpu", "qwen-cpu-draft", "qwen-cpu-ngram"):
        args = render(BUILTIN_PROFILES[name], engine.capabilities, PATHS, "127.0.0.1", 9000)
        assert args[:2] == ["-m", "/m/q15.gguf"] and "--host" in args and "127.0.0.1" in args
    ngram = render(BUILTIN_PROFILES["qwen-cpu-ngram"], engine.capabilities, PATHS, "127.0.0.1", 9000)
    assert " ".join(ngram[2:10]) == (
        "--spec-type ngram-simple --spec-ngram-simple-size-n 16 "
        "--spec-ngram-simple-size-m 48 --spec-ngram-simple-adapt-min 8"
    )
    draft = render(BUILTIN_PROFILES["qwen-cpu-draft"], engine.capabilities, PATHS, "127.0.0.1", 9000)
    assert draft[2:6] == ["--spec-draft-model", "/m/q05.gguf", "--spec-type", "draft-simple"]


def test_adaptive_ngram_needs_our_engine_patch():
    upstream = parse_help(
        "--spec-type none,ngram-simple\n-m FNAME\n--spec-ngram-simple-size-n N\n"
        "--spec-ngram-simple-size-m N\n--host\n--port\n-np\n-b\n-ub\n--ctx-size\n--jinja\n"
        "--metrics\n--log-timestamps\n--log-prefix\n"
    )
    with pytest.raises(ProfileError, match="--spec-ngram-simple-adapt-min"):
        render(BUILTIN_PROFILES["qwen-cpu-ngram"], upstream, PATHS, "127.0.0.1", 1)


def test_user_profiles_extend_builtins(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text('model = "x"\n[profiles.my-qwen]\nextends = "qwen-cpu"\nctx_size = 4096\nthreads = 2\n')
    profiles = load_profiles(config)
    mine = profiles["my-qwen"]
    assert (mine.name, mine.target, mine.ctx_size, mine.threads) == ("my-qwen", "qwen2.5-coder-1.5b", 4096, 2)
    config.write_text('[profiles.bad]\nspeculative = "telepathy"\ntarget = "x"\n')
    with pytest.raises(ProfileError, match="profile 'bad'"):
        load_profiles(config)


@pytest.mark.parametrize(
    "body, field",
    [
        ('extends = "gemma4-31b"\nctx_sise = 4096\n', "ctx_sise"),  # a misspelt key is not silently ignored
        ('extends = "qwen-cpu"\nctx_size = "lots"\n', "ctx_size"),
        ('device = "tpu"\ntarget = "qwen2.5-coder-1.5b"\n', "device"),
        ("ctx_size = 4096\n", "target"),  # no target and nothing to extend
    ],
)
def test_a_malformed_user_profile_is_one_line_naming_profile_and_field(tmp_path, body, field):
    config = tmp_path / "config.toml"
    config.write_text(f"[profiles.mine]\n{body}")
    with pytest.raises(ProfileError) as error:
        load_profiles(config)
    message = str(error.value)
    assert "\n" not in message and "profile 'mine'" in message and f"field {field!r}" in message


def test_a_profile_that_is_not_a_table_or_extends_nothing_known_is_named(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text("[profiles]\nmine = 3\n")
    with pytest.raises(ProfileError, match=r"profile 'mine' .* must be a table"):
        load_profiles(config)
    config.write_text('[profiles.mine]\nextends = "gemma5"\n')
    with pytest.raises(ProfileError, match=r"profile 'mine' .* extends unknown profile 'gemma5'"):
        load_profiles(config)
    config.write_text("[profiles.mine\n")
    with pytest.raises(ProfileError, match="not valid TOML"):
        load_profiles(config)


def test_the_dflash_profiles_render_for_beellama_v04():
    """v0.4.x (facts file): `--spec-type draft-dflash`, no cross-ctx, the profit controller turned off by
    `--spec-dm-controller off`, `--no-mmap`/`--mlock` still there (v0.4.2 adds `--load-mode` beside them)."""
    v04 = parse_help(
        "--spec-type [none|ngram-mod|draft-simple|draft-mtp|draft-dflash]\n"
        "--spec-dm-controller [profit|off]\n--load-mode MODE\n"
        + " ".join(
            t
            for t in GUIDE_DFLASH.split() + ["-cd", "--spec-draft-n-max"]
            if t.startswith("-") and t != "--spec-dflash-cross-ctx"
        )
    )
    assert v04.dflash_dialect == "upstream"
    args = render(BUILTIN_PROFILES["gemma4-31b-dflash-safe"], v04, PATHS, "127.0.0.1", 1)
    assert args[4:6] == ["--spec-type", "draft-dflash"] and "--spec-dflash-cross-ctx" not in args
    assert args[-2:] == ["--spec-dm-controller", "off"] and "--no-mmap" in args and "--mlock" in args
