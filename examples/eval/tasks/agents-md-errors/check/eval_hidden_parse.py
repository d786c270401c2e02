from settings.errors import SettingsError
from settings.parse import parse_port

assert parse_port("8080") == 8080
assert parse_port("1") == 1 and parse_port("65535") == 65535
for bad in ("0", "65536", "-1", "http", "", "80.5"):
    try:
        parse_port(bad)
    except SettingsError:
        pass
    except Exception as exc:
        message = f"parse_port({bad!r}) raised {type(exc).__name__}, not SettingsError (AGENTS.md)"
        raise AssertionError(message) from exc
    else:
        raise AssertionError(f"parse_port({bad!r}) must fail")
assert parse_port.__doc__ and parse_port.__doc__.strip(), "parse_port has no docstring (AGENTS.md)"
print("hidden check: ok")
