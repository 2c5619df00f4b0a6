"""How the lab fixtures find the regcoded binary, and what they say when there is none (no daemon needed)."""

import os
import stat

import pytest

from regcoded.lab import LabDaemon, locate_binary, missing_binary_message


def _executable(path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as handle:
        handle.write("#!/bin/sh\nexit 0\n")
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
    return str(path)


@pytest.fixture
def package(tmp_path, monkeypatch):
    """A Swift package folder with a debug build, and a PATH without regcoded on it."""
    (tmp_path / "Package.swift").write_text("// swift-tools-version:6.0\n")
    (tmp_path / "clients" / "python" / "tests").mkdir(parents=True)
    monkeypatch.delenv("REGCODED_BIN", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))
    return tmp_path


def test_a_relative_regcoded_bin_works_from_a_folder_below_the_one_it_names(package, monkeypatch):
    binary = _executable(package / ".build" / "debug" / "regcoded")
    monkeypatch.setenv("REGCODED_BIN", os.path.join(".build", "debug", "regcoded"))
    monkeypatch.chdir(package / "clients" / "python" / "tests")
    assert locate_binary()[0] == binary


def test_the_package_build_folder_is_found_from_any_folder_inside_it(package, monkeypatch):
    _executable(package / ".build" / "debug" / "regcoded")
    release = _executable(package / ".build" / "release" / "regcoded")
    os.utime(release, (2_000_000_000, 2_000_000_000))  # the newest build wins
    monkeypatch.chdir(package / "clients" / "python")
    assert locate_binary()[0] == release


def test_path_comes_before_the_build_folder(package, monkeypatch):
    _executable(package / ".build" / "debug" / "regcoded")
    on_path = _executable(package / "bin" / "regcoded")
    monkeypatch.setenv("PATH", str(package / "bin"))
    monkeypatch.chdir(package)
    assert locate_binary()[0] == on_path


def test_an_explicit_binary_that_does_not_exist_is_not_replaced_by_another(package, monkeypatch):
    _executable(package / ".build" / "debug" / "regcoded")
    monkeypatch.setenv("REGCODED_BIN", "/nonexistent/regcoded")
    monkeypatch.chdir(package)
    binary, tried = locate_binary()
    assert binary is None
    assert tried == ["$REGCODED_BIN: /nonexistent/regcoded"]


def test_no_binary_names_every_place_looked_at(package, monkeypatch):
    monkeypatch.chdir(package / "clients")
    binary, tried = locate_binary()
    assert binary is None
    message = missing_binary_message(tried)
    assert "regcoded on PATH" in message
    assert str(package / ".build" / "debug" / "regcoded") in message
    assert str(package / ".build" / "release" / "regcoded") in message
    assert "swift build --product regcoded" in message and "REGCODED_BIN" in message


def test_a_lab_daemon_on_a_missing_binary_says_so(tmp_path):
    with pytest.raises(FileNotFoundError) as raised:
        LabDaemon(str(tmp_path / "missing" / "regcoded"), str(tmp_path))
    assert str(tmp_path / "missing" / "regcoded") in str(raised.value)
    assert "swift build --product regcoded" in str(raised.value)
