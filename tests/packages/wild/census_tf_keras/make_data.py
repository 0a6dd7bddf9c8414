"""Small census-like CSVs where the package looks before downloading: python make_data.py TMPDIR."""

import os
import random
import sys

rows = random.Random(0)
folder = os.path.join(sys.argv[1], "census_data")
os.makedirs(folder, exist_ok=True)
for name, count in (("adult.data.csv", 96), ("adult.test.csv", 32)):
    with open(os.path.join(folder, name), "w") as out:
        for _ in range(count):
            age, hours = rows.randint(18, 80), rows.randint(10, 60)
            rich = age > 40 and hours > 35
            work = rows.choice(["Private", "Self-emp-inc", "State-gov"])
            out.write(f"{age},{work},{rows.randint(5, 16)},{hours},{rows.randint(0, 5000)},{'>50K' if rich else '<=50K'}\n")
