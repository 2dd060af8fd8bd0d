"""Outputs that never destroy what is not theirs: a device or FIFO
named as output is written through, never replaced by a regular file; a symlink keeps
pointing at its file; an output that is an input (by any name, hard links too) is refused
before anything is written, in every command and in the Python writers that take a source."""

from __future__ import annotations

import os
import stat
import threading

import numpy as np
import pytest

import bioaccel
from bioaccel._core import atomic_output, refuse_overwriting_inputs
from tests.cli_runner import run_process as run
from tests.datasets import unavailable

FASTA = (
    ">a\nACGTACGTACGGTTAACC\n>b\nACGTACGTACGGTTAACA\n>c\nACGAACGTACGGTAAACC\n"
    ">d\nTCGAACGTTCGGTAAACC\n"
)


def null_device(path):
    """A character device like /dev/null (major 1, minor 3), made in a temporary folder."""
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        unavailable("mknod needs root (CI runs as root)")
    return path


def test_atomic_output_writes_through_a_character_device(tmp_path):
    dev = null_device(tmp_path / "null")
    with atomic_output(dev) as f:
        f.write("gone\n")
    assert stat.S_ISCHR(os.stat(dev).st_mode)  # still the device, not a regular file
    assert sorted(p.name for p in tmp_path.iterdir()) == ["null"]  # no temporary left


def test_atomic_output_writes_through_a_fifo(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo).read()))
    reader.start()
    with atomic_output(fifo) as f:
        f.write("through the pipe\n")
    reader.join(10)
    assert got == ["through the pipe\n"]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_atomic_output_through_a_symlink_writes_its_target(tmp_path):
    (tmp_path / "data").mkdir()
    real = tmp_path / "data" / "m.phy"
    real.write_text("old\n")
    link = tmp_path / "m.phy"
    link.symlink_to(real)
    with atomic_output(link) as f:
        f.write("new\n")
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_text() == "new\n"
    assert sorted(p.name for p in (tmp_path / "data").iterdir()) == ["m.phy"]
    # a dangling link: its target is created, the link stays
    dangling = tmp_path / "d.phy"
    dangling.symlink_to(tmp_path / "data" / "new.phy")
    with atomic_output(dangling) as f:
        f.write("x\n")
    assert dangling.is_symlink() and (tmp_path / "data" / "new.phy").read_text() == "x\n"


def test_atomic_output_still_replaces_regular_files_atomically(tmp_path):
    out = tmp_path / "d.phy"
    out.write_text("old\n")
    with pytest.raises(RuntimeError), atomic_output(out) as f:
        f.write("half")
        raise RuntimeError("boom")
    assert out.read_text() == "old\n" and sorted(p.name for p in tmp_path.iterdir()) == ["d.phy"]


def test_cli_output_to_a_device_and_a_symlink(tmp_path):
    (tmp_path / "s.fa").write_text(FASTA)
    dev = null_device(tmp_path / "null")
    for cmd in (
        ["distance", "s.fa", "-m", "k80", "-o", "null"],
        ["tree", "s.fa", "-o", "null"],
        ["msa", "s.fa", "-o", "null"],
        ["align", "s.fa", "-o", "null", "--traceback"],
    ):
        res = run(*cmd, cwd=tmp_path)
        assert res.returncode == 0, (cmd, res.stderr)
        assert stat.S_ISCHR(os.stat(dev).st_mode), cmd
    (tmp_path / "real.phy").write_text("old")
    (tmp_path / "link.phy").symlink_to("real.phy")
    res = run("distance", "s.fa", "-o", "link.phy", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "link.phy").is_symlink()
    assert bioaccel.DistanceMatrix.read(tmp_path / "real.phy") == bioaccel.distance_matrix(
        tmp_path / "s.fa"
    )


def test_streamed_cdist_through_a_symlink_keeps_the_link(tmp_path):
    from bioaccel.distances._ondisk import stream_distances

    (tmp_path / "s.fa").write_text(FASTA)
    (tmp_path / "store").mkdir()
    link = tmp_path / "d.cdist"
    link.symlink_to(tmp_path / "store" / "d.cdist")
    stream_distances(tmp_path / "s.fa", "raw", link, backend="cpu")
    assert link.is_symlink() and (tmp_path / "store" / "d.cdist").read_bytes()[:8] == b"BACDIST1"


