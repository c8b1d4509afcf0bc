"""The file backend: every supported format read as it is, with one-line errors naming the file."""

from __future__ import annotations

import gzip

import pandas as pd
import pytest

from boontrack.backends import MetricRequest, load_backend, open_source
from boontrack.exceptions import InputError
from boontrack.files import FileBackend, FileSource

REQUEST = MetricRequest(val="acc")
FRAME = pd.DataFrame(
    {
        "run_id": ["a", "b", "c"],
        "acc": [0.5, 0.25, 0.125],
        "model": ["cnn", "lr", "cnn"],
        "seed": [1, 2, 3],
    }
)


def _write(frame: pd.DataFrame, path) -> None:
    suffix = path.suffix
    if suffix == ".csv":
        frame.to_csv(path, index=False)
    elif suffix in (".tsv", ".tab"):
        frame.to_csv(path, sep="\t", index=False)
    elif suffix in (".jsonl", ".json", ".ndjson"):
        frame.to_json(path, orient="records", lines=True)
    else:
        frame.to_parquet(path)


@pytest.mark.parametrize("name", ["runs.csv", "runs.tsv", "runs.tab", "runs.jsonl", "runs.json", "runs.parquet"])
def test_each_format_round_trips(tmp_path, name):
    path = tmp_path / name
    _write(FRAME, path)
    frame = open_source(str(path)).read(REQUEST)
    assert list(frame.columns) == list(FRAME.columns)
    assert frame["run_id"].tolist() == ["a", "b", "c"]
    assert frame["acc"].tolist() == [0.5, 0.25, 0.125]
    assert frame["seed"].tolist() == [1, 2, 3]


def test_json_arrays_and_exact_floats(tmp_path):
    (tmp_path / "array.json").write_text('[{"run_id": "a", "acc": 0.6}, {"run_id": "b", "acc": 0.1}]')
    (tmp_path / "one.json").write_text('{"run_id": "a", "acc": 0.6}\n')
    (tmp_path / "lines.jsonl").write_text('{"run_id": "a", "acc": 0.6}\n{"run_id": "b", "acc": 0.1}\n')
    assert open_source(str(tmp_path / "array.json")).read(REQUEST)["acc"].tolist() == [0.6, 0.1]
    assert open_source(str(tmp_path / "one.json")).read(REQUEST)["acc"].tolist() == [0.6]
    assert open_source(str(tmp_path / "lines.jsonl")).read(REQUEST)["acc"].tolist() == [0.6, 0.1]


def test_compressed_csv_and_upper_case_suffix(tmp_path):
    path = tmp_path / "RUNS.CSV.gz"
    with gzip.open(path, "wt") as handle:
        FRAME.to_csv(handle, index=False)
    assert open_source(str(path)).read(REQUEST)["acc"].tolist() == [0.5, 0.25, 0.125]


def test_explicit_file_scheme_and_registered_backend(tmp_path):
    path = tmp_path / "runs.csv"
    _write(FRAME, path)
    assert isinstance(load_backend("file"), FileBackend)
    source = open_source(f"file:{path}")
    assert isinstance(source, FileSource)
    assert source.read(REQUEST)["model"].tolist() == ["cnn", "lr", "cnn"]


def test_identity_is_the_absolute_path(tmp_path, monkeypatch):
    path = tmp_path / "runs.csv"
    _write(FRAME, path)
    monkeypatch.chdir(tmp_path)
    relative, absolute = open_source("runs.csv"), open_source(str(path))
    assert relative.identity() == absolute.identity() == str(path.resolve())
    assert relative.describe() == "runs.csv"


def test_files_cannot_be_written_back(tmp_path):
    path = tmp_path / "runs.csv"
    with pytest.raises(InputError, match="cannot be written back.*with `out`$"):
        open_source(str(path)).sink("0" * 32)


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("missing.csv", None, "no such file"),
        ("empty.csv", b"", "the file is empty"),
        ("header_only.csv", b"run_id,acc\n", "the file has no rows"),
        ("broken.jsonl", b'{"acc": 0.5}\n{"acc": \n', "as JSON lines"),
        ("broken.json", b'[{"acc": 0.5},', "as JSON"),
        ("broken.parquet", b"not parquet at all", "as Parquet"),
        ("bad.csv", b'run_id,acc\n"a,0.5\n', "as CSV"),
    ],
)
def test_unreadable_files_name_the_file(tmp_path, name, content, message):
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(InputError, match=message) as info:
        open_source(str(path)).read(REQUEST)
    assert str(path) in str(info.value)
    assert "\n" not in str(info.value)


def test_a_directory_is_not_a_file(tmp_path):
    path = tmp_path / "runs.csv"
    path.mkdir()
    with pytest.raises(InputError, match="is a directory"):
        open_source(str(path)).read(REQUEST)


@pytest.mark.parametrize("name", ["runs.xlsx", "runs", "runs.txt"])
def test_unknown_extension_lists_the_known_ones(tmp_path, name):
    with pytest.raises(InputError, match=r"unknown file type.*\.csv.*\.parquet") as info:
        open_source(str(tmp_path / name))
    assert name in str(info.value)


def test_file_sources_refuse_tracker_options(tmp_path):
    with pytest.raises(
        InputError, match=r"unknown option\(s\) for file sources: `parent`, `tracking_uri` \(known: none\)$"
    ):
        open_source(str(tmp_path / "runs.csv"), parent="abc", tracking_uri="http://x")


@pytest.mark.parametrize("name", ["runs.csv", "runs.tsv", "runs.csv.gz", "runs.parquet"])
def test_a_repeated_column_name_is_refused_naming_it(tmp_path, name):
    path = tmp_path / name
    if name.endswith(".parquet"):
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.table([[0.5, 0.6], [0.1, 0.2]], names=["acc", "acc"]), path)
    else:
        sep = "\t" if ".tsv" in name else ","
        text = sep.join(["run_id", "acc", "acc"]) + "\n" + sep.join(["a", "0.5", "0.1"]) + "\n"
        path.write_bytes(gzip.compress(text.encode()) if name.endswith(".gz") else text.encode())
    with pytest.raises(InputError, match=f"^cannot read {path}: column 'acc' appears 2 times; give each column"):
        open_source(str(path)).read(REQUEST)
