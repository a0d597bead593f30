"""config.settings is a package of parts (config/settings/__init__.py gathers them): every
part's settings reach Django, none is shadowed by another part's, and the project's paths
still start at the repository root.  Its split from one module was proven value for value by
scripts/compare_settings.py."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path
from types import ModuleType, SimpleNamespace

import config.settings as gathered

ROOT = Path(__file__).resolve().parents[2]


def parts() -> list[ModuleType]:
    return [
        importlib.import_module(f"{gathered.__name__}.{info.name}")
        for info in pkgutil.iter_modules(gathered.__path__)
    ]


def lost_settings(composed: object, modules: list[ModuleType]) -> list[str]:
    """Each part's UPPERCASE names that `composed` lacks or holds another value for."""
    return [
        f"{module.__name__}.{name}"
        for module in modules
        for name in dir(module)
        if name.isupper() and getattr(composed, name, lost_settings) is not getattr(module, name)
    ]


def test_every_part_reaches_django():
    assert len(parts()) >= 10
    assert lost_settings(gathered, parts()) == []


def test_control_a_part_left_out_is_reported():
    """The check above can fail: the settings gathered without the API part lose its names."""
    without_api = SimpleNamespace(
        **{
            name: getattr(module, name)
            for module in parts()
            if not module.__name__.endswith(".api")
            for name in dir(module)
            if name.isupper()
        }
    )
    lost = lost_settings(without_api, parts())
    assert "config.settings.api.REST_FRAMEWORK" in lost
    assert "config.settings.api.SPECTACULAR_SETTINGS" in lost
    assert not [name for name in lost if not name.startswith("config.settings.api.")]


def test_paths_start_at_the_repository_root():
    assert gathered.BASE_DIR == ROOT
    assert (gathered.BASE_DIR / "manage.py").is_file()
    assert gathered.STATICFILES_DIRS == [ROOT / "static"]
