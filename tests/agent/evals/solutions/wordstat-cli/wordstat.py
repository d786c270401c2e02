import argparse
import sys
from collections import Counter


def main(argv=None):
    parser = argparse.ArgumentParser(description="Count lines, words and characters.")
    parser.add_argument("file")
    parser.add_argument("--top", type=int)
    args = parser.parse_args(argv)
    try:
        with open(args.file, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        print(f"wordstat: {exc}", file=sys.stderr)
        return 1
    words = text.split()
    if args.top:
        for word, count in Counter(w.lower() for w in words).most_common(args.top):
            print(word, count)
    else:
        print(f"lines={len(text.splitlines())} words={len(words)} chars={len(text)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
