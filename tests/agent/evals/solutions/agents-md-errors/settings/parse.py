from settings.errors import SettingsError


def parse_bool(text):
    """'yes'/'true'/'on'/'1' -> True, 'no'/'false'/'off'/'0' -> False, in any case."""
    value = text.strip().lower()
    if value in ("yes", "true", "on", "1"):
        return True
    if value in ("no", "false", "off", "0"):
        return False
    raise SettingsError(f"not a yes/no value: {text!r}")


def parse_port(text):
    """'8080' -> 8080; a whole number from 1 to 65535, else SettingsError."""
    if not text.strip().isdigit() or not 1 <= int(text) <= 65535:
        raise SettingsError(f"not a port number: {text!r}")
    return int(text)
