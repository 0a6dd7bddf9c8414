"""Small taxi-fare CSVs like the course's samples: python make_data.py DIR (taxi-train.csv, taxi-valid.csv)."""

import os
import random
import sys

rand = random.Random(1)
os.makedirs(sys.argv[1], exist_ok=True)
for name, count in (("taxi-train.csv", 120), ("taxi-valid.csv", 30)):
    with open(os.path.join(sys.argv[1], name), "w") as out:
        for i in range(count):
            plon, plat = -74 + rand.random() / 10, 40.7 + rand.random() / 10
            dlon, dlat = -74 + rand.random() / 10, 40.7 + rand.random() / 10
            fare = 2.5 + 100 * abs(plon - dlon) + 100 * abs(plat - dlat)
            when = f"2014-0{rand.randint(1, 9)}-1{rand.randint(0, 9)} {rand.randint(10, 23)}:15:00 UTC"
            out.write(f"{fare:.2f},{when},{plon:.5f},{plat:.5f},{dlon:.5f},{dlat:.5f},{rand.randint(1, 4)}.0,k{i}\n")
