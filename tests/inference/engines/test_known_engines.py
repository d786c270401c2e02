"""The engines whose flag tables ship in inference/dialects: each built-in profile renders for every engine it
names, and another engine refuses it with the flag or mode it lacks."""

from __future__ import annotations

from pathlib import Path

import pytest

from inference.engines.capabilities import KNOWN_ENGINES, known_engine
from inference.profiles import BUILTIN_PROFILES, ProfileError
from inference.render import render

LLAMA_PROFILES = [p for p in BUILTIN_PROFILES.values() if p.engine == "llama-server"]


def _render(profile, engine: str) -> list[str]:
    paths = {m: Path(f"/m/{m}.gguf") for m in profile.models()}
    return render(profile, known_engine(engine).capabilities(), paths, "127.0.0.1", 8080)


@pytest.mark.parametrize(
    "profile, engine", [(p, e) for p in LLAMA_PROFILES for e in p.engines], ids=lambda x: getattr(x, "name", x)
)
def test_each_profile_renders_for_each_engine_it_names(profile, engine):
    args = _render(profile, engine)
    assert args[:2] == ["-m", f"/m/{profile.target}.gguf"]


def test_every_gemma_profile_names_its_engines_and_they_are_known():
    for profile in LLAMA_PROFILES:
        if profile.target.startswith("gemma4"):
            assert profile.engines, profile.name
        assert set(profile.engines) <= set(KNOWN_ENGINES), profile.name


def test_the_shipped_tables_are_the_dialects_they_claim():
    v02, v04, upstream = (known_engine(n).capabilities() for n in ("beellama-v0.2", "beellama-v0.4", "upstream"))
    assert v02.dflash_dialect == "beellama" and "draft-mtp" not in v02.spec_types
    assert v04.dflash_dialect == "upstream" and "draft-mtp" in v04.spec_types
    assert upstream.dflash_dialect == "upstream" and "draft-mtp" in upstream.spec_types
    # BeeLlama v0.4 dropped the fork's cross-ctx and the drafter's own context (its drafter follows the target's)
    assert not v04.has("--spec-dflash-cross-ctx") and not v04.has("-cd") and v04.has("--spec-dm-controller")
    assert "kvarn4" in v04.cache_types and "turbo3" not in v04.cache_types and "turbo3" in v02.cache_types
    assert not upstream.has("--spec-dm-controller") and "q5_0" in upstream.cache_types


def test_mtp_renders_draft_mtp_and_is_refused_by_the_fork_dflash_engine():
    profile = BUILTIN_PROFILES["gemma4-31b-mtp"]
    args = _render(profile, "upstream")
    assert args[2:6] == ["--spec-draft-model", "/m/gemma4-31b-mtp.gguf", "--spec-type", "draft-mtp"]
    assert args[args.index("--spec-draft-n-max") + 1] == "4"
    with pytest.raises(ProfileError, match=r"draft-mtp.*agent engine build --source pypi-sdist"):
        _render(profile, "beellama-v0.2")


def test_a_flag_an_engine_dropped_is_named_in_the_refusal():
    with pytest.raises(ProfileError, match=r"needs -cd, which this engine does not offer"):
        _render(BUILTIN_PROFILES["gemma4-31b-dflash-safe"], "beellama-v0.4")


def test_the_h100_profile_holds_128k_context():
    args = _render(BUILTIN_PROFILES["gemma4-31b-h100"], "upstream")
    assert args[args.index("--ctx-size") + 1] == "131072"


ROOT = Path(__file__).resolve().parents[3]


def test_the_version_advice_links_each_issue_it_cites_and_sends_no_one_to_v03():
    versions = (ROOT / "docs" / "beellama-versions.md").read_text()
    readme = (ROOT / "README.md").read_text()
    import re

    cited = set(re.findall(r"(?<![\w/-])#(\d+)\b", versions))
    linked = set(re.findall(r"beellama\.cpp/issues/(\d+)", versions)) | set(
        re.findall(r"llama\.cpp/pull/(\d+)", versions)
    )
    assert cited <= linked, f"cited without a link: {sorted(cited - linked)}"
    for text in (versions, readme):
        assert "--ref v0.3" not in text and "v0.3.2, which has the fix" not in text
    assert "--ref v0.4.4" in readme and "gemma4-31b-mtp" in readme
