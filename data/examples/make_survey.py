#!/usr/bin/env python3
"""Writes survey.csv: a made-up household survey of 400 rows, the raw CSV of the README's
practitioner section. Every value comes from this script's fixed seed (no real person is in
it): strings, numbers, empty cells, rare categories, near-misses (spaces, case) and an extra
`name` column. Run `python3 make_survey.py > survey.csv` to regenerate it byte for byte."""
import random

rng = random.Random(26)
FIRST = ["Ana", "Ben", "Chloe", "Dev", "Eva", "Femi", "Gus", "Hana", "Ivo", "Jun"]
LAST = ["Abbott", "Baker", "Chen", "Diaz", "Evans", "Fox", "Gill", "Hart"]


def pick(weighted):
    r = rng.random() * sum(w for _, w in weighted)
    for v, w in weighted:
        r -= w
        if r < 0:
            return v
    return weighted[-1][0]


print("name,region,sex,age,employment,income")
for _ in range(400):
    name = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
    region = pick([("north", 30), ("south", 30), ("east", 20), ("west", 17),
                   (" south", 1), ("North", 1), ("islands", 1)])
    sex = pick([("female", 51), ("male", 49)])
    age = "" if rng.random() < 0.04 else str(rng.randint(16, 89))
    if age and int(age) >= 67:
        employment = pick([("retired", 85), ("employed", 15)])
    elif age and int(age) <= 22:
        employment = pick([("student", 60), ("employed", 30), ("unemployed", 10)])
    else:
        employment = pick([("employed", 80), ("unemployed", 12), ("student", 3),
                           ("", 4), ("apprentice", 1)])
    if employment == "employed":
        income = str(round(rng.lognormvariate(10.4, 0.5)))
    elif employment in ("retired", "unemployed"):
        income = str(round(rng.lognormvariate(9.6, 0.4)))
    else:
        income = str(round(rng.lognormvariate(8.5, 0.6)))
    if rng.random() < 0.06:
        income = ""
    print(f"{name},{region},{sex},{age},{employment},{income}")