# -- an output that is an input --------------------------------------------------------------
@pytest.fixture
def inputs(tmp_path):
    (tmp_path / "x.phy").write_text(
        "4 18\na ACGTACGTACGGTTAACC\nb ACGTACGTACGGTTAACA\n"
        "c ACGAACGTACGGTAAACC\nd TCGAACGTTCGGTAAACC\n"
    )
    (tmp_path / "s.fa").write_text(FASTA)
    bioaccel.distance_matrix(tmp_path / "s.fa").write(tmp_path / "m.phy")
    from bioaccel.distances._tiles import distance_tile, tile_bounds, write_tile

    batch = bioaccel.read_sequences(tmp_path / "s.fa")
    bounds = tile_bounds(batch, 0, 0, 1)
    values, params = distance_tile(batch, "k80", bounds[:2], bounds[2:])
    write_tile(tmp_path / "t.npz", values, bounds, len(batch), batch.ids, params)
    (tmp_path / "g.nwk").write_text("((a,b),(c,d));\n")
    (tmp_path / "stages.csv").write_text("name,work,bytes,data\ns1,3,0,\ns2,2,0,\n")
    os.link(tmp_path / "x.phy", tmp_path / "hard.phy")
    for name in ("s.nwk", "s.tsv", "s.npz"):  # hard links of s.fa under output names
        os.link(tmp_path / "s.fa", tmp_path / name)
    # and under the names a .npy matrix's writer puts its ids in, beside the matrix
    os.link(tmp_path / "s.fa", tmp_path / "m.npy.ids.txt")
    os.link(tmp_path / "s.fa", tmp_path / "q.npy.target_ids.txt")
    (tmp_path / "soft.phy").symlink_to("x.phy")
    return tmp_path


SAME_FILE_CASES = [
    ["distance", "x.phy", "-o", "x.phy"],
    ["distance", "x.phy", "-o", "hard.phy"],  # a hard link of the input
    ["distance", "x.phy", "-o", "soft.phy"],  # a symlink to the input
    ["distance", "x.phy", "-o", "./x.phy"],
    ["distance", "s.fa", "-m", "raw", "--tile", "0,0", "--tiles", "1", "-o", "s.npz"],
    ["tree", "x.phy", "-o", "t.nwk", "--matrix-output", "x.phy"],
    ["tree", "s.fa", "-o", "s.nwk"],
    ["merge-tiles", "t.npz", "-o", "t.npz"],
    ["distance", "s.fa", "-m", "raw", "-o", "m.npy"],  # its ids file is the input
    ["align", "s.fa", "-o", "m.npy"],
    ["align", "x.phy", "s.fa", "-o", "q.npy"],  # its target ids file is the input
    ["align", "x.phy", "s.fa", "-o", "s.tsv"],
    ["sketch", "x.phy", "s.fa", "-o", "s.npz"],
    ["msa", "x.phy", "-o", "x.phy"],
    ["msa", "s.fa", "-o", "a.fa", "--guide-tree", "g.nwk", "--tree-out", "g.nwk"],
    ["sched", "place", "-t", "2", "-s", "stages.csv", "--csv", "stages.csv"],
]


@pytest.mark.parametrize("args", SAME_FILE_CASES, ids=" ".join)
def test_every_command_refuses_an_output_that_is_an_input(inputs, args):
    before = {
        p.name: p.read_bytes() for p in inputs.iterdir() if p.is_file() and not p.is_symlink()
    }
    res = run(*args, cwd=inputs)
    assert res.returncode == 2, (res.returncode, res.stderr)
    assert "writing it would destroy the input" in res.stderr and len(res.stderr.splitlines()) == 1
    after = {p.name: p.read_bytes() for p in inputs.iterdir() if p.is_file() and not p.is_symlink()}
    assert after == before


def test_refusal_names_the_output_and_the_input(inputs):
    res = run("distance", "x.phy", "-o", "hard.phy", cwd=inputs)
    assert res.stderr == (
        "bioaccel: error: --output 'hard.phy' is the same file as the input "
        "'x.phy': writing it would destroy the input; choose another output "
        "name\n"
    )
    # outputs that are not inputs pass; devices are never 'the same file'
    refuse_overwriting_inputs({"-o": inputs / "new.phy"}, [inputs / "x.phy", None, "-"])
    refuse_overwriting_inputs({"-o": "-"}, [inputs / "x.phy"])


def test_python_writer_with_a_source_refuses_its_input(inputs):
    from bioaccel.distances._ondisk import stream_distances

    fa = inputs / "s.fa"
    twin = inputs / "s.cdist"
    os.link(fa, twin)
    with pytest.raises(OSError, match="is the same file as the input"):
        stream_distances(fa, "raw", twin, backend="cpu")
    assert twin.read_text() == FASTA


def test_an_output_beside_its_input_is_fine(inputs):
    res = run("distance", "x.phy", "-o", "d.phy", cwd=inputs)
    assert res.returncode == 0, res.stderr
    assert np.isfinite(bioaccel.DistanceMatrix.read(inputs / "d.phy").data).all()
