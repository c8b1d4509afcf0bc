"""``python -m boontrack``: the command line, as the ``boontrack`` command runs it (for environments whose scripts
directory is not on PATH)."""

from boontrack.cli import main

if __name__ == "__main__":
    main(prog_name="boontrack")
