#!/usr/bin/env python3
"""Writes targets/data/titanic.csv: a deterministic fixture shaped like the
Titanic test set (418 passengers, quoted names with commas, empty Age and
Cabin fields, about 29-30 KB). Run it to regenerate; the output is committed
and a test checks that this script reproduces it byte for byte."""

import csv
import io
import random
import sys
from pathlib import Path

SURNAMES = ["Kelly", "Wilkes", "Myles", "Wirz", "Hirvonen", "Svensson", "Connolly",
            "Caldwell", "Abrahim", "Davies", "Ilieff", "Jones", "Snyder", "Howard",
            "Chaffee", "del Carlo", "Keane", "Assaf", "Bradley", "Sage", "Ware",
            "Peacock", "Naughton", "Thomas", "O'Donoghue", "Brown", "Dean", "Widener"]
GIVEN_M = ["James", "Thomas", "Albert", "Kurt", "John", "Edward", "Patrick", "Henry",
           "William", "Samuel", "George", "Frederick", "Ernest", "Arthur", "Charles"]
GIVEN_F = ["Ellen", "Mary", "Anna", "Helga", "Margaret", "Alice", "Bridget", "Elizabeth",
           "Annie", "Emily", "Edith", "Hanora", "Catherine", "Rosa", "Ida"]


def passenger(rng: random.Random, pid: int) -> list:
    sex = "male" if rng.random() < 0.64 else "female"
    surname = rng.choice(SURNAMES)
    if sex == "male":
        title = "Master" if rng.random() < 0.05 else "Mr"
        name = f"{surname}, {title}. {rng.choice(GIVEN_M)}"
        if rng.random() < 0.4:
            name += f" {rng.choice(GIVEN_M)}"
    else:
        title = rng.choice(["Mrs", "Miss", "Ms"])
        name = f"{surname}, {title}. {rng.choice(GIVEN_F)}"
        if title == "Mrs" and rng.random() < 0.5:
            name += f' ({rng.choice(GIVEN_F)} "{rng.choice(GIVEN_F)}" {rng.choice(SURNAMES)})'
    pclass = rng.choice([1, 2, 3, 3, 3])
    age = "" if rng.random() < 0.2 else str(rng.choice([rng.randint(1, 76), round(rng.uniform(0.2, 60), 1)]))
    ticket = rng.choice(["", "PC ", "A/5 ", "STON/O 2. ", "C.A. "]) + str(rng.randint(1000, 399999))
    fare = f"{rng.uniform(3, 263):.4f}"
    cabin = "" if rng.random() < 0.78 else rng.choice("ABCDEFG") + str(rng.randint(2, 130))
    return [pid, rng.randint(0, 1), pclass, name, sex, age, rng.randint(0, 4), rng.randint(0, 3),
            ticket, fare, cabin, rng.choice("SCQ")]


def render() -> bytes:
    rng = random.Random(1912)
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["PassengerId", "Survived", "Pclass", "Name", "Sex", "Age", "SibSp", "Parch",
                "Ticket", "Fare", "Cabin", "Embarked"])
    for i in range(418):
        w.writerow(passenger(rng, 892 + i))
    return out.getvalue().encode()


if __name__ == "__main__":
    path = Path(__file__).with_name("titanic.csv")
    data = render()
    if "--check" in sys.argv:
        sys.exit(0 if path.read_bytes() == data else "titanic.csv differs from make_titanic.py output")
    path.write_bytes(data)
    print(f"wrote {path} ({len(data)} bytes)")
