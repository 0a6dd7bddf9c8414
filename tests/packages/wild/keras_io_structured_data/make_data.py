"""A small heart.csv with the columns the example uses: python make_data.py FILE."""

import random
import sys

rand = random.Random(6)
with open(sys.argv[1], "w") as out:
    out.write("age,sex,cp,chol,thalach,thal,target\n")
    for _ in range(120):
        age, sex, cp = rand.randint(30, 75), rand.randint(0, 1), rand.randint(0, 3)
        target = int(age > 55 and cp > 1)
        out.write(f"{age},{sex},{cp},{rand.randint(150, 350)},{rand.randint(90, 200)},{rand.choice(['fixed', 'normal', 'reversible'])},{target}\n")
