from settings.errors import SettingsError


def parse_bool(text):
    """'yes'/'true'/'on'/'1' -> True, 'no'/'false'/'off'/'0' -> False, in any case."""
    value = text.strip().lower()
    if value in ("yes", "true", "on", "1"):
        return True
    if value in ("no", "false", "off", "0"):
        return False
    raise SettingsError(f"not a yes/no value: {text!r}")
