"""Evidence for the arrow Arrow.humanize questions: every registered locale x many deltas
(covering each branch of humanize and a sweep of counts) x sign x only_distance x each
granularity. Prints, per line of arrow/arrow.py where an exception not raised by a
`raise` statement passed (innermost frame of arrow.py), the count and a first input."""
import collections
import os
import sys
import traceback

sys.path[:0] = ["/work/corpus/arrow", "/work/corpus/dateutil/src", "/work/wt/safety-tools/deps"]
import arrow  # noqa: E402
from arrow import locales  # noqa: E402

ARROW = str(__import__("pathlib").Path(arrow.arrow.__file__).resolve())
with open(ARROW) as fh:
    src = fh.read().splitlines()
names = sorted(set(locales._locale_map))
base = arrow.Arrow(2020, 6, 15, 12, 0, 0)
secs = sorted({0, 5, 9, 10, 30, 59, 60, 90, 119, 120, 600, 3599, 3600, 5000, 7199, 7200, 36000,
               86399, 86400, 100000, 172799, 172800} | {d * 86400 + 3 for d in
               (3, 5, 6, 7, 8, 10, 13, 14, 15, 20, 25, 29, 30, 31, 40, 45, 59, 60, 61, 90, 120,
                180, 250, 300, 364, 365, 366, 400, 500, 700, 729, 730, 731, 1000, 2000, 3650,
                10000)})
# every count of the bounded 'auto' branches: seconds 10-59, minutes 2-59, hours 2-23,
# days 2-6, weeks 2-4 (by day), months 1-11 (by ~30.4 days), year
secs = sorted(set(secs) | set(range(10, 60)) | {m * 60 + 1 for m in range(2, 60)}
              | {h * 3600 + 1 for h in range(2, 24)} | {d * 86400 + 1 for d in range(1, 400)})
grans = ["auto"] if os.environ.get("AUTO_ONLY") else [
    "auto", "second", "minute", "hour", "day", "week", "month", "quarter", "year",
    ["hour", "minute"], ["day", "hour", "minute", "second"], ["year", "month", "week"],
    ["quarter", "day"]]
hits = collections.Counter()
first = {}
n = 0
for name in names:
    for s in secs:
        for sign in (1, -1):
            other = base.shift(seconds=sign * s)
            for g in grans:
                for od in (False, True):
                    n += 1
                    try:
                        base.humanize(other, locale=name, only_distance=od, granularity=g)
                    except Exception as err:
                        tb = traceback.extract_tb(err.__traceback__)
                        own = [f for f in tb if f.filename == ARROW]
                        line = own[-1].lineno if own else None
                        if line and src[line - 1].strip().startswith("raise"):
                            continue
                        key = (line, type(err).__name__)
                        hits[key] += 1
                        first.setdefault(
                            key,
                            f"Arrow(2020,6,15,12).humanize(Arrow(2020,6,15,12)"
                            f".shift(seconds={sign*s}), locale={name!r}, only_distance={od}, "
                            f"granularity={g!r}) -> {type(err).__name__}: {err} "
                            f"(innermost {tb[-1].filename.rsplit('/',1)[-1]}:{tb[-1].lineno})")
print("calls", n, "locales", len(names))
for key, c in sorted(hits.items(), key=lambda kv: (kv[0][0] or 0)):
    print(key, c, first[key])
