"""Shared fixtures: the repository root and small workloads."""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def repo() -> Path:
    return ROOT


@pytest.fixture
def sched_idle(repo: Path) -> str:
    return str(repo / "examples" / "sched-idle-a7.json")
