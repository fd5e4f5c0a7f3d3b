"""Rebuild a sweep point's configuration from its results file alone, and replay it.

A row of ``/points`` names its design by its sub-space and axis positions; the file's root
``config`` attribute holds the base configuration and ``/space`` decodes an index into axis values
(docs/hdf5-schema.md). This module decodes the index itself from ``/space/layout`` (it does not
trust the row's own axis fields), so a replay checks the file's description of the space as well as
the evaluation. A point's configuration is the base plus what its own sub-space's axes set:

  * a plain axis sets its key;
  * ``strategy`` (``dp4tp2pp1[/knob=value...]``) sets ``strategy.dp``, ``strategy.tp``, ``strategy.pp``
    and ``strategy.<knob>`` for each knob (the others keep the base configuration's value);
  * ``optimize`` sets ``point.optimize``.

Command line::

    python3 -m analysis.replay results.h5 INDEX [--ini] [--run BINARY]

prints the point's configuration as INI (``--ini``, default) or runs ``toposweep simulate`` (or
``toposweep optimize --target T`` for a point whose sub-space runs an optimizer) on it and prints
the JSON it answers.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

import h5py

STRATEGY = re.compile(r"dp(\d+)tp(\d+)pp(\d+)")


def _text(value):
    if isinstance(value, bytes):
        return value.decode("utf-8")
    return str(value)


def parse_ini(text):
    """Flat "section.key" -> value, the way toposweep reads INI (comments, inline comments)."""
    out, section = {}, ""
    for line in text.splitlines():
        t = line.strip()
        if not t or t[0] in "#;":
            continue
        if t[0] == "[":
            section = t[1:-1].strip()
            continue
        key, _, value = t.partition("=")
        value = value.strip()
        for marker in (" #", " ;", "\t#", "\t;"):
            cut = value.find(marker)
            if cut >= 0:
                value = value[:cut].strip()
        key = key.strip()
        out[f"{section}.{key}" if section else key] = value
    return out


def base_config(f):
    """The root config attribute without the space definitions."""
    config = parse_ini(_text(f.attrs["config"]))
    return {k: v for k, v in config.items() if not k.startswith("space.")}


def axis_values(f, index):
    """(sub-space name, [(axis key, value as written)]) of point `index`, decoded from /space."""
    names = [_text(n) for n in f["/space/subspaces"][()]]
    for name in names:
        layout = f[f"/space/layout/{name}"]
        offset, size = (int(x) for x in layout["offset_size"][()])
        if not offset <= index < offset + size:
            continue
        keys = [k for k in _text(layout.attrs["axes"]).split(",") if k]
        local, values = index - offset, []
        for key in reversed(keys):  # last axis varies fastest
            positions = layout[key][()]
            position = int(positions[local % len(positions)])
            local //= len(positions)
            values.append((key, _text(f[f"/space/axes/{key}/values"][position])))
        return name, list(reversed(values))
    raise IndexError(f"point {index} is outside the space ({sum(1 for _ in names)} sub-spaces)")


def assignments(key, value):
    """The configuration keys an axis value sets."""
    if key == "strategy":
        head, *knobs = value.split("/")
        m = STRATEGY.fullmatch(head)
        if not m:
            raise ValueError(f"strategy value {value!r} is not dpNtpNppN[/knob=value...]")
        out = {"strategy.dp": m[1], "strategy.tp": m[2], "strategy.pp": m[3]}
        for knob in knobs:
            name, sep, setting = knob.partition("=")
            if not sep or not name or not setting:
                raise ValueError(f"strategy value {value!r}: {knob!r} is not knob=value")
            out["strategy." + name] = setting
        return out
    if key == "optimize":
        return {"point.optimize": value}
    return {key: value}


def point_config(path, index):
    """The effective configuration of point `index` of results file `path`, flat key -> text."""
    with h5py.File(path, "r") as f:
        config = base_config(f)
        _, values = axis_values(f, index)
    for key, value in values:
        set_here = assignments(key, value)
        if "strategy.zero" in set_here:
            # The root configuration lists every key, defaults too; the deprecated alias
            # strategy.zero1 at its default would read as a contradiction of the axis's stage.
            config.pop("strategy.zero1", None)
        config.update(set_here)
    return config


def to_ini(config):
    sections = {}
    for key, value in sorted(config.items()):
        section, _, name = key.rpartition(".")
        sections.setdefault(section, []).append(f"{name} = {value}")
    return "\n".join(f"[{s}]\n" + "\n".join(lines) + "\n" for s, lines in sections.items())


def replay(path, index, binary, extra=()):
    """Run the point through `toposweep simulate --json` (or `optimize` when its sub-space runs an
    optimizer); returns (exit status, parsed JSON or None, stderr)."""
    config = point_config(path, index)
    target = config.pop("point.optimize", "none").strip().lower()
    with tempfile.NamedTemporaryFile("w", suffix=".ini", delete=False) as tmp:
        tmp.write(to_ini(config))
    try:
        if target != "none":
            command = [binary, "optimize", "--target", target, "--config", tmp.name, "--json", *extra]
        else:
            command = [binary, "simulate", "--config", tmp.name, "--json", *extra]
        done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    finally:
        os.unlink(tmp.name)
    answer = json.loads(done.stdout) if done.returncode == 0 and done.stdout.strip() else None
    return done.returncode, answer, done.stderr


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("results")
    p.add_argument("index", type=int)
    p.add_argument("--run", metavar="BINARY", help="replay with this toposweep binary and print its JSON")
    args = p.parse_args(argv)
    if args.run:
        status, answer, err = replay(args.results, args.index, args.run)
        sys.stderr.write(err)
        if answer is not None:
            print(json.dumps(answer))
        return status
    print(to_ini(point_config(args.results, args.index)), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
